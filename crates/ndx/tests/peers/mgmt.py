#!/usr/bin/env python3
"""An NFD Management client (python-ndn: ndn.appv2 and ndn.app_support.nfd_mgmt) for ndx's
management tests, over the forwarder given by --transport / NDN_CLIENT_TRANSPORT.

Datasets (StatusDataset: an Interest for /localhost/nfd/<module>/<verb> with CanBePrefix and
MustBeFresh, answered by segment k of /localhost/nfd/<module>/<verb>/v=<n>; every segment up
to the FinalBlockId is fetched), decoded by python-ndn's nfd_mgmt models, one JSON object per
line on stdout (names as URIs, enums and flags as integers, binary as hex):
  faces          faces/list            FaceStatus per line
  fib            fib/list              FibEntry {name, next_hop_records: [{face_id, cost}]}
  rib            rib/list              RibEntry {name, routes: [{face_id, origin, cost, flags,
                                       expiration_period}]}
  strategies     strategy-choice/list  {name, strategy: "<strategy name>"}
  status         status/general        one GeneralStatus object
  cs             cs/info               one CsInfo object
--meta first prints 'dataset <versioned-name> <segments> <bytes>'. An answer that is not a
segmented dataset (e.g. a ControlResponse) prints 'code <n> <text>' and exits 1.

Control commands print 'code <status-code> <status-text>' (plus 'body <json>' with --body, the
ControlParameters of the response) and exit 0 whenever a ControlResponse came back, whatever
its code (--expect N: exit 1 unless the code is N):
  register PREFIX [--face-id N] [--origin O] [--cost C] [--flags F] [--expires MS]
  unregister PREFIX [--face-id N] [--origin O]
  set-strategy PREFIX STRATEGY      STRATEGY: a full name, or multicast / best-route / ...
  unset-strategy PREFIX
  raw-command MODULE VERB HEX       the ControlParameters component is exactly the bytes HEX
                                    ('' = empty component, --no-params = no component)
  unknown-verb [--module rib] [--verb frobnicate]   a valid register-style ControlParameters
--format: how a command Interest is signed (v2 and v1: DigestSha256):
  v2 (default)  NDN v0.3 signed Interest, name .../<ControlParameters>/params-sha256=<d>
                (what ndn.appv2 register and pynfdc send)
  v1            pre-2022 signed command Interest: .../<ControlParameters>/<timestamp>/<nonce>/
                <SignatureInfo>/<SignatureValue> (what ndn.app.NDNApp.register sends)
  unsigned      .../<ControlParameters> and nothing else
Options (--format, --body, --expect, --meta, --lifetime, --timeout, ...) go before or after
COMMAND. A route registered without --face-id is on mgmt.py's own connection, so the forwarder
removes it when mgmt.py exits.
Exit codes: 0 ok, 1 error / decode error / --expect mismatch, 2 usage, 3 Nack ('nack <code>
<reason>'), 4 timeout ('timeout'), 5 --timeout expired ('deadline'), 6 connection closed,
130/143 SIGINT/SIGTERM.
"""
import argparse
import json
import sys

from ndn.app_support import nfd_mgmt
from ndn.encoding import Name, parse_and_check_tl

sys.dont_write_bytecode = True  # no __pycache__ next to the scripts in the source tree
import peerlib  # noqa: E402
from peerlib import emit, log

DATASETS = {
    "faces": ("faces", "list", nfd_mgmt.FaceStatusMsg, "face_status"),
    "fib": ("fib", "list", nfd_mgmt.FibStatus, "entries"),
    "rib": ("rib", "list", nfd_mgmt.RibStatus, "entries"),
    "strategies": ("strategy-choice", "list", nfd_mgmt.StrategyChoiceMsg, "strategy_choices"),
    "status": ("status", "general", nfd_mgmt.GeneralStatus, None),
    "cs": ("cs", "info", nfd_mgmt.CsInfo, None),
}
CS_INFO = 0x80  # NFD wraps the cs/info dataset in a CsInfo TLV

