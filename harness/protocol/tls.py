"""TLS for the referee's port and for the clients that dial it (bots, ``ctl``).

The referee serves TLS when given a certificate chain and its private key (PEM files);
a client dials with TLS when given the CA certificate (PEM) that signed the referee's
certificate, by flag or through :data:`TLS_CA_ENV`. Without them both sides speak
plaintext, as on loopback.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import grpc

from harness.errors import ConfigError

__all__ = ["TLS_CA_ENV", "ServerTLS", "ca_file", "dial", "server_tls"]

TLS_CA_ENV = "EUCHRE_TLS_CA"


def _pem(path: Path, option: str, marker: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(option, f"cannot read {path}: {e.strerror or e}") from None
    if b"-----BEGIN " not in data or marker.encode() not in data:
        raise ConfigError(option, f"{path} holds no PEM {marker.lower()}")
    return data


@dataclass(frozen=True)
class ServerTLS:
    """The referee's certificate chain and private key, read from PEM files."""

    certificate_chain: bytes
    private_key: bytes

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.ssl_server_credentials([(self.private_key, self.certificate_chain)])


def server_tls(cert: Path | None, key: Path | None) -> ServerTLS | None:
    """The TLS settings ``--tls-cert``/``--tls-key`` describe: both or neither."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        missing = "--tls-cert" if cert is None else "--tls-key"
        raise ConfigError(missing, "TLS needs both --tls-cert and --tls-key")
    return ServerTLS(_pem(cert, "--tls-cert", "CERTIFICATE"),
                     _pem(key, "--tls-key", "PRIVATE KEY"))


def ca_file(flag: str | None) -> Path | None:
    """The CA file a client trusts: the flag, else :data:`TLS_CA_ENV`; ``None`` (dial
    plaintext) when both are unset or empty."""
    value = flag or os.environ.get(TLS_CA_ENV) or None
    return Path(value) if value else None


def dial(address: str, ca: Path | None, *,
         options: list[tuple[str, int | str]] | None = None) -> grpc.aio.Channel:
    """An asyncio channel to ``address``: TLS trusting ``ca`` if given, else plaintext."""
    if ca is None:
        return grpc.aio.insecure_channel(address, options=options)
    root = _pem(ca, "--tls-ca", "CERTIFICATE")
    return grpc.aio.secure_channel(address, grpc.ssl_channel_credentials(root),
                                   options=options)
