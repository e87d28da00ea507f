#!/usr/bin/env python3
"""python-ndn producer for ndx-app's interop test: serves FILE under PREFIX as
/PREFIX/v=<ms>/seg=<n> (FinalBlockId, FreshnessPeriod, DigestSha256), answering
CanBePrefix discovery with segment 0, straight over UDP (no forwarder).
Prints "ready <local ip>:<port> <versioned name>" once its socket is open.
usage: pyndn_producer.py udp://IP:PORT PREFIX FILE SEGMENT_SIZE"""
import sys
import time

from ndn.app import NDNApp
from ndn.client_conf import default_face
from ndn.encoding import Component, Name
from ndn.security.keychain.keychain_digest import KeychainDigest

url, prefix, path, seg_size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with open(path, "rb") as f:
    content = f.read()
app = NDNApp(face=default_face(url), keychain=KeychainDigest())
prefix = Name.normalize(prefix)
vname = prefix + [Component.from_version(int(time.time() * 1000))]
segs = [content[i:i + seg_size] for i in range(0, len(content), seg_size)] or [b""]
last = Component.from_segment(len(segs) - 1)


@app.route(prefix)
def on_interest(name, param, _app_param):
    if (len(name) == len(vname) + 1 and name[:-1] == vname
            and Component.get_type(name[-1]) == Component.TYPE_SEGMENT):
        n = Component.to_number(name[-1])
    elif param.can_be_prefix and Name.is_prefix(name, vname):
        n = 0
    else:
        return
    if n < len(segs):
        app.put_data(vname + [Component.from_segment(n)], segs[n],
                     freshness_period=10000, final_block_id=last)


async def main():
    host, port = app.face.transport.get_extra_info("sockname")[:2]
    host = f"[{host}]" if ":" in host else host
    print(f"ready {host}:{port} {Name.to_str(vname)}", flush=True)


app.run_forever(after_start=main())
