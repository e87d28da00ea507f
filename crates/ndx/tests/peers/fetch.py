#!/usr/bin/env python3
"""An NDN consumer (python-ndn ndn.appv2) for ndx's app face and UDP tests.

Talks to the forwarder given by --transport / NDN_CLIENT_TRANSPORT (unix:///path or
udp://host:port; python-ndn over UDP neither fragments nor reassembles, so keep Data under
the MTU there).

Object mode (default): fetches the segmented object under PREFIX: an Interest for PREFIX with
CanBePrefix and MustBeFresh discovers the version (PREFIX/v=<n>/seg=<k>), then every segment
of that version up to its FinalBlockId is fetched (--window Interests in flight, each one
retried --retries times on timeout). A DigestSha256 on any Data is verified; other signature
types are accepted. Writes the bytes to --output if given.
  ok <bytes> <sha256-hex>         the object; stderr says its name and segment count
One-Interest mode (--one NAME): expresses exactly one Interest for NAME (--can-be-prefix,
--must-be-fresh, --lifetime; --pad-to makes the encoded Name that many bytes long by adding a
last generic component, for the 3 KB name tests):
  data <data-name> <content-bytes>
Either mode, on failure:
  nack <code> <reason>            a Nack (reason None/Congestion/Duplicate/NoRoute) - exit 3
  timeout                         no answer (after the retries) - exit 4
  deadline | closed | error ...   --timeout expired (5), forwarder closed the connection (6),
                                  other errors (1); SIGINT/SIGTERM print 'interrupted <SIG>'
                                  and exit 130/143.

usage: fetch.py PREFIX [-o FILE] [--window 8] [--retries 3] [--lifetime 4000]
       fetch.py --one NAME [--can-be-prefix] [--must-be-fresh] [--lifetime MS] [--pad-to BYTES]
       common: [--transport URI] [--timeout 120] [-v]
"""
import argparse
import hashlib
import sys

from ndn.encoding import Component, Name

sys.dont_write_bytecode = True  # no __pycache__ next to the scripts in the source tree
import peerlib  # noqa: E402
from peerlib import emit, log


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("prefix", metavar="PREFIX", nargs="?", help="object prefix, e.g. /app/py")
    p.add_argument("-o", "--output", metavar="FILE", help="write the object here")
    p.add_argument("--window", type=int, default=8,
                   help="segment Interests in flight (default %(default)s)")
    p.add_argument("--retries", type=int, default=3,
                   help="times a timed-out Interest is sent again (default %(default)s)")
    p.add_argument("--lifetime", type=int, default=4000, metavar="MS",
                   help="InterestLifetime (default %(default)s)")
    p.add_argument("--one", metavar="NAME", help="express one Interest for NAME instead")
    p.add_argument("--can-be-prefix", action="store_true", help="--one: set CanBePrefix")
    p.add_argument("--must-be-fresh", action="store_true", help="--one: set MustBeFresh")
    p.add_argument("--pad-to", type=int, default=0, metavar="BYTES",
                   help="--one: append a generic component of 'a's so that the Name TLV is "
                        "BYTES long")
    peerlib.add_common_args(p, default_timeout=120)
    args = p.parse_args()
    if (args.one is None) == (args.prefix is None):
        p.error("give either PREFIX or --one NAME")
    if args.window < 1 or args.retries < 0 or args.lifetime <= 0:
        p.error("--window >= 1, --retries >= 0, --lifetime > 0")
    return args


def padded(name, total):
    """name plus one GenericNameComponent of b'a's so that the encoded Name is `total` bytes."""
    name = Name.normalize(name)
    base = len(Name.encode(name))
    if total <= 0:
        return name
    for fill in range(max(0, total - base - 6), max(0, total - base) + 1):
        cand = name + [Component.from_bytes(b"a" * fill)]
        if len(Name.encode(cand)) == total:
            return cand
    raise ValueError(f"cannot pad {Name.to_str(name)} to exactly {total} bytes")


def main():
    args = parse_args()
    peerlib.setup_logging(args.verbose)
    app = peerlib.new_app_v2(args)

    if args.one is not None:
        try:
            name = padded(args.one, args.pad_to)
        except ValueError as e:
            emit("error", "pad", str(e).replace(" ", "_"))
            return peerlib.EXIT_USAGE
        log.info("Interest name is %d bytes encoded", len(Name.encode(name)))

        async def job(app_):
            data_name, content, _ctx = await app_.express(
                name, validator=peerlib.digest_or_pass, can_be_prefix=args.can_be_prefix,
                must_be_fresh=args.must_be_fresh, lifetime=args.lifetime)
            return data_name, bytes(content or b"")
    else:
        def discovered(versioned, meta):
            log.info("discovered %s (FinalBlockId %s)", Name.to_str(versioned),
                     bytes(meta.final_block_id).hex() if meta.final_block_id else "-")

        async def job(app_):
            return await peerlib.fetch_segmented(app_, args.prefix, args.lifetime, args.retries,
                                                 window=args.window, on_discovered=discovered)

    out = peerlib.run_session(app, job, args.timeout)
    code = peerlib.finish_common(out)
    if code is not None:
        return code
    if out.exc is not None:
        return peerlib.finish_error(out.exc)
    if args.one is not None:
        data_name, content = out.value
        emit("data", Name.to_str(data_name), len(content))
        return peerlib.EXIT_OK
    versioned, content, nsegs, _first = out.value
    log.info("fetched %s: %d segments, %d bytes; signature types seen %s",
             Name.to_str(versioned) if versioned else "(unsegmented)", nsegs, len(content),
             peerlib.SIG_TYPES_SEEN)
    if args.output:
        try:
            with open(args.output, "wb") as f:
                f.write(content)
        except OSError as e:
            emit("error", "output", type(e).__name__)
            return peerlib.EXIT_ERROR
    emit("ok", len(content), hashlib.sha256(content).hexdigest())
    return peerlib.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
