//! End to end on a veth pair: Interests sent from the peer namespace land in a real AF_XDP
//! socket (xdpilone, copy mode) through the XSKMAP, with the 16-byte metadata right before
//! the frame, agreeing with `ndx_core::Dispatch`. Root only.

#![allow(
    unsafe_code,
    reason = "the UMEM mapping of the AF_XDP socket; each block has a SAFETY comment"
)]

mod common;

use std::num::NonZeroU32;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use common::pair::*;
use common::*;
use ndx_codec::{Interest, InterestRepr, NameBuf};
use ndx_core::{Dispatch, DispatchMode, HashKey};
use ndx_xdp::{AttachMode, Encap, How, Kind, META_LEN, NdxXdp, XdpConfig, XdpMeta};
use xdpilone::{IfInfo, Socket, SocketConfig, Umem, UmemConfig};

const FRAMES: usize = 64;
const FRAME: usize = 4096;

/// An anonymous, page-aligned mapping for the UMEM, unmapped on drop.
struct Area {
    ptr: NonNull<u8>,
    len: usize,
}

impl Area {
    fn new(len: usize) -> Self {
        // SAFETY: an anonymous private mapping with no address hint; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED, "mmap");
        Self {
            ptr: NonNull::new(p.cast()).unwrap(),
            len,
        }
    }

    fn bytes(&self, at: usize, len: usize) -> Vec<u8> {
        assert!(at + len <= self.len);
        // SAFETY: in bounds of the live mapping (checked above); the kernel has released
        // this frame to us through the RX ring, so it does not write it concurrently.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(at), len) }.to_vec()
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `new`, after every user (the UMEM
        // and its rings, declared after the Area) has been dropped.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Sends 24 Interests through the program into one AF_XDP socket. With 4 shards the program
/// classifies (metadata checked against `Dispatch`); with 1 it does not (`classify` off: no
/// metadata, one counter per frame folded into the named counters).
fn receive(mode: AttachMode, shards: usize) {
    // One queue: the frame must arrive on the queue the socket is bound to.
    in_pair(1500, 1, move |pair| {
        let (k0, k1) = (0x1234, 0x5678);
        let d = Dispatch::new(HashKey::new(k0, k1), DispatchMode::Prefix(2), shards, 64).unwrap();
        let config = XdpConfig::for_dispatch(&d, k0, k1);
        assert_eq!(config.classify, shards > 1);
        let mut xdp = NdxXdp::load(&config).unwrap();
        let _link = xdp.attach("xa", mode).unwrap();

        let area = Area::new(FRAMES * FRAME);
        let ucfg = UmemConfig {
            fill_size: FRAMES as u32,
            complete_size: FRAMES as u32,
            frame_size: FRAME as u32,
            headroom: 0,
            flags: 0,
        };
        // SAFETY: the area is a fresh page-aligned mapping of FRAMES * FRAME bytes that
        // outlives the UMEM (dropped at the end of this closure, before `area`).
        let umem =
            unsafe { Umem::new(ucfg, NonNull::slice_from_raw_parts(area.ptr, area.len)) }.unwrap();
        let mut info = IfInfo::invalid();
        info.from_name(c"xa").unwrap();
        info.set_queue(0);
        let sock = Socket::with_shared(&info, &umem).unwrap();
        let dq = umem.fq_cq(&sock).unwrap();
        let scfg = SocketConfig {
            rx_size: NonZeroU32::new(FRAMES as u32),
            tx_size: None,
            bind_flags: 0,
        };
        let user = umem.rx_tx(&sock, &scfg).unwrap();
        let mut rx = user.map_rx().unwrap();
        umem.bind(&user).unwrap();
        let (mut fill, _comp) = dq.into_parts();
        let mut w = fill.fill(FRAMES as u32);
        assert_eq!(
            w.insert((0..FRAMES as u64).map(|i| i * FRAME as u64)),
            FRAMES as u32
        );
        w.commit();
        // The socket takes every shard of queue 0 (the owner-of-the-queue rule).
        for shard in 0..shards as u8 {
            xdp.set_socket(0, shard, rx.as_raw_fd()).unwrap();
        }

        let names: Vec<NameBuf> = (0..24)
            .map(|i| NameBuf::from_uri(&format!("/xsk/{i}/x/seg={i}")).unwrap())
            .collect();
        for n in &names {
            pair.send(&InterestRepr::new(n.clone()).to_vec().unwrap(), 1);
        }
        let mut got = Vec::new();
        let start = Instant::now();
        while got.len() < names.len() && start.elapsed() < Duration::from_secs(5) {
            let mut r = rx.receive(FRAMES as u32);
            while let Some(desc) = r.read() {
                got.push(desc);
            }
            r.release();
            std::thread::sleep(Duration::from_millis(5));
        }
        let c = xdp.counters().unwrap();
        assert_eq!(got.len(), names.len(), "{mode:?}: received\n{c}");
        let n = names.len() as u64;
        assert_eq!((c.redirected, c.redirect_failed, c.udp4), (n, 0, n), "{c}");
        if shards == 1 {
            assert_eq!(c.unclassified, n, "{c}");
            assert_eq!(c.interest + c.by_name, 0, "not parsed: {c}");
            let mut seen: Vec<NameBuf> = got
                .iter()
                .map(|desc| {
                    let frame = area.bytes(desc.addr as usize, desc.len as usize);
                    Interest::decode(&frame[42..]).unwrap().name().to_buf()
                })
                .collect();
            seen.sort();
            let mut sent = names.clone();
            sent.sort();
            assert_eq!(seen, sent, "the frames arrive unchanged");
            return;
        }
        assert_eq!((c.unclassified, c.interest, c.by_name), (0, n, n), "{c}");
        let mut shards = std::collections::HashSet::new();
        for desc in &got {
            let addr = desc.addr as usize;
            let frame = area.bytes(addr, desc.len as usize);
            let meta = XdpMeta::parse(&area.bytes(addr - META_LEN, META_LEN))
                .unwrap_or_else(|| panic!("{mode:?}: no metadata before the frame"));
            let payload = &frame[usize::from(meta.ndn_off)..];
            let name = Interest::decode(payload).unwrap().name();
            assert_eq!(
                (meta.kind, meta.how, meta.encap),
                (Kind::Interest, How::Name, Encap::Udp4)
            );
            assert_eq!(meta.ndn_off, 42);
            assert_eq!(meta.hash, d.hash(&name), "{name}");
            assert_eq!(meta.shard, d.shard(&name, None), "{name}");
            shards.insert(meta.shard);
        }
        assert!(shards.len() > 1, "24 names spread over shards: {shards:?}");
    });
}

#[test]
fn driver_mode_delivers_frames_with_metadata_to_af_xdp() {
    if root_or_skip("driver_mode_delivers_frames_with_metadata_to_af_xdp") {
        receive(AttachMode::Driver, 4);
    }
}

#[test]
fn one_shard_delivers_frames_unparsed_and_counts_them() {
    if root_or_skip("one_shard_delivers_frames_unparsed_and_counts_them") {
        receive(AttachMode::Driver, 1);
    }
}

#[test]
fn skb_mode_delivers_frames_with_metadata_to_af_xdp() {
    if root_or_skip("skb_mode_delivers_frames_with_metadata_to_af_xdp") {
        receive(AttachMode::Skb, 4);
    }
}
