//! Prints the in-kernel cost of the XDP program per frame (BPF_PROG_TEST_RUN with repeat),
//! for a few frame shapes, with one shard (classification off), and next to the raw
//! `redirect_all` mode. Needs root.
//! `cargo run --release -p ndx-xdp --example ndx-xdp-cost`

use ndx_codec::{DataRepr, InterestRepr, LpHeaders, NameBuf};
use ndx_core::DispatchMode;
use ndx_xdp::{NdxXdp, XdpConfig};

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

fn main() {
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
    let mut other = udp4(&interest);
    other[36] = 0; // another UDP port
    let frames = [
        ("interest (bare)", udp4(&interest)),
        ("data 1200 B (bare)", udp4(&data)),
        ("data in LpPacket, foreign token", udp4(&lp)),
        ("udp to another port", other),
    ];
    for mode in [
        DispatchMode::Prefix(3),
        DispatchMode::Content,
        DispatchMode::Batch(16),
    ] {
        let xdp = NdxXdp::load(&XdpConfig::new(1, 2, mode, 4, 256)).expect("load (root?)");
        for (what, f) in &frames {
            let ns = xdp.time_run(f, 1_000_000).expect("test run");
            println!("{mode:?}\t{what}\t{ns} ns");
        }
    }
    // One shard: classification off (the router's choice), encapsulation checked only.
    let single = NdxXdp::load(&XdpConfig::new(1, 2, DispatchMode::Content, 1, 256)).unwrap();
    for (what, f) in &frames {
        let ns = single.time_run(f, 1_000_000).expect("test run");
        println!("one shard (classify off)\t{what}\t{ns} ns");
    }
    let mut raw = XdpConfig::new(1, 2, DispatchMode::Content, 4, 256);
    raw.redirect_all = true;
    let xdp = NdxXdp::load(&raw).unwrap();
    println!(
        "redirect_all\tinterest\t{} ns",
        xdp.time_run(&frames[0].1, 1_000_000).unwrap()
    );
    println!("{:?}", xdp.program_stats().unwrap());
}
