//! Prints the in-kernel cost of the XDP program per frame (BPF_PROG_TEST_RUN with repeat),
//! for a few frame shapes: classifying (4 shards, three dispatch modes), with one shard
//! (classification off, the router's choice), in the raw `redirect_all` mode, and the
//! reference: `ndx-afxdp`'s bare redirect program (`ndx_redirect`, the reflector's), timed in
//! the same rounds. Every row is timed once per round, rounds interleaved; the table gives
//! the median, the spread and the ratio to the bare redirect's median. Needs root.
//!
//! ```sh
//! cargo run --release -p ndx-xdp --example ndx-xdp-cost
//! # A/B against another build of bpf/ndx.c (same maps), e.g. main's, in the same rounds:
//! git show main:crates/ndx-xdp/bpf/ndx.o > /tmp/ndx-main.o
//! cargo run --release -p ndx-xdp --example ndx-xdp-cost -- /tmp/ndx-main.o
//! ```
//!
//! `NDX_XDP_COST_ROUNDS` (default 5) and `NDX_XDP_COST_REPEAT` (runs per timing, default
//! 10^6) set the effort. Without a socket in the XSKMAP every redirect fails, so the
//! figures are the program's work plus a failed `bpf_redirect_map`, the same for all rows.

use std::os::fd::AsFd;

use aya::programs::Xdp;
use aya::{Ebpf, EbpfLoader};
use ndx_codec::{DataRepr, InterestRepr, LpHeaders, NameBuf};
use ndx_core::DispatchMode;
use ndx_xdp::{NdxXdp, XdpConfig, xdp_test_run_flags};

/// The reflector's redirect program (`crates/ndx-afxdp/bpf/redirect.c`).
static REDIRECT: &[u8] = aya::include_bytes_aligned!("../../ndx-afxdp/bpf/redirect.o");

fn udp4(payload: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 8, 0];
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&((28 + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 2, 10, 0, 0, 1]);
    f.extend_from_slice(&[0x9c, 0x40, 0x18, 0xdb]);
    f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(payload);
    f
}

fn env(name: &str, default: u32) -> u32 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a number")),
        Err(_) => default,
    }
}

/// A program under test.
enum Prog {
    Ndx(Box<NdxXdp>),
    Bare(Box<Ebpf>),
}

impl Prog {
    fn time(&self, frame: &[u8], repeat: u32) -> u32 {
        match self {
            Prog::Ndx(x) => x.time_run(frame, repeat).expect("test run"),
            Prog::Bare(e) => {
                let p: &Xdp = e.program("ndx_redirect").unwrap().try_into().unwrap();
                let fd = p.fd().unwrap().as_fd();
                xdp_test_run_flags(fd, frame, 0, repeat, 0, 0)
                    .expect("test run")
                    .1
            }
        }
    }
}

fn bare() -> Ebpf {
    let mut e = EbpfLoader::new()
        .override_global("n_shards", &1u32, true)
        .load(REDIRECT)
        .expect("load redirect.o (root?)");
    let p: &mut Xdp = e.program_mut("ndx_redirect").unwrap().try_into().unwrap();
    p.load().expect("verifier");
    e
}

