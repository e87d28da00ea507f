#!/usr/bin/env python3
"""Generate NDN test vectors with python-ndn 0.5.2 (deterministic: fixed
nonces, keys, timestamps).  Writes JSON lines to argv[1] (default stdout)."""
import json
import sys

import ndn
from ndn.encoding import (make_interest, make_data, InterestParam, MetaInfo, Component, Name,
                          SignatureType)
from ndn.encoding.name import Component as C
from ndn.security.signer.sha256_digest_signer import DigestSha256Signer
from ndn.security.signer.sha256_hmac_signer import HmacSha256Signer
from ndn.security.signer.sha256_ecdsa_signer import Sha256WithEcdsaSigner
from ndn.security.signer.ed25519_signer import Ed25519Signer
from Cryptodome.PublicKey import ECC
from Cryptodome.Hash import SHA256
from Cryptodome.Signature import DSS

from pyndn_expect import interest_expect, data_expect

VER = "python-ndn 0.5.2"
HMAC_KEY = bytes(range(32))
ECDSA_KEY = ECC.construct(curve="P-256", d=0x1C0FFEE1C0FFEE1C0FFEE1C0FFEE1C0FFEE1C0FFEE1C0FFEE1C0FFEE1C0FFEE)
ED25519_KEY = ECC.construct(curve="Ed25519", seed=bytes(range(32)))


class DeterministicEcdsaSigner(Sha256WithEcdsaSigner):
    """python-ndn's ECDSA signer with RFC 6979 nonces, so output is reproducible."""

    def write_signature_value(self, wire, contents):
        h = SHA256.new()
        for blk in contents:
            h.update(blk)
        sig = DSS.new(self.key, "deterministic-rfc6979", "der").sign(h)
        wire[:len(sig)] = sig
        return len(sig)


class FixedDigestInterestSigner(DigestSha256Signer):
    """DigestSha256 for Interests with a fixed SignatureTime/SignatureNonce."""

    def __init__(self):
        super().__init__(for_interest=True)

    def write_signature_info(self, signature_info):
        super().write_signature_info(signature_info)
        signature_info.signature_time = 1700000000000
        signature_info.signature_nonce = 0x0102030405060708


vectors = []


def add(vid, src, wire, kind):
    wire = bytes(wire)
    exp = interest_expect(wire) if kind == "interest" else data_expect(wire)
    vectors.append({"id": vid, "source": f"{VER} {src}", "kind": kind, "hex": wire.hex(), "expect": exp})


def interest(vid, src, name, app_param=None, signer=None, **kw):
    add(vid, src, make_interest(name, InterestParam(**kw), app_param, signer), "interest")


def data(vid, src, name, meta, content, signer):
    add(vid, src, make_data(name, meta, content, signer), "data")


DIG = DigestSha256Signer()
HMAC = HmacSha256Signer("/ndx/test/KEY/hmac", HMAC_KEY)
ECDSA = DeterministicEcdsaSigner("/ndx/test/KEY/%01%02/self/v=1", ECDSA_KEY.export_key(format="DER"))
ED = Ed25519Signer("/ndx/test/KEY/ed", ED25519_KEY.export_key(format="DER"))

# ---------------- Interests ----------------
interest("pyndn-interest-basic", "make_interest('/ndn/ex/hello', nonce=0x01020304)",
         "/ndn/ex/hello", nonce=0x01020304)
interest("pyndn-interest-no-lifetime", "make_interest('/ndn/ex/hello', nonce=0xdeadbeef, lifetime=None)",
         "/ndn/ex/hello", nonce=0xDEADBEEF, lifetime=None)
interest("pyndn-interest-no-nonce", "make_interest('/ndn/ex/nononce', nonce=None, lifetime=4000)",
         "/ndn/ex/nononce", nonce=None)
interest("pyndn-interest-cbp-mbf", "make_interest('/ndn/ex', can_be_prefix=True, must_be_fresh=True)",
         "/ndn/ex", can_be_prefix=True, must_be_fresh=True, nonce=0x00000001, lifetime=1000)
