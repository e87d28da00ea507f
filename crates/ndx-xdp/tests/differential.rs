//! Differential fuzzing of the XDP program's parser against user space: valid NDN frames
//! (Ethernet, UDP/IPv4, UDP/IPv6, with or without a VLAN tag; Interests, Data, LpPackets with
//! headers, Nacks, fragments, IDLE packets, long names) are mutated (bit flips, byte edits,
//! truncations, TLV length edits, elements inserted, removed, duplicated, moved or retyped,
//! non-minimal lengths, header edits) and run through the loaded program with
//! BPF_PROG_TEST_RUN. What the program says (verdict, kind, how, hash, shard, encapsulation,
//! NDN offset) is compared with user space's view of the same frame: `ndx_afxdp::wire::parse`
//! for the encapsulation, `ndx_codec::Packet::decode` for the packet, `ndx_core::Dispatch`
//! for the shard. Root only.
//!
//! Every frame is reproducible: frame `i` of a run with seed `S` is generated from
//! `frame_seed(S, i)` and a failure prints both. The program is deliberately less strict
//! than the codec (it reads the encapsulation's headers and the packet up to its Name, or
//! the LpPacket's header fields), so two kinds of disagreement are expected and only
//! counted (see `bpf/README.md`, "What the program does not check"):
//! `encap_lenient` (the program takes a frame as NDN that `wire::parse` refuses) and
//! `ndn_lenient` (the program classifies a packet the codec rejects). Every other
//! disagreement fails the test.
//!
//! The normal `cargo test` runs a few thousand frames. The long run:
//! `NDX_XDP_DIFF_FRAMES=10000000 cargo test --release -p ndx-xdp --test differential -- --nocapture`
//! (`NDX_XDP_DIFF_SEED` picks the seed; `NDX_XDP_DIFF_ONLY=i` reruns frame `i` alone).

mod common;

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Instant;

use common::*;
use ndx_afxdp::wire;
use ndx_codec::{
    CachePolicy, DataRepr, Fragmenter, InterestRepr, LpHeaders, NackReason, NameBuf, Packet,
};
use ndx_core::{Dispatch, DispatchMode, HashKey, PIT_TOKEN_LEN};
use ndx_xdp::{
    Encap, How, Kind, MAX_COMPONENTS, MAX_NAME_BYTES, NdxXdp, XdpConfig, XdpMeta, verdict,
};

const PORTS: [u16; 2] = [6363, 56363];
/// Frames per program load (each block draws a new configuration).
const BLOCK: u64 = 25_000;

// ---------------------------------------------------------------------------------------
// A TLV tree, for structure-aware mutations (re-encoded with correct lengths).

/// TLV-TYPEs whose value is a sequence of elements (NDN packet format v0.3, NDNLPv2).
const CONTAINERS: &[u64] = &[5, 6, 7, 20, 22, 28, 30, 44, 80, 100, 800, 820];
/// Types worth inserting or retyping to: packets, Name and components, Interest/Data
/// elements, LpPacket fields (critical and not), and a few unknown ones.
const TYPES: &[u64] = &[
    5, 6, 7, 8, 1, 2, 32, 33, 50, 54, 10, 12, 18, 20, 21, 22, 23, 30, 34, 36, 100, 80, 81, 82, 83,
    98, 800, 801, 816, 817, 820, 832, 836, 840, 844, 848, 0, 3, 31, 127, 128, 253, 900, 901, 959,
    960, 65535, 65536,
];

#[derive(Clone, Debug)]
struct Tlv {
    typ: u64,
    val: Val,
    /// Write the TLV-LENGTH in a longer form than needed (non-minimal).
    long_len: bool,
}

#[derive(Clone, Debug)]
enum Val {
    Raw(Vec<u8>),
    Kids(Vec<Tlv>),
}

/// A VAR-NUMBER (any form, minimal or not).
fn varnum(b: &[u8], at: &mut usize) -> Option<u64> {
    let first = *b.get(*at)?;
    let n = match first {
        0..=252 => {
            *at += 1;
            return Some(u64::from(first));
        }
        253 => 2,
        254 => 4,
        255 => 8,
    };
    let bytes = b.get(*at + 1..*at + 1 + n)?;
    *at += 1 + n;
    Some(bytes.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
}

fn parse_seq(b: &[u8]) -> Option<Vec<Tlv>> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < b.len() {
        let typ = varnum(b, &mut at)?;
        let len = usize::try_from(varnum(b, &mut at)?).ok()?;
        let value = b.get(at..at.checked_add(len)?)?;
        at += len;
        let val = match CONTAINERS
            .contains(&typ)
            .then(|| parse_seq(value))
            .flatten()
        {
            Some(kids) => Val::Kids(kids),
            None => Val::Raw(value.to_vec()),
        };
        out.push(Tlv {
            typ,
            val,
            long_len: false,
        });
    }
    Some(out)
}