fn main() {
    let rounds = env("NDX_XDP_COST_ROUNDS", 5).max(1);
    let repeat = env("NDX_XDP_COST_REPEAT", 1_000_000);
    let other = std::env::args().nth(1).map(|p| {
        let elf = std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
        (p, elf)
    });

    let name = NameBuf::from_uri("/ndn/video/stream-42/v=7/seg=1234").unwrap();
    let interest = InterestRepr::new(name.clone()).to_vec().unwrap();
    let data = DataRepr::new(name.clone(), vec![0; 1200]).to_vec().unwrap();
    let token = [1u8, 2, 3, 4, 5, 6, 7, 8];
    let h = LpHeaders {
        pit_token: Some(&token),
        sequence: Some(9),
        ..LpHeaders::default()
    };
    let mut lp = vec![0u8; h.encoded_len(Some(data.len()))];
    let n = h.encode(Some(&data), &mut lp).unwrap();
    lp.truncate(n);
    let mut other_port = udp4(&interest);
    other_port[36] = 0; // another UDP port
    let frames = [
        ("interest (bare)", udp4(&interest)),
        ("data 1200 B (bare)", udp4(&data)),
        ("data in LpPacket, foreign token", udp4(&lp)),
        ("udp to another port", other_port),
    ];

    // (setting, config) pairs; every object is loaded with each.
    let mut settings: Vec<(String, XdpConfig)> = Vec::new();
    for mode in [
        DispatchMode::Prefix(3),
        DispatchMode::Content,
        DispatchMode::Batch(16),
    ] {
        settings.push((format!("{mode:?}"), XdpConfig::new(1, 2, mode, 4, 256)));
    }
    settings.push((
        "one shard (classify off)".into(),
        XdpConfig::new(1, 2, DispatchMode::Content, 1, 256),
    ));
    let mut raw = XdpConfig::new(1, 2, DispatchMode::Content, 4, 256);
    raw.redirect_all = true;
    settings.push(("redirect_all".into(), raw));

    let mut objects: Vec<(String, Option<Vec<u8>>)> = vec![("this".into(), None)];
    if let Some((p, elf)) = other {
        objects.push((p, Some(elf)));
    }
    // Rows: (object, setting, frame index, program index); the same setting and frame of
    // every object side by side.
    let mut progs: Vec<Prog> = Vec::new();
    let mut rows: Vec<(String, String, usize, usize)> = Vec::new();
    for (si, (setting, config)) in settings.iter().enumerate() {
        let first = progs.len();
        for (object, elf) in &objects {
            let x = match elf {
                None => NdxXdp::load(config),
                Some(elf) => NdxXdp::load_object(elf, config),
            }
            .unwrap_or_else(|e| panic!("load {object} (root?): {e}"));
            if si == 0 {
                let s = x.program_stats().unwrap();
                println!(
                    "{object}: {} xlated instructions, {} JIT bytes, {} verified",
                    s.xlated_bytes.unwrap_or(0) / 8,
                    s.jited_bytes,
                    s.verified_insns.unwrap_or(0)
                );
            }
            progs.push(Prog::Ndx(Box::new(x)));
        }
        let shown = if setting == "redirect_all" {
            1
        } else {
            frames.len()
        };
        for f in 0..shown {
            for (oi, (object, _)) in objects.iter().enumerate() {
                rows.push((object.clone(), setting.clone(), f, first + oi));
            }
        }
    }
    progs.push(Prog::Bare(Box::new(bare())));
    rows.push((
        "ndx-afxdp".into(),
        "bare redirect (ndx_redirect)".into(),
        0,
        progs.len() - 1,
    ));

    let mut ns: Vec<Vec<u32>> = vec![Vec::new(); rows.len()];
    for round in 0..rounds {
        // Alternate the order from round to round.
        let order: Vec<usize> = if round % 2 == 0 {
            (0..rows.len()).collect()
        } else {
            (0..rows.len()).rev().collect()
        };
        for i in order {
            let (_, _, f, p) = &rows[i];
            ns[i].push(progs[*p].time(&frames[*f].1, repeat));
        }
    }
    let median = |v: &mut Vec<u32>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    let bare_median = median(ns.last_mut().unwrap()) as f64;
    println!(
        "{rounds} rounds of {repeat} runs; ns per frame: median [min-max], ratio to the bare redirect's median"
    );
    for (i, (object, setting, f, _)) in rows.iter().enumerate() {
        let m = median(&mut ns[i]);
        let what = if setting.starts_with("bare") || setting == "redirect_all" {
            frames[*f].0.split(' ').next().unwrap_or("")
        } else {
            frames[*f].0
        };
        println!(
            "{object}\t{setting}\t{what}\t{m} ns [{}-{}]\t{:.2}x",
            ns[i][0],
            ns[i][ns[i].len() - 1],
            f64::from(m) / bare_median
        );
    }
}
