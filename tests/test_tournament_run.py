"""Tournaments end to end: real referee, real bot processes, real store. The commands run
through the command line's ``main()`` (tests/cli_support.py); a run killed with SIGKILL
is a real ``python -m harness`` process.

The default tournament ranks heuristic above random; a run killed with SIGKILL resumes
and ends with every scheduled game stored exactly once; the CLI commands work on the
results; the SPRT stops when it can decide.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import harness_command
from configs import RANDOM, Bot, bot, remote, toml_config
from waiting import wait_for

from harness.referee.outcome import Termination
from harness.results.rating import fit_ratings
from harness.results.sprt import SprtDecision
from harness.storage.lock import lock_path
from harness.storage.results import GameRow, ResultsStore
from harness.tournament.config import default_config, load_config
from harness.tournament.outputs import tournament_report
from harness.tournament.runner import TournamentRunner, store_path
from harness.tournament.schedule import SprtMatch

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return harness_command(*args, cwd=cwd)


HEURISTIC_BOT = bot("heuristic")


def small_config(tmp_path: Path, games: int = 6, extra: str = "", *, tc: str = "2+10",
                 second: Bot = HEURISTIC_BOT, concurrency: int = 1) -> Path:
    """Two-handed, random against ``second`` (the heuristic sample bot by default), one
    game at a time unless ``concurrency`` says more (each game at once starts its own
    bot processes)."""
    path = tmp_path / "t.toml"
    path.write_text(toml_config("small", output=tmp_path / "out", games=games,
                                concurrency=concurrency,
                                tc=tc, extra=extra, rules={"form": "two-handed", "target": 5},
                                bots=(bot("random"), second)))
    return path


@pytest.mark.slow
def test_default_tournament_ranks_heuristic_above_random_with_separate_intervals(
        tmp_path: Path) -> None:
    config = load_config(None, {"output": str(tmp_path)})
    assert config.to_dict() == default_config().to_dict()
    state = asyncio.run(TournamentRunner(config).run())
    assert state.finished and state.done == config.make_format().total()
    with ResultsStore(store_path(tmp_path)) as store:
        rows = list(store.games(config.id))
    assert len(rows) == state.done
    ratings = fit_ratings(rows)
    assert ratings is not None
    assert ratings.players[0] == "heuristic"
    lo_h, _ = ratings.interval("heuristic")
    _, hi_r = ratings.interval("random")
    assert lo_h > hi_r, (ratings.elo, ratings.ci95)
    report = tournament_report(config)
    assert "heuristic" in report and "random" in report
    for name in ("report.md", "summary.json", "games.jsonl"):
        assert (tmp_path / name).stat().st_size > 0


def test_a_small_default_tournament_from_the_command_line_writes_every_output(
        tmp_path: Path) -> None:
    """The fast counterpart of the full default tournament above (marked slow)."""
    result = cli("run", "--games", "1", "--output", str(tmp_path), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "heuristic" in result.stdout and "random" in result.stdout
    with ResultsStore(store_path(tmp_path)) as store:
        assert len(list(store.games(default_config().id))) == 12  # 6 pairings x 2 tables
    for name in ("report.md", "summary.json", "games.jsonl", "report.html"):
        assert (tmp_path / name).stat().st_size > 0
    assert len(list((tmp_path / "replays").glob("*.html"))) == 12


def test_a_run_killed_with_sigkill_resumes_and_stores_every_game_exactly_once(
        tmp_path: Path) -> None:
    # The second bot stops at a gate once 8 of the games have started, so the kill
    # lands in the middle of the run however fast the machine is; the gate opens for the
    # resumed run.
    count, gate = tmp_path / "started", tmp_path / "open"
    config_path = small_config(
        tmp_path, games=12, tc="600+600", concurrency=2,  # the kill catches two in flight
        second=bot("gated", f"{{python}} {ROOT / 'tests' / 'gated_bot.py'} {count} 8 {gate}"))
    config = load_config(config_path)
    total = config.make_format().total()
    assert total is not None and total > 8
    db = store_path(tmp_path / "out")
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", str(config_path),
                             "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    def stored() -> int:
        if not db.exists():
            return 0
        with sqlite3.connect(db) as con:
            try:
                return int(con.execute("select count(*) from games").fetchone()[0])
            except sqlite3.OperationalError:
                return 0

    try:
        wait_for(lambda: stored() >= 4, "4 stored games", proc=proc)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(10)
    with sqlite3.connect(db) as con:
        assert con.execute("pragma integrity_check").fetchone()[0] == "ok"
        before = con.execute("select count(*) from games").fetchone()[0]
    assert 4 <= before <= 8 < total
    gate.touch()
    done = cli("run", str(config_path), "--quiet")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as con:
        keys = [k for (k,) in con.execute("select game_key from games")]
    expected = sorted(g.key for g in config.make_format().games())
    assert sorted(keys) == expected  # every scheduled game, each exactly once
    again = cli("run", str(config_path), "--quiet")  # a finished run plays nothing more
    assert again.returncode == 0
    with sqlite3.connect(db) as con:
        assert con.execute("select count(*) from games").fetchone()[0] == total


def test_ratings_and_replay_commands_read_the_store(tmp_path: Path) -> None:
    config_path = small_config(tmp_path, games=2)
    run = cli("run", str(config_path), "--quiet", "--markdown")
    assert run.returncode == 0, run.stderr
    assert "| heuristic" in run.stdout
    db = store_path(tmp_path / "out")
    ratings = cli("ratings", str(db))
    assert ratings.returncode == 0 and "heuristic" in ratings.stdout
    with ResultsStore(db) as store:
        row = next(iter(store.games("small")))
    replay = cli("replay", row.game_key, "--store", str(db))
    assert replay.returncode == 0, replay.stderr
    assert "trick" in replay.stdout.lower() and row.seats[0] in replay.stdout
    missing = cli("replay", "no/such/game", "--store", str(db))
    assert missing.returncode == 2 and "no game" in missing.stderr


def test_ratings_prints_the_tables_and_leaves_the_anchored_report_html_alone(
        tmp_path: Path) -> None:
    """report.html is the report command's (and the run's, with the tournament's anchor);
    ratings, which rates with mean 0 unless given --anchor, must not overwrite it."""
    run = cli("run", str(small_config(tmp_path, games=2, extra='anchor = "random"')),
              "--quiet")
    assert run.returncode == 0, run.stderr
    out = tmp_path / "out"
    page = (out / "report.html").read_text()
    assert "(anchor)" in page
    ratings = cli("ratings", str(store_path(out)))
    assert ratings.returncode == 0, ratings.stderr
    assert "heuristic" in ratings.stdout and "(anchor)" not in ratings.stdout
    assert "report.html" not in ratings.stderr
    assert (out / "report.html").read_text() == page
    assert [p.name for p in out.glob("report*.html")] == ["report.html"]
    anchored = cli("ratings", str(store_path(out)), "--anchor", "random")
    assert anchored.returncode == 0 and "+0 (anchor)" in anchored.stdout
    (out / "report.html").unlink()
    again = cli("report", str(out))  # the run's anchor, from its summary.json
    assert again.returncode == 0, again.stderr
    assert "(anchor)" in (out / "report.html").read_text()


def test_a_bad_configuration_is_an_error_naming_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[[bot]]\nname = "a"\ncomand = "true"\n')
    result = cli("run", str(bad))
    assert result.returncode == 2
    assert "bot[0].comand" in result.stderr


def test_match_command_prints_one_line_per_game(tmp_path: Path) -> None:
    result = cli("match", "--form", "two-handed", "--games", "2", "--target", "3",
                 "--bot", "r={python} -m sample_bots.random_bot",
                 "--bot", "h={python} -m sample_bots.heuristic_bot",
                 "--log-dir", str(tmp_path / "logs"), "--store", str(tmp_path / "m.sqlite"))
    assert result.returncode == 0, result.stderr
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith("game ")]
    assert len(lines) == 2 and all("normal" in ln for ln in lines)
    assert result.stdout.strip().splitlines()[-2].startswith("wins:")


def test_sprt_accepts_h1_for_heuristic_against_random(tmp_path: Path) -> None:
    config = load_config(small_config(tmp_path, extra='format = "sprt"\n[sprt]\n'
                                                      'candidate = "heuristic"\n'
                                                      'baseline = "random"\n'
                                                      'elo0 = 0\nelo1 = 150\n'
                                                      'max_pairs = 200\n'))
    runner = TournamentRunner(config)
    state = asyncio.run(runner.run())
    fmt = runner.format
    assert isinstance(fmt, SprtMatch)
    assert state.finished
    assert fmt.decision is SprtDecision.ACCEPT_H1, fmt.status()
    assert fmt.units < 200  # it stopped early
    report = tournament_report(config)
    assert "H1" in report or "accept" in report.lower()


@pytest.mark.parametrize("form", ["cutthroat", "four-handed"])
def test_round_robin_in_other_forms_plays_every_game(tmp_path: Path, form: str) -> None:
    extra = 'partnerships = "mixed"\n' if form == "four-handed" else ""
    path = small_config(tmp_path, games=1, extra=extra)
    text = path.read_text().replace('form = "two-handed"', f'form = "{form}"')
    if form == "cutthroat":
        text += "\n" + bot("random2", RANDOM).toml() + "\n"
    path.write_text(text)
    config = load_config(path)
    state = asyncio.run(TournamentRunner(config).run())
    assert state.finished
    with ResultsStore(store_path(tmp_path / "out")) as store:
        rows = list(store.games(config.id))
    assert len(rows) == config.make_format().total()
    assert all(r.termination is Termination.NORMAL for r in rows), [
        r.record["detail"] for r in rows]
    assert fit_ratings(rows) is not None


def test_a_remote_bot_with_fewer_tokens_than_seats_at_once_still_plays_everything(
        tmp_path: Path) -> None:
    """Four-handed with concurrency 2 would like four seats of the remote bot at once;
    it has two tokens, so its games run one at a time, and none deadlocks."""
    path = tmp_path / "remote.toml"
    path.write_text(toml_config("remote", output=tmp_path / "out", games=2, concurrency=2,
                                rules={"target": 5},
                                bots=(bot("local", RANDOM), remote("far", "far-1", "far-2"))))
    config = load_config(path)

    async def scenario() -> None:
        address: list[str] = []
        runner = TournamentRunner(config, on_listen=address.append)
        task = asyncio.ensure_future(runner.run())
        while not address:
            await asyncio.sleep(0.05)
        bots = [await asyncio.create_subprocess_exec(
            sys.executable, "-m", "sample_bots.random_bot", cwd=ROOT,
            env={**os.environ, "EUCHRE_REFEREE_ADDRESS": address[0],
                 "EUCHRE_BOT_TOKEN": token},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for token in ("far-1", "far-2")]
        try:
            state = await asyncio.wait_for(task, 90)
            assert state.finished and state.done == 4
        finally:
            for b in bots:
                if b.returncode is None:
                    b.kill()
                await b.wait()

    asyncio.run(scenario())
    with ResultsStore(store_path(tmp_path / "out")) as store:
        rows = list(store.games("remote"))
    assert len(rows) == 4 and all(r.termination is Termination.NORMAL for r in rows)


def test_a_remote_bot_needs_a_token_per_seat_it_takes_in_one_game(tmp_path: Path) -> None:
    path = tmp_path / "few.toml"
    path.write_text(toml_config("few", output=tmp_path / "out",
                                bots=(bot("local", RANDOM), remote("far", "only-one"))))
    result = cli("run", str(path), "--quiet")
    assert result.returncode == 2
    assert "bot[1].tokens" in result.stderr and "at least 2 tokens" in result.stderr


def test_raising_games_extends_a_finished_tournament_with_only_the_new_games(
        tmp_path: Path) -> None:
    path = small_config(tmp_path, games=2)
    first = cli("run", str(path), "--quiet")
    assert first.returncode == 0, first.stderr
    db = store_path(tmp_path / "out")
    with ResultsStore(db) as store:
        before = {r.game_key: r for r in store.games("small")}
    assert len(before) == 4
    more = cli("run", str(path), "--quiet", "--games", "4")
    assert more.returncode == 0, more.stderr
    with ResultsStore(db) as store:
        after = {r.game_key: r for r in store.games("small")}
    config = load_config(path, {"games": "4"})
    assert sorted(after) == sorted(g.key for g in config.make_format().games())
    assert len(after) == 8
    for key, row in before.items():  # the first games were kept, not played again
        assert after[key] == row
    for game in config.make_format().games():  # and they are the same games as scheduled
        if game.key in before:
            assert (before[game.key].seats, before[game.key].seed) == (game.seats, game.seed)
    fewer = cli("run", str(path), "--quiet", "--games", "3")
    assert fewer.returncode == 2 and "differs in: games" in fewer.stderr


def test_the_store_is_opened_and_read_off_the_event_loop_and_a_cancel_meanwhile_lets_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve`` runs many tournaments on one event loop, which also times their bots:
    starting or resuming one (its store's lock, reading its stored games) happens in a
    worker thread. A run cancelled meanwhile ends once the thread is done, leaving the
    store closed, unlocked and marked interrupted, as a run cancelled later does."""
    readers: list[int] = []
    entered, gate = threading.Event(), threading.Event()
    real_games = ResultsStore.games

    def games(self: ResultsStore, *args: Any, **kwargs: Any) -> Iterator[GameRow]:
        readers.append(threading.get_ident())
        entered.set()
        assert gate.wait(60), "the test never let the read go on"
        return real_games(self, *args, **kwargs)

    monkeypatch.setattr(ResultsStore, "games", games)
    config = load_config(small_config(tmp_path, games=1))
    lock_file = lock_path(store_path(tmp_path / "out"))

    def lock_is_free() -> bool:
        with open(lock_file, "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False
            fcntl.flock(handle, fcntl.LOCK_UN)
            return True

    async def scenario() -> None:
        loop_thread = threading.get_ident()
        gate.set()
        state = await TournamentRunner(config).run()
        assert state.finished and readers
        assert loop_thread not in readers, "the stored games were read on the loop"

        gate.clear()
        entered.clear()
        run = asyncio.ensure_future(TournamentRunner(config).run())  # a resume
        assert await asyncio.to_thread(entered.wait, 60), "the resume never read its store"
        assert not lock_is_free()
        run.cancel()  # the run awaits its opening thread, which is held in the read
        # A run that ended without waiting for its thread would have ended by now, with
        # the lock still held below; this one cannot end before the read goes on.
        await asyncio.sleep(0.2)
        assert not run.done(), "the cancelled run ended before its opening thread"
        gate.set()
        with pytest.raises(asyncio.CancelledError):
            await run
        # Nothing of the run is left once it has ended: what a caller stores next
        # (serve stores "cancelled") is not overwritten by the thread.
        assert lock_is_free(), "the cancelled run kept the store's lock"
        with ResultsStore(store_path(tmp_path / "out")) as store:
            assert store.tournament_status(config.id) == "interrupted"

    asyncio.run(asyncio.wait_for(scenario(), 120))
