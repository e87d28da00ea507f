//! Fixtures shared by the ndx criterion benches (`benches/`): typical packets built with the
//! codec's own encoders, so every bench measures the same bytes.

use ndx_codec::{DataRepr, InterestRepr, LpHeaders, LpPacket, NackReason, NameBuf};
use ndx_core::PIT_TOKEN_LEN;

pub mod scaling;

/// The typical name: 5 components, 38 bytes of TLV.
pub const TYPICAL_NAME: &str = "/ndn/edu/ucla/ping-server-0001/seq=1234";

/// A name of `n` generic components of about 8 bytes each (`/c000000/c000001/...`).
pub fn name_of(n: usize) -> NameBuf {
    let mut name = NameBuf::new();
    for i in 0..n {
        name.push_generic(format!("c{i:06}").as_bytes());
    }
    name
}

/// The typical name, parsed.
pub fn typical_name() -> NameBuf {
    NameBuf::from_uri(TYPICAL_NAME).expect("valid URI")
}

/// A typical consumer Interest: CanBePrefix, MustBeFresh, Nonce, InterestLifetime, HopLimit.
pub fn interest() -> Vec<u8> {
    let mut i = InterestRepr::new(typical_name());
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.nonce = Some(0x8a2c_11f0);
    i.lifetime_ms = Some(4000);
    i.hop_limit = Some(32);
    i.to_vec().expect("encodable Interest")
}

/// A DigestSha256 Data under the typical name plus a segment number, with `content_len`
/// bytes of content.
pub fn data(content_len: usize) -> Vec<u8> {
    let mut name = typical_name();
    name.push_segment(7);
    let mut d = DataRepr::new(name, vec![0x5A; content_len]);
    d.freshness_ms = Some(10_000);
    d.to_vec().expect("encodable Data")
}

/// The worst-case exchange's packets for `name`: an Interest (Nonce `nonce`, lifetime 4 s,
/// HopLimit 64) and its Data (1,000 bytes of content, freshness 10 s), encoded bare.
pub fn exchange_pair(name: NameBuf, nonce: u32) -> (Vec<u8>, Vec<u8>) {
    let mut i = InterestRepr::new(name.clone());
    i.nonce = Some(nonce);
    i.lifetime_ms = Some(4000);
    i.hop_limit = Some(64);
    let mut d = DataRepr::new(name, vec![0x42; 1000]);
    d.freshness_ms = Some(10_000);
    (
        i.to_vec().expect("encodable Interest"),
        d.to_vec().expect("encodable Data"),
    )
}

/// `data` in an LpPacket with a PitToken placeholder of the shard's token length, and the
/// token's offset (where a bench writes the token the shard put on the Interest).
pub fn data_with_token(data: &[u8]) -> (Vec<u8>, usize) {
    let h = LpHeaders {
        pit_token: Some(&[0; PIT_TOKEN_LEN]),
        ..LpHeaders::default()
    };
    let mut lp = vec![0; h.encoded_len(Some(data.len()))];
    let len = h.encode(Some(data), &mut lp).expect("encodable LpPacket");
    lp.truncate(len);
    let decoded = LpPacket::decode(&lp).expect("decodes");
    let off = decoded.pit_token().expect("token").as_ptr() as usize - lp.as_ptr() as usize;
    (lp, off)
}

/// The PitToken the forwarder puts on Interests it sends.
pub const PIT_TOKEN: [u8; 8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08];

/// An LpPacket with a PitToken, wrapping [`interest`].
pub fn lp_interest() -> Vec<u8> {
    lp(&LpHeaders {
        pit_token: Some(&PIT_TOKEN),
        ..LpHeaders::default()
    })
}

/// A Nack (NoRoute) of [`interest`], with a PitToken.
pub fn nack() -> Vec<u8> {
    lp(&LpHeaders {
        pit_token: Some(&PIT_TOKEN),
        nack: Some(NackReason::NoRoute),
        ..LpHeaders::default()
    })
}

