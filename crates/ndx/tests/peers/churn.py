#!/usr/bin/env python3
"""App-face churn for ndx: opens N connections to a forwarder's unix socket and closes them
all, in batches of --batch connections held open at once (kept under RLIMIT_NOFILE).

Plain blocking sockets, no NDNApp. With --register-every M, connection i (i % M == 0)
first registers the prefix <--prefix>/<i> with a rib/register command Interest (signed as
--format, see mgmt.py; built with python-ndn's encoders) and waits for its ControlResponse
(which may come wrapped in an NDNLPv2 LpPacket, e.g. with a PitToken). Closing the socket is
all the forwarder sees: it must destroy the face and its routes. Checks that every socket it
opened is closed again (counts /proc/self/fd).

stdout:
  registered <ok> <failed>     with --register-every: 200 responses vs others/timeouts
  done <N>                     every connection was opened and closed
  error connect <ERRNO> <i>    connection i failed, e.g. ENOENT (exit 1)
  interrupted <SIG>            SIGINT/SIGTERM: open sockets closed, exit 130/143
  deadline                     --timeout expired: open sockets closed, exit 5
Exit codes: 0 done (and every registration answered 200), 1 connection error, failed
registration or leaked descriptors, 2 usage, 5 deadline, 130/143 signal.

usage: churn.py [-n 1000] [--batch 256] [--register-every 0] [--prefix /churn]
       [--format v2|v1|unsigned] [--hold MS] [--lifetime MS] [--transport unix:///path]
       [--timeout 120] [-v]
"""
import argparse
import os
import resource
import select
import signal
import socket
import sys
import time
from urllib.parse import urlparse

from ndn.encoding import InterestParam, make_interest, parse_data
from ndn.encoding.ndnlp_v2 import LpTypeNumber, parse_lp_packet_v2

sys.dont_write_bytecode = True  # no __pycache__ next to the scripts in the source tree
import peerlib  # noqa: E402
from peerlib import emit, log


class Deadline(Exception):
    pass


class Interrupted(Exception):
    def __init__(self, signame):
        super().__init__(signame)
        self.signame = signame


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--count", type=int, default=1000,
                   help="connections (default %(default)s)")
    p.add_argument("--batch", type=int, default=256,
                   help="connections open at once (default %(default)s; lowered to fit the "
                        "descriptor limit)")
    p.add_argument("--register-every", type=int, default=0, metavar="M",
                   help="connection i with i %% M == 0 registers PREFIX/<i> first (0 = none)")
    p.add_argument("--prefix", default="/churn")
    p.add_argument("--format", choices=peerlib.FORMATS, default="v2",
                   help="command Interest format (default %(default)s)")
    p.add_argument("--hold", type=int, default=0, metavar="MS",
                   help="keep each batch open this long before closing it")
    p.add_argument("--lifetime", type=int, default=4000, metavar="MS",
                   help="wait this long for each ControlResponse (default %(default)s)")
    peerlib.add_common_args(p, default_timeout=120)
    args = p.parse_args()
    if args.count < 0 or args.batch < 1 or args.register_every < 0:
        p.error("-n >= 0, --batch >= 1, --register-every >= 0")
    return args


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def register_wire(prefix, fmt, lifetime):
    """Encoded rib/register command Interest for prefix."""
    params = peerlib.control_parameters(name=prefix)
    name = peerlib.command_name("rib", "register", params, fmt)
    extra = peerlib.command_interest_args(fmt)
    param = InterestParam(lifetime=lifetime)
    param.nonce = int.from_bytes(os.urandom(4), "big")
    return bytes(make_interest(name, param, extra.get("app_param"), signer=extra.get("signer")))


def var_number(buf, pos):
    """(value, next position) of the TLV-VAR-NUMBER at buf[pos:], or None if incomplete."""
    if pos >= len(buf):
        return None
    first = buf[pos]
    width = {253: 2, 254: 4, 255: 8}.get(first, 0)
    if width == 0:
        return first, pos + 1
    if pos + 1 + width > len(buf):
        return None
    return int.from_bytes(buf[pos + 1:pos + 1 + width], "big"), pos + 1 + width


