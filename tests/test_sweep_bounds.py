"""How a clean sweep and the anchor read in every output: the anchor shows its fixed
rating, marked, whatever its results; a bot that beat the anchor (or a measured bot) in
every game is never bounded below it, and one that always lost to it never above it.
Checked on the fit, the text and Markdown tables, summary.json, report.html, the live
standings and ctl, and through a real run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import harness_command
from test_tournament_run import small_config
from test_web_data import _row

from harness.cli.ctl import _elo
from harness.protocol import operator as op
from harness.results.elo import Result, fit
from harness.results.rating import Sweep, sweep_of
from harness.results.stats import compute_stats
from harness.results.summary import standings, summary_json
from harness.results.tables import render_standings, standings_rows
from harness.storage.results import GameRow, ResultsStore
from harness.web import write_report_html

ROOT = Path(__file__).resolve().parent.parent


def won(winner: str, loser: str, times: int) -> list[Result]:
    return [Result((winner,), (loser,), 1.0)] * times


def sweep_rows(games: int) -> list[GameRow]:
    """``heuristic`` beats ``random`` in every game (four-handed, same-bot partners)."""
    rows = []
    for i in range(games):
        seats = ("heuristic", "random") * 2 if i % 2 == 0 else ("random", "heuristic") * 2
        ranking = (1, 2, 1, 2) if i % 2 == 0 else (2, 1, 2, 1)
        rows.append(_row(f"g{i // 2}/t{i % 2}", seats, ranking, f"g{i // 2}", i % 2))
    return rows


@pytest.mark.parametrize("games", [2, 6, 40])
@pytest.mark.parametrize("anchor_rating", [0.0, 1500.0])
def test_a_bot_that_beat_the_anchor_every_game_is_bounded_above_the_anchor(
        games: int, anchor_rating: float) -> None:
    ratings = fit(won("heuristic", "random", games), anchor="random",
                  anchor_rating=anchor_rating)
    sweep = sweep_of(ratings, "heuristic")
    assert sweep is not None and sweep[0] is Sweep.ALL_WON
    assert sweep[1] is not None and sweep[1] >= anchor_rating
    # The interval's own end, when it is already above the anchor, is kept.
    assert sweep[1] == max(ratings.interval("heuristic")[0], anchor_rating)


def test_the_anchor_shows_its_fixed_rating_even_when_it_lost_every_game() -> None:
    ratings = fit(won("heuristic", "random", 2), anchor="random", anchor_rating=25.0)
    assert sweep_of(ratings, "random") is None
    rows = {r["name"]: r for r in standings_rows(ratings, {})}
    assert (rows["random"]["elo"], rows["random"]["sweep"]) == (25, None)
    for fmt in ("text", "markdown"):
        text = render_standings(ratings, {}, fmt)
        assert "+25 (anchor)" in text and "all games lost" not in text
        assert "all games won: above +25" in text


def test_a_bot_that_lost_every_game_to_the_anchor_is_bounded_below_the_anchor() -> None:
    ratings = fit(won("heuristic", "random", 2), anchor="heuristic")
    sweep = sweep_of(ratings, "random")
    assert sweep is not None and sweep[0] is Sweep.ALL_LOST
    assert sweep[1] is not None and sweep[1] <= 0.0
    assert sweep_of(ratings, "heuristic") is None


def test_without_an_anchor_two_sweeps_are_bounded_on_either_side_of_the_mean() -> None:
    ratings = fit(won("heuristic", "random", 20))
    high, low = sweep_of(ratings, "heuristic"), sweep_of(ratings, "random")
    assert high == (Sweep.ALL_WON, ratings.interval("heuristic")[0])
    assert low == (Sweep.ALL_LOST, ratings.interval("random")[1])
    assert high[1] > 0.0 > low[1] and high[1] == pytest.approx(-low[1])
    assert "(anchor)" not in render_standings(ratings, {})


@pytest.mark.parametrize("anchor", [None, "b", "c"])
def test_a_bot_that_swept_two_measured_bots_is_bounded_above_both(anchor: str | None) -> None:
    ratings = fit(won("a", "b", 2) + won("a", "c", 2) + won("b", "c", 3) + won("c", "b", 2),
                  anchor=anchor)
    sweep = sweep_of(ratings, "a")
    assert sweep is not None and sweep[0] is Sweep.ALL_WON
    # Without an anchor the two it beat sit below the mean: a bound there would read
    # backwards ("above -40" for a bot that won every game), so there is none yet.
    middle = 0.0 if anchor is None else ratings.elo[anchor]
    bound = max(ratings.interval("a")[0], ratings.elo["b"], ratings.elo["c"])
    assert sweep[1] == (bound if round(bound) >= round(middle) else None)
    assert sweep_of(ratings, "b") is None and sweep_of(ratings, "c") is None


def test_a_sweep_is_not_bounded_by_a_bot_it_never_met() -> None:
    ratings = fit(won("a", "b", 1) + won("b", "c", 6) + won("c", "b", 6) + won("c", "d", 9)
                  + won("d", "c", 1))
    sweep = sweep_of(ratings, "a")
    assert sweep is not None
    assert sweep[1] == max(ratings.interval("a")[0], ratings.elo["b"])


def test_a_bot_that_beat_the_anchor_every_game_reads_the_same_in_every_output(
        tmp_path: Path) -> None:
    rows = sweep_rows(2)
    with ResultsStore(tmp_path / "results.sqlite") as store:
        store.ensure_tournament("t", "t", {"format": "round-robin"})
        for row in rows:
            store.record_game(row)
        live = standings(store, "t", anchor="random")
        page = write_report_html(tmp_path, store, "t", anchor="random").read_text()
    ratings = fit(won("heuristic", "random", 2), anchor="random")
    bound = sweep_of(ratings, "heuristic")
    assert bound is not None and bound[1] is not None and bound[1] >= 0.0
    expected = f"all games won: above {round(bound[1]):+d}"

    data = summary_json("t", rows, fit(won("heuristic", "random", 2), anchor="random"),
                        compute_stats(rows))
    by_name = {s["name"]: s for s in data["standings"]}
    assert by_name["heuristic"]["sweep"] == "all_won" and by_name["heuristic"]["bound"] >= 0
    assert (by_name["random"]["elo"], by_name["random"]["sweep"]) == (0, None)
    players = {p["name"]: p for p in data["ratings"]["players"]}
    assert players["heuristic"]["lower"] >= 0.0 and players["random"]["sweep"] is None

    assert expected in page and "+0 (anchor)" in page and "all games lost" not in page

    wire = op.progress_to_dict(op.progress("t", "t", "running", 2, 2, live))
    shown = {r["name"]: _elo(r) for r in wire["standings"]}
    assert shown == {"heuristic": expected, "random": "+0 (anchor)"}


def test_a_run_whose_anchor_lost_every_game_reports_it_as_the_anchor(tmp_path: Path) -> None:
    """A real tournament: the anchor forfeits every game (illegal moves), heuristic wins
    them all; report.md, summary.json and report.html agree with the rule."""
    config = small_config(tmp_path, games=1, extra='anchor = "dud"')
    config.write_text(config.read_text()
                      .replace('name = "random"', 'name = "dud"')
                      .replace("sample_bots.random_bot", "sample_bots.faulty_bot --mode illegal"))
    run = harness_command("run", str(config), "--quiet")
    assert run.returncode == 0, run.stderr
    out = tmp_path / "out"
    summary = json.loads((out / "summary.json").read_text())
    rows = {s["name"]: s for s in summary["standings"]}
    assert rows["heuristic"]["sweep"] == "all_won" and rows["heuristic"]["bound"] >= 0
    assert (rows["dud"]["elo"], rows["dud"]["sweep"]) == (0, None)
    expected = f"all games won: above {rows['heuristic']['bound']:+d}"
    report = (out / "report.md").read_text()
    assert expected in report and "+0 (anchor)" in report and "all games lost" not in report
    page = (out / "report.html").read_text()
    assert expected in page and "+0 (anchor)" in page
