//! What an incoming frame carries, with the NDNLPv2 wrapping (PitToken + Fragment) removed.

use ndx_codec::{Data, Interest, Packet};

/// The network packet inside a frame's UDP payload.
#[derive(Debug, Clone, Copy)]
pub enum Incoming<'a> {
    /// An Interest, with the PitToken of its LpPacket if any.
    Interest(Interest<'a>, Option<&'a [u8]>),
    /// A Data, with the PitToken of its LpPacket if any.
    Data(Data<'a>, Option<&'a [u8]>),
    /// A Nack (an LpPacket with a Nack header) for this Interest.
    Nack(Interest<'a>),
    /// Anything else: malformed, fragments, IDLE packets.
    Other,
}

/// Decodes a UDP payload.
pub fn classify(payload: &[u8]) -> Incoming<'_> {
    match Packet::decode(payload) {
        Ok(Packet::Interest(i)) => Incoming::Interest(i, None),
        Ok(Packet::Data(d)) => Incoming::Data(d, None),
        Ok(Packet::Lp(lp)) => match lp.network_packet() {
            Ok(Some(Packet::Interest(i))) if lp.nack().is_some() => Incoming::Nack(i),
            Ok(Some(Packet::Interest(i))) => Incoming::Interest(i, lp.pit_token()),
            Ok(Some(Packet::Data(d))) => Incoming::Data(d, lp.pit_token()),
            _ => Incoming::Other,
        },
        Err(_) => Incoming::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndx_codec::{InterestRepr, LpHeaders, NackReason, NameBuf};

    #[test]
    fn unwraps_lp_interest_with_token_and_nack() {
        let i = InterestRepr::new(NameBuf::from_uri("/a/b").unwrap())
            .to_vec()
            .unwrap();
        let tok = [9u8; 8];
        let h = LpHeaders {
            pit_token: Some(&tok),
            ..LpHeaders::default()
        };
        let mut out = vec![0; h.encoded_len(Some(i.len()))];
        h.encode(Some(&i), &mut out).unwrap();
        match classify(&out) {
            Incoming::Interest(x, Some(t)) => {
                assert_eq!(t, tok.as_slice());
                assert_eq!(x.name().len(), 2);
            }
            other => panic!("{other:?}"),
        }
        let n = LpHeaders {
            nack: Some(NackReason::Congestion),
            ..LpHeaders::default()
        };
        let mut out = vec![0; n.encoded_len(Some(i.len()))];
        n.encode(Some(&i), &mut out).unwrap();
        assert!(matches!(classify(&out), Incoming::Nack(_)));
        assert!(matches!(classify(&i), Incoming::Interest(_, None)));
        assert!(matches!(classify(&[1, 2, 3]), Incoming::Other));
    }
}
