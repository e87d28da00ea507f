//! Fuzz harness bodies, shared by the cargo-fuzz targets and the corpus replay test.
//!
//! Each function takes arbitrary bytes, runs one decoding entry point and, when it succeeds,
//! checks invariants with `assert!` (a failed assertion is what the fuzzer reports). Every
//! rejection must carry an offset inside the input. Not a stable API: `#[doc(hidden)]`.

use core::cmp::Ordering;

use crate::error::{Element, Error, Result};
use crate::tlv::{Reader, Tlv};
use crate::view;
use crate::{
    Data, Interest, LpHeaders, LpPacket, Name, NameBuf, Packet, Reassembler, ReassemblerConfig,
    tree,
};

/// Most prefixes and names checked per input, so an input cannot make a check quadratic.
const MAX_CHECKED: usize = 16;

/// `Packet::decode`, then the checks of whichever packet it is; `tree::walk` over the same
/// bytes. Neither may panic.
pub fn packet(data: &[u8]) {
    fast_paths_agree(data);
    match Packet::decode(data) {
        Ok(p) => {
            assert!(
                data.starts_with(p.wire()),
                "a packet is a prefix of its frame"
            );
            assert!(
                data[p.wire().len()..].iter().all(|&b| b == 0),
                "only zero padding after it"
            );
            match p {
                Packet::Interest(i) => check_interest(&i, data),
                Packet::Data(d) => check_data(&d, data),
                Packet::Lp(l) => check_lp(&l, data),
            }
        }
        Err(e) => check_error(e, data),
    }
    let _ = tree::walk(data, &mut |_| {});
}

/// `Interest::decode`; on success, the Interest's repr re-encodes and re-decodes to itself.
pub fn interest(data: &[u8]) {
    fast_paths_agree(data);
    match Interest::decode(data) {
        Ok(i) => {
            assert_eq!(i.wire(), data, "an Interest fills its buffer");
            check_interest(&i, data);
        }
        Err(e) => check_error(e, data),
    }
}

/// `Data::decode`; on success, the Data's repr re-encodes and re-decodes to itself.
pub fn data(data: &[u8]) {
    fast_paths_agree(data);
    match Data::decode(data) {
        Ok(d) => {
            assert_eq!(d.wire(), data, "a Data fills its buffer");
            check_data(&d, data);
        }
        Err(e) => check_error(e, data),
    }
}

/// `LpPacket::decode`; on success, its headers and fragment re-encode and re-decode to
/// themselves, and the network packet inside (if any) passes its own checks.
pub fn lp_packet(data: &[u8]) {
    fast_paths_agree(data);
    match LpPacket::decode(data) {
        Ok(l) => {
            assert_eq!(l.wire(), data, "an LpPacket fills its buffer");
            check_lp(&l, data);
        }
        Err(e) => check_error(e, data),
    }
}

/// `NameBuf::from_uri` on the bytes as a string (lossily converted when not UTF-8): a parsed
/// name prints as a URI that parses back to the same name and prints the same again.
pub fn name_uri(data: &[u8]) {
    let s = String::from_utf8_lossy(data);
    match NameBuf::from_uri(&s) {
        Ok(n) => {
            let printed = n.to_string();
            let again = NameBuf::from_uri(&printed)
                .unwrap_or_else(|e| panic!("{printed:?} (printed from {s:?}) does not parse: {e}"));
            assert_eq!(again, n, "{s:?} -> {printed:?} -> a different name");
            assert_eq!(
                again.to_string(),
                printed,
                "printing is not stable for {s:?}"
            );
            check_name(n.as_name());
        }
        Err(e) => assert!(
            e.position <= s.len(),
            "URI error position past the end: {e:?}"
        ),
    }
}

