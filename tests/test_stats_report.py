"""Tests of the per-bot statistics (harness/results/stats.py), the report
(harness/results/tables.py, summary.py) and the game replay (harness/results/game_text.py),
on games played by the rules engine: crafted deals with known outcomes, and random games."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.referee.match import forfeit_places
from harness.referee.outcome import Fault, FaultKind, Termination
from harness.results.elo import Ratings, Result, fit
from harness.results.game_text import render_game
from harness.results.head_to_head import head_to_head
from harness.results.rating import sweep_of
from harness.results.sprt import Pentanomial, Sprt, SprtDecision, Trinomial
from harness.results.stats import BotStats, compute_stats
from harness.results.summary import summary_json, write_outputs
from harness.results.tables import (
    render_faults,
    render_head_to_head,
    render_los,
    render_report,
    render_sprt,
    render_standings,
    render_stats,
    standings_rows,
)
from harness.rules import Action, Card, Form, Game, RulesConfig, deck_cards, parse_cards
from harness.rules.hand import deal_plan
from harness.storage.results import GameRow, ResultsStore

# --------------------------------------------------------------------------- helpers

# Dealer 0; spades are turned up (Ts). Seat 2 holds the five best trumps, so whoever
# makes spades against it takes no trick, whatever anybody plays.
STRONG_2 = ("9s Ah Ad Ac Kh", "9h Th Jh Qh 9d", "Js Jc As Ks Qs", "Td Jd Qd Kd 9c")
# The same deal with seats 1 and 2 swapped: now seat 1 holds the five best trumps.
STRONG_1 = (STRONG_2[0], STRONG_2[2], STRONG_2[1], STRONG_2[3])
UPCARD = "Ts"


def deck_for(config: RulesConfig, dealer: int, hands: Sequence[str], upcard: str) -> list[Card]:
    """The deck order that deals ``hands`` (per seat) and turns up ``upcard``; the rest
    of the kitty is filled in canonical order."""
    plan, rest = deal_plan(config.players, config.form is Form.CUTTHROAT, dealer)
    pack = deck_cards(config.deck)
    deck: list[Card | None] = [None] * len(pack)
    for (a, b, c, d), text in zip(plan, hands, strict=True):
        for pos, card in zip([*range(a, b), *range(c, d)], parse_cards(text), strict=True):
            deck[pos] = card
    up = Card.parse(upcard)
    deck[rest] = up
    spare = iter(c for c in pack if c not in deck)
    return [c if c is not None else next(spare) for c in deck]


def play_scripted(config: RulesConfig, hands: Sequence[str], script: Sequence[tuple[int, str]],
                  rng: random.Random, dealer: int = 0) -> Game:
    """Deal ``hands``, apply ``script`` (checking whose turn it is), then play random
    legal actions until the game ends."""
    deck = deck_for(config, dealer, hands, UPCARD)
    game = Game(config, 0, first_dealer=dealer, decks=lambda _i: deck)
    for seat, text in script:
        assert game.current == seat, (seat, text, game.current)
        game.apply(Action.parse(text))
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    return game


def to_row(game: Game, seats: Sequence[str], key: str = "g1", *,
           termination: Termination = Termination.NORMAL, faults: Sequence[Fault] = (),
           places: Sequence[int] | None = None, tournament_id: str = "t1") -> GameRow:
    """Wrap a game's record as the runner stores it (engine record + referee keys)."""
    if places is None:
        assert game.outcome is not None
        places = game.outcome.places
    record: dict[str, Any] = game.to_record()
    record.update({
        "game_id": key, "seats": list(seats), "termination": termination.value, "detail": "",
        "places": list(places), "winner": None, "time_control": "1+10",
        "fault_policy": "forfeit", "decision_ms": [], "started_at": 0.0,
        "faults": [f.to_dict() for f in faults],
    })
    return GameRow(
        tournament_id=tournament_id, game_key=key, form=game.config.form.value, seed=game.seed,
        seats=tuple(seats), termination=termination, scores=tuple(game.scores),
        ranking=tuple(places), hands=len(game.hands), started_at="2024-01-01T00:00:00+00:00",
        finished_at="2024-01-01T00:00:01+00:00", duration_s=1.0, record=record,
        faults=tuple(faults),
    )


