"""NDN URI formatting per the NDN packet spec v0.3 "NDN URI Scheme" section,
plus the rev3 naming-convention alternate forms (seg/off/v/t/seq).

Written for ndx; works on (type, value-bytes) pairs so it does not depend on
how any particular library prints names.
"""

UNRESERVED = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
ALT_NUMERIC = {50: "seg", 52: "off", 54: "v", 56: "t", 58: "seq"}


def escape(value: bytes) -> str:
    if all(b == 0x2E for b in value):  # zero or more periods: add three more
        return "." * (len(value) + 3)
    return "".join(chr(b) if b in UNRESERVED else "%%%02X" % b for b in value)


def component_uri(typ: int, value: bytes) -> str:
    value = bytes(value)
    if typ == 1 and len(value) == 32:
        return "sha256digest=" + value.hex()
    if typ == 2 and len(value) == 32:
        return "params-sha256=" + value.hex()
    if typ in ALT_NUMERIC and len(value) in (1, 2, 4, 8):
        return "%s=%d" % (ALT_NUMERIC[typ], int.from_bytes(value, "big"))
    if typ == 8:
        return escape(value)
    return "%d=%s" % (typ, escape(value))


def name_uri(components) -> str:
    """components: iterable of (type, value-bytes)."""
    comps = list(components)
    if not comps:
        return "/"
    return "/" + "/".join(component_uri(t, v) for t, v in comps)


def read_varnum(buf: bytes, off: int):
    b = buf[off]
    if b < 253:
        return b, off + 1
    n = {253: 2, 254: 4, 255: 8}[b]
    return int.from_bytes(buf[off + 1:off + 1 + n], "big"), off + 1 + n


def split_component(comp: bytes):
    """A whole NameComponent TLV (as python-ndn returns them) -> (type, value)."""
    comp = bytes(comp)
    t, off = read_varnum(comp, 0)
    ln, off = read_varnum(comp, off)
    assert off + ln == len(comp), "malformed component"
    return t, comp[off:]
