"""Crash safety: kill -9 a running ladder and start it again on the same store.
Registrations, tokens, finished games and ratings come back; sets in flight are cut
short and their unfinished games are not rated; a remote bot reconnects by itself and
plays on."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from harness.ladder.matchmaking import SetStatus
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import Registry
from harness.ladder.sets import SetLog
from harness.ladder.store import LadderStore
from harness.store import ResultsStore

REPO = Path(__file__).resolve().parent.parent
CONFIG = """name = "crash-ladder"
output = "{output}"
concurrency = 2
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(check: Callable[[], bool], timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "timed out waiting for the ladder"
        time.sleep(0.2)


def _sets(store_path: Path) -> list[SetStatus]:
    if not store_path.exists():
        return []
    with LadderStore(store_path) as store:
        return [s.status for s in SetLog(store).sets()]


def _visitor_sets(store_path: Path) -> int:
    with LadderStore(store_path) as store:
        return sum(1 for s in SetLog(store).sets()
                   if "visitor" in s.base and s.status is SetStatus.COMPLETE)


def test_kill_9_and_restart_keeps_everything_finished(tmp_path: Path) -> None:
    config = tmp_path / "ladder.toml"
    config.write_text(CONFIG.format(output=tmp_path / "out"))
    store_path = tmp_path / "out" / "ladder.sqlite"
    port = _free_port()
    ladder_cmd = [sys.executable, "-m", "harness", "ladder", str(config), "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    token = subprocess.run([*ladder_cmd, "register", "visitor", "--owner", "ann"], env=env,
                           cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()[1]
    visitors = [subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot", "--address",
                                  f"127.0.0.1:{port}", "--token", token], cwd=REPO, env=env,
                                 stderr=subprocess.DEVNULL) for _ in range(2)]
    first = subprocess.Popen(ladder_cmd, cwd=REPO, env=env, stderr=subprocess.DEVNULL)
    second = None
    try:
        _wait(lambda: _sets(store_path).count(SetStatus.COMPLETE) >= 3
              and _visitor_sets(store_path) >= 1)
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        with ResultsStore(store_path) as results:
            games_before = {g.game_key for g in results.games()}
        statuses_before = _sets(store_path)

        second = subprocess.Popen(ladder_cmd, cwd=REPO, env=env, stderr=subprocess.DEVNULL)
        played = _visitor_sets(store_path)
        _wait(lambda: _visitor_sets(store_path) > played)  # the visitor is back
        second.send_signal(signal.SIGINT)
        assert second.wait(60) == 0
    finally:
        for proc in (first, second, *visitors):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(30)

    with LadderStore(store_path) as store, ResultsStore(store_path) as results:
        assert Registry(store).authenticate(token) is not None
        sets = SetLog(store).sets()
        rows = list(results.games())
        counted = SetLog.counted(rows, sets)
        ratings = LadderRatings()
        ratings.add_games(counted)
        fitted = ratings.refresh(force=True)
    assert games_before <= {r.game_key for r in rows}
    # Every set the crash left in flight was cut short; none is still in progress.
    in_flight = statuses_before.count(SetStatus.IN_PROGRESS)
    assert in_flight >= 1  # two sets run at once, so the kill caught one in flight
    assert [s.status for s in sets[:len(statuses_before)]].count(SetStatus.CUT_SHORT) \
        >= in_flight
    assert all(s.status is not SetStatus.IN_PROGRESS for s in sets)
    cut = {s.key for s in sets if s.status is SetStatus.CUT_SHORT}
    assert not any(r.game_key.rsplit("/t", 1)[0] in cut and r.termination.value == "normal"
                   for r in counted)
    assert fitted is not None and "visitor" in fitted.elo