def random_row(form: Form, seed: int, seats: Sequence[str], key: str) -> GameRow:
    config = RulesConfig(form=form, target=5)
    rng = random.Random(seed)
    game = Game(config, seed)
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    return to_row(game, seats, key)


def euchre_game() -> Game:
    """Seat 1 orders spades up against seat 2's five top trumps: euchred, 2 points to
    team 0, which wins (target 2) after one hand."""
    script = [(1, "order"), (0, "take"), (0, "discard Kh"), (1, "not-alone"),
              (3, "not-alone"), (2, "not-alone"), (0, "not-alone")]
    return play_scripted(RulesConfig(target=2), STRONG_2, script, random.Random(1))


def lone_defence_game() -> Game:
    """Seat 1 orders spades up; seat 2 defends alone with the top five trumps and takes
    every trick (4 points, target 4)."""
    script = [(1, "order"), (0, "take"), (0, "discard Kh"), (1, "not-alone"),
              (3, "not-alone"), (2, "alone")]
    return play_scripted(RulesConfig(target=4), STRONG_2, script, random.Random(2))


def lone_march_game() -> Game:
    """Seat 1 orders spades up and goes alone with the top five trumps: a lone march,
    4 points to team 1 (target 4)."""
    script = [(1, "order"), (0, "take"), (0, "discard Kh"), (1, "alone"),
              (2, "not-alone"), (0, "not-alone")]
    return play_scripted(RulesConfig(target=4), STRONG_1, script, random.Random(3))


def counts(stats: BotStats) -> dict[str, int]:
    data = stats.to_dict()
    return {k: v for k, v in data.items() if isinstance(v, int) and k != "faults"}


def rows_ratings(rows: Sequence[GameRow]) -> Ratings:
    results = []
    for row in rows:
        if row.termination is Termination.INTERRUPTED:
            continue
        winners = tuple(n for n, p in zip(row.seats, row.ranking, strict=True) if p == 1)
        losers = tuple(n for n, p in zip(row.seats, row.ranking, strict=True) if p != 1)
        results.append(Result(winners[:1], losers[:1], 1.0))
    return fit(results)


# --------------------------------------------------------------------------- crafted games


def test_crafted_deals_produce_the_intended_results() -> None:
    results = [g.hands[0].result for g in (euchre_game(), lone_defence_game(), lone_march_game())]
    assert [r.kind.value if r else None for r in results] == [
        "euchred", "lone_defence_march", "march"]
    assert [r.points if r else None for r in results] == [(2, 0), (4, 0), (0, 4)]


def test_euchred_maker_and_same_bot_partnership_count_once_per_team() -> None:
    stats = compute_stats([to_row(euchre_game(), ("A", "B", "A", "B"))])
    zero = {k: 0 for k in counts(BotStats("x"))}
    assert counts(stats["A"]) == zero | {
        "games": 1, "wins": 1, "hands": 1, "points": 2, "euchres_inflicted": 1}
    assert counts(stats["B"]) == zero | {
        "games": 1, "hands": 1, "makes": 1, "euchres_suffered": 1}
    assert stats["A"].points_per_hand == 2.0


def test_lone_defence_counts_for_the_lone_seat_and_its_team() -> None:
    stats = compute_stats([to_row(lone_defence_game(), ("A", "B", "C", "D"))])
    assert (stats["C"].lone_defence_attempts, stats["C"].lone_defence_successes) == (1, 1)
    assert stats["C"].alone_attempts == stats["A"].lone_defence_attempts == 0
    assert [stats[n].euchres_inflicted for n in "ABCD"] == [1, 0, 1, 0]
    assert [stats[n].euchres_suffered for n in "ABCD"] == [0, 1, 0, 0]
    assert [stats[n].points for n in "ABCD"] == [4, 0, 4, 0]
    assert [stats[n].makes for n in "ABCD"] == [0, 1, 0, 0]
    assert [stats[n].marches for n in "ABCD"] == [0, 0, 0, 0]


def test_lone_maker_march_counts_alone_success_and_march_once() -> None:
    stats = compute_stats([to_row(lone_march_game(), ("A", "B", "C", "B"))])
    b = stats["B"]
    assert (b.makes, b.makes_won, b.alone_attempts, b.alone_successes) == (1, 1, 1, 1)
    assert (b.marches, b.points, b.hands, b.wins) == (1, 4, 1, 1)
    assert stats["A"].euchres_inflicted == stats["C"].euchres_inflicted == 0
    assert stats["A"].marches == 0


