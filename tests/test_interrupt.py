"""One Ctrl-C (or SIGTERM) stops every long-running command cleanly: real processes, each
started in a session of its own and signalled through its process group as a terminal
does, after it has stored at least one game. Each must exit before ``STOP_S`` with its
usual status, print no traceback and only a few lines on stderr, one of which says
what was kept (matching the store), and the same command must then resume: the stored
games grow, none is lost or stored twice.

The target is 5 s (``bench/interrupt.py`` measures it; figures in bench/README.md); the
tests allow ``STOP_S`` because the suite shares two cores with other work, and what they must
catch is a command that hangs until a second Ctrl-C, as a run on a local cluster did.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from configs import Bot, Value, bot, toml_config
from serve_support import stub
from waiting import wait_for

from harness.protocol import operator as op
from harness.storage.results import ResultsStore

ROOT = Path(__file__).resolve().parent.parent
STOP_S = 30.0
MAX_LINES = 6  # what a stopped command may print on stderr in all

SLEEPY = (Bot("sleepy", "{python} bench/sleepy_bot.py", {"SLEEPY_BOT_MS": "15"}),
          bot("random"))
TWO_TO_3: dict[str, Value] = {"form": "two-handed", "target": 3}


def tournament(folder: Path, name: str, games: int, extra: str = "") -> Path:
    """A two-handed tournament to 3 points of a bot that sleeps 15 ms a decision against
    the random bot: a game takes about a second, so a run is still going when its first
    game is stored."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(toml_config(name, id=name, output=folder / "out", games=games,
                                concurrency=2, tc="5+30", extra=extra, rules=TWO_TO_3,
                                bots=SLEEPY))
    return path


class Command:
    """``euchre-harness ARGS`` in a new session, its stdout and stderr in files."""

    def __init__(self, folder: Path, name: str, *args: str) -> None:
        self.err = folder / f"{name}.err"
        self.out = folder / f"{name}.out"
        with self.err.open("wb") as err, self.out.open("wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT,
                                         stdout=out, stderr=err, start_new_session=True)

    @property
    def stderr(self) -> str:
        return self.err.read_text()

    def interrupt(self, sig: int = signal.SIGINT) -> tuple[int, float]:
        """Signal the whole process group, as a terminal's Ctrl-C does; the exit status
        and the seconds it took to exit."""
        start = time.monotonic()
        os.killpg(self.proc.pid, sig)
        try:
            code = self.proc.wait(STOP_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise AssertionError(f"still running {STOP_S:.0f} s after the signal; stderr:\n"
                                 f"{self.stderr}") from None
        return code, time.monotonic() - start

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def stored(path: Path, tid: str) -> list[str]:
    """The game keys stored for ``tid`` (none while the store does not exist)."""
    if not path.exists():
        return []
    with ResultsStore(path) as store:
        return [g.game_key for g in store.games(tid)]


def check_stopped(cmd: Command, code: int, expected: int, kept: str) -> int:
    """The command exited with ``expected``, quietly, and its one line about what was
    kept (``kept``: a pattern whose first group is the number of games) is there;
    returns that number."""
    err = cmd.stderr
    assert code == expected, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) <= MAX_LINES, err
    said = [m for m in (re.search(kept, line) for line in lines) if m]
    assert len(said) == 1, err
    return int(said[0].group(1))


@pytest.mark.long
@pytest.mark.parametrize(("workers", "sig"), [(2, signal.SIGINT), (0, signal.SIGTERM)],
                         ids=["local-cluster-SIGINT", "here-SIGTERM"])
def test_a_run_stops_at_once_keeps_its_games_and_resumes(tmp_path: Path, workers: int,
                                                          sig: int) -> None:
    config = tournament(tmp_path, "cut", games=6)
    store = tmp_path / "out" / "results.sqlite"
    args = ["run", str(config), "--quiet", *(["--workers", str(workers)] if workers else [])]
    first = Command(tmp_path, "first", *args)
    try:
        wait_for(lambda: stored(store, "cut"), "a first stored game", proc=first.proc,
                 log=first.err)
        code, _ = first.interrupt(sig)
    finally:
        first.kill()
    kept = check_stopped(first, code, 128 + sig, r"interrupted: (\d+) games? of 'cut' stored")
    before = stored(store, "cut")
    assert kept == len(before) >= 1
    total = 12  # 6 deal sets, each played with the seats swapped
    assert kept < total, "the run ended before the signal: make it longer"
    second = Command(tmp_path, "second", *args)
    assert second.proc.wait(STOP_S * 4) == 0, second.stderr
    after = stored(store, "cut")
    assert len(after) == len(set(after)) == total
    assert set(before) <= set(after)


def test_a_run_in_process_stops_at_once_keeps_its_games_and_resumes(tmp_path: Path) -> None:
    """In process a bot's decisions run on the loop that would handle the signal: the
    runner must still hear it between decisions (it did only when the run ended). The
    sleepy bot holds the loop 15 ms a decision, as a bot that thinks would."""
    thinking = (Bot("sleepy", "{python} -m bench.sleepy_bot", {"SLEEPY_BOT_MS": "15"}),
                bot("random"))
    path = tmp_path / "inproc.toml"
    path.write_text(toml_config("inproc", id="inproc", output=tmp_path / "out", games=10,
                                rules=TWO_TO_3, bots=thinking))
    store = tmp_path / "out" / "results.sqlite"
    args = ["run", str(path), "--quiet", "--in-process"]
    first = Command(tmp_path, "first", *args)
    try:
        wait_for(lambda: stored(store, "inproc"), "a first stored game", proc=first.proc,
                 log=first.err)
        code, _ = first.interrupt(signal.SIGTERM)
    finally:
        first.kill()
    kept = check_stopped(first, code, 128 + signal.SIGTERM,
                         r"interrupted: (\d+) games? of 'inproc' stored")
    before = stored(store, "inproc")
    assert kept == len(before) >= 1
    assert kept < 20, "the run ended before the signal: make it longer"
    second = Command(tmp_path, "second", *args)
    assert second.proc.wait(STOP_S * 8) == 0, second.stderr
    after = stored(store, "inproc")
    assert len(after) == len(set(after)) == 20
    assert set(before) <= set(after)


