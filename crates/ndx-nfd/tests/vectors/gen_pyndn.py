# Generates the python-ndn vectors pasted into ../vectors.rs:
#   /opt/ndx-interop/venv/bin/python crates/ndx-nfd/tests/vectors/gen_pyndn.py
# (python-ndn 0.4.x, ndn/app_support/nfd_mgmt.py). Prints `name = hex` lines.
import asyncio
from ndn.app_support.nfd_mgmt import *
from ndn.encoding import Name, TlvModel, ModelField, InterestParam, make_interest
from ndn.security import DigestSha256Signer


def show(label, b):
    print(f"{label} = {bytes(b).hex()}")


def cp(**kw):
    v = ControlParametersValue()
    for k, x in kw.items():
        setattr(v, k, x)
    m = ControlParameters()
    m.cp = v
    return m


# rib/register arguments (python-ndn's order equals NFD's for these fields).
show("CP_REGISTER", cp(name="/a/b", face_id=300, origin=0, cost=10, flags=1,
                       expiration_period=3600000).encode())
# Every field (python-ndn writes BaseCongestion/DefaultCongestion/Mtu before Flags; NFD after
# FacePersistency).
s = Strategy()
s.name = "/localhost/nfd/strategy/best-route"
show("CP_ALL", cp(name="/x", face_id=7, uri="udp4://192.0.2.1:6363", local_uri="udp4://0.0.0.0:6363",
                  origin=255, cost=65536, capacity=4294967296, count=3,
                  base_congestion_mark_interval=100000000, default_congestion_threshold=65536,
                  mtu=8800, flags=5, mask=7, strategy=s, expiration_period=1000,
                  face_persistency=FacePersistency.PERMANENT).encode())
show("CP_EMPTY", cp().encode())

r = ControlResponse()
r.status_code = 200
r.status_text = "OK"
r.body = cp(name="/a/b", face_id=300, origin=0, cost=10, flags=1).cp
show("RESP_OK", b"\x65" + bytes([len(r.encode())]) + bytes(r.encode()))
r = ControlResponse()
r.status_code = 404
r.status_text = "Face not found"
show("RESP_404", b"\x65" + bytes([len(r.encode())]) + bytes(r.encode()))

def face(fid, uri, local, mtu=None, exp=None):
    f = FaceStatus()
    f.face_id = fid
    f.uri = uri
    f.local_uri = local
    if exp is not None:
        f.expiration_period = exp
    f.face_scope = FaceScope.LOCAL if uri.startswith("fd") or uri.startswith("unix") else FaceScope.NON_LOCAL
    f.face_persistency = FacePersistency.ON_DEMAND
    f.link_type = FaceLinkType.POINT_TO_POINT
    if mtu is not None:
        f.base_congestion_mark_interval = 100000000
        f.default_congestion_threshold = 65536
        f.mtu = mtu
    f.n_in_interests = 1
    f.n_in_data = 2
    f.n_in_nacks = 3
    f.n_out_interests = 300
    f.n_out_data = 70000
    f.n_out_nacks = 0
    f.n_in_bytes = 5000000000
    f.n_out_bytes = 6
    f.flags = FaceFlags.LOCAL_FIELDS_ENABLED
    return f

msg = FaceStatusMsg()
msg.face_status = [face(1, "fd://17", "unix:///run/nfd/nfd.sock"),
                   face(258, "udp4://192.0.2.1:6363", "udp4://192.0.2.2:6363", mtu=1472, exp=30000)]
show("FACES", msg.encode())

def route(fid, origin, cost, flags, exp=None):
    r = Route()
    r.face_id = fid
    r.origin = origin
    r.cost = cost
    r.flags = flags
    if exp is not None:
        r.expiration_period = exp
    return r

e1 = RibEntry(); e1.name = "/"; e1.routes = [route(258, 255, 10, RouteFlags.CHILD_INHERIT)]
e2 = RibEntry(); e2.name = "/example/app"
e2.routes = [route(300, 0, 0, RouteFlags.CHILD_INHERIT, 3600000), route(301, 65, 5, RouteFlags.CAPTURE)]
rib = RibStatus(); rib.entries = [e1, e2]
show("RIB", rib.encode())

def nh(fid, cost):
    h = NextHopRecord(); h.face_id = fid; h.cost = cost; return h
f1 = FibEntry(); f1.name = "/localhost/nfd"; f1.next_hop_records = [nh(1, 0)]
f2 = FibEntry(); f2.name = "/example"; f2.next_hop_records = [nh(258, 10), nh(259, 20)]
fib = FibStatus(); fib.entries = [f1, f2]
show("FIB", fib.encode())

