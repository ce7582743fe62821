"""Helpers for tests that run ``python -m harness serve`` as a real process and talk to it
over real gRPC."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc

from harness.protocol import operator as op

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 90.0

TWO_HANDED = """
name = "{name}"
games = {games}
concurrency = {concurrency}
tc = "5+10"
[rules]
form = "two-handed"
target = 3
[[bot]]
name = "random"
command = {random}
[[bot]]
name = "heuristic"
command = "{{python}} -m sample_bots.heuristic_bot"
"""

SAMPLE_RANDOM = '"{python} -m sample_bots.random_bot"'


def config(name: str, games: int = 1, *, concurrency: int = 1,
           random_command: str = SAMPLE_RANDOM) -> str:
    """A small two-handed tournament of random against heuristic."""
    return TWO_HANDED.format(name=name, games=games, concurrency=concurrency,
                             random=random_command)


def delayed_random_bot(delay_s: float) -> str:
    """A TOML command for the random sample bot that waits before it dials."""
    code = (f"import runpy, sys, time; time.sleep({delay_s}); sys.argv = ['random_bot']; "
            f"runpy.run_module('sample_bots.random_bot', run_name='__main__')")
    return f"['{{python}}', '-c', \"{code}\"]"


class Serve:
    """A running ``euchre-harness serve``; its stderr is collected in ``stderr``."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self.address = ""
        self._listening = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if "referee listening on " in line and not self.address:
                self.address = line.split("referee listening on ", 1)[1].split()[0]
                self._listening.set()
        self._listening.set()

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def wait_listening(self) -> None:
        if not self._listening.wait(START_TIMEOUT_S) or not self.address:
            raise AssertionError(f"serve did not start:\n{self.stderr}")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal it and wait for it to exit; returns its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(STOP_TIMEOUT_S)
        self._reader.join(10)
        return code


@contextmanager
def serve(output: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[Serve]:
    """Start ``serve`` on a free loopback port, storing tournaments under ``output``."""
    argv = [sys.executable, "-m", "harness", "serve", "--port", "0", "--output", str(output),
            "--log-dir", str(output / "serve-logs"), *extra]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True, env={**os.environ, **(env or {})})
    server = Serve(proc)
    try:
        server.wait_listening()
        yield server
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def ctl(address: str, *args: str, env: dict[str, str] | None = None,
        timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """Run ``euchre-harness ctl ARGS`` against ``address``."""
    full_env = {**os.environ, "EUCHRE_REFEREE_ADDRESS": address, **(env or {})}
    return subprocess.run([sys.executable, "-m", "harness", "ctl", *args], env=full_env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def stub(channel: grpc.Channel) -> op.OperatorServiceStub:
    return op.OperatorServiceStub(channel)


def watch_until(stub_: op.OperatorServiceStub, tournament_id: str,
                done: int | None = None,
                metadata: tuple[tuple[str, str], ...] = ()) -> op.TournamentProgress:
    """Follow a tournament until ``done`` games are stored (or, by default, its final
    update); returns the last update seen."""
    last = None
    for update in stub_.WatchTournament(op.WatchTournamentRequest(
            tournament_id=tournament_id), metadata=metadata, timeout=START_TIMEOUT_S * 3):
        last = update.tournament
        if done is not None and last.games_done >= done:
            break
    assert last is not None
    return last


def wait_for(check: object, what: str, timeout: float = START_TIMEOUT_S) -> None:
    """Poll ``check()`` until it is true."""
    assert callable(check)
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