def test_a_ladder_on_a_local_cluster_stops_at_once_and_goes_on(tmp_path: Path) -> None:
    config = tmp_path / "ladder.toml"
    config.write_text(toml_config("lad", output=tmp_path / "out", concurrency=2, tc="5+30",
                                  rules=TWO_TO_3, bots=SLEEPY))
    store = tmp_path / "out" / "ladder.sqlite"
    runs: list[list[str]] = []
    for name, extra in (("first", ["--workers", "2"]), ("second", [])):
        ladder = Command(tmp_path, name, "ladder", str(config), "--port", "0", *extra)
        seen = len(runs[-1]) if runs else 0
        try:
            wait_for(lambda: len(stored(store, "lad")) > seen,  # noqa: B023 - used at once
                     "a new stored game", proc=ladder.proc, log=ladder.err)
            code, _ = ladder.interrupt(signal.SIGINT)
        finally:
            ladder.kill()
        kept = check_stopped(ladder, code, 0, r"ladder stopped: (\d+) games? stored")
        runs.append(stored(store, "lad"))
        assert kept == len(runs[-1]) == len(set(runs[-1]))
    assert set(runs[0]) < set(runs[1])


def test_an_sprt_stops_at_once_and_resumes(tmp_path: Path) -> None:
    config = tournament(tmp_path, "duel", games=1,
                        extra='[sprt]\ncandidate = "sleepy"\nbaseline = "random"\n'
                              'max_pairs = 6\nelo1 = 5\n')
    store = tmp_path / "out" / "results.sqlite"
    args = ["sprt", str(config), "--id", "duel", "--quiet"]
    first = Command(tmp_path, "first", *args)
    try:
        wait_for(lambda: stored(store, "duel"), "a first stored game", proc=first.proc,
                 log=first.err)
        code, _ = first.interrupt()
    finally:
        first.kill()
    kept = check_stopped(first, code, 130, r"interrupted: (\d+) games? of 'duel' stored")
    before = stored(store, "duel")
    assert kept == len(before) >= 1
    second = Command(tmp_path, "second", *args)
    assert second.proc.wait(STOP_S * 4) == 0, second.stderr
    after = stored(store, "duel")
    assert len(after) == len(set(after)) > len(before)
    assert set(before) <= set(after)


def test_serve_stops_at_once_and_its_tournament_resumes(tmp_path: Path) -> None:
    config = tournament(tmp_path, "served", games=6)
    out = tmp_path / "res"
    store = out / "served" / "results.sqlite"
    runs: list[list[str]] = []
    for name in ("first", "second"):
        server = Command(tmp_path, name, "serve", "--port", "0", "--output", str(out),
                         "--log-dir", str(tmp_path / "logs"))
        seen = len(runs[-1]) if runs else 0
        try:
            wait_for(lambda: "listening on " in server.stderr,  # noqa: B023 - used at once
                     "the referee to listen", proc=server.proc, log=server.err)
            address = server.stderr.split("listening on ")[1].split()[0]
            with grpc.insecure_channel(address) as channel:
                ops = stub(channel)
                if not runs:
                    ops.StartTournament(op.StartTournamentRequest(
                        config_toml=config.read_text()))
                else:
                    ops.ResumeTournament(op.ResumeTournamentRequest(tournament_id="served"))
            wait_for(lambda: len(stored(store, "served")) > seen,  # noqa: B023
                     "a new stored game", proc=server.proc, log=server.err)
            code, _ = server.interrupt()
        finally:
            server.kill()
        kept = check_stopped(server, code, 0,
                             r"referee stopped: interrupted 'served' with (\d+) games? stored")
        runs.append(stored(store, "served"))
        assert kept == len(runs[-1]) == len(set(runs[-1]))
    assert set(runs[0]) < set(runs[1])


def test_a_match_stops_at_once_and_says_how_many_games_it_printed(tmp_path: Path) -> None:
    match = Command(tmp_path, "match", "match", "--bot",
                    "a={python} -m sample_bots.random_bot", "--bot",
                    "b={python} -m sample_bots.heuristic_bot", "--games", "500",
                    "--log-dir", str(tmp_path / "logs"), "--store", str(tmp_path / "m.sqlite"))
    try:
        wait_for(lambda: "game   1" in match.out.read_text(), "a first game",
                 proc=match.proc, log=match.err)
        code, _ = match.interrupt()
    finally:
        match.kill()
    printed = check_stopped(match, code, 130, r"interrupted: (\d+) of 500 games played")
    assert printed == len(re.findall(r"^game +\d+ ", match.out.read_text(), re.M)) >= 1
    with ResultsStore(tmp_path / "m.sqlite") as results:
        assert len(list(results.games())) == printed  # each printed game is stored