STRATEGY_SHORT = ("multicast", "best-route", "access", "asf", "self-learning", "ncc",
                  "random")


def add_options(p, suppress):
    """The options every COMMAND takes, before or after it (suppress: no defaults, so that a
    subcommand's parser does not overwrite what was given before the COMMAND)."""
    def d(value):
        return argparse.SUPPRESS if suppress else value

    p.add_argument("--transport", metavar="URI", default=d(None),
                   help="forwarder: unix:///path, udp://host:port, tcp://host:port (default: "
                        "$NDN_CLIENT_TRANSPORT, then client.conf, then unix:///run/nfd/nfd.sock)")
    p.add_argument("--timeout", type=float, default=d(15), metavar="SECONDS",
                   help="hard overall deadline, 0 = none (default 15); on expiry prints "
                        "'deadline' and exits 5")
    p.add_argument("-v", "--verbose", action="count", default=d(0),
                   help="log more to stderr (-v info, -vv debug)")
    p.add_argument("--lifetime", type=int, default=d(2000), metavar="MS",
                   help="InterestLifetime (default 2000)")
    p.add_argument("--retries", type=int, default=d(2),
                   help="dataset Interests: resend a timed-out one this many times "
                        "(default 2); commands are sent once")
    p.add_argument("--format", choices=peerlib.FORMATS, default=d("v2"),
                   help="command Interest format (default v2)")
    p.add_argument("--body", action="store_true", default=d(False),
                   help="commands: also print 'body <json>' (response ControlParameters)")
    p.add_argument("--expect", type=int, metavar="CODE", default=d(None),
                   help="commands: exit 1 unless the status code is CODE")
    p.add_argument("--meta", action="store_true", default=d(False),
                   help="datasets: first print 'dataset <versioned-name> <segments> <bytes>'")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    add_options(p, suppress=False)
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    for name in DATASETS:
        add_options(sub.add_parser(name, help=f"{'/'.join(DATASETS[name][:2])} dataset"), True)
    r = sub.add_parser("register", help="rib/register")
    r.add_argument("prefix")
    r.add_argument("--face-id", type=int)
    r.add_argument("--origin", type=int)
    r.add_argument("--cost", type=int)
    r.add_argument("--flags", type=int)
    r.add_argument("--expires", type=int, metavar="MS", help="ExpirationPeriod")
    u = sub.add_parser("unregister", help="rib/unregister")
    u.add_argument("prefix")
    u.add_argument("--face-id", type=int)
    u.add_argument("--origin", type=int)
    s = sub.add_parser("set-strategy", help="strategy-choice/set")
    s.add_argument("prefix")
    s.add_argument("strategy")
    us = sub.add_parser("unset-strategy", help="strategy-choice/unset")
    us.add_argument("prefix")
    rc = sub.add_parser("raw-command", help="a command with raw ControlParameters bytes")
    rc.add_argument("module")
    rc.add_argument("verb")
    rc.add_argument("hex", nargs="?", default="")
    rc.add_argument("--no-params", action="store_true",
                    help="leave the ControlParameters component out")
    uv = sub.add_parser("unknown-verb", help="a verb the module does not have")
    uv.add_argument("--module", default="rib")
    uv.add_argument("--verb", default="frobnicate")
    uv.add_argument("--prefix", default="/ndx/unknown-verb")
    for name in ("register", "unregister", "set-strategy", "unset-strategy", "raw-command",
                 "unknown-verb"):
        add_options(sub.choices[name], True)
    args = p.parse_args()
    if args.cmd == "raw-command":
        try:
            args.raw = bytes.fromhex(args.hex)
        except ValueError:
            p.error("HEX must be hexadecimal bytes")
    return args


def strategy_name(s):
    if s in STRATEGY_SHORT:
        return f"/localhost/nfd/strategy/{s}"
    return s


