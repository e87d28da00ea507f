#!/usr/bin/env python3
"""An NDN producer speaking raw Ethernet (EtherType 0x8624) on an AF_PACKET socket, for ndx's
datapath tests (no ndx tool speaks Ethernet). Serves FILE under PREFIX as
/PREFIX/v=1/seg=<n> (FinalBlockId, FreshnessPeriod, DigestSha256, encoded by python-ndn),
answering a CanBePrefix Interest with segment 0.

ndx wraps what it forwards in an NDNLPv2 LpPacket (type 100) carrying a PitToken (98) and the
Interest in a Fragment (80). The reply echoes the PitToken in an LpPacket around the Data,
unless --no-token is given (then a bare Data goes back, and ndx must match it by name).

Prints "ready <mac> <versioned name>" once bound, then one line per Interest:
"interest <name> token=<0|1>".
usage: ether_producer.py IFACE PREFIX FILE SEGMENT_SIZE [--no-token]"""
import socket
import sys

from ndn.encoding import Component, MetaInfo, Name, make_data, parse_interest
from ndn.security.signer.sha256_digest_signer import DigestSha256Signer

ETH_P_NDN = 0x8624
LP_PACKET, PIT_TOKEN, FRAGMENT, INTEREST = 100, 98, 80, 5

iface, prefix, path, seg_size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
echo_token = "--no-token" not in sys.argv[5:]
with open(path, "rb") as f:
    content = f.read()
vname = Name.normalize(prefix) + [Component.from_version(1)]
segs = [content[i:i + seg_size] for i in range(0, len(content), seg_size)] or [b""]
last = Component.from_segment(len(segs) - 1)
signer = DigestSha256Signer()


def read_var(buf, pos):
    first = buf[pos]
    if first < 253:
        return first, pos + 1
    width = {253: 2, 254: 4, 255: 8}[first]
    return int.from_bytes(buf[pos + 1:pos + 1 + width], "big"), pos + 1 + width


def tlvs(buf):
    """(type, value) of each TLV in buf."""
    pos = 0
    while pos < len(buf):
        typ, pos = read_var(buf, pos)
        length, pos = read_var(buf, pos)
        yield typ, bytes(buf[pos:pos + length])
        pos += length


def var(n):
    if n < 253:
        return bytes([n])
    if n <= 0xFFFF:
        return b"\xfd" + n.to_bytes(2, "big")
    return b"\xfe" + n.to_bytes(4, "big")


def tlv(typ, value):
    return var(typ) + var(len(value)) + value


def segment_for(name, param):
    if (len(name) == len(vname) + 1 and name[:-1] == vname
            and Component.get_type(name[-1]) == Component.TYPE_SEGMENT):
        return Component.to_number(name[-1])
    if param.can_be_prefix and Name.is_prefix(name, vname):
        return 0
    return None


sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_NDN))
sock.bind((iface, ETH_P_NDN))
mac = sock.getsockname()[4]
print(f"ready {mac.hex(':')} {Name.to_str(vname)}", flush=True)

while True:
    frame, addr = sock.recvfrom(65536)
    if addr[2] == socket.PACKET_OUTGOING or len(frame) < 14:
        continue
    src, payload = frame[6:12], frame[14:]
    try:
        outer = list(tlvs(payload))
        if not outer:
            continue
        typ, value = outer[0]
        token = None
        if typ == LP_PACKET:
            fields = dict(tlvs(value))
            token = fields.get(PIT_TOKEN)
            if FRAGMENT not in fields:
                continue
            wire = fields[FRAGMENT]
        else:
            wire = payload[:len(tlv(typ, value))]
        if wire[0] != INTEREST:
            continue
        name, param, _app_param, _sig = parse_interest(wire, with_tl=True)
    except Exception as e:  # a frame we do not understand: report and go on
        print(f"undecodable {type(e).__name__} {e}", flush=True)
        continue
    print(f"interest {Name.to_str(name)} token={int(token is not None)}", flush=True)
    n = segment_for(name, param)
    if n is None or n >= len(segs):
        continue
    data = bytes(make_data(vname + [Component.from_segment(n)],
                           MetaInfo(freshness_period=10000, final_block_id=last),
                           segs[n], signer=signer))
    if echo_token and token is not None:
        data = tlv(LP_PACKET, tlv(PIT_TOKEN, token) + tlv(FRAGMENT, data))
    sock.send(src + mac + ETH_P_NDN.to_bytes(2, "big") + data)
