#!/usr/bin/env python3
"""Merge the generated vectors into captured.jsonl and build bad.jsonl.

usage: assemble.py WORKDIR VECTORS_DIR
  WORKDIR holds pyndn.jsonl, ndnts.jsonl, ndnd-v4.pcap, ndnd-v6.pcap (from regen.sh)
Every `expect` comes from a library decoder: python-ndn for python-ndn vectors,
NDNts for NDNts vectors, NDNts (LpPacket) + python-ndn (inner Interest/Data)
for ndnd captures; each is cross-checked against the other library."""
import json
import os
import subprocess
import sys

from pyndn_expect import l3_expect, lp_fields_pyndn, packet_kind
from ndnuri import name_uri, read_varnum
import pcaptool

WORK, VDIR = sys.argv[1], sys.argv[2]
NODE_DIR = os.environ.get("NPM_DIR", "/opt/ndx-interop/npm")
problems = []


# ---------------- tiny TLV toolkit (for LP header listing and mutations) ----------------
def vn(n):
    if n < 253:
        return bytes([n])
    if n <= 0xFFFF:
        return b"\xfd" + n.to_bytes(2, "big")
    if n <= 0xFFFFFFFF:
        return b"\xfe" + n.to_bytes(4, "big")
    return b"\xff" + n.to_bytes(8, "big")


def tlv(t, v):
    return vn(t) + vn(len(v)) + bytes(v)


def elements(buf):
    out, off = [], 0
    while off < len(buf):
        t, off = read_varnum(buf, off)
        ln, off = read_varnum(buf, off)
        out.append((t, bytes(buf[off:off + ln])))
        off += ln
    return out


def outer(wire):
    t, off = read_varnum(wire, 0)
    ln, off = read_varnum(wire, off)
    return t, bytes(wire[off:off + ln])


def rebuild(t, elems):
    return tlv(t, b"".join(tlv(a, b) for a, b in elems))


