"""A hostile bot for the escape suite (tests/test_sandbox_escape.py): before it plays, it
tries every way out of its box it knows, and prints one line per attempt::

    ATTACK <name>: blocked (<why>)
    ATTACK <name>: OPEN (<what it got>)

then plays random legal actions like any bot. What it reads it prints too, so that a
secret it should never see would show in its log. The targets come from the environment
(the test knows the machine's side of them):

* ``HOSTILE_PORTS``: TCP ports on 127.0.0.1 to dial (the referee's, another listener);
* ``HOSTILE_FILES``: files outside its box to read (the store, the operator's token
  file, another bot's upload);
* ``HOSTILE_DIRS``: directories outside its box to list;
* ``HOSTILE_ENV``: names of environment variables it must not have;
* ``HOSTILE_PID``: a process outside the box (the referee) to signal and trace;
* ``HOSTILE_FORKS`` and ``HOSTILE_TMP_MIB``: how many processes it tries to start, and
  the size its /tmp should stop it at;
* ``HOSTILE_SOCKETS``: how many connections to the referee's socket it opens and holds
  without a word.

It also leaves a detached process behind that would run for an hour.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import random
import signal
import socket
import sys
import time
from collections.abc import Callable

from harness.protocol import DecisionRequest, convert
from harness.rules.actions import Action
from harness.rules.config import RulesConfig
from harness.sdk import Bot, run

PTRACE_ATTACH = 16


def report(name: str, attempt: Callable[[], str | None]) -> None:
    """Run one attack: it returns what it got (OPEN) or None, or raises (blocked)."""
    try:
        got = attempt()
    except Exception as e:  # every failure is a block; say which
        print(f"ATTACK {name}: blocked ({type(e).__name__}: {e})", flush=True)
        return
    if got is None:
        print(f"ATTACK {name}: blocked", flush=True)
    else:
        print(f"ATTACK {name}: OPEN ({got})", flush=True)


def listing(name: str) -> list[str]:
    return [v for v in os.environ.get(name, "").split(os.pathsep) if v]


def dial(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        return f"connected to 127.0.0.1:{port}"


def outside() -> str:
    with socket.create_connection(("1.1.1.1", 53), timeout=2):
        return "connected to 1.1.1.1:53"


def resolve() -> str:
    return repr(socket.getaddrinfo("example.org", 80)[:1])


def read(path: str) -> str:
    with open(path, "rb") as f:
        return f"read {path}: {f.read(200)!r}"


def list_dir(path: str) -> str:
    return f"listed {path}: {os.listdir(path)[:10]}"


def environment() -> str | None:
    found = [n for n in listing("HOSTILE_ENV") if n in os.environ]
    print(f"environment: {sorted(os.environ)}", flush=True)
    return f"has {found}" if found else None


def proc_environ() -> str | None:
    """Read the environment of every process this /proc shows that is not the bot's own
    (another user's: the box's keepers, or anything outside)."""
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    print(f"processes seen: {pids}", flush=True)
    got = []
    for pid in pids:
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{pid}").st_uid == os.getuid():
                continue
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/environ", "rb") as f:
                data = f.read()
            print(f"environ of {pid}: {data[:2000]!r}", flush=True)
            if data:
                got.append(pid)
    return f"environ of {got}" if got else None


def write_outside() -> str | None:
    wrote = []
    for path in ("/bot/x", "/out/x", "/etc/x", "/usr/x", "/x", "/run/euchre/x",
                 "/proc/sys/kernel/hostname", "/dev/x"):
        with contextlib.suppress(OSError):
            with open(path, "w") as f:
                f.write("box")
            wrote.append(path)
    return f"wrote {wrote}" if wrote else None


def fork_bomb() -> str | None:
    children = []
    limit = int(os.environ.get("HOSTILE_FORKS", "500"))
    failure = ""
    try:
        for _ in range(limit):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
    except OSError as e:
        failure = f"{errno.errorcode.get(e.errno or 0, e.errno)}"
    finally:
        for pid in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
    print(f"forked {len(children)} processes", flush=True)
    if failure:
        raise OSError(f"fork refused after {len(children)} processes ({failure})")
    return f"forked {len(children)} processes"


def fill_tmp() -> str | None:
    written = 0
    chunk = b"x" * (1 << 20)
    try:
        with open("/tmp/fill", "wb") as f:
            while written < 4096 << 20:
                f.write(chunk)
                f.flush()
                written += len(chunk)
    except OSError as e:
        print(f"filled /tmp with {written >> 20} MiB", flush=True)
        cap = int(os.environ.get("HOSTILE_TMP_MIB", "0"))
        if e.errno == errno.ENOSPC and written >> 20 <= cap:
            raise OSError(f"ENOSPC after {written >> 20} MiB") from None
        return f"wrote {written >> 20} MiB, then {e}"
    finally:
        with contextlib.suppress(OSError):
            os.unlink("/tmp/fill")
    return f"wrote {written >> 20} MiB"


def signal_others() -> str | None:
    hit = []
    for pid in (1, int(os.environ.get("HOSTILE_PID", "0"))):
        for sig in (signal.SIGKILL, signal.SIGTERM):
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
                hit.append((pid, sig.name))
    return f"signalled {hit}" if hit else None


def trace_others() -> str | None:
    libc = ctypes.CDLL(None, use_errno=True)
    traced = []
    for pid in (1, int(os.environ.get("HOSTILE_PID", "0"))):
        if libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
            traced.append(pid)
    return f"traced {traced}" if traced else None


def operator_calls() -> str | None:
    """Call the operator service through the referee's socket."""
    import grpc

    address = os.environ["EUCHRE_REFEREE_ADDRESS"]
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary("/euchre.v1.OperatorService/ListBots",
                                   request_serializer=lambda b: b,
                                   response_deserializer=lambda b: b)
        answer = call(b"", timeout=10)
        return f"ListBots answered {answer[:200]!r}"


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed ``sock``: reading what it sent (HTTP/2 frames: its
    settings, a GOAWAY) reaches the end of the stream, or the connection was reset. The
    socket is non-blocking. (tests/test_grpc_idle_connections.py uses it too.)"""
    try:
        while sock.recv(4096):
            pass
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def socket_flood() -> str | None:
    """Dial the referee's socket ``HOSTILE_SOCKETS`` times (or until this process is out
    of files) and say nothing: the referee must close every connection, at once once
    it holds its cap of them and the others when the handshake's time is up. Prints
    ``socket flood: N connections``."""
    path = os.environ["EUCHRE_REFEREE_ADDRESS"].removeprefix("unix:")
    held: list[socket.socket] = []
    for _ in range(int(os.environ.get("HOSTILE_SOCKETS", "0"))):
        sock = socket.socket(socket.AF_UNIX)
        try:
            sock.connect(path)
        except OSError:
            sock.close()
            break
        sock.setblocking(False)
        held.append(sock)

    print(f"socket flood: {len(held)} connections", flush=True)
    deadline = time.monotonic() + 60
    open_now = len(held)
    while open_now and time.monotonic() < deadline:
        time.sleep(0.5)
        open_now = sum(not closed_by_server(sock) for sock in held)
    for sock in held:
        sock.close()
    return f"{open_now} of {len(held)} still open after 60 s" if open_now else None


def linger() -> None:
    """Leave a detached process behind that ignores SIGTERM and SIGHUP and would run for
    an hour: the box must end it when the bot's box ends."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            time.sleep(3600)
        os._exit(0)
    os.wait()


def attack() -> None:
    linger()
    for port in listing("HOSTILE_PORTS"):
        report(f"tcp-{port}", lambda port=port: dial(int(port)))  # type: ignore[misc]
    report("network", outside)
    report("dns", resolve)
    for path in listing("HOSTILE_FILES"):
        report(f"read {path}", lambda path=path: read(path))  # type: ignore[misc]
    for path in listing("HOSTILE_DIRS"):
        report(f"list {path}", lambda path=path: list_dir(path))  # type: ignore[misc]
    report("environment", environment)
    report("proc-environ", proc_environ)
    report("write-outside", write_outside)
    report("fork-bomb", fork_bomb)
    report("fill-tmp", fill_tmp)
    report("signal", signal_others)
    report("ptrace", trace_others)
    report("operator-service", operator_calls)
    report("socket-flood", socket_flood)
    print("ATTACKS DONE", flush=True)


class RandomBot(Bot):
    name = "hostile"

    def __init__(self) -> None:
        self.rng = random.Random(3)

    def decide(self, request: DecisionRequest, rules: RulesConfig | None) -> Action:
        return convert.action_from_pb(self.rng.choice(request.legal_actions))


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    attack()
    run(RandomBot())