interest("pyndn-interest-app-params", "make_interest('/ndn/ex/rpc', app_param=b'hello params')",
         "/ndn/ex/rpc", app_param=b"hello params", nonce=0x11223344)
interest("pyndn-interest-app-params-empty", "make_interest('/ndn/ex/rpc', app_param=b'')",
         "/ndn/ex/rpc", app_param=b"", nonce=0x11223345)
interest("pyndn-interest-app-params-300", "make_interest('/ndn/ex/big', app_param=300 bytes) (3-byte TLV-LENGTH)",
         "/ndn/ex/big", app_param=bytes(i % 251 for i in range(300)), nonce=0x55667788)
interest("pyndn-interest-signed-hmac", "make_interest(signer=HmacSha256Signer)",
         "/ndn/ex/cmd", app_param=b"\x01\x02", signer=HMAC, nonce=0x0A0B0C0D)
interest("pyndn-interest-signed-digest", "make_interest(signer=DigestSha256Signer(for_interest=True), fixed SignatureTime/Nonce)",
         "/ndn/ex/cmd2", signer=FixedDigestInterestSigner(), nonce=0x0A0B0C0E)
interest("pyndn-interest-signed-ed25519", "make_interest(signer=Ed25519Signer)",
         "/ndn/ex/cmd3", app_param=b"ed", signer=ED, nonce=0x0A0B0C0F, must_be_fresh=True)
interest("pyndn-interest-fwhint", "make_interest(forwarding_hint=['/isp/a', '/isp/b/router'])",
         "/ndn/ex/hinted", nonce=0x12345678, forwarding_hint=["/isp/a", "/isp/b/router"])
interest("pyndn-interest-hoplimit-lifetime", "make_interest(hop_limit=64, lifetime=10000)",
         "/ndn/ex/hop", nonce=0x9ABCDEF0, hop_limit=64, lifetime=10000)
interest("pyndn-interest-hoplimit0-lifetime-big", "make_interest(hop_limit=0, lifetime=3600000)",
         "/ndn/ex/hop0", nonce=0x00000000, hop_limit=0, lifetime=3600000)
interest("pyndn-interest-all-fields", "make_interest(cbp, mbf, fwhint, hop_limit=255, lifetime=2000, app_param)",
         "/ndn/ex/all", app_param=b"\xff\x00", nonce=0xFFFFFFFF, can_be_prefix=True,
         must_be_fresh=True, hop_limit=255, lifetime=2000, forwarding_hint=["/hint"])

typed = [C.from_str("ndn"), C.from_str("32=metadata"), C.from_version(1700000000123),
         C.from_segment(3)]
interest("pyndn-interest-typed-name", "make_interest([ndn, 32=metadata, from_version, from_segment])",
         typed, nonce=0x01010101, can_be_prefix=True)
conv = [C.from_str("conv"), C.from_timestamp(1700000000000000), C.from_sequence_num(42),
        C.from_byte_offset(65536), C.from_segment(0), C.from_version(0)]
interest("pyndn-interest-conventions", "make_interest([conv, from_timestamp, from_sequence_num, from_byte_offset, from_segment(0), from_version(0)])",
         conv, nonce=0x02020202)
weird = [C.from_bytes(b"hello world/a?b=c&d%"), C.from_bytes(b"..."), C.from_bytes(b"."),
         C.from_bytes(b""), C.from_bytes(bytes([0x00, 0xFF, 0x7E, 0x2D])), C.from_bytes(b"x", 300),
         C.from_bytes(b"ok", 65535)]
interest("pyndn-interest-escaped-name", "make_interest([b'hello world/a?b=c&d%', b'...', b'.', b'', b'\\x00\\xff~-', typ300 b'x', typ65535 b'ok'])",
         weird, nonce=0x03030303)
