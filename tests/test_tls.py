"""TLS on the wire: a real ``serve`` process with a certificate this test makes itself, a
Python and a Node bot dialing it with the CA file, ``ctl`` over TLS, and plaintext
clients refused."""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc
from serve_support import ctl, serve

from harness.errors import ConfigError
from harness.ladder.matchmaking import SetStatus
from harness.ladder.sets import SetLog
from harness.ladder.store import LadderStore
from harness.protocol.tls import server_tls

ROOT = Path(__file__).resolve().parents[1]
NODE_BOT = ROOT / "sample_bots" / "node" / "random_bot.js"
OPERATOR = "operator-secret"
WAIT_S = 120.0

LADDER = """name = "tls-ladder"
output = "{output}"
concurrency = 1
tc = "5+30"
[rules]
target = 3
[[bot]]
name = "random"
command = "{{python}} -m sample_bots.random_bot"
[[bot]]
name = "heuristic"
command = "{{python}} -m sample_bots.heuristic_bot"
"""

CONFIG = """
name = "tls"
games = 1
concurrency = 1
tc = "5+10"
[rules]
form = "two-handed"
target = 3
[[bot]]
name = "local"
command = "{python} -m sample_bots.random_bot"
[[bot]]
name = "py"
tokens = ["py-seat-token"]
[[bot]]
name = "node"
tokens = ["node-seat-token"]
"""


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA, and a server certificate it signs for localhost and 127.0.0.1: the paths
    of the CA certificate, the server certificate and the server key (all PEM)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name("test CA")).issuer_name(_name("test CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (x509.CertificateBuilder().subject_name(_name("localhost")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    paths = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


def _health(channel: grpc.Channel) -> int:
    health: Any = health_pb2_grpc.HealthStub(channel)
    return int(health.Check(health_pb2.HealthCheckRequest(), timeout=10).status)


def test_bots_and_ctl_play_over_tls_and_plaintext_is_refused(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    ca, cert, key = make_certificates(tmp_path)
    (tmp_path / "tls.toml").write_text(CONFIG)
    env = {"EUCHRE_OPERATOR_TOKEN": OPERATOR}
    with serve(tmp_path / "out", "--tls-cert", str(cert), "--tls-key", str(key),
               env=env) as server:
        assert "with TLS" in server.stderr
        address = server.address.replace("127.0.0.1", "localhost")

        # Plaintext clients are refused: gRPC, and ctl without the CA.
        with grpc.insecure_channel(server.address) as plain, \
                pytest.raises(grpc.RpcError) as refused:
            _health(plain)
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        plain_ctl = ctl(server.address, "list", env=env)
        assert plain_ctl.returncode == 2
        assert "a referee that serves TLS needs --tls-ca" in plain_ctl.stderr
        # With the CA, the same call succeeds, by IP address and by host name.
        root = grpc.ssl_channel_credentials(ca.read_bytes())
        for target in (server.address, address):
            with grpc.secure_channel(target, root) as secure:
                assert _health(secure) == health_pb2.HealthCheckResponse.SERVING

        started = ctl(server.address, "--tls-ca", str(ca), "start",
                      str(tmp_path / "tls.toml"), env=env)
        assert started.returncode == 0, started.stderr
        bot_env = {**os.environ, "EUCHRE_REFEREE_ADDRESS": server.address}
        py = subprocess.Popen(
            [sys.executable, "-m", "sample_bots.random_bot", "--token", "py-seat-token",
             "--tls-ca", str(ca)], env=bot_env, stderr=subprocess.PIPE, text=True)
        js = subprocess.Popen(
            [node, str(NODE_BOT), "--token", "node-seat-token"],
            env={**bot_env, "EUCHRE_TLS_CA": str(ca)}, stderr=subprocess.PIPE, text=True)
        try:
            watched = ctl(address, "watch", "tls", env={**env, "EUCHRE_TLS_CA": str(ca)},
                          timeout=WAIT_S)
        finally:
            for proc in (py, js):
                if proc.poll() is None:
                    proc.terminate()
                proc.communicate(timeout=30)
        assert watched.returncode == 0, watched.stderr
        assert "tls: finished, 6/6 games" in watched.stdout
        for name in ("local", "py", "node"):
            assert name in watched.stdout
        assert "forfeit" not in watched.stdout.lower()
        for secret in (OPERATOR, "py-seat-token", "node-seat-token"):
            assert secret not in server.stderr


def test_tls_needs_both_a_certificate_and_a_key_in_pem(tmp_path: Path) -> None:
    _, cert, key = make_certificates(tmp_path)
    assert server_tls(None, None) is None
    loaded = server_tls(cert, key)
    assert loaded is not None and b"PRIVATE KEY" in loaded.private_key
    with pytest.raises(ConfigError, match="--tls-key: TLS needs both"):
        server_tls(cert, None)
    with pytest.raises(ConfigError, match=r"--tls-key: .* holds no PEM private key"):
        server_tls(cert, cert)
    with pytest.raises(ConfigError, match="--tls-cert: cannot read"):
        server_tls(tmp_path / "missing.pem", key)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _visitor_sets(store_path: Path) -> int:
    if not store_path.exists():
        return 0
    with LadderStore(store_path) as store:
        return sum(1 for s in SetLog(store).sets()
                   if "visitor" in s.base and s.status is SetStatus.COMPLETE)


def test_a_ladder_over_tls_rates_a_visitor_dialing_with_the_ca(tmp_path: Path) -> None:
    ca, cert, key = make_certificates(tmp_path)
    config = tmp_path / "ladder.toml"
    config.write_text(LADDER.format(output=tmp_path / "out"))
    port = _free_port()
    ladder = [sys.executable, "-m", "harness", "ladder", str(config), "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    token = subprocess.run([*ladder, "register", "visitor", "--owner", "ann"], env=env,
                           cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()[1]
    running = subprocess.Popen([*ladder, "--tls-cert", str(cert), "--tls-key", str(key)],
                               cwd=ROOT, env={**env, "EUCHRE_TLS_CA": str(ca)},
                               stderr=subprocess.PIPE, text=True)
    # The house bots dial the referee's plaintext loopback port even when the
    # environment names a CA; the visitors dial the TLS port.
    visitors = [subprocess.Popen(
        [sys.executable, "-m", "sample_bots.random_bot", "--address", f"localhost:{port}",
         "--token", token], cwd=ROOT, env={**env, "EUCHRE_TLS_CA": str(ca)},
        stderr=subprocess.DEVNULL) for _ in range(2)]
    try:
        end = time.monotonic() + WAIT_S
        while _visitor_sets(tmp_path / "out" / "ladder.sqlite") < 1:
            assert running.poll() is None, running.communicate()[1]
            assert time.monotonic() < end, "the visitor never completed a set"
            time.sleep(0.2)
        running.send_signal(signal.SIGINT)
        _, stderr = running.communicate(timeout=60)
        assert running.returncode == 0, stderr
    finally:
        everyone: list[subprocess.Popen[Any]] = [running, *visitors]
        for proc in everyone:
            if proc.poll() is None:
                proc.kill()
            proc.wait(30)
    assert "with TLS" in stderr
    assert token not in stderr
