#!/usr/bin/env python3
"""python-ndn consumer used by capture_ndnd.sh: connects to the local ndnd over
its unix socket and sends a handful of Interests with varied fields, so that
ndnd forwards them (LpPacket + PitToken) over the captured UDP link.
usage: pyndn_consumer.py UNIX_SOCKET PREFIX"""
import asyncio
import sys

from ndn.app import NDNApp
from ndn.encoding import Name, Component
from ndn.transport.stream_face import UnixFace
from ndn.security.keychain.keychain_digest import KeychainDigest
from ndn.types import InterestNack, InterestTimeout, InterestCanceled, ValidationFailure

sock, prefix = sys.argv[1], sys.argv[2]
app = NDNApp(face=UnixFace(sock), keychain=KeychainDigest())


async def ask(label, name, **kw):
    try:
        r = await app.express_interest(name, **kw)
        print(f"{label}: data {Name.to_str(r[0])} {len(r[2] or b'')}B", flush=True)
        return r
    except InterestNack as e:
        print(f"{label}: nack {e.reason}", flush=True)
    except (InterestTimeout, InterestCanceled, ValidationFailure) as e:
        print(f"{label}: {type(e).__name__}", flush=True)
    return None


async def main():
    try:
        r = await ask("discover", prefix, can_be_prefix=True, must_be_fresh=True, lifetime=2000, nonce=0x0D15C0FE)
        if r:
            name = r[0]
            seg0 = name[:-1] + [Component.from_segment(0)]
            seg1 = name[:-1] + [Component.from_segment(1)]
            await ask("seg1-hoplimit", seg1, hop_limit=7, lifetime=3000, nonce=0x5E610001)
            await ask("seg0-fwhint", seg0, forwarding_hint=["/ndx-hint/router"], nonce=0x5E600001)
            await ask("seg0-cs-hit", seg0, must_be_fresh=False, lifetime=1500, nonce=0x5E600002)
        await ask("app-params", prefix + "/rpc", app_param=b"ndx-params", signer=None, lifetime=400, nonce=0xA9900001)
        await ask("nack", "/ndx/nack/noroute", lifetime=1000, nonce=0x9ACC0001)
    finally:
        app.shutdown()


app.run_forever(after_start=main())