fn put_varnum(out: &mut Vec<u8>, v: u64, long: bool) {
    if v < 253 && !long {
        out.push(v as u8);
    } else if v <= 0xffff {
        out.push(253);
        out.extend_from_slice(&(v as u16).to_be_bytes());
    } else if v <= 0xffff_ffff {
        out.push(254);
        out.extend_from_slice(&(v as u32).to_be_bytes());
    } else {
        out.push(255);
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Encodes `list`, recording where each TLV-LENGTH starts (for length edits).
fn encode(list: &[Tlv], out: &mut Vec<u8>, lens: &mut Vec<usize>) {
    for t in list {
        put_varnum(out, t.typ, false);
        let mut value = Vec::new();
        let mut inner = Vec::new();
        match &t.val {
            Val::Raw(v) => value.extend_from_slice(v),
            Val::Kids(k) => encode(k, &mut value, &mut inner),
        }
        lens.push(out.len());
        put_varnum(out, value.len() as u64, t.long_len);
        let base = out.len();
        lens.extend(inner.iter().map(|p| p + base));
        out.extend_from_slice(&value);
    }
}

/// Every node's path (child indices from the top list).
fn paths(list: &[Tlv], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    for (i, t) in list.iter().enumerate() {
        prefix.push(i);
        out.push(prefix.clone());
        if let Val::Kids(k) = &t.val {
            paths(k, prefix, out);
        }
        prefix.pop();
    }
}

/// The list holding the node at `path` (all but its last index).
fn parent_list<'a>(top: &'a mut Vec<Tlv>, path: &[usize]) -> &'a mut Vec<Tlv> {
    let mut list = top;
    for &i in &path[..path.len() - 1] {
        list = match &mut list[i].val {
            Val::Kids(k) => k,
            Val::Raw(_) => unreachable!("paths only descend into containers"),
        };
    }
    list
}

/// Lists that may receive a new element: the top one and every container's.
fn lists(list: &[Tlv], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    for (i, t) in list.iter().enumerate() {
        if let Val::Kids(k) = &t.val {
            prefix.push(i);
            out.push(prefix.clone());
            lists(k, prefix, out);
            prefix.pop();
        }
    }
}

fn list_at<'a>(top: &'a mut Vec<Tlv>, path: &[usize]) -> &'a mut Vec<Tlv> {
    let mut list = top;
    for &i in path {
        list = match &mut list[i].val {
            Val::Kids(k) => k,
            Val::Raw(_) => unreachable!("lists() only names containers"),
        };
    }
    list
}

fn random_value(rng: &mut Rng) -> Vec<u8> {
    match rng.below(6) {
        0 => Vec::new(),
        1 => vec![rng.next() as u8],
        2 => (rng.next() as u16).to_be_bytes().to_vec(),
        3 => (rng.next() as u32).to_be_bytes().to_vec(),
        4 => rng.next().to_be_bytes().to_vec(),
        _ => {
            let n = rng.below(20) as usize;
            rng.bytes(n)
        }
    }
}

fn random_tlv(rng: &mut Rng) -> Tlv {
    let typ = if rng.chance(8) {
        rng.below(70000)
    } else {
        TYPES[rng.below(TYPES.len() as u64) as usize]
    };
    Tlv {
        typ,
        val: Val::Raw(random_value(rng)),
        long_len: false,
    }
}

/// One structure-aware mutation; false when the tree offered nothing to mutate.
fn mutate_tree(rng: &mut Rng, top: &mut Vec<Tlv>) -> bool {
    let mut all = Vec::new();
    paths(top, &mut Vec::new(), &mut all);
    if all.is_empty() {
        return false;
    }
    let path = all[rng.below(all.len() as u64) as usize].clone();
    let i = *path.last().unwrap();
    match rng.below(10) {
        0 => {
            parent_list(top, &path).remove(i);
        }
        1 => {
            let l = parent_list(top, &path);
            let c = l[i].clone();
            l.insert(i + 1, c);
        }
        2 => {
            let mut ls = vec![Vec::new()];
            lists(top, &mut Vec::new(), &mut ls);
            let lp = ls[rng.below(ls.len() as u64) as usize].clone();
            let t = random_tlv(rng);
            let l = list_at(top, &lp);
            let at = rng.below(l.len() as u64 + 1) as usize;
            l.insert(at, t);
        }
        3 => {
            let l = parent_list(top, &path);
            if i + 1 < l.len() {
                l.swap(i, i + 1);
            }
        }
        4 => {
            let typ = TYPES[rng.below(TYPES.len() as u64) as usize];
            parent_list(top, &path)[i].typ = typ;
        }
        5 => {
            let v = random_value(rng);
            parent_list(top, &path)[i].val = Val::Raw(v);
        }
        6 => parent_list(top, &path)[i].long_len = true,
        7 => {
            // Move an element to another list.
            let t = parent_list(top, &path).remove(i);
            let mut ls = vec![Vec::new()];
            lists(top, &mut Vec::new(), &mut ls);
            let lp = ls[rng.below(ls.len() as u64) as usize].clone();
            let l = list_at(top, &lp);
            let at = rng.below(l.len() as u64 + 1) as usize;
            l.insert(at, t);
        }
        8 => {
            // Grow the first Name found past the program's limits, or just around them.
            let names: Vec<_> = all
                .iter()
                .filter(|p| {
                    let mut l: &[Tlv] = top;
                    for &j in &p[..p.len() - 1] {
                        match &l[j].val {
                            Val::Kids(k) => l = k,
                            Val::Raw(_) => return false,
                        }
                    }
                    l[p[p.len() - 1]].typ == 7
                })
                .cloned()
                .collect();
            let Some(p) = names.first() else { return false };
            let j = p[p.len() - 1];
            let name = &mut parent_list(top, p)[j];
            let comps = match &mut name.val {
                Val::Kids(k) => k,
                Val::Raw(_) => return false,
            };
            if rng.chance(2) {
                let n = MAX_COMPONENTS - 2 + rng.below(5) as usize;
                while comps.len() < n {
                    comps.push(Tlv {
                        typ: 8,
                        val: Val::Raw({
                            let n = rng.below(3) as usize;
                            rng.bytes(n)
                        }),
                        long_len: false,
                    });
                }
            } else {
                let total: usize = comps.len() * 2;
                let len = (MAX_NAME_BYTES - 8).saturating_sub(total) + rng.below(16) as usize;
                comps.push(Tlv {
                    typ: 8,
                    val: Val::Raw(rng.bytes(len)),
                    long_len: false,
                });
            }
        }
        _ => {
            // Retype to a random (possibly huge) type.
            let width = 8 * (1 + rng.below(4));
            let typ = rng.below(1 << width);
            parent_list(top, &path)[i].typ = typ;
        }
    }
    true
}

