"""The ladder's frequent store reads: the registry's in-memory copy follows writes from
any connection, the queries the running ladder repeats use indexes, the standings read
the benches once, and the standings and the live page are built once per change of
what they show."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from harness.ladder.live_site import ladder_json, ladder_view
from harness.ladder.matchmaking import Candidate, SetProgress
from harness.ladder.quarantine import Quarantine, QuarantinePolicy
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import Registry
from harness.ladder.runtime import LadderRuntime
from harness.ladder.service import ladder_standings, standings
from harness.ladder.settings import LadderSettings
from harness.referee.outcome import Termination
from harness.storage.ladder import LadderStore
from harness.storage.results import GameRow


def test_the_registry_copy_follows_writes_from_another_connection(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    with LadderStore(path) as mine, LadderStore(path) as theirs:
        reader, writer = Registry(mine), Registry(theirs)
        writer.register("alpha", "owner")
        assert [e.name for e in reader.entrants()] == ["alpha"]
        cached = reader.entrants()
        assert reader.entrants() == cached  # nothing changed: the same answer
        writer.register("beta", "owner")
        writer.new_version("alpha")
        assert [e.name for e in reader.entrants()] == ["beta", "alpha@2"]
        assert [e.name for e in reader.lineage("alpha@2")] == ["alpha", "alpha@2"]
        writer.retire("beta")
        assert [e.name for e in reader.entrants()] == ["alpha@2"]
        writer.update("alpha@2", description="new words")
        assert reader.entrants()[0].description == "new words"
        with sqlite3.connect(path) as raw:  # a write from outside the package counts too
            raw.execute("UPDATE ladder_bots SET concurrency = 3 WHERE name = 'alpha@2'")
        assert reader.entrants()[0].concurrency == 3


def _plan(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> str:
    return " | ".join(str(row[-1]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql, args))


@pytest.mark.parametrize(("sql", "args"), [
    ("SELECT value FROM meta WHERE key = ?", ("ladder_bots_changes",)),
    ("SELECT id FROM games WHERE tournament_id = ? ORDER BY id DESC LIMIT ?", ("ladder", 20)),
    ("SELECT DISTINCT s.game_id FROM game_seats AS s JOIN games AS g ON g.id = s.game_id "
     "WHERE s.bot = ? AND g.tournament_id = ? ORDER BY s.game_id DESC LIMIT ?",
     ("bot", "ladder", 20)),
    ("SELECT COUNT(*) FROM games WHERE tournament_id = ? AND game_key >= ? AND game_key < ?",
     ("ladder", "ladder/0", "ladder/1")),
    ("SELECT key FROM ladder_sets WHERE status != ? AND key IN (?, ?)",
     ("in_progress", "a", "b")),
    ("UPDATE ladder_sets SET status = ? WHERE status = ?", ("cut_short", "in_progress")),
    ("SELECT COUNT(*) FROM game_seats WHERE bot = ?", ("bot",)),
    ("SELECT MAX(id) FROM games WHERE tournament_id = ?", ("ladder",)),
    ("SELECT COUNT(*) FROM ladder_sets WHERE status = ?", ("in_progress",)),
])
def test_the_ladders_repeated_queries_use_an_index(tmp_path: Path, sql: str,
                                                   args: tuple[object, ...]) -> None:
    with LadderStore(tmp_path / "ladder.db") as store, store.reading() as conn:
        plan = _plan(conn, sql, args)
    assert "USING" in plan and " SCAN games" not in f" {plan}" \
        and "SCAN ladder_sets" not in plan, plan


def test_standings_show_each_bots_bench_in_force_from_one_read(tmp_path: Path) -> None:
    now = [1000.0]
    with LadderStore(tmp_path / "ladder.db") as store:
        registry = Registry(store)
        for name in ("calm", "faulty", "lifted", "expired"):
            registry.register(name, "owner")
        quarantine = Quarantine(store, QuarantinePolicy(bench_faults=1, bench_window=1),
                                clock=lambda: now[0])
        for bot in ("faulty", "lifted", "expired"):
            quarantine.record(bot, ["timeout"])
        quarantine.lift("lifted")
        now[0] += 200.0
        quarantine.record("expired", ["disconnect"])  # still benched: not counted again
        now[0] += 200.0  # the first benches (300 s) are over now
        quarantine.record("faulty", ["disconnect"])  # a second bench, in force
        ratings = LadderRatings()
        rows = ladder_standings(ratings, registry, quarantine, {})
        reasons = {row.name: row.benched_reason for row in rows}
        expected = {name: (b.reason if (b := quarantine.benched(name)) is not None else "")
                    for name in reasons}
    assert reasons == expected
    assert reasons["faulty"].endswith("disconnect x1") and reasons["calm"] == ""
    assert reasons["lifted"] == "" and reasons["expired"] == ""


def _game(i: int, a: str, b: str) -> GameRow:
    key = f"ladder/{i:09d}/t0"
    record = {"tournament": {"id": "ladder", "key": key, "group": f"ladder/{i:09d}",
                             "table": 0, "sides": [[a], [b]]}}
    return GameRow("ladder", key, "four-handed", i, (a, b, a, b), Termination.NORMAL,
                   (10, 4), (1, 2, 1, 2), 5, "", "", 1.0, record)


def test_the_standings_and_the_page_are_built_once_per_change(tmp_path: Path) -> None:
    runtime = LadderRuntime(LadderSettings(store=tmp_path / "ladder.db",
                                           log_dir=tmp_path / "logs"))
    try:
        runtime.results.ensure_tournament("ladder", "ladder", {"kind": "ladder"})
        for name in ("a", "b"):
            runtime.registry.register(name, "owner", concurrency=2)
        first = ladder_json(runtime)
        assert standings(runtime) == standings(runtime) and ladder_json(runtime) is first
        builds = runtime.memo.builds
        assert builds == 2  # the standings and the page, once each

        def changed() -> dict[str, Any]:
            view: dict[str, Any] = json.loads(ladder_json(runtime))
            assert runtime.memo.builds > builds and view == ladder_view(runtime)
            assert view == json.loads(ladder_json(runtime))  # and kept again
            return view

        runtime.registry.register("c", "owner")  # a new bot shows
        assert [s["name"] for s in changed()["standings"]] == ["a", "b", "c"]
        builds = runtime.memo.builds
        deal_set = runtime.matchmaker.next_sets([Candidate("a", free_seats=2),
                                                 Candidate("b", free_seats=2)], 1)[0]
        runtime.sets.start(deal_set)
        row = _game(deal_set.index, "a", "b")
        runtime.results.record_game(row)  # stored, but its set is not over: held back
        assert changed()["recent"] == []
        builds = runtime.memo.builds
        progress = SetProgress(deal_set)
        progress.cut_short("stopped")
        runtime.sets.finish(progress)  # the set is over: its game shows
        assert [g["key"] for g in changed()["recent"]] == [row.game_key]
        builds = runtime.memo.builds
        runtime.ratings.add_games([row])
        asyncio.run(runtime.refresh_ratings(force=True))  # the ratings moved
        top = changed()["standings"][0]
        assert top["name"] == "a" and top["games"] == 1
        builds = runtime.memo.builds
        runtime.quarantine.policy = QuarantinePolicy(bench_faults=1, bench_window=1)
        runtime.quarantine.record("b", ["timeout"])  # benched
        assert any(s["benched"] for s in changed()["standings"])
    finally:
        runtime.close()