/// `Name::decode` on the whole input, then the input read as a sequence of Name TLVs whose
/// canonical order is checked pairwise against a reference model.
pub fn name_tlv(data: &[u8]) {
    match Name::decode(data) {
        Ok(n) => {
            assert_eq!(n.encoded_len(), data.len(), "a Name fills its buffer");
            check_name(n);
        }
        Err(e) => check_error(e, data),
    }
    let names: Vec<Name<'_>> = Reader::new(data)
        .map_while(Result::ok)
        .filter_map(|t| Name::decode(t.wire).ok())
        .take(MAX_CHECKED)
        .collect();
    for a in &names {
        check_name(*a);
        for b in &names {
            check_order(*a, *b);
        }
    }
}

/// `tree::walk`: never panics, every node lies inside the input where it says it does, the
/// depth bound holds, and errors point inside the input.
pub fn tree(data: &[u8]) {
    let mut nodes = 0usize;
    let result = tree::walk(data, &mut |n| {
        nodes += 1;
        let t = n.tlv;
        assert!(
            n.depth < tree::MAX_DEPTH,
            "node deeper than the bound: {n:?}"
        );
        assert_eq!(
            data.get(t.offset..t.offset + t.wire.len()),
            Some(t.wire),
            "node misplaced"
        );
        assert!(t.wire.ends_with(t.value), "a value ends its element");
        assert_eq!(t.value_offset() + t.value.len(), t.offset + t.wire.len());
        assert!(
            n.depth > 0 || n.parent == 0,
            "top-level nodes have no parent"
        );
    });
    // Every element has a header of at least 2 bytes, and headers never overlap.
    assert!(
        2 * nodes <= data.len(),
        "{nodes} nodes in {} bytes",
        data.len()
    );
    if let Err(e) = result {
        check_error(e, data);
    }
}