def test_failed_lone_hand_is_an_attempt_without_success() -> None:
    script = [(1, "order"), (0, "take"), (0, "discard Kh"), (1, "alone"),
              (2, "not-alone"), (0, "not-alone")]
    game = play_scripted(RulesConfig(target=2), STRONG_2, script, random.Random(4))
    result = game.hands[0].result
    assert result is not None and (result.kind.value, result.maker_alone) == ("euchred", True)
    stats = compute_stats([to_row(game, ("A", "B", "A", "B"))])
    b = stats["B"]
    assert (b.alone_attempts, b.alone_successes, b.euchres_suffered, b.makes_won) == (1, 0, 1, 0)
    assert (stats["A"].lone_defence_attempts, stats["A"].euchres_inflicted) == (0, 1)


def test_copies_on_both_teams_count_team_outcomes_for_each_team() -> None:
    stats = compute_stats([to_row(euchre_game(), ("A", "A", "B", "B"))])
    # A holds seat 0 (team 0, which inflicted the euchre) and seat 1 (team 1, the maker).
    a = stats["A"]
    assert (a.hands, a.points, a.makes, a.euchres_suffered, a.euchres_inflicted) == (
        2, 2, 1, 1, 1)
    assert (stats["B"].hands, stats["B"].points, stats["B"].euchres_inflicted) == (2, 2, 1)


def test_faults_are_counted_by_kind_and_disconnects_count_as_crashes() -> None:
    faults = (Fault(1, "B", FaultKind.TIMEOUT, "slow"), Fault(1, "B", FaultKind.TIMEOUT, "slow"),
              Fault(3, "D", FaultKind.ILLEGAL_ACTION, "x"),
              Fault(0, "A", FaultKind.PROTOCOL_VIOLATION, "y"),
              Fault(2, "C", FaultKind.DISCONNECT, "gone"),
              Fault(2, "C", FaultKind.CRASH, "exit 1"),
              Fault(3, "D", FaultKind.STARTUP_FAILURE, "no handshake"))
    row = to_row(euchre_game(), ("A", "B", "C", "D"), termination=Termination.FORFEIT,
                 faults=faults)
    stats = compute_stats([row])
    assert (stats["B"].timeouts, stats["D"].illegal_actions, stats["A"].protocol_violations,
            stats["C"].crashes, stats["D"].startup_failures) == (2, 1, 1, 2, 1)
    assert stats["D"].faults == 2 and stats["B"].faults == 2
    assert [stats[n].forfeits for n in "ABCD"] == [0, 0, 0, 1]  # the last fault's seat


def test_forfeited_game_counts_wins_from_places_and_skips_the_unfinished_hand() -> None:
    config = RulesConfig()
    rng = random.Random(5)
    game = Game(config, 11)
    while len(game.hands) < 3 or len(game.hand.tricks) < 2:
        game.apply(rng.choice(game.legal_actions()))
    places, _ = forfeit_places(config, game.scores, 1)
    row = to_row(game, ("A", "B", "C", "D"), termination=Termination.FORFEIT, places=places,
                 faults=(Fault(1, "B", FaultKind.TIMEOUT, "late"),))
    stats = compute_stats([row])
    assert [stats[n].wins for n in "ABCD"] == [1, 0, 1, 0]
    assert stats["B"].forfeits == 1 and stats["B"].timeouts == 1
    finished = sum(1 for h in game.hands if h.result is not None)
    assert finished == 2
    assert all(stats[n].hands == finished for n in "ABCD")
    assert stats["A"].points + stats["B"].points == sum(game.scores)


def test_interrupted_games_are_skipped_entirely() -> None:
    row = to_row(euchre_game(), ("A", "B", "A", "B"))
    interrupted = replace(row, game_key="g2", termination=Termination.INTERRUPTED,
                          ranking=(0, 0, 0, 0), faults=(Fault(1, "B", FaultKind.TIMEOUT, "x"),))
    assert compute_stats([row, interrupted]) == compute_stats([row])
    assert head_to_head([row, interrupted]) == head_to_head([row])