/// One byte-level mutation of the encoded packet (`lens`: where its TLV-LENGTHs start).
fn mutate_bytes(rng: &mut Rng, p: &mut Vec<u8>, lens: &[usize]) {
    if p.is_empty() {
        p.extend({
            let n = 1 + rng.below(4) as usize;
            rng.bytes(n)
        });
        return;
    }
    let at = rng.below(p.len() as u64) as usize;
    match rng.below(8) {
        0 => p[at] ^= 1 << rng.below(8),
        1 => p[at] = rng.next() as u8,
        2 => p.truncate(at),
        3 => {
            let n = 1 + rng.below(8) as usize;
            if rng.chance(2) {
                p.resize(p.len() + n, 0);
            } else {
                p.extend(rng.bytes(n));
            }
        }
        4 | 5 => {
            // A TLV-LENGTH edit.
            if let Some(&l) = lens.get(rng.below(lens.len().max(1) as u64) as usize)
                && l < p.len()
            {
                p[l] = match rng.below(5) {
                    0 => p[l].wrapping_add(1),
                    1 => p[l].wrapping_sub(1),
                    2 => 0,
                    3 => 253 + rng.below(3) as u8,
                    _ => rng.next() as u8,
                };
            }
        }
        6 => p.insert(at, rng.next() as u8),
        _ => {
            p.remove(at);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Valid packets.

fn random_name(rng: &mut Rng) -> NameBuf {
    let mut n = NameBuf::new();
    if rng.chance(40) {
        // Long names: around the program's 2048-byte and 128-component limits.
        if rng.chance(2) {
            for _ in 0..MAX_COMPONENTS - 3 + rng.below(6) as usize {
                n.push_generic(&{
                    let n = rng.below(3) as usize;
                    rng.bytes(n)
                });
            }
        } else {
            n.push_generic(&{
                let n = MAX_NAME_BYTES - 12 + rng.below(20) as usize;
                rng.bytes(n)
            });
        }
    } else {
        let comps = 1 + rng.below(8);
        push_random_components(rng, &mut n, comps, 30);
    }
    push_random_last(rng, &mut n);
    n
}

fn random_interest(rng: &mut Rng, name: NameBuf) -> Vec<u8> {
    let mut i = InterestRepr::new(name);
    i.can_be_prefix = rng.chance(2);
    i.must_be_fresh = rng.chance(2);
    if rng.chance(4) {
        i.forwarding_hint = vec![random_name(rng)];
    }
    i.nonce = (!rng.chance(8)).then(|| rng.next() as u32);
    i.lifetime_ms = rng.chance(2).then(|| rng.below(10_000));
    i.hop_limit = rng.chance(3).then(|| rng.next() as u8);
    let plain = InterestRepr::new(i.name.clone());
    i.to_vec()
        .unwrap_or_else(|_| plain.to_vec().expect("a plain Interest encodes"))
}

fn random_data(rng: &mut Rng, name: NameBuf) -> Vec<u8> {
    let n = if rng.chance(10) {
        1000 + rng.below(1500)
    } else {
        rng.below(300)
    } as usize;
    let mut d = DataRepr::new(name.clone(), rng.bytes(n));
    d.freshness_ms = rng.chance(2).then(|| rng.below(100_000));
    d.content_type = rng.chance(5).then(|| rng.below(4));
    d.to_vec()
        .unwrap_or_else(|_| DataRepr::new(name, Vec::new()).to_vec().unwrap())
}

/// One NDN payload (several when fragmented): bare or in an LpPacket with headers.
fn random_payloads(rng: &mut Rng) -> Vec<Vec<u8>> {
    let name = random_name(rng);
    let which = rng.below(10);
    let nack = which >= 8;
    let packet = if which < 4 || nack {
        random_interest(rng, name)
    } else {
        random_data(rng, name)
    };
    let mut token = rng.bytes(PIT_TOKEN_LEN);
    token[0] = rng.below(10) as u8;
    let foreign = {
        let n = 1 + rng.below(16) as usize;
        rng.bytes(n)
    };
    // Usually a few Acks; sometimes around the program's limit of 64 header fields.
    let n_acks = if rng.chance(25) {
        58 + rng.below(12)
    } else {
        rng.below(4)
    };
    let acks: Vec<u64> = (0..n_acks).map(|_| rng.next()).collect();
    let mut h = LpHeaders::default();
    match rng.below(4) {
        0 | 1 => h.pit_token = Some(&token),
        2 => h.pit_token = Some(&foreign),
        _ => {}
    }
    if rng.chance(4) {
        h.congestion_mark = Some(rng.below(3));
    }
    if rng.chance(4) {
        h.acks = &acks;
    }
    if rng.chance(6) {
        h.sequence = Some(rng.next());
    }
    if rng.chance(8) {
        h.tx_sequence = Some(rng.next());
    }
    if rng.chance(8) {
        h.next_hop_face_id = Some(rng.below(300));
    }
    if rng.chance(8) {
        h.cache_policy = Some(CachePolicy::NoCache);
    }
    if nack {
        h.nack = Some(
            [
                NackReason::NoRoute,
                NackReason::Duplicate,
                NackReason::Congestion,
            ][rng.below(3) as usize],
        );
    }
    if rng.chance(30) {
        // IDLE: headers without a Fragment.
        let mut h = h;
        h.nack = None;
        if h.is_empty() {
            h.acks = &acks[..0];
            h.congestion_mark = Some(1);
        }
        let mut buf = vec![0u8; h.encoded_len(None)];
        let n = h.encode(None, &mut buf).unwrap();
        buf.truncate(n);
        return vec![buf];
    }
    let bare = !nack && rng.chance(2);
    if !bare && rng.chance(6) && packet.len() > 60 {
        let mtu = 80 + rng.below(600) as usize;
        if let Ok(f) = Fragmenter::new(mtu)
            && let Ok(mut frags) = f.fragment(&packet, &h, rng.next())
        {
            let mut out = Vec::new();
            let mut buf = vec![0u8; 4096];
            while let Some(Ok(n)) = frags.next_into(&mut buf) {
                out.push(buf[..n].to_vec());
            }
            if out.len() > 1 {
                // One of the fragments (the first most often: it carries the headers).
                let k = if rng.chance(2) {
                    0
                } else {
                    rng.below(out.len() as u64) as usize
                };
                return vec![out.swap_remove(k)];
            }
        }
    }
    if bare {
        return vec![packet];
    }
    let mut buf = vec![0u8; h.encoded_len(Some(packet.len()))];
    let n = h.encode(Some(&packet), &mut buf).unwrap();
    buf.truncate(n);
    vec![buf]
}

// ---------------------------------------------------------------------------------------
// Frames.

#[derive(Clone, Copy, Debug)]
enum Net {
    Udp4,
    Udp6,
    Ether,
}

fn wrap(rng: &mut Rng, net: Net, payload: &[u8]) -> Vec<u8> {
    let vlan = rng.chance(6);
    let dport = if rng.chance(16) {
        rng.next() as u16
    } else {
        PORTS[rng.below(2) as usize]
    };
    let sport = rng.next() as u16;
    match net {
        Net::Udp4 => {
            let src = [10, 1, rng.next() as u8, rng.next() as u8];
            udp4(src, sport, dport, 17, vlan, payload)
        }
        Net::Udp6 => {
            let mut src = [0u8; 16];
            src[0] = 0xfd;
            src[8..].copy_from_slice(&rng.next().to_be_bytes());
            udp6(src, sport, dport, vlan, payload)
        }
        Net::Ether => {
            let mut mac = rng.bytes(6);
            mac[0] &= 0xfe;
            let dst = match rng.below(8) {
                0..=2 => NDN_GROUP,
                3 => [0xff; 6],
                4 => [0x33, 0x33, 0, 0, 0, 1],
                _ => MAC_A,
            };
            let mut frame = eth(dst, mac.try_into().unwrap(), 0x8624, vlan);
            frame.extend_from_slice(payload);
            if frame.len() < 60 {
                frame.resize(60, 0);
            }
            frame
        }
    }
}

/// Edits one field of the Ethernet/IP/UDP headers (or any byte before the payload).
fn mutate_headers(rng: &mut Rng, f: &mut [u8]) {
    let vlan = f.len() > 17 && f[12] == 0x81 && f[13] == 0;
    let l3 = if vlan { 18 } else { 14 };
    let ethertype = l3 - 2;
    let set16 = |f: &mut [u8], at: usize, v: u16| {
        if at + 2 <= f.len() {
            f[at..at + 2].copy_from_slice(&v.to_be_bytes());
        }
    };
    let is6 = f.get(ethertype..ethertype + 2) == Some(&[0x86, 0xdd]);
    let l4 = l3 + if is6 { 40 } else { 20 };
    match rng.below(9) {
        0 => {
            let v = [0x0800, 0x86dd, 0x8624, 0x8100, 0x88a8, 0x0806][rng.below(6) as usize];
            set16(f, ethertype, v);
        }
        1 => {
            // IP version / IHL.
            if l3 < f.len() {
                f[l3] = (rng.below(16) as u8) << 4 | rng.below(16) as u8;
            }
        }
        2 => {
            // IPv4 total length / IPv6 payload length.
            let at = if is6 { l3 + 4 } else { l3 + 2 };
            set16(f, at, rng.next() as u16 % 3000);
        }
        3 => {
            // IPv4 flags and fragment offset.
            let v = [0x2000, 0x0001, 0x4000, 0x8000, 0x1fff][rng.below(5) as usize];
            set16(f, l3 + 6, v);
        }
        4 => {
            // Protocol / next header.
            let at = if is6 { l3 + 6 } else { l3 + 9 };
            if at < f.len() {
                f[at] = [6, 17, 1, 0, 43, 44][rng.below(6) as usize];
            }
        }
        5 => set16(f, l4 + 4, rng.next() as u16 % 3000), // UDP length
        6 => set16(
            f,
            l4 + 2,
            PORTS[rng.below(2) as usize] ^ (rng.below(2) as u16),
        ),
        7 => f[0] ^= 1, // destination MAC's multicast bit
        _ => {
            let at = rng.below(l4.min(f.len()) as u64 + 8) as usize;
            if at < f.len() {
                f[at] ^= 1 << rng.below(8);
            }
        }
    }
}

fn frame_seed(seed: u64, i: u64) -> u64 {
    // splitmix64
    let mut z = seed.wrapping_add(i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Frame `i` of a run: a valid frame, mutated or not; jumbo frames only for `frags`.
fn make_frame(seed: u64, i: u64, frags: bool) -> Vec<u8> {
    let mut rng = Rng::new(frame_seed(seed, i));
    let net = [Net::Udp4, Net::Udp6, Net::Ether][rng.below(3) as usize];
    let mut payload = random_payloads(&mut rng).swap_remove(0);
    if frags && rng.chance(20) {
        // A jumbo Data (multi-buffer frame).
        let name = random_name(&mut rng);
        payload = DataRepr::new(name, {
            let n = 4000 + rng.below(4800) as usize;
            rng.bytes(n)
        })
        .to_vec()
        .unwrap();
    }
    // 1 in 5 frames stays valid; the others get 1 to 4 mutations.
    if !rng.chance(5) {
        let mut tree = parse_seq(&payload);
        for _ in 0..1 + rng.below(4) {
            match &mut tree {
                Some(t) if rng.below(10) < 6 => {
                    mutate_tree(&mut rng, t);
                }
                _ => {
                    let mut lens = Vec::new();
                    if let Some(t) = &tree {
                        let mut p = Vec::new();
                        encode(t, &mut p, &mut lens);
                        payload = p;
                    }
                    mutate_bytes(&mut rng, &mut payload, &lens);
                    tree = None;
                }
            }
        }
        if let Some(t) = &tree {
            payload.clear();
            encode(t, &mut payload, &mut Vec::new());
        }
    }
    let mut frame = wrap(&mut rng, net, &payload);
    if rng.chance(12) {
        mutate_headers(&mut rng, &mut frame);
    }
    if rng.chance(50) {
        // Trailing bytes after the UDP datagram, or a runt.
        if rng.chance(2) {
            frame.extend({
                let n = 1 + rng.below(20) as usize;
                rng.bytes(n)
            });
        } else {
            // BPF_PROG_TEST_RUN refuses XDP frames shorter than an Ethernet header.
            frame.truncate(14 + rng.below(46) as usize);
        }
    }
    let max = if frags { 9000 } else { 3000 };
    frame.truncate(max);
    frame
}

// ---------------------------------------------------------------------------------------
// User space's view.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct View {
    kind: Kind,
    how: How,
    hash: u64,
    shard: u8,
    encap: Encap,
    ndn_off: u16,
}

/// None: not NDN (the program must pass it untouched). Some(Err(..)): the encapsulation is
/// one user space refuses (`wire::parse` fails). Some(Ok(view)): what the metadata should say.
fn reference(frame: &[u8], cfg: &XdpConfig, d: &Dispatch) -> Option<Result<View, ()>> {
    // The program's policy (which frames are NDN at all), then user space's parse.
    let at = |o: usize| {
        frame
            .get(o..o + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    let mut l3 = 14;
    let mut et = at(12)?;
    if et == 0x8100 {
        et = at(16)?;
        l3 = 18;
    }
    match et {
        0x8624 => {
            let dst = &frame[..6];
            if !cfg.ethernet || (dst[0] & 1 == 1 && dst != NDN_GROUP) {
                return None;
            }
        }
        0x0800 => {
            let ip = frame.get(l3..l3 + 20)?;
            let ihl = usize::from(ip[0] & 15) * 4;
            if ip[9] != 17 || ihl < 20 {
                return None;
            }
            if at(l3 + 6)? & 0x3fff != 0 {
                return None; // IP fragment
            }
            // A whole UDP header to a configured port, with a length that covers it.
            let l4 = frame.get(l3 + ihl..l3 + ihl + 8)?;
            if !cfg.udp_ports.contains(&at(l3 + ihl + 2)?)
                || usize::from(at(l3 + ihl + 4)?) < l4.len()
            {
                return None;
            }
        }
        0x86dd => {
            let ip = frame.get(l3..l3 + 40)?;
            frame.get(l3 + 40..l3 + 48)?;
            if ip[6] != 17 || !cfg.udp_ports.contains(&at(l3 + 42)?) || at(l3 + 44)? < 8 {
                return None;
            }
        }
        _ => return None,
    }
    let Some(p) = wire::parse(frame, frame.len()) else {
        return Some(Err(()));
    };
    let (encap, source) = match (p.encap, p.src) {
        (wire::Encap::Ether, _) => (Encap::Ether, p.src_mac.to_vec()),
        (e, Some(s)) => {
            let mut b = match s.ip() {
                IpAddr::V4(a) => a.octets().to_vec(),
                IpAddr::V6(a) => a.octets().to_vec(),
            };
            b.extend_from_slice(&s.port().to_be_bytes());
            let encap = if e == wire::Encap::UdpV4 {
                Encap::Udp4
            } else {
                Encap::Udp6
            };
            (encap, b)
        }
        _ => return Some(Err(())),
    };
    let payload = &frame[p.payload.clone()];
    let key = cfg.hash_key();
    let by_source = |kind| View {
        kind,
        how: How::Source,
        hash: key.hash(&source),
        shard: d.source_shard(&source),
        encap,
        ndn_off: p.payload.start as u16,
    };
    let by_name = |kind, name: ndx_codec::Name<'_>, token: Option<&[u8]>| {
        if kind != Kind::Interest
            && let Some(t) = token
            && t.len() == PIT_TOKEN_LEN
            && usize::from(t[0]) < d.shards()
        {
            return View {
                kind,
                how: How::Token,
                hash: 0,
                shard: t[0],
                encap,
                ndn_off: p.payload.start as u16,
            };
        }
        if name.as_bytes().len() > MAX_NAME_BYTES || name.len() > MAX_COMPONENTS {
            return by_source(kind);
        }
        View {
            kind,
            how: How::Name,
            hash: d.hash(&name),
            shard: d.shard(&name, None),
            encap,
            ndn_off: p.payload.start as u16,
        }
    };
    Some(Ok(match Packet::decode(payload) {
        Err(_) => by_source(Kind::Malformed),
        Ok(Packet::Interest(i)) => by_name(Kind::Interest, i.name(), None),
        Ok(Packet::Data(x)) => by_name(Kind::Data, x.name(), None),
        Ok(Packet::Lp(lp)) if lp.is_fragment() => by_source(Kind::Fragment),
        Ok(Packet::Lp(lp)) if lp.fragment().is_none() => by_source(Kind::LpOther),
        Ok(Packet::Lp(lp)) => match lp.network_packet() {
            Ok(Some(Packet::Interest(i))) => {
                let kind = if lp.nack().is_some() {
                    Kind::Nack
                } else {
                    Kind::Interest
                };
                by_name(kind, i.name(), lp.pit_token())
            }
            Ok(Some(Packet::Data(x))) => by_name(Kind::Data, x.name(), lp.pit_token()),
            _ => by_source(Kind::Malformed),
        },
    }))
}

// ---------------------------------------------------------------------------------------
// The comparison.

#[derive(Default)]
struct Tally {
    frames: u64,
    agree: u64,
    not_ndn: u64,
    by_kind: BTreeMap<String, u64>,
    /// Expected disagreements (documented), by category.
    intended: BTreeMap<&'static str, u64>,
    /// Disagreements that are bugs, by category, with the first examples.
    bugs: BTreeMap<&'static str, u64>,
    examples: Vec<String>,
}

fn setup(seed: u64, block: u64) -> (NdxXdp, XdpConfig, Dispatch) {
    let mut rng = Rng::new(frame_seed(seed ^ 0x5eed_b10c, block));
    let mode = match rng.below(3) {
        0 => DispatchMode::Prefix(1 + rng.below(5) as usize),
        1 => DispatchMode::Content,
        _ => DispatchMode::Batch(1 + rng.below(64)),
    };
    let shards = 1 + rng.below(8) as usize;
    let (k0, k1) = (rng.next(), rng.next());
    let table = 1usize << (3 + rng.below(6));
    let mut d = Dispatch::new(HashKey::new(k0, k1), mode, shards, table).unwrap();
    for i in 0..table {
        assert!(d.set_entry(i, rng.below(shards as u64) as u8));
    }
    let mut cfg = XdpConfig::for_dispatch(&d, k0, k1);
    cfg.udp_ports = PORTS.to_vec();
    cfg.ethernet = !rng.chance(8);
    cfg.frags = rng.chance(4);
    cfg.classify = true; // the parser under test, one shard included
    let xdp = NdxXdp::load(&cfg).unwrap_or_else(|e| panic!("{e}"));
    (xdp, cfg, d)
}

fn compare(xdp: &NdxXdp, cfg: &XdpConfig, d: &Dispatch, frame: &[u8], t: &mut Tally) -> String {
    let r = xdp
        .test_run(frame, 0, 0)
        .unwrap_or_else(|e| panic!("test run: {e}"));
    let got = r.meta();
    let want = reference(frame, cfg, d);
    if r.verdict != verdict::PASS {
        return format!(
            "verdict {} (without a socket every frame passes)",
            r.verdict
        );
    }
    if r.frame() != frame {
        return "frame changed".into();
    }
    match (want, got) {
        (None, None) if r.meta_len == 0 => {
            t.not_ndn += 1;
            String::new()
        }
        (None, _) => "program took a non-NDN frame".into(),
        (Some(_), None) => format!(
            "NDN frame passed without metadata (meta_len {})",
            r.meta_len
        ),
        (Some(Err(())), Some(_)) => {
            *t.intended.entry("encap_lenient").or_default() += 1;
            String::new()
        }
        (Some(Ok(w)), Some(g)) => {
            *t.by_kind.entry(format!("{:?}", w.kind)).or_default() += 1;
            if (g.encap, g.ndn_off) != (w.encap, w.ndn_off) {
                return format!("encapsulation: program {g:?}, user space {w:?}");
            }
            if w.kind == Kind::Malformed && g.kind != Kind::Malformed {
                *t.intended.entry("ndn_lenient").or_default() += 1;
                return String::new();
            }
            if w.kind == Kind::Fragment
                && g.kind == Kind::Malformed
                && view_of(&XdpMeta {
                    kind: Kind::Fragment,
                    ..g
                }) == w
                && frag_fields_over_u32(frame)
            {
                *t.intended.entry("frag_count_over_u32").or_default() += 1;
                return String::new();
            }
            if view_of(&g) == w {
                t.agree += 1;
                return String::new();
            }
            if g.kind == w.kind {
                format!("steering: program {g:?}, user space {w:?}")
            } else {
                format!("kind: program {g:?}, user space {w:?}")
            }
        }
    }
}

/// A fragment whose FragCount or FragIndex does not fit 32 bits: the program calls it
/// malformed, the codec a fragment that every reassembler refuses (both steer it by source).
fn frag_fields_over_u32(frame: &[u8]) -> bool {
    let Some(p) = wire::parse(frame, frame.len()) else {
        return false;
    };
    match Packet::decode(&frame[p.payload]) {
        Ok(Packet::Lp(lp)) => {
            lp.frag_count() > u64::from(u32::MAX) || lp.frag_index() > u64::from(u32::MAX)
        }
        _ => false,
    }
}

fn view_of(m: &XdpMeta) -> View {
    View {
        kind: m.kind,
        how: m.how,
        hash: m.hash,
        shard: m.shard,
        encap: m.encap,
        ndn_off: m.ndn_off,
    }
}

fn category(what: &str) -> &'static str {
    [
        "verdict",
        "frame changed",
        "program took",
        "NDN frame passed",
        "encapsulation",
        "steering",
        "kind",
    ]
    .into_iter()
    .find(|c| what.starts_with(c))
    .unwrap_or("other")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn run(seed: u64, frames: u64, only: Option<u64>) -> Tally {
    let mut t = Tally::default();
    let range = match only {
        Some(i) => i..i + 1,
        None => 0..frames,
    };
    let mut loaded: Option<(u64, NdxXdp, XdpConfig, Dispatch)> = None;
    for i in range {
        let block = i / BLOCK;
        if loaded.as_ref().is_none_or(|l| l.0 != block) {
            let (x, c, d) = setup(seed, block);
            loaded = Some((block, x, c, d));
        }
        let (_, xdp, cfg, d) = loaded.as_ref().unwrap();
        let frame = make_frame(seed, i, cfg.frags);
        t.frames += 1;
        let what = compare(xdp, cfg, d, &frame, &mut t);
        if !what.is_empty() {
            *t.bugs.entry(category(&what)).or_default() += 1;
            if t.examples.len() < 20 {
                t.examples.push(format!(
                    "seed {seed} frame {i} (NDX_XDP_DIFF_SEED={seed} NDX_XDP_DIFF_ONLY={i}), \
                     mode {:?}, {} shards: {what}\n  frame {}",
                    cfg.mode,
                    cfg.shards,
                    hex(&frame)
                ));
            }
        }
    }
    t
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v}: a whole number"))
    })
}

#[test]
fn program_agrees_with_user_space_on_mutated_frames() {
    if !root_or_skip("program_agrees_with_user_space_on_mutated_frames") {
        return;
    }
    let seed = env_u64("NDX_XDP_DIFF_SEED").unwrap_or(34);
    let frames = env_u64("NDX_XDP_DIFF_FRAMES").unwrap_or(60_000);
    let only = env_u64("NDX_XDP_DIFF_ONLY");
    let start = Instant::now();
    let t = run(seed, frames, only);
    let secs = start.elapsed().as_secs_f64();
    println!(
        "seed {seed}: {} frames in {secs:.1} s ({:.0}/s): {} agree, {} not NDN (passed), \
         by user-space kind {:?}; intended disagreements {:?}; bugs {:?}",
        t.frames,
        t.frames as f64 / secs,
        t.agree,
        t.not_ndn,
        t.by_kind,
        t.intended,
        t.bugs
    );
    for e in &t.examples {
        println!("{e}");
    }
    assert!(t.bugs.is_empty(), "disagreements: {:?}", t.bugs);
    if only.is_none() {
        // The generator reaches every kind and both expected disagreements.
        for k in [
            "Interest",
            "Data",
            "Nack",
            "Fragment",
            "LpOther",
            "Malformed",
        ] {
            assert!(
                t.by_kind.get(k).copied().unwrap_or(0) > 0,
                "{k}: {:?}",
                t.by_kind
            );
        }
        assert!(t.not_ndn > 0 && t.agree > t.frames / 3, "{}", t.agree);
    }
}

/// Regression: an LpPacket with more header fields before its Fragment than the program
/// once walked (64) was called LpOther and steered by source. NDNLPv2 senders piggyback as
/// many Acks as fit, so 200 Acks before an Interest, a Data with our token, a Nack and a
/// fragment must all be classified as user space classifies them.
#[test]
fn many_lp_fields_before_the_fragment() {
    if !root_or_skip("many_lp_fields_before_the_fragment") {
        return;
    }
    let d = Dispatch::new(HashKey::new(3, 4), DispatchMode::Content, 4, 64).unwrap();
    let mut cfg = XdpConfig::for_dispatch(&d, 3, 4);
    cfg.udp_ports = PORTS.to_vec();
    cfg.classify = true;
    let xdp = NdxXdp::load(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let name = NameBuf::from_uri("/many/acks/seg=7").unwrap();
    let interest = InterestRepr::new(name.clone()).to_vec().unwrap();
    let data = DataRepr::new(name, vec![1; 100]).to_vec().unwrap();
    let acks: Vec<u64> = (0..200).collect();
    let token = [2, 9, 9, 9, 9, 9];
    let mut kinds = Vec::new();
    for (packet, nack, tok) in [
        (&interest, None, None),
        (&data, None, Some(&token[..])),
        (&interest, Some(NackReason::NoRoute), Some(&token[..])),
    ] {
        let h = LpHeaders {
            acks: &acks,
            nack,
            pit_token: tok,
            ..LpHeaders::default()
        };
        let mut buf = vec![0u8; h.encoded_len(Some(packet.len()))];
        let n = h.encode(Some(packet), &mut buf).unwrap();
        buf.truncate(n);
        let mut ether = eth(MAC_A, MAC_B, 0x8624, false);
        ether.extend_from_slice(&buf);
        let frames = [
            ("udp4", udp4([10, 0, 0, 2], 4000, PORTS[0], 17, false, &buf)),
            ("udp6", udp6([0xfd; 16], 4000, PORTS[1], true, &buf)),
            ("ether", ether),
        ];
        for (net, frame) in frames {
            let mut t = Tally::default();
            let what = compare(&xdp, &cfg, &d, &frame, &mut t);
            assert!(what.is_empty(), "{net}: {what}");
            assert_eq!(t.agree, 1, "{net}: {:?} {:?}", t.intended, t.by_kind);
            kinds.extend(t.by_kind.into_keys());
        }
    }
    // A fragment (FragCount 2) behind 200 Acks.
    let h = LpHeaders {
        acks: &acks,
        sequence: Some(5),
        frag_index: Some(0),
        frag_count: Some(2),
        ..LpHeaders::default()
    };
    let mut buf = vec![0u8; h.encoded_len(Some(interest.len()))];
    let n = h.encode(Some(&interest), &mut buf).unwrap();
    buf.truncate(n);
    let frame = udp4([10, 0, 0, 2], 4000, PORTS[0], 17, false, &buf);
    let mut t = Tally::default();
    let what = compare(&xdp, &cfg, &d, &frame, &mut t);
    assert!(what.is_empty(), "fragment: {what}");
    assert_eq!(t.agree, 1);
    kinds.extend(t.by_kind.into_keys());
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds, ["Data", "Fragment", "Interest", "Nack"]);
}
