"""A tournament run stands up to a bot that cannot start, a second run on its store, and
a resume (real referee, real bot processes, real store)."""

from __future__ import annotations

import asyncio
import io
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from cli_support import harness_command
from configs import RANDOM, bot, toml_config
from waiting import wait_for

from harness.cli.progress import Progress
from harness.errors import StoreError
from harness.storage.lock import exclusive_writer, lock_path
from harness.storage.results import GameRow, ResultsStore
from harness.tournament.config import load_config
from harness.tournament.runner import RunState, TournamentRunner, store_path

ROOT = Path(__file__).resolve().parent.parent
FLAKY = """\
import os, pathlib, runpy, sys
counter = pathlib.Path(sys.argv[1])
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
if n == 0:
    print("first start fails on purpose", flush=True)
    sys.exit(3)
sys.argv = sys.argv[:1]
runpy.run_module("sample_bots.random_bot", run_name="__main__")
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return harness_command(*args)


def config_file(tmp_path: Path, second_bot: str, *, games: int = 4,
                concurrency: int = 2) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(toml_config("robust", output=tmp_path / "out", games=games,
                                concurrency=concurrency, tc="5+10",
                                rules={"form": "two-handed", "target": 5},
                                bots=(bot("random", RANDOM), bot("other", second_bot))))
    return path


def stored_faults(tmp_path: Path) -> list[tuple[str, str]]:
    with ResultsStore(store_path(tmp_path / "out")) as store:
        return [(f.bot, f.kind.value) for row in store.games("robust") for f in row.faults]


def test_a_bot_with_a_typo_in_its_command_stops_the_run_naming_it_and_quoting_its_log(
        tmp_path: Path) -> None:
    path = config_file(tmp_path, "no-such-python-xyz -m sample_bots.random_bot", games=50)
    done = cli("run", str(path))
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    assert "bot 'other' failed to start 3 times in a row" in errors[0]
    # The end of the log says why: the command does not exist.
    assert re.search(r"its log \S+other-\d+\.log ends: .*no-such-python-xyz.*No such file",
                     errors[0]), errors[0]
    # The streak's forfeits are not stored: once the command is fixed they are played.
    assert ("other", "startup_failure") not in stored_faults(tmp_path)


def test_a_bot_that_fails_to_start_once_forfeits_that_game_and_the_run_goes_on(
        tmp_path: Path) -> None:
    script = tmp_path / "flaky.py"
    script.write_text(FLAKY)
    path = config_file(tmp_path, f"{{python}} {script} {tmp_path / 'starts'}", games=2,
                       concurrency=1)
    config = load_config(path)
    states: list[RunState] = []

    def seen(state: RunState) -> None:
        states.append(RunState(state.done, faults=state.faults.copy()))

    state = asyncio.run(TournamentRunner(config, on_progress=seen).run())
    assert state.finished
    assert stored_faults(tmp_path) == [("other", "startup_failure")]
    assert state.faults == {"startup_failure": 1}
    # The progress callback saw the fault as soon as its game was counted.
    first = next(s for s in states if s.faults)
    assert first.done < state.done


def test_the_progress_line_shows_fault_counts() -> None:
    progress = Progress(10, stream=io.StringIO())
    progress.show(RunState(done=3, faults={"startup_failure": 2, "timeout": 1},  # type: ignore[arg-type]
                           status="round 1"))
    assert "faults: startup_failure 2, timeout 1" in progress.line()


def test_after_a_resume_rate_and_eta_count_only_the_games_this_run_played(
        tmp_path: Path) -> None:
    path = config_file(tmp_path, "{python} -m sample_bots.random_bot", games=2)
    first = asyncio.run(TournamentRunner(load_config(path)).run())
    assert first.finished and first.done == 4
    config = load_config(path, {"games": "4"})  # four more games, the first four kept
    state = asyncio.run(TournamentRunner(config).run())
    assert state.finished and (state.done, state.resumed) == (8, 4)
    progress = Progress(16, stream=io.StringIO())
    progress.show(state)
    line = progress.line(progress.started + 10.0)
    assert "0.4/s" in line  # 4 games played in 10 s, not 8
    assert "eta 0:20" in line  # 8 games to go at 0.4/s


def test_a_second_run_on_the_same_store_is_refused_while_the_first_runs(
        tmp_path: Path) -> None:
    path = config_file(tmp_path, "{python} -m sample_bots.random_bot", games=400)
    lock = lock_path(store_path(tmp_path / "out"))
    first = subprocess.Popen([sys.executable, "-m", "harness", "run", str(path), "--quiet"],
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        wait_for(lambda: lock.exists() and lock.read_text().strip() == str(first.pid),
                 "the first run to take the lock", proc=first)
        second = cli("run", str(path), "--quiet")
        assert second.returncode != 0
        assert "another run is using the results store" in second.stderr
        assert f"held by process {first.pid}" in second.stderr
        assert first.poll() is None  # the first one goes on
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(30)
    # A killed run leaves no stale lock behind, and the next run takes it at once. (A
    # bot process the killed run was starting at that instant, forked but not yet
    # running its program, shares the lock for a moment: the next run waits for it.)
    with exclusive_writer(store_path(tmp_path / "out")):
        pass


FORKING_HOLDER = """
import os, sys, time
from pathlib import Path
from harness.storage.lock import exclusive_writer
with exclusive_writer(Path(sys.argv[1])):
    parent = os.getpid()
    if os.fork() == 0:  # a child that shares the lock and runs no program
        while os.getppid() == parent:
            time.sleep(0.01)
        time.sleep(float(sys.argv[2]))  # ...for this long after its parent's end
        os._exit(0)
    print("locked", flush=True)
    time.sleep(600)