@pytest.mark.parametrize("form", list(Form))
def test_random_games_stats_agree_with_the_records(form: Form) -> None:
    names = ("N", "E", "S", "W")[: form.players]
    rows = [random_row(form, seed, names, f"g{seed}") for seed in range(6)]
    stats = compute_stats(rows)
    hands = [h for r in rows for h in r.record["hands"] if h["result"] is not None]
    made = [h for h in hands if h["result"]["kind"] != "thrown_in"]
    alone = sum(1 for h in hands for _seat, text in h["actions"] if text == "alone")
    teams = 2 if form is not Form.CUTTHROAT else 3
    assert sum(s.makes for s in stats.values()) == len(made)
    assert sum(s.makes_won + s.euchres_suffered for s in stats.values()) == len(made)
    assert sum(s.alone_attempts + s.lone_defence_attempts for s in stats.values()) == alone
    assert sum(s.points for s in stats.values()) * teams == sum(
        sum(r.scores) for r in rows) * len(names)
    assert all(s.hands == len(hands) for s in stats.values())
    assert sum(s.wins for s in stats.values()) == sum(
        sum(1 for p in r.ranking if p == 1) for r in rows)


# --------------------------------------------------------------------------- head to head


def test_head_to_head_counts_partnerships_once_and_cutthroat_pairwise() -> None:
    four = to_row(euchre_game(), ("A", "B", "A", "B"))
    h = head_to_head([four])
    assert (h["A"]["B"].points, h["A"]["B"].games) == (1.0, 1)
    assert (h["B"]["A"].points, h["B"]["A"].games) == (0.0, 1)
    cut = replace(random_row(Form.CUTTHROAT, 1, ("X", "Y", "Z"), "c1"), ranking=(2, 1, 3))
    h = head_to_head([cut])
    assert h["Y"]["X"].score == h["Y"]["Z"].score == h["X"]["Z"].score == 1.0
    assert h["Z"]["X"].score == 0.0 and h["X"]["Y"].games == 1


# --------------------------------------------------------------------------- report


@pytest.fixture
def rows() -> list[GameRow]:
    out = [to_row(euchre_game(), ("alpha", "beta", "alpha", "beta"), "g0"),
           to_row(lone_march_game(), ("alpha", "beta", "alpha", "beta"), "g1")]
    out += [random_row(Form.FOUR_HANDED, s, ("alpha", "beta", "alpha", "beta")
                       if s % 2 else ("beta", "alpha", "beta", "alpha"), f"r{s}")
            for s in range(8)]
    out.append(replace(to_row(euchre_game(), ("alpha", "gamma", "alpha", "gamma"), "f0"),
                       termination=Termination.FORFEIT,
                       faults=(Fault(1, "gamma", FaultKind.TIMEOUT, "too slow"),)))
    return out


def test_standings_rows_follow_the_ratings(rows: list[GameRow]) -> None:
    ratings = rows_ratings(rows)
    stats = compute_stats(rows)
    table = standings_rows(ratings, stats)
    assert [r["name"] for r in table] == list(ratings.players)
    assert [r["rank"] for r in table] == list(range(1, len(table) + 1))
    top, second = ratings.players[:2]
    assert table[0]["elo"] == round(ratings.elo[top])
    assert table[0]["ci95"] == round(ratings.ci95[top])
    assert table[0]["games"] == stats[top].games
    assert table[0]["los_next_pct"] == round(100 * ratings.los(top, second), 1)
    assert table[-1]["los_next_pct"] is None


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_report_contains_names_numbers_and_sections(rows: list[GameRow], fmt: str) -> None:
    ratings = rows_ratings(rows)
    stats = compute_stats(rows)
    text = render_report("Spring cup", rows, ratings, stats, fmt)
    for name in ("alpha", "beta", "gamma"):
        assert name in text
    for name in ratings.players:
        if name == "gamma":  # lost its only game: a bound, not a number
            sweep = sweep_of(ratings, name)
            # One game says nothing yet: no bound, the count instead.
            assert sweep is not None and sweep[1] is None
            assert "lost 1 of 1; too few games to rate" in text
            continue
        assert f"{round(ratings.elo[name]):+d}" in text
        assert f"±{round(ratings.ci95[name])}" in text
    assert f"{stats['alpha'].points_per_hand:.3f}" in text
    assert "four-handed, 24-card deck" in text
    assert "1 forfeit" in text
    for section in ("Standings", "Head to head", "Statistics", "Faults"):
        assert section in text
    if fmt == "markdown":
        assert text.startswith("# Spring cup\n")
        assert "## Standings" in text and "|" in text
    else:
        assert text.startswith("Spring cup\n==========\n")
        assert "|" not in text and not any(ln.startswith("## ") for ln in text.splitlines())


