"""Tests of the results store (harness/storage/results.py)."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.errors import StoreError
from harness.referee.outcome import Fault, FaultKind, Termination
from harness.storage.results import GameRow, ResultsStore

CONFIG: dict[str, Any] = {"form": "partnership", "games": 4, "bots": ["a", "b"], "seed": 7}
REPO_ROOT = Path(__file__).resolve().parent.parent


def make_game(i: int, tournament_id: str = "t1", n_faults: int = 0) -> GameRow:
    seats = ("alpha", "beta", "gamma", "delta")
    return GameRow(
        tournament_id=tournament_id,
        game_key=f"rr/{i:04d}/t1",
        form="partnership",
        seed=1000 + i,
        seats=seats,
        termination=Termination.FORFEIT if n_faults else Termination.NORMAL,
        scores=(10, i % 10),
        ranking=(1, 2, 1, 2),
        hands=5 + i % 7,
        started_at="2024-05-01T12:00:00+00:00",
        finished_at="2024-05-01T12:00:03+00:00",
        duration_s=3.25,
        record={"version": 1, "actions": [i, i + 1, i + 2], "note": "é ✓"},
        faults=tuple(
            Fault(seat=k % 4, bot=seats[k % 4],
                  kind=(FaultKind.TIMEOUT, FaultKind.CRASH)[k % 2], detail=f"d{k}")
            for k in range(n_faults)
        ),
    )


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    s = ResultsStore(tmp_path / "results" / "results.sqlite")
    s.ensure_tournament("t1", "first", CONFIG)
    return s


def row_count(path: Path, table: str = "games") -> int:
    conn = sqlite3.connect(path)
    try:
        (n,) = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
        return int(n)
    finally:
        conn.close()


# --------------------------------------------------------------------------- opening


def test_new_store_creates_parent_folders_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "results.sqlite"
    with ResultsStore(path) as s:
        assert s.tournament_ids() == []
    assert path.is_file()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert version == (str(ResultsStore.SCHEMA_VERSION),)
    conn.close()


def test_reopening_keeps_the_data(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with ResultsStore(path) as s:
        s.ensure_tournament("t1", "first", CONFIG)
        s.record_game(make_game(1))
    with ResultsStore(path) as s:
        assert s.finished_keys("t1") == {"rr/0001/t1"}


def test_newer_schema_version_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    ResultsStore(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'",
            (str(ResultsStore.SCHEMA_VERSION + 1),),
        )
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        ResultsStore(path)


def test_older_schema_version_is_migrated(tmp_path: Path) -> None:
    # A version-0 file: only the meta table. Opening it must run every migration step.
    path = tmp_path / "r.sqlite"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('schema_version', '0')")
    conn.close()
    with ResultsStore(path) as s:
        assert s.ensure_tournament("t1", "first", CONFIG)
        assert s.record_game(make_game(1, n_faults=1))
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(ResultsStore.SCHEMA_VERSION),
    )
    conn.close()


def test_non_database_file_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_bytes(b"this is a text file, not a database\n" * 200)
    with pytest.raises(StoreError, match="not a usable results store"):
        ResultsStore(path)


def test_foreign_database_without_meta_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    conn.close()
    with pytest.raises(StoreError, match=r"not a results store.*customers"):
        ResultsStore(path)


def test_closed_store_raises_store_error(tmp_path: Path) -> None:
    s = ResultsStore(tmp_path / "r.sqlite")
    s.close()
    s.close()  # closing twice is harmless
    with pytest.raises(StoreError, match="closed"):
        s.tournament_ids()


# --------------------------------------------------------------------------- tournaments


def test_ensure_tournament_creates_once_and_accepts_same_config(store: ResultsStore) -> None:
    reordered = dict(reversed(list(CONFIG.items())))
    assert store.ensure_tournament("t1", "first", reordered) is False
    assert store.ensure_tournament("t2", "second", {}) is True
    assert store.tournament_ids() == ["t1", "t2"]
    assert store.tournament_config("t1") == CONFIG
    assert store.tournament_status("t1") == "running"


def test_ensure_tournament_with_different_config_raises(store: ResultsStore) -> None:
    with pytest.raises(StoreError, match=r"different configuration.*games.*new tournament id"):
        store.ensure_tournament("t1", "first", {**CONFIG, "games": 5})
    assert store.tournament_config("t1") == CONFIG


def test_set_status_updates_and_rejects_unknown_tournament(store: ResultsStore) -> None:
    store.set_status("t1", "finished")
    assert store.tournament_status("t1") == "finished"
    with pytest.raises(StoreError, match="unknown tournament"):
        store.set_status("nope", "finished")
    with pytest.raises(StoreError, match="unknown tournament"):
        store.tournament_config("nope")


# --------------------------------------------------------------------------- games


def test_game_with_faults_round_trips(store: ResultsStore) -> None:
    game = make_game(3, n_faults=3)
    assert store.record_game(game) is True
    assert store.game("t1", game.game_key) == game
    assert list(store.games("t1")) == [game]
    assert store.game("t1", "missing") is None


def test_recording_same_key_twice_stores_once(store: ResultsStore, tmp_path: Path) -> None:
    first = make_game(1, n_faults=2)
    assert store.record_game(first) is True
    changed = replace(first, seed=999, faults=(Fault(0, "x", FaultKind.CRASH, ""),))
    assert store.record_game(changed) is False
    assert store.game("t1", first.game_key) == first
    path = tmp_path / "results" / "results.sqlite"
    assert row_count(path, "games") == 1
    assert row_count(path, "faults") == 2


def test_recording_for_unknown_tournament_raises(store: ResultsStore) -> None:
    with pytest.raises(StoreError, match="ensure_tournament"):
        store.record_game(make_game(1, tournament_id="ghost"))


def test_unserialisable_record_raises_and_stores_nothing(store: ResultsStore) -> None:
    bad = replace(make_game(1), record={"x": object()})
    with pytest.raises(StoreError, match="JSON"):
        store.record_game(bad)
    assert store.finished_keys("t1") == set()


def test_finished_keys_lists_only_that_tournaments_games(store: ResultsStore) -> None:
    store.ensure_tournament("t2", "second", {})
    for i in range(3):
        store.record_game(make_game(i))
    store.record_game(make_game(7, tournament_id="t2"))
    assert store.finished_keys("t1") == {"rr/0000/t1", "rr/0001/t1", "rr/0002/t1"}
    assert store.finished_keys("t2") == {"rr/0007/t1"}
    assert store.finished_keys("unknown") == set()


def test_games_are_listed_in_insertion_order_across_pages(store: ResultsStore) -> None:
    store.ensure_tournament("t2", "second", {})
    rng = random.Random(5)
    order = [rng.randrange(10_000) for _ in range(1200)]
    expected: list[tuple[str, str]] = []
    for n, i in enumerate(dict.fromkeys(order)):
        tid = "t1" if n % 3 else "t2"
        store.record_game(make_game(i, tournament_id=tid, n_faults=n % 3))
        expected.append((tid, make_game(i).game_key))
    assert [(g.tournament_id, g.game_key) for g in store.games()] == expected
    only_t2 = [g for g in store.games("t2")]
    assert [(g.tournament_id, g.game_key) for g in only_t2] == [e for e in expected if e[0] == "t2"]
    assert all(len(g.faults) == 0 for g in only_t2)  # n % 3 == 0 for t2 games


def _seated(i: int, seats: tuple[str, ...], tournament_id: str = "t1",
            n_faults: int = 0) -> GameRow:
    game = make_game(i, tournament_id, n_faults)
    faults = tuple(replace(f, bot=seats[f.seat]) for f in game.faults)
    return replace(game, seats=seats, faults=faults)


def test_latest_games_are_the_newest_first_up_to_the_limit(store: ResultsStore) -> None:
    store.ensure_tournament("t2", "second", {})
    for i in range(9):
        store.record_game(make_game(i, tournament_id="t2" if i % 3 == 0 else "t1",
                                    n_faults=i % 2))
    t1 = ["rr/0008/t1", "rr/0007/t1", "rr/0005/t1", "rr/0004/t1", "rr/0002/t1",
          "rr/0001/t1"]
    assert [g.game_key for g in store.latest_games("t1", 3)] == t1[:3]
    assert [g.game_key for g in store.latest_games("t1", 100)] == t1
    assert [g.game_key for g in store.latest_games("t2", 2)] == ["rr/0006/t1", "rr/0003/t1"]
    assert store.latest_games("t1", 0) == []
    # Each game read back whole, its faults included.
    assert store.latest_games("t1", 6) == [store.game("t1", key) for key in t1]


def test_latest_games_of_a_bot_match_its_exact_name_only(store: ResultsStore) -> None:
    tables = [("bot", "x", "y", "z"), ("bot@2", "x", "y", "z"), ("bot2", "x", "y", "z"),
              ("x", "y", "z", "a-bot"), ("x", "bot", "y", "bot"), ("x", "y", "z", "w")]
    for i, seats in enumerate(tables * 2):
        store.record_game(_seated(i, seats, n_faults=i % 3))
    assert [g.game_key for g in store.latest_games("t1", 10, bot="bot")] == [
        "rr/0010/t1", "rr/0006/t1", "rr/0004/t1", "rr/0000/t1"]
    assert [g.game_key for g in store.latest_games("t1", 1, bot="bot@2")] == ["rr/0007/t1"]
    assert [g.seats[0] for g in store.latest_games("t1", 10, bot="bot2")] == ["bot2"] * 2
    assert store.latest_games("t1", 10, bot="bo") == []
    assert store.latest_games("t1", 10, bot="bot%") == []
    far_apart = store.latest_games("t1", 10, bot="a-bot")
    assert far_apart == [store.game("t1", g.game_key) for g in far_apart]
    assert len(far_apart) == 2


def test_latest_games_of_an_empty_or_unknown_tournament_are_none(
        store: ResultsStore) -> None:
    assert store.latest_games("t1", 20) == []
    assert store.latest_games("t1", 20, bot="alpha") == []
    store.record_game(make_game(1))
    assert store.latest_games("unknown", 20) == []
    assert store.latest_games("t1", 20, bot="nobody") == []


def test_a_version_1_store_gets_the_seats_of_its_stored_games(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with ResultsStore(path) as s:
        s.ensure_tournament("t1", "first", CONFIG)
        s.record_game(_seated(1, ("alpha", "beta", "alpha@2", "delta")))
        s.record_game(_seated(2, ("alpha@2", "beta", "gamma", "delta")))
    conn = sqlite3.connect(path)
    with conn:  # back to what version 1 wrote
        conn.execute("DROP TABLE game_seats")
        conn.execute("DROP INDEX games_by_tournament")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.close()
    with ResultsStore(path) as s:
        assert [g.game_key for g in s.latest_games("t1", 5, bot="alpha")] == ["rr/0001/t1"]
        assert [g.game_key for g in s.latest_games("t1", 5, bot="alpha@2")] == [
            "rr/0002/t1", "rr/0001/t1"]
    plan = sqlite3.connect(path).execute(
        "EXPLAIN QUERY PLAN SELECT id FROM games WHERE tournament_id = 't1' "
        "ORDER BY id DESC LIMIT 5").fetchall()
    assert "games_by_tournament" in str(plan) and "TEMP B-TREE" not in str(plan)


def test_deleting_a_tournament_deletes_its_seats(store: ResultsStore) -> None:
    store.record_game(make_game(1))
    store.delete_tournament("t1")
    assert row_count(store.path, "game_seats") == 0


def test_find_game_by_row_id_qualified_key_and_unique_bare_key(store: ResultsStore) -> None:
    store.ensure_tournament("t2", "second", {})
    store.record_game(make_game(1))
    store.record_game(make_game(2))
    store.record_game(make_game(2, tournament_id="t2"))
    assert store.find_game("1") == make_game(1)
    assert store.find_game("3") == make_game(2, tournament_id="t2")
    assert store.find_game("t2/rr/0002/t1") == make_game(2, tournament_id="t2")
    assert store.find_game("rr/0001/t1") == make_game(1)
    assert store.find_game("nothing/here") is None
    assert store.find_game("99") is None
    with pytest.raises(StoreError, match="ambiguous"):
        store.find_game("rr/0002/t1")


def test_outcome_enums_and_fault_positions_round_trip(store: ResultsStore) -> None:
    game = make_game(1, n_faults=2)
    faults = tuple(replace(f, hand=3, decision=40 + k) for k, f in enumerate(game.faults))
    game = replace(game, faults=faults,
                   record={**game.record, "faults": [f.to_dict() for f in faults]})
    store.record_game(game)
    (back,) = store.games("t1")
    assert back == game
    assert back.termination is Termination.FORFEIT
    assert [f.kind for f in back.faults] == [FaultKind.TIMEOUT, FaultKind.CRASH]


def test_an_unknown_stored_termination_is_a_store_error(store: ResultsStore) -> None:
    store.record_game(make_game(1))
    conn = sqlite3.connect(store.path)
    conn.execute("UPDATE games SET termination = 'abandoned'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="unknown Termination 'abandoned'"):
        list(store.games("t1"))


def test_export_jsonl_writes_one_json_object_per_game(store: ResultsStore, tmp_path: Path) -> None:
    games = [make_game(i, n_faults=i % 3) for i in range(5)]
    for g in games:
        store.record_game(g)
    out = tmp_path / "export" / "games.jsonl"
    assert store.export_jsonl(out) == 5
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5
    objects = [json.loads(line) for line in lines]
    assert objects[2]["game_key"] == games[2].game_key
    assert objects[2]["record"] == games[2].record
    assert objects[2]["faults"] == [
        {"seat": f.seat, "bot": f.bot, "kind": f.kind.value, "detail": f.detail}
        for f in games[2].faults
    ]
    assert set(objects[0]) == set(GameRow.__dataclass_fields__)
    assert store.export_jsonl(out, tournament_id="other") == 0
    assert out.read_text(encoding="utf-8") == ""


# --------------------------------------------------------------------------- concurrency


def test_eight_threads_recording_200_games_store_each_exactly_once(
    store: ResultsStore, tmp_path: Path
) -> None:
    # Every thread tries every game, in its own order: 200 rows, 200 True results in total.
    games = [make_game(i, n_faults=i % 2) for i in range(200)]
    inserted: list[int] = [0] * 8
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(n: int) -> None:
        try:
            mine = games[:]
            random.Random(n).shuffle(mine)
            barrier.wait()
            inserted[n] = sum(store.record_game(g) for g in mine)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sum(inserted) == 200
    path = tmp_path / "results" / "results.sqlite"
    assert row_count(path, "games") == 200
    assert row_count(path, "faults") == 100
    assert len(store.finished_keys("t1")) == 200


def test_second_connection_reads_while_store_is_open(store: ResultsStore, tmp_path: Path) -> None:
    store.record_game(make_game(1))
    with ResultsStore(tmp_path / "results" / "results.sqlite") as reader:
        assert reader.finished_keys("t1") == {"rr/0001/t1"}
        store.record_game(make_game(2))
        assert len(list(reader.games("t1"))) == 2


CHILD = """
import itertools
import sys
from harness.referee.outcome import Fault, FaultKind, Termination
from harness.storage.results import GameRow, ResultsStore
path, n = sys.argv[1], int(sys.argv[2])
store = ResultsStore(path)
store.ensure_tournament("t1", "kill", {"n": n})
for i in itertools.count():  # until it is killed, however late the kill comes
    store.record_game(GameRow(
        "t1", f"k{i:05d}", "partnership", i, ("a", "b", "c", "d"), Termination.NORMAL, (10, 4),
        (1, 2, 1, 2), 9, "2024-01-01T00:00:00+00:00", "2024-01-01T00:00:01+00:00", 1.0,
        {"moves": list(range(i % 50)), "pad": "x" * 500},
        tuple(Fault(s, "abcd"[s], FaultKind.TIMEOUT, "late") for s in range(i % 4)),
    ))
    if i == 50:
        print("ready", flush=True)
