"""Helpers for tests that start the harness's long-running commands (``serve``,
``ladder``, ``run`` with remote bots) as real processes, wait for each to say where it
listens, and talk to it over real gRPC."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
from cli_support import harness_command
from configs import RANDOM, RANDOM_AND_HEURISTIC, Raw, bot, paced_house, toml_config
from waiting import WAIT_S, wait_for

from harness.ladder.matchmaking import SetStatus
from harness.ladder.sets import SetLog
from harness.protocol import operator as op
from harness.storage.ladder import LadderStore

REPO = Path(__file__).resolve().parent.parent
STOP_TIMEOUT_S = 90.0

def config(name: str, games: int = 1, *, concurrency: int = 1,
           random_command: str = f'"{RANDOM}"', pace_ms: int = 0) -> str:
    """A small two-handed tournament of random against heuristic; ``random_command`` is
    the random bot's command as TOML text. With ``pace_ms``, both are the sample bots
    sleeping that many milliseconds before each decision (``configs.paced``), and
    ``random_command`` is not used."""
    bots = (paced_house(pace_ms) if pace_ms
            else (bot("random", Raw(random_command)), bot("heuristic")))
    return toml_config(name, games=games, concurrency=concurrency, tc="5+10",
                       rules={"form": "two-handed", "target": 3}, bots=bots)


def delayed_random_bot(delay_s: float) -> str:
    """A TOML command for the random sample bot that waits before it dials."""
    code = (f"import runpy, sys, time; time.sleep({delay_s}); sys.argv = ['random_bot']; "
            f"runpy.run_module('sample_bots.random_bot', run_name='__main__')")
    return f"['{{python}}', '-c', \"{code}\"]"


def said(log: Path, marker: str) -> str:
    """The word after ``marker`` on the first whole line of ``log`` that holds it (a
    trailing ``;`` dropped), or ``""`` while no line does."""
    text = log.read_text() if log.exists() else ""
    for line in text[:text.rfind("\n") + 1].splitlines():
        if marker in line:
            words = line.split(marker, 1)[1].split()
            return words[0].rstrip(";") if words else ""
    return ""


def wait_for_address(proc: subprocess.Popen[Any], *, log: Path | None = None,
                     marker: str = "", address_file: Path | None = None,
                     timeout: float = WAIT_S) -> str:
    """Wait until a process just started says where it listens, and return that: the
    ``address`` of the JSON ``address_file`` (as ``--address-file`` writes it) if given,
    else the word after ``marker`` in ``log``. Fails, showing ``log``, if the process
    exits first or says nothing in time."""
    def address() -> str:
        if address_file is not None:
            return (str(json.loads(address_file.read_text())["address"])
                    if address_file.exists() else "")
        assert log is not None and marker
        return said(log, marker)

    wait_for(address, f"the address ({address_file or repr(marker)})", timeout,
             proc=proc, log=log)
    return address()


class Started:
    """A process started from the repository's root for a test. Its stderr goes to a
    new file in ``folder`` named after ``name`` (``log``), and so does its stdout unless
    ``own_stdout`` sends that to a file of its own (``out``). With ``file_limit``
    (soft, hard), it starts with that limit on open files (through ``prlimit``)."""

    def __init__(self, argv: list[str], folder: Path, name: str, *,
                 env: dict[str, str] | None = None, own_stdout: bool = False,
                 file_limit: tuple[int, int] | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        if file_limit is not None:
            argv = ["prlimit", f"--nofile={file_limit[0]}:{file_limit[1]}", "--", *argv]
        handle, log = tempfile.mkstemp(dir=folder, prefix=f"{name}-", suffix=".err")
        os.close(handle)
        self.log = Path(log)
        self.out = self.log.with_suffix(".out") if own_stdout else self.log
        self.env = {**os.environ, **(env or {})}
        with self.log.open("a") as err, self.out.open("a") as out:  # both append
            self.proc: subprocess.Popen[bytes] = subprocess.Popen(
                argv, cwd=REPO, env=self.env, stdout=out, stderr=err)

    @property
    def stderr(self) -> str:
        return self.log.read_text()

    @property
    def stdout(self) -> str:
        return self.out.read_text()

    @property
    def lines(self) -> list[str]:
        return self.stderr.splitlines()

    def said(self, marker: str) -> str:
        """What the process said after ``marker``, waiting for it to say it."""
        return wait_for_address(self.proc, log=self.log, marker=marker)

    def wait_for(self, check: Callable[[], object], what: str,
                 timeout: float = WAIT_S, *, interval: float = 0.1) -> None:
        """Poll ``check()`` every ``interval`` seconds while the process runs."""
        wait_for(check, what, timeout, proc=self.proc, log=self.log, interval=interval)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal it and wait for it to exit (killing it if it will not); returns its
        exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)


class Serve(Started):
    """A running ``euchre-harness serve``."""

    def __init__(self, output: Path, *extra: str, env: dict[str, str] | None = None,
                 file_limit: tuple[int, int] | None = None) -> None:
        super().__init__([sys.executable, "-m", "harness", "serve", "--port", "0",
                          "--output", str(output), "--log-dir", str(output / "serve-logs"),
                          *extra], output.parent, f"{output.name}-serve", env=env,
                         file_limit=file_limit)
        self.address = ""

    def wait_listening(self) -> None:
        self.address = self.said("referee listening on ")


@contextmanager
def serve(output: Path, *extra: str, env: dict[str, str] | None = None,
          file_limit: tuple[int, int] | None = None) -> Iterator[Serve]:
    """Start ``serve`` on a free loopback port, storing tournaments under ``output``."""
    server = Serve(output, *extra, env=env, file_limit=file_limit)
    try:
        server.wait_listening()
        yield server
    finally:
        server.kill()


class Ladder(Started):
    """A running ``euchre-harness -v ladder`` of the random and heuristic sample bots,
    storing under ``folder / "out"``, on a free loopback port unless ``port`` is given.

    It plays one set at a time unless ``concurrency`` says more: a ladder plays for as
    long as its test runs, most of which waits on something else (a restart, a page),
    and each set more at once is that much more of the machine's time. With
    ``house_only_with_visitors``, the house bots play only the visitors that dial in,
    not each other. With ``pace_ms``, the house bots sleep that many milliseconds before
    each decision (``configs.paced``): for a test that needs the house bots to play each
    other but waits for something else meanwhile (a page, a visitor, a restart), or that
    needs only so many games a second."""

    def __init__(self, folder: Path, *extra: str, name: str = "ladder",
                 concurrency: int = 1, port: int = 0,
                 house_only_with_visitors: bool = False, pace_ms: int = 0,
                 env: dict[str, str] | None = None,
                 file_limit: tuple[int, int] | None = None) -> None:
        self.config = folder / "ladder.toml"
        self.config.write_text(toml_config(
            name, output=folder / "out", concurrency=concurrency, tc="5+30",
            rules={"target": 3}, bots=paced_house(pace_ms) if pace_ms else RANDOM_AND_HEURISTIC,
            extra="[ladder]\nhouse_vs_house = false\n" if house_only_with_visitors else ""))
        self.store = folder / "out" / "ladder.sqlite"
        super().__init__([sys.executable, "-m", "harness", "-v", "ladder", str(self.config),
                          "--port", str(port), *extra], folder, "ladder",
                         env={"PYTHONPATH": str(REPO), **(env or {})}, file_limit=file_limit)
        try:
            self.address = self.said("ladder on ")
        except BaseException:
            self.kill()
            raise

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def register(self, bot: str, owner: str = "ann") -> str:
        """Register ``bot`` with ``ladder register``; returns its token."""
        done = harness_command("ladder", str(self.config), "register", bot, "--owner", owner,
                               cwd=REPO, env=self.env)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()[1]

    def sets_played(self, bot: str) -> int:
        """How many of ``bot``'s sets are complete."""
        if not self.store.exists():
            return 0
        with LadderStore(self.store) as store:
            return sum(1 for s in SetLog(store).sets()
                       if bot in s.base and s.status is SetStatus.COMPLETE)