def sc(name, strat):
    c = StrategyChoice(); c.name = name; c.strategy = Strategy(); c.strategy.name = strat; return c
scm = StrategyChoiceMsg()
scm.strategy_choices = [sc("/", "/localhost/nfd/strategy/best-route/v=5"),
                        sc("/localhost", "/localhost/nfd/strategy/multicast/v=4")]
show("STRATEGIES", scm.encode())

g = GeneralStatus()
g.nfd_version = "0.1.0-ndx"
g.start_timestamp = 1700000000000
g.current_timestamp = 1700000123456
g.n_name_tree_entries = 10
g.n_fib_entries = 3
g.n_pit_entries = 2
g.n_measurement_entries = 0
g.n_cs_entries = 1000
g.n_in_interests = 1
g.n_in_data = 2
g.n_in_nacks = 3
g.n_out_interests = 4
g.n_out_data = 5
g.n_out_nacks = 6
g.n_satisfied_interests = 7
g.n_unsatisfied_interests = 8
show("GENERAL", g.encode())

class CsInfoMsg(TlvModel):
    cs_info = ModelField(0x80, CsInfo)
ci = CsInfo()
ci.capacity = 65536
ci.flags = 3
ci.n_cs_entries = 1000
ci.n_hits = 123456
ci.n_misses = 7
m = CsInfoMsg(); m.cs_info = ci
show("CS_INFO", m.encode())

ev = FaceEventNotificationValue()
ev.face_event_kind = FaceEventKind.CREATED
ev.face_id = 258
ev.uri = "udp4://192.0.2.1:6363"
ev.local_uri = "udp4://192.0.2.2:6363"
ev.face_scope = FaceScope.NON_LOCAL
ev.face_persistency = FacePersistency.PERSISTENT
ev.link_type = FaceLinkType.MULTI_ACCESS
ev.flags = FaceFlags.NO_FLAG
n = FaceEventNotification(); n.event = ev
show("FACE_EVENT", n.encode())

q = FaceQueryFilterValue(); q.uri_scheme = "udp4"; q.face_scope = FaceScope.NON_LOCAL
qq = FaceQueryFilter(); qq.face_query_filter = q
show("QUERY_FILTER", qq.encode())

# A v0.3 signed command Interest as python-ndn's docs advise for NFD and ndnd
# (make_command_v2 + app_param=b'' + DigestSha256Signer(for_interest=True)); nonce and
# lifetime fixed so the output is reproducible (SignatureNonce and SignatureTime are random
# and the current time).
name = make_command_v2("rib", "register", name="/example/app", cost=0, origin=0)
wire = make_interest(name, InterestParam(must_be_fresh=True, nonce=0x01020304, lifetime=4000),
                     app_param=b"", signer=DigestSha256Signer(for_interest=True))
show("PYNDN_COMMAND", wire)


# --check: python-ndn reads our encodings (the OURS_* constants of ../vectors.rs).
import hashlib
import sys
from ndn.encoding import parse_interest, parse_data, DecodeError
from ndn.security.validator.digest_validator import params_sha256_checker

if "--check" in sys.argv:
    src = open(__file__.replace("vectors/gen_pyndn.py", "vectors.rs")).read()
    def ours(label):
        i = src.index(f"const {label}: &str = \"") + len(f"const {label}: &str = \"")
        return bytes.fromhex(src[i:src.index('"', i)])

    name, param, app_param, sig = parse_interest(ours("OURS_COMMAND"), with_tl=True)
    print("OURS_COMMAND:", Name.to_str(name), "must_be_fresh", param.must_be_fresh,
          "nonce", hex(param.nonce), "lifetime", param.lifetime)
    assert asyncio.run(params_sha256_checker(name, sig)), "ParametersSha256Digest"
    assert sig.signature_info.signature_type == 0
    covered = b"".join(bytes(b) for b in sig.signature_covered_part)
    assert hashlib.sha256(covered).digest() == bytes(sig.signature_value_buf), "DigestSha256"
    cp = ControlParameters.parse(bytes(name[4])[2:])
    print("  params:", Name.to_str(cp.cp.name), cp.cp.origin, cp.cp.cost)
    print("  python-ndn accepts the signature and the parameters digest")

    try:
        cp = ControlParameters.parse(ours("OURS_CP_ALL"))
        print("OURS_CP_ALL parsed by python-ndn:", cp.cp.mtu)
    except DecodeError as e:
        print("OURS_CP_ALL refused by python-ndn (its fixed field order):", e)
