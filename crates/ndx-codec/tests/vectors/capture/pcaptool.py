#!/usr/bin/env python3
"""Small pcap helpers for the ndx capture scripts (own code, stdlib only).

  pcaptool.py payloads IN.pcap            -> one line per UDP/6363 datagram: "<dir> <hex>"
  pcaptool.py topcapng IN.pcap OUT.pcapng -> rewrite a classic pcap as pcapng (SHB+IDB+EPB)
"""
import struct
import sys


def read_pcap(path):
    with open(path, "rb") as f:
        buf = f.read()
    magic = struct.unpack("<I", buf[:4])[0]
    if magic == 0xA1B2C3D4:
        e, nano = "<", False
    elif magic == 0xD4C3B2A1:
        e, nano = ">", False
    elif magic == 0xA1B23C4D:
        e, nano = "<", True
    else:
        raise ValueError("not a classic pcap")
    _, _, _, _, snaplen, linktype = struct.unpack(e + "HHiIII", buf[4:24])
    off, pkts = 24, []
    while off + 16 <= len(buf):
        sec, frac, incl, orig = struct.unpack(e + "IIII", buf[off:off + 16])
        pkts.append((sec, frac, orig, buf[off + 16:off + 16 + incl]))
        off += 16 + incl
    return {"linktype": linktype, "snaplen": snaplen, "nano": nano, "packets": pkts}


def udp_payload(frame):
    """Ethernet frame -> (src, dst, sport, dport, payload) or None."""
    et = struct.unpack("!H", frame[12:14])[0]
    p = 14
    if et == 0x8100:
        et = struct.unpack("!H", frame[16:18])[0]; p = 18
    if et == 0x0800:
        ihl = (frame[p] & 0x0F) * 4
        if frame[p + 9] != 17:
            return None
        src, dst = frame[p + 12:p + 16], frame[p + 16:p + 20]
        tot = struct.unpack("!H", frame[p + 2:p + 4])[0]
        u = p + ihl; end = p + tot
    elif et == 0x86DD:
        if frame[p + 6] != 17:
            return None
        src, dst = frame[p + 8:p + 24], frame[p + 24:p + 40]
        u = p + 40; end = u + struct.unpack("!H", frame[p + 4:p + 6])[0]
    else:
        return None
    sport, dport, ulen = struct.unpack("!HHH", frame[u:u + 6])
    return src, dst, sport, dport, frame[u + 8:u + ulen]


def to_pcapng(src, dst):
    cap = read_pcap(src)
    def block(btype, body):
        body += b"\0" * (-len(body) % 4)
        ln = 12 + len(body)
        return struct.pack("<II", btype, ln) + body + struct.pack("<I", ln)
    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    # IDB with if_tsresol option (9): 6 = microseconds, 9 = nanoseconds
    res = 9 if cap["nano"] else 6
    opts = struct.pack("<HHB", 9, 1, res) + b"\0" * 3 + struct.pack("<HH", 0, 0)
    out += block(0x00000001, struct.pack("<HHI", cap["linktype"], 0, cap["snaplen"]) + opts)
    mul = 10 ** res
    for sec, frac, orig, data in cap["packets"]:
        ts = sec * mul + frac
        out += block(0x00000006, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(data), orig) + data)
    with open(dst, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    if sys.argv[1] == "payloads":
        cap = read_pcap(sys.argv[2])
        for _, _, _, fr in cap["packets"]:
            r = udp_payload(fr)
            if r and 6363 in (r[2], r[3]):
                print(("a2b" if r[3] == 6363 and r[0] < r[1] else "b2a"), r[4].hex())
    elif sys.argv[1] == "topcapng":
        to_pcapng(sys.argv[2], sys.argv[3])
