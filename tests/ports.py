"""A loopback port for a test to give a server that starts later, or to leave unused.

A port found by binding port 0 and closing the socket comes from the kernel's ephemeral
range, which every other socket on the machine draws from too: each outgoing
connection, and each server that binds port 0 (every referee, ladder and bot of this
suite, and of a second run of it on the same machine). Between the test closing it and
its server binding it, another process can take it; a test that then connects to it
talks to a stranger (a Dask client once read a gRPC server's HTTP/2 SETTINGS frame as a
68 MB message). The ports here lie below the ephemeral range, where the kernel never
hands out a port by itself: only a program that names one binds it.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST = 20000  # below the ephemeral range, above the ports services commonly use
# Drawn from the system's randomness: a test that seeds the random module must not make
# two test workers, or two runs of the suite, draw the same ports in the same order.
_draw = random.SystemRandom()


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(x) for x in RANGE_FILE.read_text().split()[:2])
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default
    return low, high


def unused_port() -> int:
    """A loopback TCP port that nothing is bound to now, outside the kernel's ephemeral
    range (so that no port-0 bind or outgoing connection takes it meanwhile)."""
    low, high = _ephemeral_range()
    bottom, top = (LOWEST, low) if low > LOWEST + 1000 else (high + 1, 65536)
    for _ in range(200):
        port = _draw.randrange(bottom, top)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise AssertionError(f"no unused loopback port found from {bottom} to {top - 1}")