/// A [`Reassembler`] driven by a script of records. The first 4 bytes pick small limits (so
/// eviction, expiry and size limits are reached); then each record is `op, peer, dt` followed
/// by its operands, with `now` advancing by `dt` ms (or going back, when `dt`'s top bit is set):
///
/// - `op % 4 == 0`: `len_hi, len_lo`, then `len` bytes decoded as an LpPacket and pushed;
/// - `op % 4 == 1`: `seq, index, count, len`: a fragment built with [`LpHeaders::encode`],
///   whose `len` payload bytes all equal `index`, pushed from a peer of its own;
/// - `op % 4 == 2`: `expire(now)`; `op % 4 == 3`: `remove_peer(peer)`.
///
/// Checks: no panic; at most `max_partials` sets in progress; counters never decrease; an
/// unfragmented LpPacket comes back as its own Fragment; a packet reassembled from built
/// fragments holds their payloads in FragIndex order, none missing (bytes `0, 0, 1, 2, 2, ...`).
pub fn reassembler(data: &[u8]) {
    let Some((cfg, mut rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let config = ReassemblerConfig {
        max_partials: usize::from(cfg[0] % 8) + 1,
        max_packet_len: usize::from(u16::from_be_bytes([cfg[1] % 16, cfg[2]])) + 1,
        max_frag_count: u64::from(cfg[3] % 20) + 1,
        timeout_ns: (u64::from(cfg[3] / 20) + 1) * 10_000_000,
    };
    let mut r = Reassembler::new(config);
    let limits = *r.config();
    let mut now: u64 = 1_000_000_000;
    let mut last = r.counters();
    let mut frame = Vec::new();
    while let Some((&[op, peer, dt], tail)) = rest.split_first_chunk::<3>() {
        rest = tail;
        let step = u64::from(dt & 0x7F) * 1_000_000;
        now = if dt & 0x80 == 0 {
            now + step
        } else {
            now.saturating_sub(step)
        };
        match op % 4 {
            0 => {
                let Some((&[hi, lo], tail)) = rest.split_first_chunk::<2>() else {
                    break;
                };
                let len = usize::from(u16::from_be_bytes([hi, lo])).min(tail.len());
                let (bytes, tail) = tail.split_at(len);
                rest = tail;
                match LpPacket::decode(bytes) {
                    Ok(lp) => {
                        let fragment = lp.fragment();
                        let whole = !lp.is_fragment();
                        if let Ok(Some(out)) = r.push(now, u64::from(peer), &lp) {
                            assert!(out.packet.len() <= limits.max_packet_len.max(bytes.len()));
                            if whole {
                                assert_eq!(Some(out.packet), fragment, "unfragmented packet");
                            }
                        }
                    }
                    Err(e) => check_error(e, bytes),
                }
            }
            1 => {
                let Some((&[seq, index, count, len], tail)) = rest.split_first_chunk::<4>() else {
                    break;
                };
                rest = tail;
                let (index, count) = (u64::from(index % 24), u64::from(count % 24));
                let payload = vec![index as u8; usize::from(len)];
                let headers = LpHeaders {
                    sequence: Some(u64::from(seq)),
                    frag_index: Some(index),
                    frag_count: Some(count),
                    ..LpHeaders::default()
                };
                frame.resize(headers.encoded_len(Some(payload.len())), 0);
                let Ok(n) = headers.encode(Some(&payload), &mut frame) else {
                    continue;
                };
                let lp = LpPacket::decode(&frame[..n]).expect("an encoded fragment decodes");
                if let Ok(Some(out)) = r.push(now, 1000 + u64::from(peer), &lp) {
                    if count > 1 {
                        // Only reassembled packets are bounded; a whole one passes through.
                        let p = out.packet;
                        assert!(p.len() <= limits.max_packet_len);
                        assert_eq!(p.first(), Some(&0), "reassembled from fragment 0");
                        assert!(
                            p.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1),
                            "pieces out of order or missing: {p:?}"
                        );
                    } else {
                        assert_eq!(out.packet, &payload[..]);
                    }
                }
            }
            2 => r.expire(now),
            _ => r.remove_peer(u64::from(peer)),
        }
        assert!(r.partials() <= limits.max_partials, "more sets than slots");
        if let Some(t) = r.next_expiry() {
            assert!(r.partials() > 0);
            let _ = t;
        } else {
            assert_eq!(r.partials(), 0, "sets in progress but no expiry");
        }
        let c = r.counters();
        for (now_c, was) in [
            (c.fragments_received, last.fragments_received),
            (c.packets_completed, last.packets_completed),
            (c.duplicates, last.duplicates),
            (c.expired, last.expired),
            (c.evicted, last.evicted),
            (c.invalid, last.invalid),
            (c.too_large, last.too_large),
        ] {
            assert!(now_c >= was, "a counter went down: {last:?} -> {c:?}");
        }
        last = c;
    }
}

/// Which fast paths accepted an input of [`fast_paths_agree`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FastPaths {
    /// The Interest fast path accepted the first TLV (or the LpPacket's Fragment).
    pub interest: bool,
    /// The Data fast path accepted the first TLV (or the LpPacket's Fragment).
    pub data: bool,
    /// The LpPacket fast path accepted the first TLV.
    pub lp: bool,
    /// `Packet::decode` read the frame's TLV header itself and handed the TLV straight to
    /// its decoder, without its general path (`Packet::fast_tlv`).
    pub frame: bool,
    /// `LpPacket::network_packet` read the Fragment's TLV header itself and handed the TLV
    /// straight to its decoder, without its general path (`LpPacket::fast_network_tlv`).
    pub fragment: bool,
    /// `Packet::decode_usual` read the frame (a bare Interest or Data, or one in an
    /// LpPacket holding a PitToken alone) in one pass.
    pub usual: bool,
}