# ---------------- NDNts decoding (batch, one node process) ----------------
def ndnts_decode(hexes):
    subprocess.run(["cp", os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_ndnts.mjs"), NODE_DIR], check=True)
    r = subprocess.run(["node", os.path.join(NODE_DIR, "gen_ndnts.mjs"), "decode"], input="\n".join(hexes) + "\n",
                       capture_output=True, text=True, check=True)
    return [json.loads(l) for l in r.stdout.splitlines() if l.strip()]


def l3_from_ndnts(d, py):
    """NDNts decode dict -> expect dict; python-ndn's parse `py` tells absent fields apart
    (NDNts returns defaults 4000 / 255 / 0 for absent InterestLifetime / HopLimit / MetaInfo fields)."""
    e = {"name": name_uri([(t, bytes.fromhex(v)) for t, v in d["name_components"]]),
         "name_components": d["name_components"]}
    if d["kind"] == "interest":
        e.update(can_be_prefix=d["can_be_prefix"], must_be_fresh=d["must_be_fresh"], nonce=d["nonce"],
                 lifetime_ms=None if py["lifetime_ms"] is None else d["lifetime_ms"],
                 hop_limit=None if py["hop_limit"] is None else d["hop_limit"],
                 app_params_hex=d["app_params_hex"],
                 forwarding_hint=[name_uri([(t, bytes.fromhex(v)) for t, v in n]) for n in d["forwarding_hint_components"]],
                 signed=d["signed"])
    else:
        fb = d["final_block_id_component"]
        e.update(content_hex=d["content_hex"] if py["content_hex"] is not None else None,
                 content_type=None if py["content_type"] is None else d["content_type"],
                 freshness_ms=None if py["freshness_ms"] is None else d["freshness_ms"],
                 final_block_id=None if fb is None else name_uri([(fb[0], bytes.fromhex(fb[1]))])[1:],
                 signature_type=d["signature_type"], implicit_digest=d["implicit_digest"])
    return e


def crosscheck(vid, a, b):
    for k in set(a) & set(b):
        if a[k] != b[k]:
            problems.append(f"{vid}: {k}: {a[k]!r} != {b[k]!r}")


def lp_expect(vid, wire, d):
    _, val = outer(wire)
    e = {"pit_token_hex": d["pit_token_hex"],
         "sequence": None if d["sequence"] is None else int(d["sequence"]),
         "frag_index": d["frag_index"], "frag_count": d["frag_count"],
         "nack": d["nack"],
         "nack_reason": d["nack_reason"] if d["nack"] and d["nack_reason"] else None,
         "congestion_mark": d["congestion_mark"],
         "fragment_kind": d["fragment_kind"],
         "lp_header_types": [t for t, _ in elements(val) if t != 0x50]}
    if d["frag_count"] > 1 and d["frag_index"] == 0:
        e["fragment_kind"] = "data" if d["payload_hex"][:2] == "06" else "interest"
    if "inner" in d:
        inner_wire = bytes.fromhex(d["payload_hex"])
        py = l3_expect(inner_wire)
        e["inner"] = py
        crosscheck(vid + "/inner", py, l3_from_ndnts(d["inner"], py))
    # python-ndn's raw LpPacket model as a second opinion
    p = lp_fields_pyndn(wire)
    crosscheck(vid + "/lp", {"pit_token_hex": e["pit_token_hex"], "nack": e["nack"]},
               {"pit_token_hex": p["pit_token_hex"], "nack": p["nack"]})
    if p["frag_index"] is not None and p["frag_index"] != e["frag_index"]:
        problems.append(f"{vid}: frag_index mismatch")
    return e


def finish(vecs):
    decs = ndnts_decode([v["hex"] for v in vecs])
    for v, d in zip(vecs, decs):
        wire = bytes.fromhex(v["hex"])
        if "error" in d:
            problems.append(f"{v['id']}: NDNts cannot decode: {d['error']}")
            continue
        if v["kind"] == "lp":
            v["expect"] = lp_expect(v["id"], wire, d)
        else:
            py = l3_expect(wire)
            nd = l3_from_ndnts(d, py)
            if v["id"].startswith("pyndn-"):
                v.setdefault("expect", py)
                crosscheck(v["id"], py, nd)
            else:
                v["expect"] = nd
                crosscheck(v["id"], nd, py)
        v.pop("ndnts", None)
    return vecs


def load(path):
    return [json.loads(l) for l in open(path) if l.strip()]


# ---------------- ndnd captures ----------------
def capture_vectors(pcap, fam, frag_groups):
    cap = pcaptool.read_pcap(pcap)
    out, seen, groups = [], set(), {}
    n_int = 0
    for _, _, _, fr in cap["packets"]:
        r = pcaptool.udp_payload(fr)
        if not r or 6363 not in (r[2], r[3]):
            continue
        p = r[4]
        if p.hex() in seen:
            continue
        seen.add(p.hex())
        _, val = outer(p)
        hdr = dict((t, v) for t, v in elements(val))
        fc = int.from_bytes(hdr.get(0x53, b"\x01"), "big")
        if fc > 1:
            first_seq = int.from_bytes(hdr[0x51], "big") - int.from_bytes(hdr.get(0x52, b"\0"), "big")
            groups.setdefault(first_seq, []).append(p)
            continue
        frag = hdr.get(0x50, b"")
        kind = packet_kind(frag) if frag else "none"
        if kind == "interest":
            n_int += 1
            out.append({"id": f"ndnd-{fam}-lp-interest-{n_int}", "kind": "lp", "hex": p.hex(),
                        "source": f"ndnd v1.5.3 fw, captured with tcpdump on veth ({fam}, UDP 6363): forwarded Interest"})
        else:
            out.append({"id": f"ndnd-{fam}-lp-{kind}-{len(out)}", "kind": "lp", "hex": p.hex(),
                        "source": f"ndnd v1.5.3 fw, captured with tcpdump on veth ({fam}, UDP 6363): unfragmented {kind}"})
    complete = [g for g in groups.values() if len(g) == int.from_bytes(dict(elements(outer(g[0])[1]))[0x53], "big")]
    for gi, g in enumerate(complete[:frag_groups]):
        g.sort(key=lambda p: int.from_bytes(dict(elements(outer(p)[1])).get(0x52, b"\0"), "big"))
        whole = b""
        for i, p in enumerate(g):
            whole += dict(elements(outer(p)[1]))[0x50]
            out.append({"id": f"ndnd-{fam}-lp-frag-g{gi}-{i}-of-{len(g)}", "kind": "lp", "hex": p.hex(),
                        "source": f"ndnd v1.5.3 fw, tcpdump on veth ({fam}): NDNLPv2 fragment {i} of a Data from 'ndnd put' (MTU 1420)"})
        out.append({"id": f"ndnd-{fam}-data-reassembled-g{gi}", "kind": "data", "hex": whole.hex(),
                    "source": f"ndnd v1.5.3 'ndnd put' Data segment, reassembled from the ndnd-{fam}-lp-frag-g{gi}-* fragments"})
    return out


good = load(os.path.join(WORK, "pyndn.jsonl")) + load(os.path.join(WORK, "ndnts.jsonl"))
good += capture_vectors(os.path.join(WORK, "ndnd-v4.pcap"), "v4", 2)
good += capture_vectors(os.path.join(WORK, "ndnd-v6.pcap"), "v6", 0)
byid = {v["id"]: v for v in good}
W = lambda vid: bytes.fromhex(byid[vid]["hex"])


# ---------------- mutations ----------------
def interest_with(vid, fn):
    t, val = outer(W(vid))
    return rebuild(t, fn(elements(val)))


def insert_after(elems, after_type, new):
    i = max(k for k, (t, _) in enumerate(elems) if t == after_type) + 1
    return elems[:i] + [new] + elems[i:]


mutated = [
    {"id": "mutated-noncritical-interest-0x7e", "kind": "interest",
     "hex": interest_with("pyndn-interest-basic", lambda e: insert_after(e, 0x0a, (0x7e, b"\x01\x02\x03"))).hex(),
     "source": "pyndn-interest-basic + unknown non-critical element type 126 (even, >=32) after Nonce; spec tlv.rst 'Considerations for Evolvability': ignore and continue"},
    {"id": "mutated-noncritical-interest-0xfd0384", "kind": "interest",
     "hex": interest_with("pyndn-interest-hoplimit-lifetime", lambda e: e + [(900, b"")]).hex(),
     "source": "pyndn-interest-hoplimit-lifetime + unknown non-critical element type 900 (3-byte TLV-TYPE) at the end"},
    {"id": "mutated-noncritical-data-0x80", "kind": "data",
     "hex": (lambda t_v: rebuild(t_v[0], insert_after(elements(t_v[1]), 0x15, (0x80, b"zz"))))(outer(W("pyndn-data-hmac"))).hex(),
     "source": "pyndn-data-hmac + unknown non-critical element type 128 between Content and SignatureInfo (ignored; signature no longer valid)"},
    {"id": "mutated-noncritical-lp-field-900", "kind": "lp",
     "hex": (lambda t_v: rebuild(t_v[0], elements(t_v[1])[:-1] + [(900, b"\x00")] + elements(t_v[1])[-1:]))(outer(W("ndnts-lp-pittoken-interest"))).hex(),
     "source": "ndnts-lp-pittoken-interest + unknown LP header field 900 after PitToken, before Fragment (in 800..959, two low bits 00): NDNLPv2 says ignore"},
]
# expected values of the mutated packets: same as the originals (the added field is ignored)
good += mutated
good = finish(good)
for m, orig in zip(mutated, ["pyndn-interest-basic", "pyndn-interest-hoplimit-lifetime", "pyndn-data-hmac",
                             "ndnts-lp-pittoken-interest"]):
    o, e = dict(byid[orig]["expect"]), dict(m["expect"])
    for k in ("implicit_digest", "lp_header_types"):
        o.pop(k, None); e.pop(k, None)
    if o != e:
        problems.append(f"{m['id']}: decodes differently from {orig}: {o} vs {e}")

with open(os.path.join(VDIR, "captured.jsonl"), "w") as f:
    for v in good:
        f.write(json.dumps({k: v[k] for k in ("id", "source", "kind", "hex", "expect")}) + "\n")

# ---------------- bad vectors ----------------
SPEC = "NDN packet spec v0.3 (named-data/NDN-packet-spec @ece5135)"
LPW = "NDNLPv2 (redmine.named-data.net/projects/nfd/wiki/NDNLPv2)"
bad = []


def B(vid, kind, wire, err, rule, base):
    bad.append({"id": vid, "kind": kind, "hex": bytes(wire).hex(),
                "source": f"mutation of {base}: {rule}", "expect": {"error": err}})


bi = W("pyndn-interest-basic"); bd = W("pyndn-data-digest")
B("bad-interest-truncated", "interest", bi[:-1], "truncated", f"{SPEC} tlv.rst: TLV-LENGTH exceeds the remaining bytes (last byte dropped)", "pyndn-interest-basic")
B("bad-data-truncated", "data", bd[:-1], "truncated", f"{SPEC} tlv.rst: TLV-LENGTH exceeds the remaining bytes (last byte dropped)", "pyndn-data-digest")
lpw = W("ndnd-v4-lp-interest-1")
B("bad-lp-truncated", "lp", lpw[:-1], "truncated", f"{LPW}: LpPacket TLV-LENGTH exceeds the remaining bytes", "ndnd-v4-lp-interest-1")
B("bad-interest-length-too-large", "interest", bytes([bi[0], bi[1] + 5]) + bi[2:], "length exceeds input",
  f"{SPEC} tlv.rst: outer TLV-LENGTH larger than the bytes that follow", "pyndn-interest-basic")
t, val = outer(bi); nm_t, nm_len = val[0], val[1]
B("bad-interest-name-length-overflows-parent", "interest", bytes([bi[0], bi[1], nm_t, nm_len + 20]) + bi[4:],
  "length exceeds parent", f"{SPEC} tlv.rst: Name TLV-LENGTH runs past the end of the enclosing Interest", "pyndn-interest-basic")
B("bad-interest-nonminimal-outer-length", "interest", bytes([bi[0], 0xFD, 0x00, bi[1]]) + bi[2:], "non-minimal VAR-NUMBER",
  f"{SPEC} tlv.rst: 'A number MUST be encoded using the shortest possible format' (length {bi[1]} as FD 00 {bi[1]:02X})", "pyndn-interest-basic")
B("bad-interest-nonminimal-length-5byte", "interest", bytes([bi[0], 0xFE, 0, 0, 0, bi[1]]) + bi[2:], "non-minimal VAR-NUMBER",
  f"{SPEC} tlv.rst: shortest possible format (length as FE 00 00 00 {bi[1]:02X})", "pyndn-interest-basic")
# component '/hello' (length 5) re-encoded with FD 00 05; parents grow by 2 bytes
nm = elements(outer(tlv(7, elements(val)[0][1]))[1])
name_val = b"".join(tlv(a, b) for a, b in nm[:-1]) + bytes([0x08, 0xFD, 0x00, 0x05]) + nm[-1][1]
inner = tlv(7, name_val) + b"".join(tlv(a, b) for a, b in elements(val)[1:])
B("bad-interest-nonminimal-component-length", "interest", tlv(5, inner), "non-minimal VAR-NUMBER",
  f"{SPEC} tlv.rst: shortest possible format (component length 5 as FD 00 05)", "pyndn-interest-basic")
nonminimal_type = b"".join(tlv(a, b) for a, b in nm[:-1]) + bytes([0xFD, 0x00, 0x08, 0x05]) + nm[-1][1]
B("bad-interest-nonminimal-component-type", "interest", tlv(5, tlv(7, nonminimal_type) + b"".join(tlv(a, b) for a, b in elements(val)[1:])),
  "non-minimal VAR-NUMBER", f"{SPEC} tlv.rst: shortest possible format (TLV-TYPE 8 as FD 00 08)", "pyndn-interest-basic")
B("bad-interest-unknown-critical-0x0b", "interest", interest_with("pyndn-interest-basic", lambda e: insert_after(e, 0x0a, (0x0b, b"\x01"))),
  "unknown critical type", f"{SPEC} tlv.rst evolvability: TLV-TYPE 11 is in the grandfathered critical range [0,31]", "pyndn-interest-basic")
B("bad-interest-unknown-critical-0x1d", "interest", interest_with("pyndn-interest-basic", lambda e: insert_after(e, 0x0a, (0x1d, b"\x00" * 4))),
  "unknown critical type", f"{SPEC} tlv.rst evolvability: TLV-TYPE 29 (KeyDigest, not an Interest element) is in [0,31], critical", "pyndn-interest-basic")
B("bad-interest-unknown-critical-odd-0x81", "interest", interest_with("pyndn-interest-basic", lambda e: insert_after(e, 0x0a, (0x81, b""))),
  "unknown critical type", f"{SPEC} tlv.rst evolvability: unrecognized TLV-TYPE 129 has least significant bit 1, abort decoding", "pyndn-interest-basic")
B("bad-interest-no-name", "interest", interest_with("pyndn-interest-basic", lambda e: e[1:]), "missing Name",
  f"{SPEC} interest.rst: Name is the only required element in an Interest", "pyndn-interest-basic")
B("bad-interest-empty-name", "interest", interest_with("pyndn-interest-basic", lambda e: [(7, b"")] + e[1:]), "empty Name",
  f"{SPEC} interest.rst: Interests whose Name has zero components MUST be discarded", "pyndn-interest-basic")
B("bad-interest-component-type-0", "interest", interest_with("pyndn-interest-basic", lambda e: [(7, b"\x00" + e[0][1][1:])] + e[1:]),
  "invalid component type", f"{SPEC} name.rst: TLV-TYPE of name component MUST be in [1, 65535] (type 0 here)", "pyndn-interest-basic")
B("bad-interest-implicit-digest-31", "interest",
  interest_with("pyndn-interest-implicit-digest", lambda e: [(7, b"".join(tlv(a, b) for a, b in elements(e[0][1])[:-1]) + tlv(1, elements(e[0][1])[-1][1][:31]))] + e[1:]),
  "bad digest length", f"{SPEC} name.rst: ImplicitSha256DigestComponent TLV-LENGTH == 32 (31 here)", "pyndn-interest-implicit-digest")
B("bad-interest-params-digest-31", "interest",
  interest_with("pyndn-interest-app-params", lambda e: [(7, b"".join(tlv(a, b) for a, b in elements(e[0][1])[:-1]) + tlv(2, elements(e[0][1])[-1][1][:31]))] + e[1:]),
  "bad digest length", f"{SPEC} name.rst: ParametersSha256DigestComponent TLV-LENGTH == 32 (31 here)", "pyndn-interest-app-params")
B("bad-interest-nonce-3-bytes", "interest", interest_with("pyndn-interest-basic", lambda e: [(a, b[:3] if a == 0x0a else b) for a, b in e]),
  "bad Nonce length", f"{SPEC} interest.rst: Nonce is a 4-octet byte string (3 here)", "pyndn-interest-basic")
B("bad-interest-hoplimit-2-bytes", "interest", interest_with("pyndn-interest-hoplimit-lifetime", lambda e: [(a, b"\x00" + b if a == 0x22 else b) for a, b in e]),
  "bad HopLimit length", f"{SPEC} interest.rst: HopLimit is a 1-octet value (2 here)", "pyndn-interest-hoplimit-lifetime")
B("bad-interest-duplicate-nonce", "interest", interest_with("pyndn-interest-basic", lambda e: insert_after(e, 0x0a, (0x0a, b"\x05\x06\x07\x08"))),
  "out-of-order or repeated element", f"{SPEC} tlv.rst evolvability: a second Nonce (critical type 10) is out of order: abort", "pyndn-interest-basic")
B("bad-interest-lifetime-3-bytes", "interest", interest_with("pyndn-interest-hoplimit-lifetime", lambda e: [(a, b"\x00" + b if a == 0x0c else b) for a, b in e]),
  "bad nonNegativeInteger length", f"{SPEC} tlv.rst: nonNegativeInteger TLV-LENGTH MUST be 1, 2, 4 or 8 (InterestLifetime with 3)", "pyndn-interest-hoplimit-lifetime")
t, dval = outer(bd); de = elements(dval)
B("bad-data-metainfo-after-content", "data", rebuild(6, [de[0], de[2], de[1]] + de[3:]), "out-of-order element",
  f"{SPEC} data.rst: Name MetaInfo? Content? Signature order; MetaInfo (type 20, critical) after Content is out of order", "pyndn-data-digest")
mi = elements(de[1][1])
B("bad-data-freshness-3-bytes", "data", rebuild(6, [de[0], (0x14, b"".join(tlv(a, (b"\x00" + b) if a == 0x19 else b) for a, b in mi))] + de[2:]),
  "bad nonNegativeInteger length", f"{SPEC} tlv.rst: nonNegativeInteger TLV-LENGTH MUST be 1, 2, 4 or 8 (FreshnessPeriod with 3)", "pyndn-data-digest")
B("bad-data-no-signature", "data", rebuild(6, [e for e in de if e[0] not in (0x16, 0x17)]), "missing SignatureInfo",
  f"{SPEC} data.rst: Signature (SignatureInfo + SignatureValue) is required", "pyndn-data-digest")
B("bad-data-no-name", "data", rebuild(6, de[1:]), "missing Name", f"{SPEC} data.rst: Name is required and first", "pyndn-data-digest")
fw = W("ndnts-lp-frag-5-of-6"); t, fv = outer(fw)
B("bad-lp-fragindex-ge-fragcount", "lp", rebuild(t, [(a, b"\x06" if a == 0x52 else b) for a, b in elements(fv)]), "FragIndex >= FragCount",
  f"{LPW} fragmentation: FragIndex MUST be less than FragCount (6 vs 6)", "ndnts-lp-frag-5-of-6")
lw = W("ndnts-lp-pittoken-interest"); t, lv = outer(lw)
for ty in (901, 902, 903):
    B(f"bad-lp-unknown-critical-field-{ty}", "lp", rebuild(t, elements(lv)[:-1] + [(ty, b"\x00")] + elements(lv)[-1:]), "unknown critical LP field",
      f"{LPW}: unknown header field {ty} in 800..959 with two low bits {ty & 3:02b} != 00 must be dropped", "ndnts-lp-pittoken-interest")
B("bad-lp-unknown-critical-field-97", "lp", rebuild(t, elements(lv)[:-1] + [(97, b"\x00")] + elements(lv)[-1:]), "unknown critical LP field",
  f"{LPW}: unknown header field 97 outside 800..959 is critical", "ndnts-lp-pittoken-interest")
with open(os.path.join(VDIR, "bad.jsonl"), "w") as f:
    for v in bad:
        f.write(json.dumps(v) + "\n")

# report how the libraries judge the bad vectors (informational)
decs = ndnts_decode([v["hex"] for v in bad])
from ndn.encoding import parse_interest, parse_data
for v, d in zip(bad, decs):
    w = bytes.fromhex(v["hex"])
    try:
        (parse_interest if v["kind"] == "interest" else parse_data if v["kind"] == "data" else lp_fields_pyndn)(w)
        pyr = "accepts"
    except Exception:
        pyr = "rejects"
    print(f"  {v['id']:48s} NDNts {'rejects' if 'error' in d else 'accepts'}, python-ndn {pyr}", file=sys.stderr)

from collections import Counter
print("captured:", len(good), dict(Counter((v["id"].split("-")[0], v["kind"]) for v in good)), file=sys.stderr)
print("bad:", len(bad), file=sys.stderr)
if problems:
    print("PROBLEMS:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