def command_of(args):
    """(module, verb, ControlParameters bytes or None)."""
    cp = peerlib.control_parameters
    if args.cmd == "register":
        return "rib", "register", cp(name=args.prefix, face_id=args.face_id, origin=args.origin,
                                     cost=args.cost, flags=args.flags,
                                     expiration_period=args.expires)
    if args.cmd == "unregister":
        return "rib", "unregister", cp(name=args.prefix, face_id=args.face_id,
                                       origin=args.origin)
    if args.cmd == "set-strategy":
        return "strategy-choice", "set", cp(name=args.prefix,
                                            strategy=strategy_name(args.strategy))
    if args.cmd == "unset-strategy":
        return "strategy-choice", "unset", cp(name=args.prefix)
    if args.cmd == "raw-command":
        return args.module, args.verb, None if args.no_params else args.raw
    if args.cmd == "unknown-verb":
        return args.module, args.verb, cp(name=args.prefix)
    raise AssertionError(args.cmd)


def decode_dataset(cmd, content: bytes):
    """JSON-able objects of a dataset's content."""
    _module, _verb, model, list_field = DATASETS[cmd]
    if cmd == "cs" and content and content[0] == CS_INFO:
        content = bytes(parse_and_check_tl(memoryview(content), CS_INFO))
    msg = model.parse(content)
    if list_field is None:
        return [peerlib.model_to_json(msg)]
    objs = []
    for item in getattr(msg, list_field) or []:
        obj = peerlib.model_to_json(item)
        objs.append(obj)
    return objs


def main():
    args = parse_args()
    peerlib.setup_logging(args.verbose)
    app = peerlib.new_app_v2(args)

    if args.cmd in DATASETS:
        module, verb = DATASETS[args.cmd][:2]

        async def job(app_):
            return await peerlib.fetch_segmented(
                app_, f"{peerlib.MGMT_PREFIX}/{module}/{verb}", args.lifetime, args.retries,
                window=4)
    else:
        module, verb, params = command_of(args)
        name = peerlib.command_name(module, verb, params, args.format)
        log.info("command Interest name %s", Name.to_str(name))

        async def job(app_):
            return await peerlib.send_command(app_, module, verb, params, args.format,
                                              args.lifetime)

    out = peerlib.run_session(app, job, args.timeout)
    code = peerlib.finish_common(out)
    if code is not None:
        return code
    if out.exc is not None:
        return peerlib.finish_error(out.exc)
    log.info("signature types on the answers: %s", peerlib.SIG_TYPES_SEEN)

    if args.cmd in DATASETS:
        versioned, content, nsegs, first = out.value
        if versioned is None:
            try:
                resp = peerlib.parse_control_response(first)
                emit("code", resp["status_code"], resp["status_text"])
            except Exception as e:
                emit("error", "not-a-dataset", type(e).__name__)
            return peerlib.EXIT_ERROR
        if args.meta:
            emit("dataset", Name.to_str(versioned), nsegs, len(content))
        try:
            objs = decode_dataset(args.cmd, content)
        except Exception as e:
            log.error("cannot decode %s: %s (content %s)", Name.to_str(versioned), e,
                      content.hex())
            emit("error", "decode", type(e).__name__, str(e).replace(" ", "_"))
            return peerlib.EXIT_ERROR
        for obj in objs:
            emit(json.dumps(obj, sort_keys=True))
        return peerlib.EXIT_OK

    data_name, resp = out.value
    log.info("response Data %s", Name.to_str(data_name))
    emit("code", resp["status_code"], resp["status_text"])
    if args.body:
        body = {}
        for k, v in resp.items():
            if k in ("status_code", "status_text") or v is None:
                continue
            if k == "name":
                v = Name.to_str(v)
            elif k == "strategy":
                v = Name.to_str(v.name) if v.name is not None else None
            elif isinstance(v, (bytes, memoryview)):
                v = bytes(v).hex()
            elif hasattr(v, "value"):
                v = v.value
            body[k] = v
        emit("body", json.dumps(body, sort_keys=True))
    if args.expect is not None and resp["status_code"] != args.expect:
        log.error("expected status code %d, got %s", args.expect, resp["status_code"])
        return peerlib.EXIT_ERROR
    return peerlib.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