def random_bots(address: str, token: str, count: int = 2,
                env: dict[str, str] | None = None) -> list[subprocess.Popen[bytes]]:
    """``count`` random sample bots dialing ``address`` with ``token`` (each retries
    until the referee answers)."""
    return [subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot", "--address",
                              address, "--token", token], cwd=REPO,
                             env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(count)]


def end(procs: Iterable[subprocess.Popen[Any] | Started | None]) -> None:
    """Kill whichever of ``procs`` still run, and reap them all."""
    for proc in procs:
        if isinstance(proc, Started):
            proc.kill()
        elif proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait(30)


def ctl(address: str, *args: str,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``euchre-harness ctl ARGS`` against ``address`` (through the command line's
    ``main()``: see tests/cli_support.py)."""
    return harness_command("ctl", *args,
                           env={"EUCHRE_REFEREE_ADDRESS": address, **(env or {})})


def stub(channel: grpc.Channel) -> op.OperatorServiceStub:
    return op.OperatorServiceStub(channel)


def watch_until(stub_: op.OperatorServiceStub, tournament_id: str,
                done: int | None = None,
                metadata: tuple[tuple[str, str], ...] = ()) -> op.TournamentProgress:
    """Follow a tournament until ``done`` games are stored (or, by default, its final
    update); returns the last update seen."""
    last = None
    for update in stub_.WatchTournament(op.WatchTournamentRequest(
            tournament_id=tournament_id), metadata=metadata, timeout=WAIT_S * 1.5):
        last = update.tournament
        if done is not None and last.games_done >= done:
            break
    assert last is not None
    return last