fn lp(h: &LpHeaders<'_>) -> Vec<u8> {
    let i = interest();
    let mut out = vec![0; h.encoded_len(Some(i.len()))];
    let n = h.encode(Some(&i), &mut out).expect("encodable LpPacket");
    out.truncate(n);
    out
}

/// Applies `NDX_BENCH_HUGE` (default 1; `0`: the tables get base pages, the reference) to
/// the `ndx_mem::HugePages` allocator the bench binaries install, once, before any table is
/// built, and says so on stderr.
pub fn huge_pages_from_env() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let on = std::env::var("NDX_BENCH_HUGE").map_or(true, |v| v != "0");
        ndx_mem::set_huge_pages(on);
        eprintln!(
            "huge pages: {} (THP mode {})",
            if on {
                "advised"
            } else {
                "off (NDX_BENCH_HUGE=0)"
            },
            ndx_mem::thp_mode().unwrap_or_else(|| "absent".into())
        );
    });
}

/// A receive frame a CS may keep: a piece of one region that lives as long as the process,
/// as a UMEM's frames are pieces of one mapping.
pub type PoolFrame = &'static mut [u8];

/// Bytes per [`PoolFrame`].
pub const POOL_FRAME: usize = 2048;

/// Receive frames for a shard whose CS keeps them (`Shard::with_frames::<PoolFrame>`), used
/// as the router's worker uses its UMEM frames: a Data burst is received into free frames
/// ([`receive`](Self::receive), as the kernel writes packets into the frames the fill ring
/// gave it); once the burst's actions are sent, [`hand_over`](Self::hand_over) gives the CS
/// the frames it admitted Data from and collects the ones it let go, and
/// [`recycle`](Self::recycle) returns the others to the free list.
#[derive(Debug)]
pub struct FramePool {
    free: Vec<PoolFrame>,
    /// The burst's frames and their lengths (`None`: taken by the CS).
    held: Vec<(Option<PoolFrame>, usize)>,
    released: Vec<PoolFrame>,
}

impl FramePool {
    /// `n` frames of [`POOL_FRAME`] bytes cut from one region, allocated once (on huge pages
    /// when the bench's allocator gives them) and never freed.
    pub fn new(n: usize) -> Self {
        let region: &'static mut [u8] = Box::leak(vec![0u8; n * POOL_FRAME].into_boxed_slice());
        Self {
            free: region.chunks_exact_mut(POOL_FRAME).collect(),
            held: Vec::with_capacity(64),
            released: Vec::with_capacity(64),
        }
    }

    /// The burst `packets`, received on `face` into free frames. Panics when none is free:
    /// size the pool for the CS's capacity and two bursts more.
    pub fn receive<'p>(
        &mut self,
        face: ndx_core::FaceId,
        packets: impl Iterator<Item = &'p [u8]>,
    ) -> Vec<(ndx_core::FaceId, &[u8])> {
        debug_assert!(self.held.is_empty(), "recycle the last burst first");
        for p in packets {
            let buf = self
                .free
                .pop()
                .expect("a free frame: the pool has the CS's capacity and two bursts more");
            buf[..p.len()].copy_from_slice(p);
            self.held.push((Some(buf), p.len()));
        }
        self.held
            .iter()
            .map(|(b, len)| (face, b.as_deref().map_or(&[][..], |b| &b[..*len])))
            .collect()
    }

    /// After the burst's actions are sent: the lending ends (`Shard::return_lent`; `lent`
    /// holds the index of each lent frame in the burst), the CS taking the frames it
    /// admitted Data from, and the frames it let go are collected.
    pub fn hand_over(
        &mut self,
        shard: &mut ndx_core::Shard<PoolFrame>,
        lent: &mut ndx_core::Lent<usize>,
    ) {
        let held = &mut self.held;
        shard.return_lent(lent, |k, keep| {
            if keep {
                held.get_mut(k).and_then(|(f, _)| f.take())
            } else {
                None
            }
        });
        self.released.extend(shard.released_frames());
    }

    /// The burst's frames the CS did not take, and those it let go, back to the free list.
    pub fn recycle(&mut self) {
        self.free.extend(self.held.drain(..).filter_map(|(f, _)| f));
        self.free.append(&mut self.released);
    }
}