longname = [C.from_str("c%d" % i) for i in range(40)]
interest("pyndn-interest-long-name", "make_interest(40 generic components)", longname, nonce=0x04040404)

# ---------------- Data ----------------
data("pyndn-data-digest", "make_data(freshness_period=10000, DigestSha256Signer)",
     "/ndn/ex/hello", MetaInfo(freshness_period=10000), b"Hello, world!", DIG)
data("pyndn-data-finalblock", "make_data('/ndn/ex/file/v=5/seg=9', final_block_id=seg 9)",
     ["ndn", "ex", "file", C.from_version(5), C.from_segment(9)],
     MetaInfo(freshness_period=1000, final_block_id=C.from_segment(9)), b"last segment", DIG)
data("pyndn-data-contenttype-key", "make_data(content_type=KEY(2))",
     "/ndn/ex/KEY/k1", MetaInfo(content_type=2, freshness_period=3600000), bytes(range(64)), DIG)
data("pyndn-data-contenttype-nack", "make_data(content_type=NACK(3), empty content)",
     "/ndn/ex/missing", MetaInfo(content_type=3, freshness_period=0), b"", DIG)
data("pyndn-data-contenttype-none", "make_data(MetaInfo(content_type=None)) -> empty MetaInfo",
     "/ndn/ex/nometa", MetaInfo(content_type=None), b"x", DIG)
data("pyndn-data-hmac", "make_data(HmacSha256Signer)",
     "/ndn/ex/hmac", MetaInfo(freshness_period=4000), b"hmac signed", HMAC)
data("pyndn-data-ecdsa", "make_data(Sha256WithEcdsaSigner P-256, RFC6979 nonce)",
     "/ndn/ex/ecdsa", MetaInfo(freshness_period=4000), b"ecdsa signed", ECDSA)
data("pyndn-data-ed25519", "make_data(Ed25519Signer)",
     "/ndn/ex/ed25519", MetaInfo(), b"ed25519 signed", ED)
data("pyndn-data-empty-content", "make_data(content=b'')",
     "/ndn/ex/empty", MetaInfo(freshness_period=1), b"", DIG)
data("pyndn-data-no-content", "make_data(content=None)",
     "/ndn/ex/nocontent", MetaInfo(), None, DIG)
big = bytes((i * 7 + 3) & 0xFF for i in range(8000))
data("pyndn-data-large-8000", "make_data(8000-byte content, FinalBlockId seg=4)",
     ["ndn", "ex", "big", C.from_version(1), C.from_segment(0)],
     MetaInfo(freshness_period=10000, final_block_id=C.from_segment(4)), big, DIG)
data("pyndn-data-typed-name", "make_data([ndn, 32=metadata, from_timestamp, from_sequence_num, from_byte_offset, b'a b', b'...'])",
     [C.from_str("ndn"), C.from_str("32=metadata"), C.from_timestamp(1600000000000000),
      C.from_sequence_num(7), C.from_byte_offset(1024), C.from_bytes(b"a b"), C.from_bytes(b"...")],
     MetaInfo(freshness_period=500), b"typed", DIG)
data("pyndn-data-root-name-ish", "make_data('/a') single component, no MetaInfo fields besides ContentType default",
     "/a", MetaInfo(), b"\x00", DIG)

# Interest with an ImplicitSha256DigestComponent naming pyndn-data-digest exactly
d = next(v for v in vectors if v["id"] == "pyndn-data-digest")
full = Name.normalize("/ndn/ex/hello") + [C.from_bytes(bytes.fromhex(d["expect"]["implicit_digest"]), C.TYPE_IMPLICIT_SHA256)]
interest("pyndn-interest-implicit-digest", "make_interest(name + ImplicitSha256DigestComponent of pyndn-data-digest)",
         full, nonce=0x05050505)

out = open(sys.argv[1], "w") if len(sys.argv) > 1 else sys.stdout
for v in vectors:
    out.write(json.dumps(v) + "\n")
print(f"python-ndn: {len(vectors)} vectors", file=sys.stderr)
