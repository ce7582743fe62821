"""A loopback port for a test to give a server that starts later, or to leave unused.

A port found by binding port 0 and closing the socket comes from the kernel's ephemeral
range, which every other socket on the machine draws from too: each outgoing
connection, and each server that binds port 0 (every referee, ladder and bot of this
suite, and of a second run of it on the same machine). Between the test closing it and
its server binding it, another process can take it; a test that then connects to it
talks to a stranger (a Dask client once read a gRPC server's HTTP/2 SETTINGS frame as a
68 MB message). The ports here lie below the ephemeral range, where the kernel never
hands out a port by itself: only a program that names one binds it.

Two tests (in two workers of this run, or in a second run of the suite on the same
machine) could still draw the same port and both start a server on it. So each port
drawn here is also claimed: an exclusive lock on a file named after it, in a folder of
the system's temporary directory (one per user), held until the process that drew it
exits. A port another process has claimed is never drawn. Where no such file can be made,
a port is drawn unclaimed, as it was before claims.
"""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path
from typing import IO

RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST = 20000  # below the ephemeral range, above the ports services commonly use
# Drawn from the system's randomness: a test that seeds the random module must not make
# two test workers, or two runs of the suite, draw the same ports in the same order.
_draw = random.SystemRandom()
CLAIMS = Path(tempfile.gettempdir()) / f"euchre-harness-test-ports-{os.getuid()}"
_claimed: list[IO[bytes]] = []  # open, locked: the claims last as long as this process


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(x) for x in RANGE_FILE.read_text().split()[:2])
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default
    return low, high


def _claim(port: int) -> bool:
    """Lock ``port``'s file for the rest of this process; False if another holds it
    (True, unclaimed, if the file cannot be made)."""
    try:
        CLAIMS.mkdir(exist_ok=True)
        handle = open(CLAIMS / str(port), "ab")  # noqa: SIM115 - held open: the claim
    except OSError:
        return True
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return False
    _claimed.append(handle)
    return True


def unused_port() -> int:
    """A loopback TCP port that nothing is bound to now, outside the kernel's ephemeral
    range (so that no port-0 bind or outgoing connection takes it meanwhile), and that
    no other test process has drawn (it stays claimed until this process exits)."""
    low, high = _ephemeral_range()
    bottom, top = (LOWEST, low) if low > LOWEST + 1000 else (high + 1, 65536)
    for _ in range(200):
        port = _draw.randrange(bottom, top)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        if _claim(port):
            return port
    raise AssertionError(f"no unused loopback port found from {bottom} to {top - 1}")
