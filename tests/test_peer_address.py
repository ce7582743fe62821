"""Operator calls without a token are for this machine only: every spelling gRPC gives a
loopback caller (IPv4, IPv6, bracketed, percent-encoded, IPv4-mapped, Unix sockets) is
recognised, nothing else is; and ``ctl`` on the referee's own machine over IPv6
loopback (``serve --host ::1``, ``ctl --address [::1]:PORT``) is let in."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest
from serve_support import ctl, serve

from harness.referee.peer import is_loopback, parse_peer


@pytest.mark.parametrize("peer", [
    "ipv4:127.0.0.1:5000",
    "ipv4:127.8.9.10:1",
    "ipv6:[::1]:5000",
    "ipv6:%5B::1%5D:5000",
    "ipv6:%5b::1%5d:5000",
    "ipv6:[::ffff:127.0.0.1]:5000",
    "ipv6:%5B::ffff:127.0.0.1%5D:41234",
    "ipv6:[::1%25lo]:5000",
    "unix:/tmp/referee.sock",
    "unix:",
    "unix-abstract:referee",
])
def test_loopback_peers_are_local(peer: str) -> None:
    assert is_loopback(peer), peer


@pytest.mark.parametrize("peer", [
    "ipv4:10.1.2.3:5000",
    "ipv4:128.0.0.1:5000",
    "ipv6:[2001:db8::1]:443",
    "ipv6:%5B2001:db8::1%5D:443",
    "ipv6:[::ffff:10.0.0.1]:5000",
    "ipv6:[::2]:5000",
    "ipv4:[::1]:5000",  # a scheme that does not match its address
    "ipv6:127.0.0.1:5000",
    "ipv4:localhost:5000",  # gRPC gives addresses, never names
    "ipv4:127.0.0.1.evil.example:5000",
    "dns:127.0.0.1:5000",
    "",
    "garbage",
])
def test_other_peers_are_not(peer: str) -> None:
    assert not is_loopback(peer), peer


def test_a_peer_is_parsed_into_its_parts() -> None:
    p = parse_peer("ipv6:%5B::1%5D:50051")
    assert p.scheme == "ipv6" and p.address == ipaddress.ip_address("::1") and p.port == 50051
    q = parse_peer("ipv4:192.0.2.7:8")
    assert q.address == ipaddress.ip_address("192.0.2.7") and q.port == 8 and not q.local
    assert parse_peer("unix:/run/x.sock").scheme == "unix"


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="this machine has no IPv6 loopback")
def test_ctl_over_ipv6_loopback_is_an_operator_call_from_this_machine(
        tmp_path: Path) -> None:
    with serve(tmp_path / "out", "--host", "::1") as server:
        assert server.address.startswith("[::1]:"), server.address
        listed = ctl(server.address, "list")
        assert listed.returncode == 0, listed.stderr
        assert "permission denied" not in listed.stderr
        bots = ctl(server.address, "bots")
        assert bots.returncode == 0 and bots.stdout.strip() == "no bots", bots.stderr
