#!/usr/bin/env python3
"""python-ndn consumer for ndx-app's interop test: fetches the segmented object
under PREFIX straight over UDP (discovery with CanBePrefix, then every segment,
DigestSha256 checked), writes it to OUT and prints "ok <bytes> <sha256 hex>"
(or "error <what>").
usage: pyndn_consumer.py udp://IP:PORT PREFIX OUT"""
import hashlib
import sys

from ndn.app import NDNApp
from ndn.app_support.segment_fetcher import segment_fetcher
from ndn.client_conf import default_face
from ndn.security.keychain.keychain_digest import KeychainDigest

url, prefix, out = sys.argv[1], sys.argv[2], sys.argv[3]
app = NDNApp(face=default_face(url), keychain=KeychainDigest())


async def main():
    try:
        buf = bytearray()
        async for chunk in segment_fetcher(app, prefix, timeout=2000, retry_times=5):
            buf.extend(chunk)
        with open(out, "wb") as f:
            f.write(buf)
        print(f"ok {len(buf)} {hashlib.sha256(buf).hexdigest()}", flush=True)
    except Exception as e:  # reported to the Rust test, which fails with it
        print(f"error {type(e).__name__} {e}", flush=True)
    finally:
        app.shutdown()


app.run_forever(after_start=main())