/// The decoders' fast paths change no result: for the first TLV of `data` (and, in an
/// LpPacket, its Fragment's TLV), `Interest::from_tlv`, `Data::from_tlv` and
/// `LpPacket::from_tlv` return exactly what their general decoders return (equal views,
/// accessor by accessor, or the same [`Error`]); and whenever a fast path accepts, so does the
/// general decoder. `Packet::decode` and `LpPacket::network_packet` (of either LpPacket view)
/// return what their general paths return too, and `Packet::decode_usual`, when it reads the
/// frame, what `Packet::decode` and `LpPacket::network_packet` return. Returns which fast
/// paths accepted, so tests can check both sides of their guards are reached.
pub fn fast_paths_agree(data: &[u8]) -> FastPaths {
    let mut taken = FastPaths {
        frame: Packet::fast_tlv(data).is_some(),
        usual: usual_agrees(data),
        ..FastPaths::default()
    };
    same(
        Packet::decode(data),
        Packet::decode_general(data),
        packet_fields,
    );
    let Ok(t) = Reader::new(data).read() else {
        return taken;
    };
    taken.interest = agree_interest(t);
    taken.data = agree_data(t);
    let fast = fast_ok(&t, crate::types::LP_PACKET, Element::LpPacket)
        .then(|| LpPacket::from_tlv_fast(&t))
        .flatten();
    taken.lp = fast.is_some();
    let general = LpPacket::from_tlv_general(t);
    same(LpPacket::from_tlv(t), general, lp_fields);
    same(view::from_read_tlv::<LpPacket<'_>>(t), general, lp_fields);
    if let Some(f) = fast {
        let g = general.expect("the general LpPacket decoder accepts what the fast path does");
        assert_eq!(lp_fields(&f), lp_fields(&g), "LpPacket fast path differs");
    }
    for lp in fast.iter().chain(general.as_ref().ok()) {
        same(
            lp.network_packet(),
            lp.network_packet_general(),
            |p: &Option<Packet<'_>>| p.as_ref().map_or_else(String::new, packet_fields),
        );
        // The Interests and Data `network_packet` hands straight to their decoders.
        taken.fragment |= lp.fast_network_tlv().is_some_and(|t| {
            t.typ == crate::types::INTEREST || (t.typ == crate::types::DATA && lp.nack().is_none())
        });
    }
    if let Ok(lp) = general
        && let (Some(frag), Some(at)) = (lp.fragment(), lp.fragment_offset())
        && let Ok(inner) = Reader::with_base(frag, at).read()
    {
        taken.interest |= agree_interest(inner);
        taken.data |= agree_data(inner);
    }
    taken
}

/// `Packet::decode_usual` returns what `Packet::decode` returns for `data` (for an LpPacket:
/// its network packet and PitToken, and an LpPacket with no other header, no ack and no
/// fragmentation); whether it read the frame.
fn usual_agrees(data: &[u8]) -> bool {
    let Some(usual) = Packet::decode_usual(data) else {
        return false;
    };
    let (packet, token) = match Packet::decode(data) {
        Ok(Packet::Lp(lp)) => {
            let bare = LpHeaders {
                pit_token: lp.pit_token(),
                ..LpHeaders::default()
            };
            assert_eq!(
                lp.headers(),
                bare,
                "decode_usual: an LpPacket with other headers"
            );
            assert_eq!(lp.acks().count(), 0, "decode_usual: an LpPacket with acks");
            assert!(
                lp.pit_token().is_some(),
                "decode_usual: an LpPacket without a token"
            );
            match lp.network_packet() {
                Ok(Some(p)) => (p, lp.pit_token()),
                other => panic!("decode_usual read {data:02x?}, network_packet gives {other:?}"),
            }
        }
        Ok(p) => (p, None),
        Err(e) => panic!("decode_usual read {data:02x?}, decode refuses it: {e:?}"),
    };
    let (fast, fast_token) = match usual {
        crate::Usual::Interest(i, t) => (Packet::Interest(i), t),
        crate::Usual::Data(d, t) => (Packet::Data(d), t),
    };
    assert_eq!(fast_token, token, "decode_usual: another PitToken");
    assert_eq!(
        packet_fields(&fast),
        packet_fields(&packet),
        "decode_usual differs from decode"
    );
    true
}

/// Whether `t` meets the fast paths' precondition (the type checked, `view::check_len`).
fn fast_ok(t: &Tlv<'_>, typ: u64, what: Element) -> bool {
    t.typ == typ && view::check_len(t, what).is_ok()
}

/// `Interest::from_tlv` agrees with the general decoder on `t`; whether the fast path took it.
fn agree_interest(t: Tlv<'_>) -> bool {
    let fast = fast_ok(&t, crate::types::INTEREST, Element::Interest)
        .then(|| Interest::from_tlv_fast(&t))
        .flatten();
    let general = Interest::from_tlv_general(t);
    same(Interest::from_tlv(t), general, interest_fields);
    same(
        view::from_read_tlv::<Interest<'_>>(t),
        general,
        interest_fields,
    );
    if let Some(f) = &fast {
        let g = general.expect("the general Interest decoder accepts what the fast path does");
        assert_eq!(
            interest_fields(f),
            interest_fields(&g),
            "Interest fast path differs"
        );
    }
    fast.is_some()
}

/// `Data::from_tlv` agrees with the general decoder on `t`; whether the fast path took it.
fn agree_data(t: Tlv<'_>) -> bool {
    let fast = fast_ok(&t, crate::types::DATA, Element::Data)
        .then(|| Data::from_tlv_fast(&t))
        .flatten();
    let general = Data::from_tlv_general(t);
    same(Data::from_tlv(t), general, data_fields);
    same(view::from_read_tlv::<Data<'_>>(t), general, data_fields);
    if let Some(f) = &fast {
        let g = general.expect("the general Data decoder accepts what the fast path does");
        assert_eq!(data_fields(f), data_fields(&g), "Data fast path differs");
    }
    fast.is_some()
}

/// Two decoding results are the same: the same error, or views with equal `fields`.
fn same<T>(a: Result<T>, b: Result<T>, fields: fn(&T) -> String) {
    match (&a, &b) {
        (Ok(x), Ok(y)) => assert_eq!(fields(x), fields(y), "decoders disagree"),
        (Err(x), Err(y)) => assert_eq!(x, y, "decoders report different errors"),
        _ => panic!(
            "one decoder accepts, the other does not: {:?} vs {:?}",
            a.as_ref().err(),
            b.as_ref().err()
        ),
    }
}

/// Every accessor of the packet's view.
fn packet_fields(p: &Packet<'_>) -> String {
    match p {
        Packet::Interest(i) => interest_fields(i),
        Packet::Data(d) => data_fields(d),
        Packet::Lp(l) => lp_fields(l),
    }
}

/// Every accessor of an Interest (`Debug` prints the fields as the accessors return them).
fn interest_fields(i: &Interest<'_>) -> String {
    let n = i.name();
    format!(
        "{i:?} {} {:?} {:?} {} {}",
        n.len(),
        n.as_bytes(),
        i.forwarding_hint().map(|f| f.names().collect::<Vec<_>>()),
        i.effective_lifetime_ms(),
        i.params_digest_ok(),
    )
}

/// Every accessor of a Data.
fn data_fields(d: &Data<'_>) -> String {
    let n = d.name();
    format!(
        "{d:?} {} {:?} {} {} {:?}",
        n.len(),
        n.as_bytes(),
        d.has_content(),
        d.digest_signature_ok(),
        d.signed_portion(),
    )
}

/// Every accessor of an LpPacket, and the network packet it carries.
fn lp_fields(l: &LpPacket<'_>) -> String {
    let inner = match l.network_packet() {
        Ok(Some(Packet::Interest(i))) => interest_fields(&i),
        Ok(Some(Packet::Data(d))) => data_fields(&d),
        other => format!("{other:?}"),
    };
    format!(
        "{l:?} {:?} {} {} {:?} {:?} {:?} {inner}",
        l.acks().collect::<Vec<_>>(),
        l.frag_index(),
        l.frag_count(),
        l.sequence(),
        l.pit_token(),
        l.nack(),
    )
}

fn check_error(e: Error, data: &[u8]) {
    assert!(
        e.offset <= data.len(),
        "error offset past the end of {} bytes: {e:?}",
        data.len()
    );
}

/// `wire` sits at `offset` of `buf`.
fn check_placed(wire: &[u8], offset: usize, buf: &[u8]) {
    assert_eq!(
        buf.get(offset..offset + wire.len()),
        Some(wire),
        "view at the wrong offset"
    );
}

fn check_interest(i: &Interest<'_>, buf: &[u8]) {
    check_placed(i.wire(), i.offset(), buf);
    check_name(i.name());
    if let Some(off) = i.hop_limit_offset() {
        assert_eq!(
            buf.get(off).copied(),
            i.hop_limit(),
            "HopLimit offset is wrong"
        );
    }
    if let Some(fh) = i.forwarding_hint() {
        assert!(!fh.is_empty());
        assert_eq!(fh.names().count(), fh.len(), "ForwardingHint names lost");
        fh.names().take(MAX_CHECKED).for_each(check_name);
    }
    let _ = i.params_digest_ok();
    let repr = i.to_repr();
    let wire = repr
        .to_vec()
        .unwrap_or_else(|e| panic!("a decoded Interest must re-encode: {e} ({repr:?})"));
    assert_eq!(wire.len(), repr.encoded_len());
    let again = Interest::decode(&wire)
        .unwrap_or_else(|e| panic!("a re-encoded Interest must decode: {e} ({repr:?})"));
    assert_eq!(again.to_repr(), repr, "Interest repr round trip");
    assert_eq!(again.name(), i.name());
    if i.hop_limit().is_some() {
        assert!(again.hop_limit_offset().is_some());
    }
}

fn check_data(d: &Data<'_>, buf: &[u8]) {
    check_placed(d.wire(), d.offset(), buf);
    check_name(d.name());
    let signed = d.signed_portion();
    assert!(
        !signed.is_empty(),
        "a Data's signed portion holds at least its Name"
    );
    assert!(
        d.wire().windows(signed.len()).any(|w| w == signed),
        "the signed portion lies inside the Data"
    );
    let _ = d.digest_signature_ok();
    if let Some(c) = d.final_block_id() {
        let _ = c.to_string();
    }
    assert!(
        d.matches_name(&d.name(), false),
        "a Data matches its own name"
    );
    let full = d.full_name();
    assert_eq!(full.len(), d.name().len() + 1);
    assert!(
        d.matches_name(&full.as_name(), false),
        "a Data matches its full name"
    );
    let repr = d.to_repr();
    let wire = repr
        .to_vec()
        .unwrap_or_else(|e| panic!("a decoded Data must re-encode: {e} ({repr:?})"));
    assert_eq!(wire.len(), repr.encoded_len());
    let again = Data::decode(&wire)
        .unwrap_or_else(|e| panic!("a re-encoded Data must decode: {e} ({repr:?})"));
    assert_eq!(again.to_repr(), repr, "Data repr round trip");
    assert_eq!(
        again.signature_value(),
        d.signature_value(),
        "SignatureValue round trip"
    );
}

fn check_lp(l: &LpPacket<'_>, buf: &[u8]) {
    check_placed(l.wire(), l.offset(), buf);
    assert!(l.frag_index() < l.frag_count(), "FragIndex below FragCount");
    if let (Some(f), Some(off)) = (l.fragment(), l.fragment_offset()) {
        check_placed(f, off, buf);
    }
    if let Some(t) = l.pit_token() {
        assert!((1..=crate::MAX_PIT_TOKEN_LEN).contains(&t.len()));
    }
    match l.network_packet() {
        Ok(Some(p)) => {
            assert!(!l.is_fragment());
            match p {
                Packet::Interest(i) => check_interest(&i, buf),
                Packet::Data(d) => {
                    assert!(l.nack().is_none(), "a Nack carries an Interest");
                    check_data(&d, buf);
                }
                Packet::Lp(_) => panic!("an LpPacket inside an LpPacket"),
            }
        }
        Ok(None) => assert!(l.fragment().is_none() || l.is_fragment()),
        Err(e) => check_error(e, buf),
    }
    // Re-encode the headers (with the acks, which the view keeps apart) and the fragment.
    let acks: Vec<u64> = l.acks().collect();
    let headers = LpHeaders {
        acks: &acks,
        ..l.headers()
    };
    let mut out = vec![0; headers.encoded_len(l.fragment().map(<[u8]>::len))];
    let n = headers
        .encode(l.fragment(), &mut out)
        .unwrap_or_else(|e| panic!("decoded LP headers must re-encode: {e} ({headers:?})"));
    assert_eq!(n, out.len());
    let again = LpPacket::decode(&out)
        .unwrap_or_else(|e| panic!("re-encoded LP headers must decode: {e} ({headers:?})"));
    assert_eq!(again.headers(), l.headers(), "LP header round trip");
    assert_eq!(again.acks().collect::<Vec<_>>(), acks, "Ack round trip");
    assert_eq!(again.fragment(), l.fragment(), "Fragment round trip");
}

/// Invariants of one valid name: component count, prefixes, order against its prefixes,
/// owned copies, and the URI round trip.
fn check_name(n: Name<'_>) {
    let comps: Vec<_> = n.components().collect();
    assert_eq!(comps.len(), n.len(), "component count");
    let joined: Vec<u8> = comps
        .iter()
        .flat_map(|c| c.wire().iter().copied())
        .collect();
    assert_eq!(joined, n.as_bytes(), "components tile the name");
    assert_eq!(n.last(), comps.last().copied());

    let ks = (0..=n.len().min(MAX_CHECKED)).chain(n.len().saturating_sub(2)..=n.len());
    for k in ks {
        let p = n.prefix(k);
        assert_eq!(p.len(), k.min(n.len()), "prefix({k}) length");
        assert!(p.is_prefix_of(&n), "prefix({k}) is a prefix");
        assert_eq!(p.as_bytes(), &n.as_bytes()[..p.as_bytes().len()]);
        check_order(p, n);
        let expected = if p.len() == n.len() {
            Ordering::Equal
        } else {
            Ordering::Less
        };
        assert_eq!(p.cmp(&n), expected, "a proper prefix sorts first");
    }

    let owned = n.to_buf();
    assert_eq!(owned.as_name(), n);
    assert_eq!(owned.len(), n.len());
    let rebuilt = NameBuf::from_component_bytes(n.as_bytes()).expect("valid components");
    assert_eq!(rebuilt, owned);
    let tlv = owned.to_tlv();
    assert_eq!(Name::decode(&tlv).ok(), Some(n), "Name TLV round trip");

    let uri = n.to_string();
    let parsed = NameBuf::from_uri(&uri)
        .unwrap_or_else(|e| panic!("{uri:?} (printed from a decoded name) does not parse: {e}"));
    assert_eq!(parsed, owned, "URI round trip through {uri:?}");
}

/// Canonical order of two names: antisymmetric, consistent with equality and with a
/// reference model (component by component: type, then length, then bytes; shorter first).
fn check_order(a: Name<'_>, b: Name<'_>) {
    let ab = a.cmp(&b);
    assert_eq!(
        ab,
        b.cmp(&a).reverse(),
        "order is antisymmetric for {a} and {b}"
    );
    assert_eq!(
        ab == Ordering::Equal,
        a == b,
        "order agrees with equality for {a} and {b}"
    );
    assert_eq!(a == b, a.as_bytes() == b.as_bytes());
    let key = |n: Name<'_>| -> Vec<(u16, usize, Vec<u8>)> {
        n.components()
            .map(|c| (c.typ(), c.value().len(), c.value().to_vec()))
            .collect()
    };
    assert_eq!(
        ab,
        key(a).cmp(&key(b)),
        "order differs from the model for {a} and {b}"
    );
    if a.is_prefix_of(&b) {
        assert_ne!(ab, Ordering::Greater, "{a} is a prefix of {b}");
    }
}
