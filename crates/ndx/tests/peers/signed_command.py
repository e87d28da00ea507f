#!/usr/bin/env python3
"""One NFD control command, signed as chosen, over the forwarder given by --transport /
NDN_CLIENT_TRANSPORT (unix:///path or udp://host:port), for ndx's command-key and /localhop
tests.

The command is an NDN v0.3 signed Interest /<scope>/nfd/<module>/<verb>/<ControlParameters>/
params-sha256=<d> built with python-ndn's nfd_mgmt encoders, signed DigestSha256 (default) or
HMAC-SHA256 with the key in --hmac-key-file (python-ndn's HmacSha256Signer, KeyLocator
/ndx/command-key).

stdout: 'code <status-code> <status-text>' when a ControlResponse came back (exit 0), else
'nack <reason>' (exit 3) or 'timeout' (exit 4).

usage: signed_command.py MODULE VERB [--name PREFIX] [--face-id N] [--origin O] [--cost C]
       [--flags F] [--mask M] [--hold SECONDS]
       [--scope localhost|localhop] [--hmac-key-file FILE] [--transport URI] [--timeout S]
"""
import argparse
import asyncio
import os
import sys

sys.dont_write_bytecode = True

from ndn.app_support import nfd_mgmt  # noqa: E402
from ndn.appv2 import NDNApp, pass_all  # noqa: E402
from ndn.encoding import Component, Name  # noqa: E402
from ndn.security import DigestSha256Signer  # noqa: E402
from ndn.security.signer.sha256_hmac_signer import HmacSha256Signer  # noqa: E402
from ndn.client_conf import default_face  # noqa: E402
from ndn.types import InterestNack, InterestTimeout  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("module")
    p.add_argument("verb")
    p.add_argument("--name")
    p.add_argument("--face-id", type=int)
    p.add_argument("--origin", type=int)
    p.add_argument("--cost", type=int)
    p.add_argument("--flags", type=int)
    p.add_argument("--mask", type=int)
    p.add_argument("--scope", choices=["localhost", "localhop"], default="localhost")
    p.add_argument("--hmac-key-file")
    p.add_argument("--transport", default=os.environ.get("NDN_CLIENT_TRANSPORT", ""))
    p.add_argument("--timeout", type=float, default=20)
    p.add_argument("--hold", type=float, default=0,
                   help="keep the connection (its face) open this many seconds after the answer")
    args = p.parse_args()

    kwargs = {}
    if args.name is not None:
        kwargs["name"] = Name.from_str(args.name)
    for k in ("face_id", "origin", "cost", "flags", "mask"):
        if getattr(args, k) is not None:
            kwargs[k] = getattr(args, k)
    name = nfd_mgmt.make_command_v2(args.module, args.verb, **kwargs)
    if args.scope == "localhop":
        name[0] = Component.from_str("localhop")
    if args.hmac_key_file:
        with open(args.hmac_key_file, "rb") as f:
            key = f.read().strip()
        signer = HmacSha256Signer("/ndx/command-key", key)
    else:
        signer = DigestSha256Signer(True)

    if not args.transport:
        print("error no transport", flush=True)
        return 2
    face = default_face(args.transport)
    app = NDNApp(face=face)
    result = {"code": 1}

    async def run():
        try:
            _, content, _ = await app.express(
                name, validator=pass_all, app_param=b"", signer=signer, lifetime=2000,
                must_be_fresh=True)
            resp = nfd_mgmt.parse_response(bytes(content))
            print(f"code {resp['status_code']} {resp['status_text']}", flush=True)
            result["code"] = 0
            await asyncio.sleep(args.hold)
        except InterestNack as e:
            print(f"nack {e.reason}", flush=True)
            result["code"] = 3
        except InterestTimeout:
            print("timeout", flush=True)
            result["code"] = 4
        finally:
            app.shutdown()

    async def guarded():
        try:
            await asyncio.wait_for(run(), args.timeout)
        except asyncio.TimeoutError:
            print("deadline", flush=True)
            result["code"] = 5
            app.shutdown()

    app.run_forever(after_start=guarded())
    return result["code"]


if __name__ == "__main__":
    sys.exit(main())