def test_standings_without_ratings_say_so() -> None:
    assert render_standings(None, {}, "markdown") == "No rated games yet."


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="fmt"):
        render_stats({}, "html")


def test_head_to_head_table_shows_score_and_games(rows: list[GameRow]) -> None:
    h = head_to_head(rows)
    text = render_head_to_head(rows, ["alpha", "beta", "gamma"], "text")
    ab = h["alpha"]["beta"]
    assert f"{100 * ab.score:.1f}% ({ab.games})" in text
    assert "100.0% (1)" in text  # alpha against gamma: the forfeit game
    assert "0.0% (1)" in text


def test_stats_and_faults_tables_show_counts() -> None:
    stats = compute_stats([to_row(lone_march_game(), ("A", "B", "C", "B"),
                                  termination=Termination.FORFEIT,
                                  faults=(Fault(0, "A", FaultKind.ILLEGAL_ACTION, "bad"),))])
    text = render_stats(stats, "text")
    assert "1/1" in text  # B's lone march
    faults = render_faults(stats, "markdown")
    assert faults.startswith("| Bot")
    line = next(ln for ln in faults.splitlines() if ln.startswith("| A "))
    assert [c.strip() for c in line.strip("|").split("|")] == ["A", "0", "1", "0", "0", "0", "1"]
    assert render_faults(compute_stats([to_row(euchre_game(), "ABAB")]), "text") == "No faults."


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_render_sprt_shows_llr_bounds_decision_and_elo(fmt: str) -> None:
    test = Sprt(0.0, 10.0)
    counts = Pentanomial([1, 3, 10, 5, 2])
    status = test.status(counts)
    text = render_sprt(status, counts, fmt, test=test)
    assert f"{status.llr:.3f}" in text
    assert f"{status.lower:.3f}" in text and f"{status.upper:.3f}" in text
    assert f"{counts.elo():+.1f} ± {counts.elo_ci95():.1f}" in text
    assert "continue" in text and "H1: Elo 10" in text
    decided = Trinomial([0, 0, 400])
    status = test.status(decided)
    assert status.decision is SprtDecision.ACCEPT_H1
    assert "accept H1" in render_sprt(status, decided, fmt)


def test_summary_json_round_trips_and_holds_everything(rows: list[GameRow]) -> None:
    ratings = rows_ratings(rows)
    stats = compute_stats(rows)
    data = summary_json("t1", rows, ratings, stats, sprt=Sprt(0.0, 5.0),
                        sprt_counts=Trinomial([0, 0, 3]))
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["games"]["total"] == len(rows)
    assert data["games"]["by_termination"] == {"forfeit": 1, "normal": len(rows) - 1}
    assert [p["name"] for p in data["ratings"]["players"]] == list(ratings.players)
    assert data["ratings"]["los"]["alpha"]["beta"] == ratings.los("alpha", "beta")
    assert data["stats"]["alpha"]["points"] == stats["alpha"].points
    assert data["faults"] == {"gamma": {"timeout": 1}}
    duel = {"kind": "trinomial", "counts": [0.0, 0.0, 1.0], "games": 1.0, "score": 1.0,
            "elo": None, "elo_ci95": None, "los": 1.0}
    assert data["head_to_head"]["alpha"]["gamma"] == {"points": 1.0, "games": 1, "score": 1.0,
                                                      "duels": duel}
    assert data["sprt"]["decision"] == "continue" and data["sprt"]["elo"] is None
    assert summary_json("t1", [], None, {})["ratings"] is None


def test_write_outputs_writes_report_summary_and_games(rows: list[GameRow],
                                                       tmp_path: Path) -> None:
    with ResultsStore(tmp_path / "results.sqlite") as store:
        store.ensure_tournament("t1", "cup", {"form": "four-handed"})
        for row in rows:
            store.record_game(row)
        paths = write_outputs(tmp_path / "out", store, "t1", rows_ratings(rows),
                              compute_stats(rows))
    assert paths.report.read_text(encoding="utf-8").startswith("# Tournament t1\n")
    summary = json.loads(paths.summary.read_text(encoding="utf-8"))
    assert summary["stats"]["gamma"]["timeouts"] == 1
    lines = paths.games.read_text(encoding="utf-8").splitlines()
    assert [json.loads(ln)["game_key"] for ln in lines] == [r.game_key for r in rows]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "games.jsonl", "report.md", "summary.json"]


