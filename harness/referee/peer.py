"""Who is calling: gRPC peer strings, parsed.

gRPC names a caller as ``ipv4:127.0.0.1:5000``, ``ipv6:[::1]:5000`` (and, depending on
the version, ``ipv6:%5B::1%5D:5000``, percent-encoded), ``unix:/path/to/socket``
(possibly empty for the accepting side) or ``unix-abstract:name``. The referee lets
operator calls without a token come only from this machine, so it must recognise every
spelling of a loopback caller, and no other caller as one.

Where connections are counted per caller (the waiting room for Hellos, the live pages'
cap per client), :func:`caller_of` names the caller: an IPv4 address, or an IPv6
address's /64, the subnet a single host or site is given, where it may use any of 2^64
addresses.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import unquote

__all__ = ["Peer", "caller_of", "is_loopback", "parse_peer"]

_UNIX = ("unix", "unix-abstract")


@dataclass(frozen=True, slots=True)
class Peer:
    """A parsed peer: ``scheme`` (``ipv4``, ``ipv6``, ``unix``...), the IP ``address``
    (None for a socket file or a peer that could not be parsed) and the ``port``."""

    scheme: str
    address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    port: int | None = None

    @property
    def local(self) -> bool:
        """A caller on this machine: a Unix socket, or a loopback address (IPv4
        127.0.0.0/8, IPv6 ``::1``, or an IPv4-mapped loopback)."""
        if self.scheme in _UNIX:
            return True
        address = self.address
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return address is not None and address.is_loopback


    @property
    def caller(self) -> str:
        """Who is calling, as connections are counted per caller: :func:`caller_of` the
        address, or the scheme for a peer without one (every Unix-socket caller is
        one)."""
        return caller_of(self.address) if self.address is not None else self.scheme


def caller_of(address: ipaddress.IPv4Address | ipaddress.IPv6Address | str) -> str:
    """An IPv4 address as itself; an IPv6 address as its /64 (``2001:db8::/64``), an
    IPv4-mapped one as the IPv4 address. Text that is no address is returned as is."""
    if isinstance(address, str):
        text = address
        try:
            address = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError:
            return text
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def _split(rest: str) -> tuple[str, str]:
    """``HOST:PORT`` or ``[HOST]:PORT`` (or a bare host) into host and port text."""
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        return host, tail.removeprefix(":")
    try:  # a bare IPv6 address without a port, or an IPv4 one
        ipaddress.ip_address(rest.split("%", 1)[0])
        return rest, ""
    except ValueError:
        host, _, port = rest.rpartition(":")
        return host, port


def parse_peer(peer: str) -> Peer:
    """Parse a gRPC peer string; an unknown scheme or malformed address gives a Peer
    with no address (never local)."""
    scheme, _, rest = unquote(peer.strip()).partition(":")
    scheme = scheme.lower()
    if scheme in _UNIX:
        return Peer(scheme)
    if scheme not in ("ipv4", "ipv6"):
        return Peer(scheme)
    host, port_text = _split(rest)
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])  # drop a zone (%eth0)
    except ValueError:
        return Peer(scheme)
    if (scheme == "ipv4") != (address.version == 4):
        return Peer(scheme)
    return Peer(scheme, address, int(port_text) if port_text.isdigit() else None)


def is_loopback(peer: str) -> bool:
    """Whether the gRPC peer ``peer`` calls from this machine (see :attr:`Peer.local`)."""
    return parse_peer(peer).local