def read_packet(sock, deadline):
    """Read one TLV packet from a stream socket before `deadline` (monotonic seconds)."""
    buf = b""
    while True:
        typ = var_number(buf, 0)
        length = var_number(buf, typ[1]) if typ else None
        if length and len(buf) >= length[1] + length[0]:
            return buf[:length[1] + length[0]]
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        ready, _, _ = select.select([sock], [], [], left)
        if ready:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("forwarder closed the connection")
            buf += chunk


def register(sock, prefix, fmt, lifetime):
    """Status code of the forwarder's answer (or 'timeout' / 'nack' / 'closed')."""
    sock.sendall(register_wire(prefix, fmt, lifetime))
    deadline = time.monotonic() + lifetime / 1000
    while True:
        try:
            pkt = read_packet(sock, deadline)
        except TimeoutError:
            return "timeout"
        except ConnectionError:
            return "closed"
        if pkt[0] == LpTypeNumber.LP_PACKET:
            lp = parse_lp_packet_v2(pkt, with_tl=True)
            if lp.nack is not None:
                return "nack"
            if lp.fragment is None:
                continue  # e.g. an idle LpPacket
            pkt = bytes(lp.fragment)
        if pkt[0] != 0x06:
            continue  # an Interest towards the app: not ours
        _name, _meta, content, _sig = parse_data(pkt, with_tl=True)
        return peerlib.parse_control_response(bytes(content or b""))["status_code"]


def main():
    args = parse_args()
    peerlib.setup_logging(args.verbose)
    uri = urlparse(peerlib.transport_uri(args))
    if uri.scheme != "unix":
        emit("error", "transport", "not-unix")
        return peerlib.EXIT_USAGE
    path = uri.path

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    batch = max(1, min(args.batch, soft - open_fds() - 32))
    if batch < args.batch:
        log.warning("batch lowered to %d (RLIMIT_NOFILE %d)", batch, soft)
    fds_before = open_fds()
    started = time.monotonic()

    def on_signal(sig, _frame):
        raise Interrupted(signal.Signals(sig).name)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    socks = []
    ok = failed = closed_total = 0
    code = peerlib.EXIT_OK
    try:
        i = 0
        while i < args.count:
            n = min(batch, args.count - i)
            for _ in range(n):
                if args.timeout and time.monotonic() - started > args.timeout:
                    raise Deadline
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                socks.append(s)
                try:
                    s.connect(path)
                except OSError as e:
                    log.error("connection %d: %s", i, e)
                    emit("error", "connect", peerlib.errno_name(e), i)
                    raise SystemExit(peerlib.EXIT_ERROR)
                if args.register_every and i % args.register_every == 0:
                    res = register(s, f"{args.prefix}/{i}", args.format, args.lifetime)
                    if res == 200:
                        ok += 1
                    else:
                        failed += 1
                        log.warning("register %s/%d: %s", args.prefix, i, res)
                i += 1
            if args.hold:
                time.sleep(args.hold / 1000)
            while socks:
                socks.pop().close()
                closed_total += 1
            log.info("%d connections opened and closed", i)
    except Deadline:
        emit("deadline")
        code = peerlib.EXIT_DEADLINE
    except Interrupted as e:
        emit("interrupted", e.signame)
        code = peerlib.signal_exit_code(e.signame)
    except SystemExit as e:
        code = e.code
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while socks:
            socks.pop().close()
            closed_total += 1
    fds_after = open_fds()
    if fds_after != fds_before:
        log.error("descriptors: %d before, %d after", fds_before, fds_after)
        emit("error", "fd-leak", fds_before, fds_after)
        return peerlib.EXIT_ERROR
    if code != peerlib.EXIT_OK:
        return code
    if args.register_every:
        emit("registered", ok, failed)
    emit("done", args.count)
    log.info("%d connections in %.2f s", args.count, time.monotonic() - started)
    return peerlib.EXIT_ERROR if failed else peerlib.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
