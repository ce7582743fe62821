"""Tests of what the results package adds to the report and summary.json: head-to-head
Elo from duplicate pairs, clean sweeps marked as bounds, one table per tournament (pooling
only on request and only under the same rules), the rating history, and the published
JSON Schemas of summary.json and a games.jsonl line."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from harness.errors import HarnessError
from harness.referee.outcome import Fault, FaultKind, GameResult, Termination
from harness.results.elo import Result, fit
from harness.results.head_to_head import duel_counts, pair_counts
from harness.results.rating import Sweep, fit_ratings, rating_history, sweep_of
from harness.results.rows import StoredGame, rated_games, to_row
from harness.results.sprt import Sprt
from harness.results.stats import compute_stats
from harness.results.summary import (
    SprtSetup,
    report_tournament,
    store_report,
    summary_json,
    write_outputs,
)
from harness.results.tables import render_report, render_standings, standings_rows
from harness.rules import Form, Game, RulesConfig
from harness.storage.results import GameRow, ResultsStore
from harness.tournament.config import load_config
from harness.tournament.outputs import tournament_report
from harness.tournament.runner import TournamentRunner

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"


def played(tournament_id: str, key: str, seats: Sequence[str], seed: int, *, group: str,
           table: int, rules: RulesConfig, faults: Sequence[Fault] = ()) -> GameRow:
    """A game played to the end by random legal moves, stored as the runner stores it."""
    rng = random.Random(seed * 7 + table)
    game = Game(rules, seed)
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    assert game.outcome is not None
    record: dict[str, Any] = game.to_record()
    termination = Termination.FORFEIT if faults else Termination.NORMAL
    record.update({"game_id": key, "seats": list(seats), "termination": termination.value,
                   "detail": "", "places": list(game.outcome.places),
                   "winner": game.outcome.winner, "time_control": "1+10",
                   "fault_policy": "forfeit", "decision_ms": [], "started_at": 1.7e9,
                   "faults": [f.to_dict() for f in faults]})
    result = GameResult(key, tuple(seats), termination, tuple(game.scores),
                        game.outcome.places, game.outcome.winner, len(game.hands),
                        tuple(faults), record, 0.5)
    teams = 2 if rules.form is not Form.CUTTHROAT else 3
    sides = tuple((seats[t],) for t in range(teams))
    return to_row(tournament_id, StoredGame(key, tuple(seats), seed, group, table, sides), result)


def duplicate_round_robin(tournament_id: str, bots: Sequence[str], rounds: int,
                          rules: RulesConfig | None = None) -> list[GameRow]:
    """Every pair of bots plays ``rounds`` duplicate pairs (four- or two-handed)."""
    rules = rules or RulesConfig(target=5)
    rows = []
    pairs = [(a, b) for i, a in enumerate(bots) for b in bots[i + 1:]]
    for r in range(rounds):
        for p, (a, b) in enumerate(pairs):
            group = f"rr/{r:04d}/{p:03d}"
            base = (a, b) * (rules.players // 2)
            for table, seats in enumerate((base, base[1:] + base[:1])):
                rows.append(played(tournament_id, f"{group}/t{table}", seats, 100 + r,
                                   group=group, table=table, rules=rules))
    return rows


def stored(tmp_path: Path, rows_by_tournament: dict[str, list[GameRow]]) -> ResultsStore:
    store = ResultsStore(tmp_path / "results.sqlite")
    for tid, rows in rows_by_tournament.items():
        store.ensure_tournament(tid, tid, {"id": tid})
        for row in rows:
            store.record_game(row)
    return store


# --------------------------------------------------------------------------- item 17


def test_round_robin_report_shows_pentanomial_head_to_head_elo_with_interval() -> None:
    rows = duplicate_round_robin("t1", ("ann", "bob", "cat"), rounds=6)
    counts = pair_counts("ann", "bob", rated_games(rows))
    assert counts.n == 6
    text = render_report("cup", rows, fit_ratings(rows), compute_stats(rows), "text")
    section = text[text.index("Head-to-head Elo"):text.index("Statistics")]
    ann = next(ln for ln in section.splitlines() if ln.startswith("ann "))
    assert f"{counts.elo():+.0f} ± {counts.elo_ci95():.0f} (6 pairs)" in ann
    duels = duel_counts(rows)
    assert duels["ann"]["bob"] == counts
    assert duels["bob"]["ann"].counts == tuple(reversed(counts.counts))


def test_head_to_head_elo_of_games_without_duplicate_pairs_is_per_game() -> None:
    rows = [r for r in duplicate_round_robin("t1", ("ann", "bob"), rounds=4)
            if r.game_key.endswith("t0")]
    (cell,) = duel_counts(rows)["ann"].values()
    assert type(cell).__name__ == "Trinomial" and cell.n == 4
    assert "(4 games)" in render_report("cup", rows, fit_ratings(rows), compute_stats(rows))


# --------------------------------------------------------------------------- item 18


def test_a_bot_that_lost_or_won_every_game_shows_a_bound_not_a_number() -> None:
    ratings = fit([Result(("a",), ("b",), 1.0)] * 6 + [Result(("b",), ("a",), 1.0)] * 4
                  + [Result(("a",), ("loser",), 1.0)] * 3
                  + [Result(("winner",), ("b",), 1.0)] * 2)
    lost, won = sweep_of(ratings, "loser"), sweep_of(ratings, "winner")
    # The end of the 95% interval, but never past a measured bot it lost to (or beat);
    # a bound on the wrong side of the mean says nothing yet: none, and the count shown.
    below = min(ratings.interval("loser")[1], ratings.elo["a"])
    above = max(ratings.interval("winner")[0], ratings.elo["b"])
    assert lost == (Sweep.ALL_LOST, below if round(below) <= 0 else None)
    assert won == (Sweep.ALL_WON, above if round(above) >= 0 else None)
    assert sweep_of(ratings, "a") is None
    rows = {r["name"]: r for r in standings_rows(ratings, {})}
    assert (rows["loser"]["elo"], rows["loser"]["ci95"], rows["loser"]["sweep"]) == (
        None, None, "all_lost")
    assert lost is not None and won is not None
    assert rows["loser"]["bound"] == (None if lost[1] is None else round(lost[1]))
    assert rows["a"]["sweep"] is None and rows["a"]["elo"] == round(ratings.elo["a"])
    for fmt in ("text", "markdown"):
        text = render_standings(ratings, {}, fmt)
        assert (f"all games lost: below {round(lost[1]):+d}" if lost[1] is not None
                else "lost 3 of 3; too few games to rate") in text
        assert (f"all games won: above {round(won[1]):+d}" if won[1] is not None
                else "won 2 of 2; too few games to rate") in text
        assert f"{round(ratings.elo['loser']):+d}" not in text


def test_summary_json_gives_only_the_supported_bound_of_a_sweep() -> None:
    rows = duplicate_round_robin("t1", ("ann", "bob"), rounds=3)
    lost = played("t1", "x/t0", ("ann", "zed", "ann", "zed"), 9, group="x", table=0,
                  rules=RulesConfig(target=5))
    rows.append(replace(lost, ranking=(1, 2, 1, 2)))
    ratings = fit_ratings(rows)
    assert ratings is not None
    data = summary_json("t1", rows, ratings, compute_stats(rows))
    zed = next(p for p in data["ratings"]["players"] if p["name"] == "zed")
    assert (zed["elo"], zed["ci95"], zed["lower"], zed["sweep"]) == (None, None, None, "all_lost")
    assert zed["upper"] == (sweep_of(ratings, "zed") or (None, None))[1]
    standing = next(s for s in data["standings"] if s["name"] == "zed")
    assert (standing["elo"], standing["sweep"]) == (None, "all_lost")


# --------------------------------------------------------------------------- item 19


def test_ratings_show_one_table_per_tournament_by_default(tmp_path: Path) -> None:
    four = duplicate_round_robin("four", ("ann", "bob"), rounds=2)
    two = duplicate_round_robin("two", ("ann", "bob"), rounds=2,
                                rules=RulesConfig(form=Form.TWO_HANDED, target=5))
    with stored(tmp_path, {"four": four, "two": two}) as store:
        text = store_report(store, None)
        assert text.count("Standings") == 2
        assert text.startswith("four\n====") and "\ntwo\n===" in text
        with pytest.raises(HarnessError, match=r"different rules.*four.*two"):
            store_report(store, None, pool=True)
        assert store_report(store, "two").count("Standings") == 1


def test_pooling_tournaments_under_the_same_rules_gives_one_table(tmp_path: Path) -> None:
    first = duplicate_round_robin("first", ("ann", "bob"), rounds=2)
    second = duplicate_round_robin("second", ("ann", "cat"), rounds=2)
    with stored(tmp_path, {"first": first, "second": second}) as store:
        text = store_report(store, None, pool=True)
    assert text.count("Standings") == 1 and text.startswith("first, second\n")
    assert "cat" in text and "bob" in text


def test_an_anchor_fixes_the_tables_of_the_tournaments_it_played_in(tmp_path: Path) -> None:
    first = duplicate_round_robin("first", ("ann", "bob"), rounds=2)
    second = duplicate_round_robin("second", ("ann", "cat"), rounds=2)
    with stored(tmp_path, {"first": first, "second": second}) as store:
        text = store_report(store, None, anchor="cat", anchor_rating=1500.0)
        with pytest.raises(HarnessError, match="--anchor: unknown player 'nobody'"):
            store_report(store, None, anchor="nobody")
    second_table = text[text.index("\nsecond\n"):]
    assert "+1500" in second_table and "+1500" not in text[:text.index("\nsecond\n")]


# --------------------------------------------------------------------------- history


def test_rating_history_fits_the_games_so_far_at_even_checkpoints() -> None:
    rows = duplicate_round_robin("t1", ("ann", "bob", "cat"), rounds=4)  # 24 games
    history = rating_history(rows, points=6)
    assert [h["games"] for h in history] == [4, 8, 12, 16, 20, 24]
    final = fit_ratings(rows)
    assert final is not None
    last = {p["name"]: p for p in history[-1]["players"]}
    for name in final.players:
        assert last[name]["elo"] == pytest.approx(final.elo[name])
        assert last[name]["lower"] == pytest.approx(final.interval(name)[0])
    assert rating_history(rows[:3], points=20)[0]["games"] == 1
    assert rating_history([]) == []


# --------------------------------------------------------------------------- schemas


def validator(name: str) -> jsonschema.Draft202012Validator:
    schemas = {p.name: json.loads(p.read_text(encoding="utf-8"))
               for p in SCHEMAS.glob("*.schema.json")}
    registry: Registry[Any] = Registry().with_resources(
        (file, Resource.from_contents(schema)) for file, schema in schemas.items())
    jsonschema.Draft202012Validator.check_schema(schemas[name])
    return jsonschema.Draft202012Validator(schemas[name], registry=registry)


def test_written_summary_and_games_match_the_published_schemas(tmp_path: Path) -> None:
    rows = duplicate_round_robin("t1", ("ann", "bob", "cat"), rounds=2)
    rows.append(played("t1", "f/t0", ("ann", "zed", "ann", "zed"), 5, group="f", table=0,
                       rules=RulesConfig(target=5),
                       faults=(Fault(1, "zed", FaultKind.TIMEOUT, "late", 2, 17),)))
    with stored(tmp_path, {"t1": rows}) as store:
        paths = write_outputs(tmp_path / "out", store, "t1", fit_ratings(rows))
        sprt = SprtSetup(Sprt(0.0, 10.0), "ann", "bob", duplicate=True)
        report_tournament(store, "t1", tmp_path / "sprt", title="sprt", sprt=sprt)
    summary = json.loads(paths.summary.read_text(encoding="utf-8"))
    validator("summary.schema.json").validate(summary)
    assert summary["faults"] == {"zed": {"timeout": 1}}
    assert summary["rating_history"][-1]["games"] == len(rows)
    sprt_summary = json.loads((tmp_path / "sprt" / "summary.json").read_text(encoding="utf-8"))
    validator("summary.schema.json").validate(sprt_summary)
    assert sprt_summary["sprt"]["kind"] == "pentanomial"
    validator("summary.schema.json").validate(summary_json("empty", [], None, {}))
    games = validator("game.schema.json")
    lines = paths.games.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(rows)
    for line in lines:
        games.validate(json.loads(line))


def test_the_schemas_reject_what_they_do_not_describe() -> None:
    with pytest.raises(jsonschema.ValidationError):
        validator("summary.schema.json").validate(summary_json("t", [], None, {}) | {"x": 1})
    rows = duplicate_round_robin("t1", ("ann", "bob"), rounds=1)
    line = json.loads(json.dumps({**rows[0].__dict__, "termination": "abandoned"},
                                 default=str))
    with pytest.raises(jsonschema.ValidationError):
        validator("game.schema.json").validate(line)


def test_a_real_tournaments_outputs_match_the_published_schemas(tmp_path: Path) -> None:
    """Bots in their own processes over gRPC play a small two-handed round robin; the
    files ``run`` writes validate against the schemas."""
    config = load_config(None, {"output": str(tmp_path), "games": "1", "concurrency": "2",
                                "rules.form": "two-handed", "rules.target": "3"})
    state = asyncio.run(TournamentRunner(config).run())
    assert state.finished
    tournament_report(config)
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    validator("summary.schema.json").validate(summary)
    # the built-in field of four bots: 6 pairings x 1 deal set x 2 tables
    assert summary["games"]["total"] == state.done == state.total == 12
    games = validator("game.schema.json")
    lines = (tmp_path / "games.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 12
    for line in lines:
        game = json.loads(line)
        games.validate(game)
        assert game["record"]["tournament"]["id"] == config.id


def test_head_to_head_elo_of_a_clean_sweep_says_so_instead_of_infinity() -> None:
    from harness.results.sprt import Pentanomial, Trinomial
    from harness.results.tables import _duel_cell

    assert _duel_cell(Pentanomial.from_pair_scores([2.0, 2.0, 2.0])) == "all pairs won (3 pairs)"
    assert _duel_cell(Trinomial.from_scores([0.0])) == "all games lost (1 game)"
    assert "inf" not in _duel_cell(Pentanomial.from_pair_scores([2.0, 1.5]))


def test_live_standings_follow_the_anchor_and_mark_sweeps_as_the_reports_do(
        tmp_path: Path) -> None:
    from test_web_data import _row

    from harness.cli.ctl import _elo
    from harness.protocol import operator as op
    from harness.results.summary import standings

    with ResultsStore(tmp_path / "results.sqlite") as store:
        store.ensure_tournament("t", "t", {"format": "round-robin"})
        for i in range(3):  # a beats b every time; b and c draw at places 1/2 alternately
            store.record_game(_row(f"ab/{i}", ("a", "b", "a", "b"), (1, 2, 1, 2), f"ab{i}", 0))
            store.record_game(_row(f"bc/{i}", ("b", "c", "b", "c"),
                                   (1, 2, 1, 2) if i % 2 else (2, 1, 2, 1), f"bc{i}", 0))
        rows = {r["name"]: r for r in standings(store, "t", anchor="b", anchor_rating=100.0)}
    assert rows["b"]["elo"] == pytest.approx(100.0)
    assert rows["a"]["sweep"] == "all_won" and rows["a"]["bound"] is not None
    assert rows["b"]["sweep"] is None and rows["c"]["sweep"] is None
    wire = op.progress_to_dict(op.progress("t", "t", "running", 6, 6, rows.values()))
    by_name = {r["name"]: r for r in wire["standings"]}
    assert _elo(by_name["a"]).startswith("all games won: above ")
    assert _elo(by_name["b"]) == "+100 (anchor)"
    assert _elo({"sweep": None, "elo": -0.3}) == "+0"  # never "-0"
