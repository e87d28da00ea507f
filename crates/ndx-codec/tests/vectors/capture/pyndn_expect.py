"""Build the `expect` dict of a vector from python-ndn's own decoder
(ndn.encoding.parse_interest / parse_data / LpPacketValue)."""
import hashlib

from ndn.encoding import parse_interest, parse_data, Name
from ndn.encoding.ndnlp_v2 import LpPacketValue, LpTypeNumber
from ndn.encoding.tlv_var import parse_and_check_tl

from ndnuri import name_uri, split_component


def _name(formal_name):
    comps = [split_component(c) for c in formal_name]
    return name_uri(comps), [[t, v.hex()] for t, v in comps]


def interest_expect(wire: bytes) -> dict:
    name, param, app_param, sig = parse_interest(wire)
    uri, comps = _name(name)
    return {
        "name": uri,
        "name_components": comps,
        "can_be_prefix": bool(param.can_be_prefix),
        "must_be_fresh": bool(param.must_be_fresh),
        "nonce": param.nonce,
        "lifetime_ms": param.lifetime,
        "hop_limit": param.hop_limit,
        "app_params_hex": None if app_param is None else bytes(app_param).hex(),
        "forwarding_hint": [_name(Name.normalize(n))[0] for n in param.forwarding_hint],
        "signed": sig.signature_info is not None,
    }


def data_expect(wire: bytes) -> dict:
    name, meta, content, sig = parse_data(wire)
    uri, comps = _name(name)
    fb = None
    if meta.final_block_id is not None:
        fb = name_uri([split_component(meta.final_block_id)])[1:]
    return {
        "name": uri,
        "name_components": comps,
        "content_hex": None if content is None else bytes(content).hex(),
        "content_type": meta.content_type,
        "freshness_ms": meta.freshness_period,
        "final_block_id": fb,
        "signature_type": None if sig.signature_info is None else sig.signature_info.signature_type,
        # python-ndn has no implicit-digest helper: sha256 over the whole Data TLV
        "implicit_digest": hashlib.sha256(bytes(wire)).hexdigest(),
    }


def packet_kind(wire: bytes) -> str:
    return {5: "interest", 6: "data", 100: "lp"}.get(wire[0], "unknown")


def l3_expect(wire: bytes) -> dict:
    k = packet_kind(wire)
    if k == "interest":
        return interest_expect(wire)
    if k == "data":
        return data_expect(wire)
    raise ValueError("not an L3 packet: type %d" % wire[0])


def lp_fields_pyndn(wire: bytes) -> dict:
    """python-ndn's raw LpPacket model (it has no Sequence field, and its
    high-level parse refuses fragments, so this is only used to cross-check)."""
    val = parse_and_check_tl(wire, LpTypeNumber.LP_PACKET)
    lp = LpPacketValue.parse(val, {}, ignore_critical=True)
    return {
        "pit_token_hex": None if lp.pit_token is None else bytes(lp.pit_token).hex(),
        "frag_index": lp.frag_index,
        "frag_count": lp.frag_count,
        "nack": lp.nack is not None,
        "nack_reason": None if lp.nack is None else lp.nack.nack_reason,
        "fragment_hex": None if lp.fragment is None else bytes(lp.fragment).hex(),
    }
