//! Random forwarding traffic for the shard property tests: Interests, Data with and without
//! our PIT tokens, Nacks, NDNLPv2 fragments and garbage, and their encoding.
#![allow(dead_code)]

use ndx_codec::{DataRepr, Fragmenter, InterestRepr, LpHeaders, NackReason, NameBuf};
use proptest::prelude::*;

#[derive(Debug, Clone)]
pub(crate) enum Frame {
    Interest {
        depth: usize,
        cbp: bool,
        mbf: bool,
        nonce: u32,
        hop: Option<u8>,
    },
    Data {
        depth: usize,
        extra: usize,
        token: Option<[u8; ndx_core::PIT_TOKEN_LEN]>,
    },
    Nack {
        depth: usize,
        nonce: u32,
        reason: u8,
    },
    Fragmented {
        depth: usize,
        mtu: usize,
    },
    Garbage(Vec<u8>),
}

pub(crate) fn name(depth: usize) -> NameBuf {
    let mut n = NameBuf::new();
    n.push_generic(b"r");
    for i in 1..depth.max(1) {
        n.push_generic(&[b'a' + (i % 3) as u8]);
    }
    n
}

pub(crate) fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        4 => (1usize..45, any::<bool>(), any::<bool>(), 0u32..8, proptest::option::of(0u8..3))
            .prop_map(|(depth, cbp, mbf, nonce, hop)| Frame::Interest { depth, cbp, mbf, nonce, hop }),
        4 => (1usize..45, 0usize..3, proptest::option::of(any::<[u8; ndx_core::PIT_TOKEN_LEN]>()))
            .prop_map(|(depth, extra, token)| Frame::Data { depth, extra, token }),
        1 => (1usize..45, 0u32..8, 0u8..4).prop_map(|(depth, nonce, reason)| Frame::Nack { depth, nonce, reason }),
        1 => (1usize..20, 60usize..300).prop_map(|(depth, mtu)| Frame::Fragmented { depth, mtu }),
        1 => proptest::collection::vec(any::<u8>(), 0..64).prop_map(Frame::Garbage),
    ]
}

pub(crate) fn encode(f: &Frame, last_token: Option<[u8; ndx_core::PIT_TOKEN_LEN]>) -> Vec<Vec<u8>> {
    match f {
        Frame::Interest {
            depth,
            cbp,
            mbf,
            nonce,
            hop,
        } => {
            let mut i = InterestRepr::new(name(*depth));
            i.can_be_prefix = *cbp;
            i.must_be_fresh = *mbf;
            i.nonce = Some(*nonce);
            i.hop_limit = *hop;
            i.lifetime_ms = Some(50);
            vec![i.to_vec().unwrap()]
        }
        Frame::Data {
            depth,
            extra,
            token,
        } => {
            let d = DataRepr::new(name(depth + extra), vec![1; 10])
                .to_vec()
                .unwrap();
            let t = token.or(last_token);
            let h = LpHeaders {
                pit_token: t.as_ref().map(|t| &t[..]),
                ..LpHeaders::default()
            };
            let mut out = vec![0; h.encoded_len(Some(d.len()))];
            let n = h.encode(Some(&d), &mut out).unwrap();
            out.truncate(n);
            vec![out]
        }
        Frame::Nack {
            depth,
            nonce,
            reason,
        } => {
            let mut i = InterestRepr::new(name(*depth));
            i.nonce = Some(*nonce);
            let wire = i.to_vec().unwrap();
            let reason = [
                NackReason::Unspecified,
                NackReason::Congestion,
                NackReason::Duplicate,
                NackReason::NoRoute,
            ][*reason as usize];
            let h = LpHeaders {
                nack: Some(reason),
                pit_token: last_token.as_ref().map(|t| &t[..]),
                ..LpHeaders::default()
            };
            let mut out = vec![0; h.encoded_len(Some(wire.len()))];
            let n = h.encode(Some(&wire), &mut out).unwrap();
            out.truncate(n);
            vec![out]
        }
        Frame::Fragmented { depth, mtu } => {
            let mut i = InterestRepr::new(name(*depth));
            i.nonce = Some(9);
            i.set_app_params(vec![7; 400]);
            let wire = i.to_vec().unwrap();
            let Ok(fr) = Fragmenter::new(*mtu) else {
                return vec![];
            };
            let Ok(mut it) = fr.fragment(&wire, &LpHeaders::default(), 1) else {
                return vec![];
            };
            let mut v = Vec::new();
            let mut buf = vec![0; *mtu];
            while let Some(Ok(n)) = it.next_into(&mut buf) {
                v.push(buf[..n].to_vec());
            }
            v
        }
        Frame::Garbage(b) => vec![b.clone()],
    }
}

/// The PIT token of a frame the shard sent, if it is one of ours (an LpPacket whose PitToken
/// has our length): what a token-echoing upstream returns on the Data or Nack.
pub(crate) fn our_token(sent: &[u8]) -> Option<[u8; ndx_core::PIT_TOKEN_LEN]> {
    let lp = ndx_codec::LpPacket::decode(sent).ok()?;
    lp.pit_token()?.try_into().ok()
}
