"""TLS on the wire: a real ``serve`` process with a certificate this test makes itself, a
Python and a Node bot dialing it with the CA file, ``ctl`` over TLS, and plaintext
clients refused."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from configs import RANDOM, bot, remote, toml_config
from grpc_health.v1 import health_pb2, health_pb2_grpc
from serve_support import Ladder, ctl, end, random_bots, serve
from tls_support import make_certificates

from harness.errors import ConfigError
from harness.protocol.tls import server_tls
from harness.referee.session import hashed_token

ROOT = Path(__file__).resolve().parents[1]
NODE_BOT = ROOT / "sample_bots" / "node" / "random_bot.js"
OPERATOR = "operator-secret"
WAIT_S = 120.0

CONFIG = toml_config("tls", games=1, concurrency=1, tc="5+10",
                     rules={"form": "two-handed", "target": 3},
                     bots=(bot("local", RANDOM), remote("py", "py-seat-token"),
                           remote("node", "node-seat-token")))


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
            watched = ctl(address, "watch", "tls", env={**env, "EUCHRE_TLS_CA": str(ca)})
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
        # the referee keeps the configuration it was sent with each token's hash only
        kept = "".join(p.read_text(errors="replace") for p in (tmp_path / "out").rglob("*")
                       if p.is_file() and p.suffix in (".toml", ".json", ".md", ".jsonl"))
        assert 'tokens = ["' + hashed_token("py-seat-token") + '"]' in kept
        assert "py-seat-token" not in kept and "node-seat-token" not in kept


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


def test_a_ladder_over_tls_rates_a_visitor_dialing_with_the_ca(tmp_path: Path) -> None:
    ca, cert, key = make_certificates(tmp_path)
    # The house bots dial the referee's plaintext loopback port even when the
    # environment names a CA; the visitors dial the TLS port by the certificate's name.
    ladder = Ladder(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key),
                    name="tls-ladder", concurrency=1, env={"EUCHRE_TLS_CA": str(ca)})
    visitors = []
    try:
        token = ladder.register("visitor")
        visitors = random_bots(f"localhost:{ladder.port}", token,
                               env={"EUCHRE_TLS_CA": str(ca)})
        ladder.wait_for(lambda: ladder.sets_played("visitor") >= 1,
                        "the visitor's first complete set")
        assert ladder.stop(signal.SIGINT) == 0, ladder.stderr
    finally:
        end([ladder, *visitors])
    stderr = ladder.stderr
    assert "with TLS" in stderr
    assert token not in stderr