"""


def faults_per_game(i: int) -> int:
    return i % 4


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
def test_sigkill_mid_recording_loses_nothing_committed_and_duplicates_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "out" / "results.sqlite"
    n = 4000
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(n)],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(random.uniform(0.0, 0.02))
    finally:
        child.send_signal(signal.SIGKILL)  # also if it never got ready: it never stops
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    before = conn.execute("SELECT id, game_key FROM games ORDER BY id").fetchall()
    (fault_rows,) = conn.execute("SELECT COUNT(*) FROM faults").fetchone()
    conn.close()
    r = len(before)
    print(f"child stored {r} games before SIGKILL")
    assert r > 50, "the child signals ready after its 51st game"
    total = max(n, r + 100)  # the resumed run goes on past every game the child stored
    # Games were recorded in order and atomically: a prefix, each with all its faults.
    assert [key for _, key in before] == [f"k{i:05d}" for i in range(r)]
    assert fault_rows == sum(faults_per_game(i) for i in range(r))

    with ResultsStore(path) as s:
        assert s.ensure_tournament("t1", "kill", {"n": n}) is False
        done = s.finished_keys("t1")
        assert len(done) == r
        results = []
        for i in range(total):
            g = replace(make_game(i, tournament_id="t1"), game_key=f"k{i:05d}")
            results.append(s.record_game(g))
    assert results == [False] * r + [True] * (total - r)

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT game_key) FROM games").fetchone() == (
        total,
        total,
    )
    # The first R rows are the child's, untouched, and nothing re-inserted them.
    assert conn.execute("SELECT id, game_key FROM games ORDER BY id LIMIT ?", (r,)).fetchall() == (
        before
    )
    conn.close()


def test_count_keys_counts_each_prefix_without_its_longer_neighbours(tmp_path: Path) -> None:
    with ResultsStore(tmp_path / "r.sqlite") as s:
        s.ensure_tournament("t1", "first", CONFIG)
        s.ensure_tournament("t2", "second", CONFIG)
        for key in ("rr/0001/t0", "rr/0001/t1", "rr/00010/t0", "rr/0002/t0"):
            s.record_game(dataclasses.replace(make_game(1), game_key=key))
        s.record_game(dataclasses.replace(make_game(1, "t2"), game_key="rr/0001/t2"))
        assert s.count_keys("t1", ["rr/0001/t", "rr/0002/t", "rr/0003/t"]) == {
            "rr/0001/t": 2, "rr/0002/t": 1, "rr/0003/t": 0}
