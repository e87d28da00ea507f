"""Shared helpers of the ndx peer scripts (app_producer.py, fetch.py, mgmt.py, churn.py).

Not a script. Built on python-ndn 0.5.2 (/opt/ndx-interop/venv): choosing the forwarder
transport the way python-ndn does (--transport, else NDN_CLIENT_TRANSPORT, else client.conf,
else unix:///run/nfd/nfd.sock), logging to stderr, machine-readable result lines on stdout,
running an NDNApp session under a hard deadline that ends cleanly on SIGINT/SIGTERM or when
the forwarder closes the connection, building NFD management command Interests in the signed
formats apps use, decoding ControlResponse and fetching StatusDatasets.
"""
import asyncio
import errno
import hashlib
import logging
import os
import signal
import struct
import sys
from dataclasses import dataclass

from ndn import appv2
from ndn.app_support import nfd_mgmt
from ndn.client_conf import default_face, read_client_conf
from ndn.encoding import Component, Name, SignatureType, TypeNumber
from ndn.encoding.tlv_model import BytesField, ModelField, NameField, RepeatedField, UintField
from ndn.security import DigestSha256Signer
from ndn.types import InterestCanceled, InterestNack, InterestTimeout, ValidResult
from ndn.utils import gen_nonce_64, timestamp

# Exit codes shared by every script.
EXIT_OK = 0          # success (app_producer: also when stopped by SIGINT/SIGTERM)
EXIT_ERROR = 1       # failure: cannot connect, registration refused, decode error, ...
EXIT_USAGE = 2       # bad command line (argparse)
EXIT_NACK = 3        # the forwarder answered with a Nack
EXIT_TIMEOUT = 4     # an Interest timed out (after the retries)
EXIT_DEADLINE = 5    # the overall --timeout expired first
EXIT_CLOSED = 6      # the forwarder closed the connection unexpectedly
# Interrupted by a signal (all scripts but app_producer): 128 + signal number (130, 143).

NACK_REASONS = {0: "None", 50: "Congestion", 100: "Duplicate", 150: "NoRoute"}

log = logging.getLogger("peer")


