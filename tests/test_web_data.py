"""The data behind the HTML pages, without a browser: the replay view follows the engine
in every form and deck, the convergence series ends at the full fit, the LLR series
ends at the SPRT's LLR, and the SVG charts are well-formed."""

from __future__ import annotations

import argparse
import itertools
import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from harness.cli import report as cli_report
from harness.errors import HarnessError
from harness.referee.outcome import Termination
from harness.results.rating import fit_ratings
from harness.results.sprt import Pentanomial, Sprt, Trinomial
from harness.rules.config import RulesConfig
from harness.rules.game import Game, play_random_game
from harness.storage.results import GameRow, ResultsStore
from harness.web import svg, write_report_html
from harness.web.data import convergence, llr_series
from harness.web.replay import VIEWER_STAMP, replay_html, replay_view

FORMS = [
    {"form": "four-handed", "deck": "24"},
    {"form": "four-handed", "deck": "25", "joker_upcard": "dealer_names"},
    {"form": "two-handed", "deck": "32"},
    {"form": "cutthroat", "deck": "25", "joker_upcard": "hearts"},
]


def random_record(rules: dict[str, Any], seed: int) -> dict[str, Any]:
    cfg = RulesConfig.from_dict(rules)
    record = play_random_game(cfg, seed, random.Random(seed)).to_record()
    record["seats"] = ["north", "east", "south", "west"][:cfg.players]
    return record


