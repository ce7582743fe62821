"""Operator calls without a token are for this machine only: every spelling gRPC gives a
loopback caller (IPv4, IPv6, bracketed, percent-encoded, IPv4-mapped, Unix sockets) is
recognised, nothing else is; and ``ctl`` on the referee's own machine over IPv6
loopback (``serve --host ::1``, ``ctl --address [::1]:PORT``) is let in. Where
connections are counted per caller, an IPv6 caller is its /64: a host given a /64 may
use any of its addresses, and spread over them it is still one caller."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from pathlib import Path
from typing import Any, cast

import pytest
from serve_support import ctl, serve

from harness.referee import server
from harness.referee.peer import caller_of, is_loopback, parse_peer
from harness.referee.server import WaitingRoom
from harness.web.httpguard import MAX_PER_CLIENT, ConnectionGuard, client_of


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


@pytest.mark.parametrize(("peer", "caller"), [
    ("ipv4:192.0.2.7:8", "192.0.2.7"),
    ("ipv6:[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::/64"),
    ("ipv6:%5B2001:db8:1:2:ffff:ffff:ffff:ffff%5D:1", "2001:db8:1:2::/64"),
    ("ipv6:[2001:db8:1:3::1]:443", "2001:db8:1:3::/64"),
    ("ipv6:[::1]:5000", "::/64"),
    ("ipv6:[::ffff:10.0.0.1]:5000", "10.0.0.1"),
    ("unix:/run/x.sock", "unix"),
])
def test_a_caller_is_its_ipv4_address_or_its_ipv6_64(peer: str, caller: str) -> None:
    assert parse_peer(peer).caller == caller
    address = parse_peer(peer).address
    if address is not None:
        assert caller_of(str(address)) == caller


class _Context:
    """What the waiting room asks of a stream's context: who is calling."""

    def __init__(self, peer: str) -> None:
        self._peer = peer

    def peer(self) -> str:
        return self._peer


def _caller(peer: str) -> str:
    return server._caller(cast(Any, _Context(peer)))


def test_streams_spread_over_one_ipv6_64_are_one_caller_in_the_waiting_room() -> None:
    """A bot waiting for its Hello, then 511 silent streams, each from another address
    of one /64, fill the room; a newcomer ends the oldest of the /64, not the bot's (as
    512 callers of one stream each, the oldest of all would go: the bot's)."""
    async def main() -> None:
        loop = asyncio.get_running_loop()
        room = WaitingRoom(capacity=512)
        bot = loop.create_future()
        room.enter(_caller("ipv6:[2001:db8:aa::7]:5000"), bot)
        silent = [loop.create_future() for _ in range(511)]
        for i, read in enumerate(silent):
            room.enter(_caller(f"ipv6:%5B2001:db8:bb::{i + 1:x}%5D:{1000 + i}"), read)
        room.enter(_caller("ipv4:192.0.2.9:6000"), loop.create_future())
        assert not bot.cancelled()
        assert silent[0].cancelled() and not any(r.cancelled() for r in silent[1:])
        assert len(room) == 512
    asyncio.run(main())


def test_connections_spread_over_one_ipv6_64_share_the_live_pages_cap_per_client() -> None:
    guard = ConnectionGuard()
    for i in range(MAX_PER_CLIENT):  # socket addresses as accept() gives them
        assert guard.admit(client_of((f"2001:db8:cc::{i + 1:x}", 40000 + i, 0, 0)))
    assert not guard.admit(client_of(("2001:db8:cc::ffff", 1, 0, 0)))  # the same /64
    assert guard.admit(client_of(("2001:db8:cd::1", 1, 0, 0)))  # another one
    assert guard.admit(client_of(("192.0.2.1", 1)))