def setup_logging(verbose: int) -> None:
    """Log to stderr; -v: INFO (the default shows warnings only), -vv: python-ndn DEBUG too."""
    level = logging.WARNING if verbose <= 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(stream=sys.stderr, level=level,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log.setLevel(logging.WARNING if verbose <= 0 else logging.INFO if verbose == 1
                 else logging.DEBUG)


def emit(*fields) -> None:
    """One machine-readable line on stdout (a reader gone, e.g. `| head -1`, is not an error:
    the rest of the output is dropped)."""
    try:
        print(" ".join(str(f) for f in fields), flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def add_common_args(parser, default_timeout):
    parser.add_argument("--transport", metavar="URI",
                        help="forwarder to use: unix:///path, udp://host:port or tcp://host:port "
                             "(default: $NDN_CLIENT_TRANSPORT, then client.conf, then "
                             "unix:///run/nfd/nfd.sock, as python-ndn does)")
    parser.add_argument("--timeout", type=float, default=default_timeout, metavar="SECONDS",
                        help="hard overall deadline, 0 = none (default %(default)s); on expiry "
                             "prints 'deadline' and exits 5")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log more to stderr (-v info, -vv debug)")


def transport_uri(args) -> str:
    return args.transport or read_client_conf()["transport"]


def make_face(args):
    return default_face(transport_uri(args))


def nack_name(reason) -> str:
    return NACK_REASONS.get(reason, f"Reason{reason}")


def errno_name(exc: BaseException) -> str:
    """ENOENT, ECONNREFUSED, ... of an OSError (its class name when it has no errno)."""
    num = getattr(exc, "errno", None)
    return errno.errorcode.get(num, type(exc).__name__) if num else type(exc).__name__


def signal_exit_code(signame: str) -> int:
    return 128 + int(getattr(signal, signame))


# --------------------------------------------------------------------------- session driver

@dataclass
class Outcome:
    status: str = ""        # done | signal | deadline | closed | connect-error
    value: object = None    # what the job returned
    exc: BaseException | None = None  # what the job (or the connection) raised
    signame: str = ""


async def _face_closed(face) -> None:
    while face.running:
        await asyncio.sleep(0.05)


async def _session(app, job, timeout) -> Outcome:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    out = Outcome()

    def on_signal(sig):
        if not out.signame:
            out.signame = sig.name
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig)

    async def after_start():
        job_task = asyncio.create_task(job(app))
        stop_task = asyncio.create_task(stop.wait())
        closed_task = asyncio.create_task(_face_closed(app.face))
        tasks = (job_task, stop_task, closed_task)
        done, pending = await asyncio.wait(tasks, timeout=timeout or None,
                                           return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if job_task in done:
            out.status = "done"
            try:
                out.value = job_task.result()
            except Exception as e:  # reported by the caller
                out.exc = e
        elif stop_task in done:
            out.status = "signal"
        elif closed_task in done:
            out.status = "closed"
        else:
            out.status = "deadline"
        if app.face.running:
            writer = getattr(app.face, "writer", None)
            if writer is not None:
                try:  # let what the job sent last leave before closing
                    await asyncio.wait_for(writer.drain(), 1)
                except (OSError, asyncio.TimeoutError):
                    pass
            app.face.shutdown()

    try:
        await app.main_loop(after_start())
    except OSError as e:  # FileNotFoundError, ConnectionRefusedError, PermissionError, ...
        out.status = "connect-error"
        out.exc = e
    return out


def run_session(app, job, timeout) -> Outcome:
    """Connect app to its forwarder, run `await job(app)`, then disconnect.

    Ends early on SIGINT/SIGTERM ("signal"), when timeout seconds pass ("deadline") or when the
    forwarder closes the connection ("closed"). Works with ndn.app.NDNApp and ndn.appv2.NDNApp.
    """
    return asyncio.run(_session(app, job, timeout))


def finish_common(out: Outcome, signal_code: int | None = None) -> int | None:
    """Print the result line and return the exit code for the non-"done" outcomes."""
    if out.status == "connect-error":
        log.error("cannot connect: %s", out.exc)
        emit("error", "connect", errno_name(out.exc))
        return EXIT_ERROR
    if out.status == "deadline":
        emit("deadline")
        return EXIT_DEADLINE
    if out.status == "closed":
        emit("closed")
        return EXIT_CLOSED
    if out.status == "signal":
        emit("interrupted", out.signame)
        return signal_exit_code(out.signame) if signal_code is None else signal_code
    return None


def finish_error(exc: BaseException) -> int:
    """Result line and exit code for an exception raised by a job."""
    if isinstance(exc, InterestNack):
        emit("nack", exc.reason, nack_name(exc.reason))
        return EXIT_NACK
    if isinstance(exc, InterestTimeout):
        emit("timeout")
        return EXIT_TIMEOUT
    if isinstance(exc, InterestCanceled):
        emit("closed")
        return EXIT_CLOSED
    log.error("failed: %s: %s", type(exc).__name__, exc)
    emit("error", type(exc).__name__, str(exc).replace(" ", "_") or "-")
    return EXIT_ERROR


# --------------------------------------------------------------------------- validators

SIG_TYPES_SEEN: dict[int, int] = {}


async def digest_or_pass(name, sig, _context):
    """Data validator for appv2: verifies a DigestSha256 signature, accepts any other type
    (python-ndn's own sha256_digest_checker policy). Counts signature types in SIG_TYPES_SEEN."""
    info = sig.signature_info
    typ = info.signature_type if info is not None else -1
    SIG_TYPES_SEEN[typ] = SIG_TYPES_SEEN.get(typ, 0) + 1
    if typ != SignatureType.DIGEST_SHA256:
        return ValidResult.PASS
    digest = hashlib.sha256()
    for part in sig.signature_covered_part or []:
        digest.update(part)
    if sig.signature_value_buf is not None and digest.digest() == bytes(sig.signature_value_buf):
        return ValidResult.PASS
    log.error("bad DigestSha256 signature on %s", Name.to_str(name))
    return ValidResult.FAIL


# --------------------------------------------------------------------------- NFD management

MGMT_PREFIX = "/localhost/nfd"
FORMATS = ("v2", "v1", "unsigned")


def control_parameters(**fields) -> bytes:
    """ControlParameters (0x68) TLV, encoded by python-ndn's nfd_mgmt model."""
    cp = nfd_mgmt.ControlParameters()
    cp.cp = nfd_mgmt.ControlParametersValue()
    for key, value in fields.items():
        if value is None:
            continue
        if key == "strategy":
            cp.cp.strategy = nfd_mgmt.Strategy()
            cp.cp.strategy.name = value
        else:
            setattr(cp.cp, key, value)
    return bytes(cp.encode())


def _tlv(typ: int, value: bytes) -> bytes:
    def var(n):
        if n < 253:
            return bytes([n])
        if n <= 0xFFFF:
            return b"\xfd" + n.to_bytes(2, "big")
        return b"\xfe" + n.to_bytes(4, "big")
    return var(typ) + var(len(value)) + value


def v1_signed_components(components: list) -> list:
    """The four trailing components of an NFD "signed command Interest" (the pre-2022 format,
    still sent by python-ndn's ndn.app.NDNApp.register): timestamp (ms, 8 bytes), random
    8-byte nonce, SignatureInfo (DigestSha256) and SignatureValue = SHA-256 over the TLVs of
    every name component before it."""
    ts = Component.from_bytes(struct.pack("!Q", timestamp()))
    nonce = Component.from_bytes(struct.pack("!Q", gen_nonce_64()))
    sig_info = Component.from_bytes(
        _tlv(TypeNumber.SIGNATURE_INFO, _tlv(TypeNumber.SIGNATURE_TYPE,
                                             bytes([SignatureType.DIGEST_SHA256]))))
    covered = [bytes(c) for c in components] + [bytes(ts), bytes(nonce), bytes(sig_info)]
    value = hashlib.sha256(b"".join(covered)).digest()
    sig_value = Component.from_bytes(_tlv(TypeNumber.SIGNATURE_VALUE, value))
    return [ts, nonce, sig_info, sig_value]


def command_name(module: str, verb: str, params: bytes | None, fmt: str,
                 prefix: str = MGMT_PREFIX) -> list:
    """Name of a command Interest: PREFIX/MODULE/VERB[/<params>], plus the v1 signature
    components when fmt == "v1". `params` is the whole ControlParameters TLV (or any bytes),
    put in a GenericNameComponent; None leaves the component out."""
    name = Name.from_str(prefix) + [Component.from_str(module), Component.from_str(verb)]
    if params is not None:
        name.append(Component.from_bytes(params))
    if fmt == "v1":
        name += v1_signed_components(name)
    return name


def command_interest_args(fmt: str) -> dict:
    """express() keyword arguments of a command Interest in format fmt.

    v2: an NDN v0.3 signed Interest (ApplicationParameters empty, InterestSignatureInfo with
    SignatureTime and SignatureNonce, DigestSha256) - what ndn.appv2.NDNApp.register and
    pynfdc send. v1 and unsigned: a plain Interest (v1 carries its signature in the name)."""
    if fmt == "v2":
        return {"app_param": b"", "signer": DigestSha256Signer(for_interest=True)}
    return {}


def parse_control_response(content) -> dict:
    """ControlResponse (0x65) Content -> dict with status_code, status_text and the body's
    ControlParameters fields (python-ndn's nfd_mgmt.parse_response)."""
    return nfd_mgmt.parse_response(content)


async def send_command(app, module, verb, params, fmt, lifetime) -> tuple:
    """Express a command Interest; returns (Data name, ControlResponse dict)."""
    name = command_name(module, verb, params, fmt)
    data_name, content, _ctx = await app.express(
        name, validator=digest_or_pass, lifetime=lifetime, **command_interest_args(fmt))
    return data_name, parse_control_response(bytes(content or b""))


async def fetch_segmented(app, prefix, lifetime, retries, window=1, must_be_fresh=True,
                          on_discovered=None):
    """Fetch a versioned segmented object (or a StatusDataset): an Interest for `prefix` with
    CanBePrefix (+MustBeFresh), then every segment of the version that answered, until the
    FinalBlockId, keeping up to `window` Interests in flight. Each timed-out Interest is sent
    again up to `retries` times; a Nack is raised at once.

    Returns (versioned name or None when the answer is not segmented, content bytes,
    number of segments, first Data's content)."""
    prefix = Name.normalize(prefix)

    async def express(name, can_be_prefix, fresh):
        tries = 0
        while True:
            try:
                data_name, content, ctx = await app.express(
                    name, validator=digest_or_pass, can_be_prefix=can_be_prefix,
                    must_be_fresh=fresh, lifetime=lifetime)
                return data_name, bytes(content or b""), ctx["meta_info"]
            except InterestTimeout:
                tries += 1
                if tries > retries:
                    raise
                log.info("timeout, retrying %s (%d/%d)", Name.to_str(name), tries, retries)

    first_name, first_content, meta = await express(prefix, True, must_be_fresh)
    if (not first_name or Component.get_type(first_name[-1]) != Component.TYPE_SEGMENT
            or len(first_name) <= len(prefix)):
        return None, first_content, 1, first_content
    versioned = first_name[:-1]
    if on_discovered is not None:
        on_discovered(versioned, meta)
    segments = {Component.to_number(first_name[-1]): first_content}

    def final_of(meta_info):
        fb = meta_info.final_block_id
        if fb is None:
            return None
        fb = bytes(fb)
        if Component.get_type(fb) != Component.TYPE_SEGMENT:
            raise ValueError(f"FinalBlockId is not a segment number: {fb.hex()}")
        return Component.to_number(fb)

    final = final_of(meta)

    async def get(n):
        name = versioned + [Component.from_segment(n)]
        data_name, content, meta_info = await express(name, False, False)
        if Name.to_bytes(data_name) != Name.to_bytes(name):
            raise ValueError(f"asked for {Name.to_str(name)}, got {Name.to_str(data_name)}")
        return n, content, meta_info

    pending = set()
    next_seg = 0
    try:
        while True:
            while len(pending) < max(1, window):
                while next_seg in segments:
                    next_seg += 1
                if final is not None and next_seg > final:
                    break
                if final is None and pending:
                    break  # do not run past an unknown end
                pending.add(asyncio.create_task(get(next_seg)))
                next_seg += 1
            if not pending:
                break
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                n, content, meta_info = task.result()
                segments[n] = content
                seg_final = final_of(meta_info)
                if seg_final is not None:
                    final = seg_final
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    if final is None or any(n not in segments for n in range(final + 1)):
        raise ValueError("object incomplete")
    content = b"".join(segments[n] for n in range(final + 1))
    return versioned, content, final + 1, first_content


def new_app_v2(args):
    """An ndn.appv2.NDNApp on the selected transport (no keychain needed)."""
    return appv2.NDNApp(face=make_face(args))


# --------------------------------------------------------------------------- JSON of models

def model_to_json(model) -> dict:
    """python-ndn TlvModel -> plain dict (names as URIs, enums/flags as integers, binary as
    hex, Strategy as its name URI), skipping absent fields."""
    out = {}
    for field in type(model)._encoded_fields:
        value = getattr(model, field.name, None)
        if value is None:
            continue
        out[field.name] = _field_json(field, value)
    return out


def _field_json(field, value):
    if isinstance(field, NameField):
        return Name.to_str(value)
    if isinstance(field, RepeatedField):
        return [_field_json(field.element_type, v) for v in value]
    if isinstance(field, ModelField):
        if isinstance(value, nfd_mgmt.Strategy):
            return Name.to_str(value.name) if value.name is not None else None
        return model_to_json(value)
    if isinstance(field, UintField):
        return int(value.value) if hasattr(value, "value") else int(value)
    if isinstance(field, BytesField):
        return value if isinstance(value, str) else bytes(value).hex()
    return repr(value)