def expanded(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each step's full state, as the page's script rebuilds it from the deltas."""
    out = [steps[0]]
    for step in steps[1:]:
        out.append({**out[-1], **step})
    return out


@pytest.mark.parametrize("rules", FORMS, ids=lambda r: f"{r['form']}-{r['deck']}")
def test_replay_view_has_a_step_per_action_and_ends_at_the_recorded_score(
        rules: dict[str, Any]) -> None:
    record = random_record(rules, 11)
    view = replay_view(record)
    assert view["error"] is None
    assert len(view["hands"]) == len(record["hands"])
    for shown, recorded in zip(view["hands"], record["hands"], strict=True):
        # one step for the deal, then one per recorded action
        assert len(shown["steps"]) == 1 + len(recorded["actions"])
        assert [s["seat"] for s in shown["steps"][1:]] == [a[0] for a in recorded["actions"]]
        assert shown["upcard"] == recorded["deck"].split()[len(recorded["deck"].split())
                                                           - len(shown["kitty"])]
    assert expanded(view["hands"][-1]["steps"])[-1]["score"] == record["scores"]
    for shown in view["hands"]:  # a full state per step, once the deltas are filled in
        assert all(set(step) == set(shown["steps"][0]) for step in expanded(shown["steps"]))
    assert view["final"] == record["scores"]


@pytest.mark.parametrize("rules", FORMS, ids=lambda r: f"{r['form']}-{r['deck']}")
def test_replay_view_accounts_for_every_card_each_seat_held(rules: dict[str, Any]) -> None:
    """Each card a seat held leaves it exactly once, by a play or a discard, and the
    plays match the engine's tricks."""
    record = random_record(rules, 5)
    game = Game.from_record(record)
    view = replay_view(record)
    for shown, hand in zip(view["hands"], game.hands, strict=True):
        if hand.result is None:
            continue
        played = sorted(str(c) for t in hand.tricks for _, c in t.plays)
        discarded = sorted(str(c) for cs in hand.discards.values() for c in cs)
        gone = [(c[0], c[3]) for seat in shown["cards"] for c in seat if c[2] is not None]
        assert sorted(c for c, how in gone if how == "play") == played
        assert sorted(c for c, how in gone if how == "discard") == discarded
        if hand.dummy is not None and hand.dummy_taken:
            assert hand.maker is not None
            gained = {c[0] for c in shown["cards"][hand.maker] if c[1] > 0}
            assert {str(c) for c in hand.dummy} <= gained


def test_a_game_stopped_mid_hand_shows_the_unfinished_hand() -> None:
    """A forfeited game's record ends inside a hand: the viewer shows its steps so far."""
    record = random_record(FORMS[3], 4)
    last = record["hands"][-1]
    last["actions"] = last["actions"][:-4]
    last["result"] = None
    del record["scores"], record["outcome"]
    record.update(termination="forfeit", detail="seat 1 timed out",
                  faults=[{"seat": 1, "bot": "east", "kind": "timeout", "detail": "1.0 s"}])
    view = replay_view(record)
    assert view["error"] is None
    assert view["hands"][-1]["result"] is None
    assert len(view["hands"][-1]["steps"]) == 1 + len(last["actions"])
    assert view["faults"] == ["east (seat 1): timeout: 1.0 s"]
    assert view["termination"] == "forfeit"


def test_a_game_that_ended_before_the_first_decision_shows_the_deal() -> None:
    """After a start-up failure the record holds one dealt hand and no actions."""
    record = random_record(FORMS[0], 6)
    record["hands"] = [{**record["hands"][0], "actions": [], "result": None}]
    del record["scores"], record["outcome"]
    view = replay_view(record)
    assert view["error"] is None
    assert [len(h["steps"]) for h in view["hands"]] == [1]
    assert view["hands"][0]["result"] is None


def test_a_record_that_does_not_replay_gives_a_page_with_the_error() -> None:
    record = random_record(FORMS[0], 3)
    record["scores"] = [99, 0]
    view = replay_view(record)
    assert view["error"] is not None and "differ" in view["error"]
    assert "cannot be replayed" in replay_html(record)


def test_replay_page_escapes_names_inside_its_script() -> None:
    record = random_record(FORMS[0], 3)
    record["seats"] = ["</script><b>x", "b", "c", "d"]
    page = replay_html(record)
    assert "</script><b>" not in page
    assert page.count("</script>") == 2


def _row(key: str, seats: tuple[str, ...], ranking: tuple[int, ...], group: str,
         table: int) -> GameRow:
    sides = [[seats[0]], [seats[1]]]
    record = {"tournament": {"group": group, "table": table, "sides": sides}}
    return GameRow("t", key, "four-handed", 1, seats, Termination.NORMAL, (10, 5), ranking, 5,
                   "", "", 0.1, record)


def duplicate_rows(outcomes: list[tuple[int, int]]) -> list[GameRow]:
    """Pairs of games a vs b; ``outcomes`` gives a's place on tables 0 and 1."""
    rows = []
    for i, places in enumerate(outcomes):
        for table, a_place in enumerate(places):
            seats = ("a", "b", "a", "b") if table == 0 else ("b", "a", "b", "a")
            b_place = 3 - a_place
            ranking = ((a_place, b_place) * 2 if table == 0 else (b_place, a_place) * 2)
            rows.append(_row(f"g{i}/t{table}", seats, ranking, f"g{i}", table))
    return rows


def test_convergence_ends_at_the_fit_over_every_game() -> None:
    rows = duplicate_rows([(1, 1), (1, 2), (2, 2), (1, 1), (1, 2)] * 3)
    series = convergence(rows, points=5)
    full = fit_ratings(rows)
    assert full is not None
    for name in ("a", "b"):
        games, elo, ci95 = series[name][-1]
        assert games == len(rows)
        assert elo == pytest.approx(full.elo[name])
        assert ci95 == pytest.approx(full.ci95[name])
        assert len(series[name]) == 5
        assert [g for g, _, _ in series[name]] == sorted({g for g, _, _ in series[name]})


def test_llr_series_has_a_point_per_complete_pair_and_ends_at_the_sprt_llr() -> None:
    outcomes = [(1, 1), (1, 2), (1, 1), (2, 2), (1, 1)]
    rows = duplicate_rows(outcomes)[:-1]  # the last pair is incomplete
    test = Sprt(0, 50)
    points, counts = llr_series(rows, test, "a", "b", duplicate=True)
    assert [n for n, _ in points] == [1, 2, 3, 4]
    expected = Pentanomial.from_pair_scores([2, 1, 2, 0])
    assert counts == expected
    assert points[-1][1] == pytest.approx(test.llr(expected))


def test_llr_series_without_duplicates_has_a_point_per_game() -> None:
    rows = duplicate_rows([(1, 2), (2, 2)])
    test = Sprt(0, 50)
    points, counts = llr_series(rows, test, "a", "b", duplicate=False)
    assert [n for n, _ in points] == [1, 2, 3, 4]
    assert counts == Trinomial.from_scores([1, 0, 0, 0])
    assert points[-1][1] == pytest.approx(test.llr(counts))


def test_charts_are_well_formed_svg_with_a_mark_per_value() -> None:
    plot = ET.fromstring(svg.interval_plot([("a", 10, -50, 70), ("b<", -10, -80, 60)]))
    assert len(plot.findall(".//{http://www.w3.org/2000/svg}circle")) == 2
    heat = ET.fromstring(svg.heatmap(["a", "b"], {"a": {"b": 0.9}, "b": {"a": 0.1}},
                                     label="los"))
    assert len(heat.findall(".//{http://www.w3.org/2000/svg}rect")) == 4
    lines = ET.fromstring(svg.line_chart({"x": [(1, 2), (2, 3)]}, x_label="n", y_label="v",
                                         hlines=[(2.9, "upper")]))
    assert len(lines.findall(".//{http://www.w3.org/2000/svg}polyline")) == 1


def test_nice_ticks_cover_the_range_with_round_steps() -> None:
    ticks = svg.nice_ticks(-274, 137)
    assert ticks[0] <= -274 and ticks[-1] >= 137
    steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1
    assert all(t == int(t) for t in svg.nice_ticks(0, 3, integer=True))


def stored_games(path: Path, count: int, seats: list[str] | None = None) -> ResultsStore:
    store = ResultsStore(path)
    store.ensure_tournament("t", "t", {"format": "round-robin"})
    for i in range(count):
        record = random_record(FORMS[0], 30 + i)
        record["seats"] = seats or record["seats"]
        places = record["outcome"]["places"]
        store.record_game(GameRow("t", f"g/{i}", "four-handed", record["seed"],
                                  tuple(record["seats"]), Termination.NORMAL,
                                  tuple(record["scores"]), tuple(places), len(record["hands"]),
                                  "", "", 0.1, record))
    return store


def test_report_keeps_current_replay_pages_and_rewrites_stale_ones(tmp_path: Path) -> None:
    with stored_games(tmp_path / "results.sqlite", 2) as store:
        report = write_report_html(tmp_path, store, "t")
        pages = sorted((tmp_path / "replays").glob("*.html"))
        assert [p.name for p in pages] == ["t_g_0.html", "t_g_1.html"]
        assert 'href="replays/t_g_0.html"' in report.read_text()
        pages[0].write_text("an older viewer")
        kept = pages[1].stat().st_mtime_ns
        write_report_html(tmp_path, store, "t")
    assert VIEWER_STAMP in pages[0].read_text()
    assert pages[1].stat().st_mtime_ns == kept


def test_report_command_takes_the_newest_tournament_and_names_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with stored_games(tmp_path / "results.sqlite", 1) as store:
        store.ensure_tournament("other", "other", {"format": "round-robin"})
    args = argparse.Namespace(folder=str(tmp_path), tournament=None, anchor=None,
                              anchor_rating=0.0, output=None)
    assert cli_report.handle(args) == 0
    err = capsys.readouterr().err
    assert "'other', the newest of 2" in err and "--tournament ID for another: t" in err
    args.tournament = "missing"
    with pytest.raises(HarnessError, match="no tournament 'missing'"):
        cli_report.handle(args)
    args.tournament = "t"
    assert cli_report.handle(args) == 0


def test_tournaments_sharing_a_folder_keep_their_own_replay_pages(tmp_path: Path) -> None:
    with stored_games(tmp_path / "results.sqlite", 1) as store:
        record = dict(next(iter(store.games("t"))).record)
        record["seats"] = ["w", "x", "y", "z"]
        store.ensure_tournament("u", "u", {"format": "round-robin"})
        store.record_game(GameRow("u", "g/0", "four-handed", record["seed"],
                                  tuple(record["seats"]), Termination.NORMAL,
                                  tuple(record["scores"]), tuple(record["outcome"]["places"]),
                                  len(record["hands"]), "", "", 0.1, record))
        write_report_html(tmp_path, store, "t")
        write_report_html(tmp_path, store, "u", name="report-u.html")
    pages = sorted(p.name for p in (tmp_path / "replays").glob("*.html"))
    assert pages == ["t_g_0.html", "u_g_0.html"]
    assert page_data(tmp_path / "replays" / "u_g_0.html")["names"] == ["w", "x", "y", "z"]
    assert page_data(tmp_path / "replays" / "t_g_0.html")["names"] == [
        "north", "east", "south", "west"]
    assert (tmp_path / "report-u.html").is_file() and (tmp_path / "report.html").is_file()


def page_data(page: Path) -> Any:
    """The viewer's data a replay page carries in its ``game-data`` script element."""
    text = page.read_text()
    start = text.index('<script id="game-data" type="application/json">')
    body = text[text.index(">", start) + 1:text.index("</script>", start)]
    return json.loads(body)


def test_report_escapes_bot_names(tmp_path: Path) -> None:
    odd = '<img src=x onerror="alert(1)">'
    with stored_games(tmp_path / "results.sqlite", 2, [odd, "b", odd, "b"]) as store:
        report = write_report_html(tmp_path, store, "t").read_text()
    assert "<img" not in report
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in report


def test_a_bot_that_lost_every_game_shows_its_bound_not_a_measured_rating(
        tmp_path: Path) -> None:
    with ResultsStore(tmp_path / "results.sqlite") as store:
        store.ensure_tournament("t", "t", {"format": "round-robin"})
        for i in range(3):
            store.record_game(_row(f"g/{i}", ("a", "b", "a", "b"), (1, 2, 1, 2), f"g{i}", 0))
        report = write_report_html(tmp_path, store, "t").read_text()
        # Three games say nothing yet (the bounds would read backwards): the counts.
        assert "lost 3 of 3; too few games to rate" in report
        assert "won 3 of 3; too few games to rate" in report
        for i in range(3, 12):
            store.record_game(_row(f"g/{i}", ("a", "b", "a", "b"), (1, 2, 1, 2), f"g{i}", 0))
        report = write_report_html(tmp_path, store, "t").read_text()
    assert "all games lost: below -" in report and "all games won: above +" in report