"""


@contextmanager
def killed_holder_with_a_child(store: Path, child_s: float) -> Iterator[int]:
    """A process that took the store's lock and forked a child that keeps it for
    ``child_s`` seconds after the process ends, SIGKILLed: yields its pid. The child is
    killed on the way out."""
    holder = subprocess.Popen([sys.executable, "-c", FORKING_HOLDER, str(store), str(child_s)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        holder.kill()
        holder.wait(30)
        yield holder.pid
    finally:
        with suppress(ProcessLookupError):
            os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(30)


def test_the_lock_of_a_killed_run_shared_by_a_child_it_forked_is_waited_for(
        tmp_path: Path) -> None:
    store = store_path(tmp_path)
    with killed_holder_with_a_child(store, 1.0), exclusive_writer(store):
        pass  # taken once the child let go: no StoreError


def test_a_lock_kept_long_after_its_holder_ended_is_refused_naming_that(
        tmp_path: Path) -> None:
    store = store_path(tmp_path)
    with killed_holder_with_a_child(store, 600) as pid, pytest.raises(
            StoreError, match=f"held by process {pid}, which has ended; a process it "
                              f"started still shares it"), exclusive_writer(store):
        pass


def test_runs_in_one_process_share_the_store_lock(tmp_path: Path) -> None:
    store = store_path(tmp_path)
    code = ("import sys; from pathlib import Path; "
            "from harness.storage.lock import exclusive_writer\n"
            "with exclusive_writer(Path(sys.argv[1])): pass")

    def other_process() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", code, str(store)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)

    with exclusive_writer(store), exclusive_writer(store):  # serve: several at once
        refused = other_process()
        assert refused.returncode != 0 and "another run is using" in refused.stderr
    assert other_process().returncode == 0  # released when the last one ends


def test_a_store_that_fails_stops_every_worker_and_its_error_is_raised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four games at once; the store fails on the second game stored. The run raises
    that StoreError, and no worker is left playing (each was cancelled, none stores)."""
    path = config_file(tmp_path, "{python} -m sample_bots.random_bot", games=20,
                       concurrency=4)
    original = ResultsStore.record_game
    calls: list[str] = []

    def failing(self: ResultsStore, row: GameRow) -> bool:
        calls.append(row.game_key)
        if len(calls) == 2:
            raise StoreError("the disk is full (a test)")
        return original(self, row)

    monkeypatch.setattr(ResultsStore, "record_game", failing)

    async def go() -> list[str]:
        runner = TournamentRunner(load_config(path))
        with pytest.raises(StoreError, match="the disk is full"):
            await runner.run()
        names = [getattr(t.get_coro(), "__qualname__", "") for t in asyncio.all_tasks()
                 if not t.done()]
        return [name for name in names if name.endswith(".worker")]

    assert asyncio.run(go()) == []  # no worker of the run is still going
    assert len(calls) == 2  # nothing was stored after the failure
