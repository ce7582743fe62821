"""What several commands share: the one KEY=VALUE parser (``--set``, ``--rule``, ``--bot``),
flag types, the listening-address check, clean one-line errors, and how a command
catches Ctrl-C and SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import getpass
import json
import os
import resource
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from harness.errors import HarnessError
from harness.protocol.tls import ServerTLS
from harness.web import logfold

MAX_OPEN_FILES = 1 << 20
"""The highest soft limit on open files the long-running commands raise theirs to."""


def split_assignment(text: str, flag: str, *, what: str = "KEY=VALUE") -> tuple[str, str]:
    """``KEY=VALUE`` as ``(KEY, VALUE)``, both stripped; the key must not be empty."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise HarnessError(f"{flag} takes {what}; got {text!r}")
    return key.strip(), value.strip()


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535."""
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535; got {value}")
    return value


def check_listen(host: str, port: int) -> None:
    """Raise one clean HarnessError if ``host:port`` cannot be listened on (the port is in
    use, or the host is not an address of this machine), before gRPC tries and logs its
    own low-level error. Port 0 checks the host only."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise HarnessError(f"cannot listen on {host}:{port}: unknown host ({e.strerror})") \
            from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as e:
                why = {errno.EADDRINUSE: "the port is in use",
                       errno.EADDRNOTAVAIL: "not an address of this machine",
                       errno.EACCES: "permission denied"}.get(e.errno or 0, e.strerror)
                raise HarnessError(f"cannot listen on {host}:{port}: {why}") from None


def raise_open_file_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit, but to no more
    than :data:`MAX_OPEN_FILES` (bots inherit it, and some programs take time per
    possible file); returns the soft limit now. Bots, their streams and the store need
    files, and the live page keeps a reserve of them free."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = MAX_OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, MAX_OPEN_FILES)
    if soft == resource.RLIM_INFINITY or wanted <= soft:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError):  # some systems cap it lower than the hard limit says
        return soft
    return wanted


def long_running() -> None:
    """What a command that serves until it is stopped does first: raise the open-file
    limit, and fold repeated warnings and errors into one line per interval."""
    raise_open_file_limit()
    logfold.install()


def os_error_line(e: OSError) -> str:
    """An OSError as one line for a user: what failed and on which file."""
    why = (e.strerror or str(e)).lower()
    return f"cannot use {e.filename}: {why}" if e.filename else why


def writable_folder(path: Path, option: str) -> None:
    """Create ``path`` if needed and make sure files can be written in it."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".euchre-harness-write-check-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise HarnessError(f"{option}: cannot write to the folder {path}: "
                           f"{(e.strerror or str(e)).lower()}") from None


def write_address_file(path: Path, address: str) -> None:
    """Write the referee's address as JSON (``{"address": "HOST:PORT", "host": ...,
    "port": ...}``), atomically, so a script polling for the file never reads half."""
    host, _, port = address.rpartition(":")
    text = json.dumps({"address": address, "host": host.strip("[]"), "port": int(port)})
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text + "\n")
    tmp.replace(path)


def existing_store(text: str) -> Path:
    """A results store that exists (reading commands never create one)."""
    path = Path(text)
    if not path.is_file() or path.stat().st_size == 0:
        raise HarnessError(f"no results store at {path}")
    return path


def add_tls_flags(parser: argparse.ArgumentParser) -> None:
    """``--tls-cert`` and ``--tls-key``, for the commands that run a referee."""
    parser.add_argument("--tls-cert", type=Path, default=None, metavar="FILE",
                        help="serve TLS with this certificate chain (PEM); needs "
                             "--tls-key. Without both, the referee speaks plaintext")
    parser.add_argument("--tls-key", type=Path, default=None, metavar="FILE",
                        help="the private key (PEM) of --tls-cert")


def add_listen_flags(parser: argparse.ArgumentParser, *, port: int,
                     log_dir: str | None = None, remote: bool = False) -> None:
    """``--host`` and ``--port`` of the referee (the port's default ``port``: 0 for any
    free one), and with ``log_dir`` the ``--log-dir`` of its bots' logs: one wording and
    one check for every command that runs a referee."""
    parser.add_argument("--host", default="127.0.0.1",
                        help="where the referee listens (" + ("remote bots dial it; "
                                                             if remote else "") +
                             "default loopback)")
    parser.add_argument("--port", type=port_number, default=port,
                        help=f"the referee's port (default {port}"
                             + (": any free port)" if port == 0 else ")"))
    if log_dir is not None:
        parser.add_argument("--log-dir", default=log_dir,
                            help=f"bot stdout/stderr logs (default {log_dir})")


def add_http_flags(parser: argparse.ArgumentParser, shows: str) -> None:
    """``--http-port`` and ``--http-host``: the live page, which ``shows`` what it says."""
    parser.add_argument("--http-port", type=port_number, default=None,
                        help=f"serve the live page (read-only HTTP: {shows}) on this port "
                             "(default off; 0: any free port)")
    parser.add_argument("--http-host", default="127.0.0.1",
                        help="where the live page listens (default loopback)")


def default_owner() -> str:
    """The owner of a bot registered without ``--owner``: the operator's user name."""
    try:
        return getpass.getuser() or "operator"
    except Exception:  # no user name in the environment or the password database
        return "operator"


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def operator_token(args: argparse.Namespace, tls: ServerTLS | None) -> str | None:
    """The operator token of a listening command (``--operator-token`` or
    ``EUCHRE_OPERATOR_TOKEN``, which a note on stderr announces: a setting from the
    environment is easy to forget), with a note on stderr when it has none (every user
    and process of this machine may then make operator calls, and no one else), when it
    comes from the flag (which every user sees in the process list), and when it listens
    beyond this machine without TLS (the bots' and the operator's tokens then cross the
    network in clear)."""
    token: str | None = args.operator_token or os.environ.get("EUCHRE_OPERATOR_TOKEN") or None
    if token is not None and not args.operator_token:
        print("note: EUCHRE_OPERATOR_TOKEN is set: operator calls (euchre-harness ctl) must "
              "present that token, from this machine too", file=sys.stderr)
    if args.operator_token:
        print("note: --operator-token shows the token to every user of this machine (in "
              "its list of processes); EUCHRE_OPERATOR_TOKEN does not", file=sys.stderr)
    if token is None:
        print("note: no operator token: every user and process of this machine may make "
              "operator calls (start tournaments that run any command, register or retire "
              "bots)" + ("" if args.host in LOOPBACK else ", and no one else")
              + "; set EUCHRE_OPERATOR_TOKEN on a machine you share", file=sys.stderr)
    if args.host not in LOOPBACK and tls is None:
        print(f"note: listening on {args.host} without TLS: bots' and operators' tokens "
              "cross the network in clear (give --tls-cert and --tls-key)", file=sys.stderr)
    return token


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def on_signals(handler: Callable[[int], None]) -> Iterator[None]:
    """Within the running event loop, call ``handler(signum)`` on each SIGINT (Ctrl-C)
    or SIGTERM instead of raising KeyboardInterrupt or ending the process; the default
    handling is back afterwards."""
    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, handler, sig)
    try:
        yield
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


def games(n: int) -> str:
    """``1 game``, ``2 games``."""
    return f"{n} game{'' if n == 1 else 's'}"