# --------------------------------------------------------------------------- replay


@pytest.mark.parametrize("form", list(Form))
def test_render_game_lists_every_trick_of_every_hand(form: Form) -> None:
    names = ("N", "E", "S", "W")[: form.players]
    row = random_row(form, 7, names, "k")
    game = Game.from_record(row.record)  # the referee's extra keys are accepted
    text = render_game(row)
    trick_lines = [ln for ln in text.splitlines() if ln.startswith("  trick ")]
    expected = [
        f"  trick {i}: led by seat {t.leader} ({names[t.leader]}): "
        + ", ".join(f"seat {s} ({names[s]}) {c}" for s, c in t.plays)
        + f" -> won by seat {t.winner} ({names[t.winner]})"
        for h in game.hands for i, t in enumerate(h.tricks, 1)
    ]
    assert trick_lines == expected
    assert sum(1 for ln in text.splitlines() if ln.startswith("Hand ")) == len(game.hands)
    for hand in game.hands:
        for s, cards in enumerate(hand.dealt):
            assert f"  seat {s} ({names[s]}): {' '.join(map(str, cards))}" in text


def test_render_game_shows_header_bidding_trump_and_result() -> None:
    row = to_row(lone_defence_game(), ("A", "B", "C", "D"), faults=(
        Fault(3, "D", FaultKind.TIMEOUT, "late reply"),), termination=Termination.FORFEIT)
    text = render_game(row)
    assert text.startswith("Game t1/g1")
    assert "Termination: forfeit" in text and "seat 3 (D): timeout: late reply" in text
    assert "upcard: Ts" in text
    bidding = ["seat 1 (B) orders it up", "seat 0 (A) takes the upcard",
               "seat 0 (A) discards Kh", "seat 1 (B) does not go alone",
               "seat 3 (D) does not go alone", "seat 2 (C) goes alone"]
    positions = [text.index(f"    {b}\n") for b in bidding]
    assert positions == sorted(positions)
    assert "trump: spades, made by seat 1 (B); alone: seat 2 (C); sitting out: seat 0 (A)" in text
    assert "result: lone defence march (makers took 0); team 0 [A & C] +4; score 4-0" in text
    assert "Final score: team 0 [A & C] 4, team 1 [B & D] 0" in text


def test_render_game_derives_results_from_the_engine_not_the_record() -> None:
    row = to_row(euchre_game(), ("A", "B", "A", "B"))
    record = json.loads(json.dumps(row.record))
    record["hands"][0]["result"] = {"kind": "march", "points": [0, 9]}
    assert render_game(replace(row, record=record)) == render_game(row)
    record["hands"][0]["actions"][0] = [1, "call h"]  # not legal in round 1
    broken = render_game(replace(row, record=record))
    assert "cannot be replayed" in broken and broken.startswith("Game t1/g1")


def test_los_matrix_table_shows_each_pair_once_each_way() -> None:
    results = [Result(("a",), ("b",), 1.0)] * 30 + [Result(("b",), ("a",), 1.0)] * 10
    ratings = fit(results)
    text = render_los(ratings, "markdown")
    lines = [ln for ln in text.splitlines() if ln.startswith("| a") or ln.startswith("| b")]
    assert len(lines) == 2
    los_ab = 100.0 * ratings.los("a", "b")
    assert los_ab > 99.0
    assert f"{los_ab:.1f}%" in lines[0] and f"{100.0 - los_ab:.1f}%" in lines[1]
    assert render_los(None) == "Not enough rated bots."


def test_a_bot_on_both_teams_is_not_credited_with_the_win() -> None:
    """Mixed partnerships of two bots put one bot on both sides (a+b against a+a): it
    wins whatever happens, so that game is no win for it; the bot on one side only is
    credited as usual."""
    row = random_row(Form.FOUR_HANDED, 3, ("a", "a", "b", "a"), "g1")
    stats = compute_stats([row])
    assert stats["a"].games == stats["b"].games == 1
    assert stats["a"].wins == 0
    assert stats["b"].wins == (1 if row.ranking[2] == 1 else 0)
