"""The report and the replay viewer in a real browser (Playwright driving Chromium).

A small real tournament (three sample bots, real processes over gRPC) and a short SPRT
give the results; ``euchre-harness report`` writes the pages. The tests check that the
report's numbers equal ``summary.json``, that the charts are drawn, that every game row
links to a replay that ends at the stored score, that the viewer steps through a whole
game in every form and deck (keyboard and mouse), and that the browser console shows no
errors. Screenshots go to each test's temporary folder.

Playwright's own browser download is not used: the system's ``chromium`` is (set
``CHROMIUM`` to another executable to override).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import CHROMIUM, CHROMIUM_ARGS, needs_chromium
from cli_support import harness_command
from configs import bot, toml_config
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright
from test_web_data import FORMS, random_record

from harness.web import replay_html

ROOT = Path(__file__).resolve().parent.parent
pytestmark = needs_chromium


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = harness_command(*args)
    assert done.returncode == 0, done.stderr
    return done


def tournament_file(folder: Path) -> Path:
    path = folder / "t.toml"
    path.write_text(toml_config(
        "web", games=1, concurrency=1, tc="5+60", rules={"form": "four-handed"},
        bots=(bot("random"), bot("heuristic"),
              bot("faulty", "{python} -m sample_bots.faulty_bot --mode illegal --after 25"))))
    return path


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A round robin of three bots (6 games), one of which plays an illegal card once it
    has made 25 decisions (so its games end by forfeit), with report.html written by the
    CLI."""
    folder = tmp_path_factory.mktemp("web")
    out = folder / "out"
    cli("run", str(tournament_file(folder)), "--output", str(out), "--quiet")
    cli("report", str(out))
    return out


@pytest.fixture(scope="module")
def sprt_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("web-sprt")
    out = folder / "out"
    cli("sprt", str(tournament_file(folder)), "--candidate", "heuristic", "--baseline",
        "random", "--elo0", "0", "--elo1", "300", "--max-pairs", "4", "--output", str(out),
        "--quiet")
    cli("report", str(out))
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Tab:
    """A page that records console errors and uncaught exceptions."""

    def __init__(self, browser: Browser) -> None:
        self.page: Page = browser.new_page(viewport={"width": 1200, "height": 900})
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))

    def _console(self, msg: ConsoleMessage) -> None:
        if msg.type in ("error", "warning"):
            self.errors.append(f"{msg.type}: {msg.text}")

    def open(self, path: Path) -> Page:
        self.page.goto(path.as_uri())
        return self.page


@pytest.fixture
def tab(browser: Browser) -> Iterator[Tab]:
    t = Tab(browser)
    yield t
    t.page.close()


def number(text: str) -> float:
    return float(text.strip().replace("±", "").replace("%", "").replace("+", ""))


def cell(page: Page, table: str, bot: str, field: str) -> str:
    return page.locator(f'#{table} tr[data-bot="{bot}"] td[data-field="{field}"]').inner_text()


def test_report_numbers_equal_summary_json(results: Path, tab: Tab, tmp_path: Path) -> None:
    summary = json.loads((results / "summary.json").read_text())
    page = tab.open(results / "report.html")
    assert page.locator("#standings tbody tr").count() == len(summary["standings"]) == 3
    for row in summary["standings"]:
        name = row["name"]
        fields = ["rank", "games", "score_pct"]
        if row["sweep"] is None:
            fields += ["elo", "ci95"]
        elif row["bound"] is None:  # a sweep of too few games to bound the rating
            verb = "lost" if row["sweep"] == "all_lost" else "won"
            games = row["games"]
            assert cell(page, "standings", name, "elo") == \
                f"{verb} {games} of {games}; too few games to rate"
            assert cell(page, "standings", name, "ci95") == "-"
        else:  # won or lost every game: the supported bound, not a number that looks measured
            word = "lost: below" if row["sweep"] == "all_lost" else "won: above"
            assert cell(page, "standings", name, "elo") == \
                f"all games {word} {row['bound']:+d}"
            assert cell(page, "standings", name, "ci95") == "-"
        for field in fields:
            assert number(cell(page, "standings", name, field)) == row[field], (name, field)
        los = cell(page, "standings", name, "los_next_pct")
        assert (los == "") if row["los_next_pct"] is None else number(los) == row["los_next_pct"]
    for name, s in summary["stats"].items():
        for field in ("games", "wins", "hands", "makes", "marches", "euchres_inflicted"):
            assert number(cell(page, "stats", name, field)) == s[field], (name, field)
        assert number(cell(page, "stats", name, "points_per_hand")) == pytest.approx(
            s["points_per_hand"], abs=5.01e-4)  # half the last digit shown, and float slack
        assert cell(page, "stats", name, "alone") == f"{s['alone_successes']}/" \
                                                     f"{s['alone_attempts']}"
        made = cell(page, "stats", name, "make_pct")
        if s["makes"]:
            assert number(made) == pytest.approx(100 * s["make_rate"], abs=0.0501)
            assert number(cell(page, "stats", name, "euchred_pct")) == pytest.approx(
                100 * s["euchres_suffered"] / s["makes"], abs=0.0501)
    for a, row in summary["head_to_head"].items():
        for b, c in row.items():
            text = cell(page, "head-to-head", a, f"h2h-{b}")
            assert text == f"{100 * c['score']:.1f}% ({c['games']})"
    total = summary["games"]["total"]
    assert f"Games: {total}" in page.locator("#game-count").inner_text()
    assert page.locator("#games tbody tr").count() == total == 6
    faults = summary["faults"]["faulty"]
    assert faults["illegal_action"] >= 1
    for kind, count in faults.items():
        assert number(cell(page, "faults", "faulty", kind)) == count
    assert number(cell(page, "faults", "faulty", "forfeits")) == summary["stats"]["faulty"][
        "forfeits"] >= 1
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert tab.errors == []


def test_report_charts_are_drawn(results: Path, tab: Tab, tmp_path: Path) -> None:
    summary = json.loads((results / "summary.json").read_text())
    players = len(summary["ratings"]["players"])
    measured = [p for p in summary["ratings"]["players"] if p["elo"] is not None]
    series: dict[str, int] = {}  # the convergence points of each bot with a measured rating
    for point in summary["rating_history"]:
        for p in point["players"]:
            if p["elo"] is not None:
                series[p["name"]] = series.get(p["name"], 0) + 1
    page = tab.open(results / "report.html")
    for chart in ("interval-plot", "los-heatmap", "convergence"):
        box = page.locator(f"#{chart} svg").bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 40, chart
    assert page.locator("#interval-plot svg circle").count() == len(measured)
    assert page.locator("#los-heatmap svg rect").count() == players ** 2
    lines = page.locator("#convergence svg polyline")
    assert lines.count() == len(series)
    for i in range(len(series)):
        name = lines.nth(i).locator("xpath=..").get_attribute("data-name") or ""
        assert len((lines.nth(i).get_attribute("points") or "").split()) == series[name]
    # hovering a mark shows its title: the interval plot's carries the bot's Elo
    titles = page.locator("#interval-plot svg title").all_text_contents()
    for row in summary["standings"]:
        if row["sweep"] is None:
            assert any(t.startswith(f"{row['name']}: {row['elo']:+d}") for t in titles)
    page.screenshot(path=str(tmp_path / "charts.png"), full_page=True)
    assert tab.errors == []


def test_sprt_report_draws_the_llr_against_its_bounds(sprt_results: Path, tab: Tab,
                                                      tmp_path: Path) -> None:
    sprt = json.loads((sprt_results / "summary.json").read_text())["sprt"]
    page = tab.open(sprt_results / "report.html")
    assert page.locator('#sprt td[data-field="LLR"]').inner_text() == f"{sprt['llr']:.3f}"
    assert page.locator('#sprt td[data-field="bounds"]').inner_text() == (
        f"{sprt['lower']:.3f}, {sprt['upper']:.3f}")
    points = (page.locator("#llr svg polyline").get_attribute("points") or "").split()
    pairs = sum(sprt["counts"])
    assert len(points) == pairs + 1 >= 2  # the origin, then one point per pair
    labels = page.locator("#llr svg text").all_text_contents()
    assert "accept H1" in labels and "accept H0" in labels
    page.screenshot(path=str(tmp_path / "sprt.png"), full_page=True)
    assert tab.errors == []


def step_to_the_end(page: Page) -> int:
    """Press the right arrow until the last step; return the number of presses."""
    last = int(page.locator("body").get_attribute("data-last") or "0")
    for _ in range(last):
        page.keyboard.press("ArrowRight")
    assert page.locator("body").get_attribute("data-position") == str(last)
    assert page.locator("#next").is_disabled()
    page.keyboard.press("ArrowRight")  # nothing further
    assert page.locator("body").get_attribute("data-position") == str(last)
    return last


def test_each_game_row_links_to_a_replay_that_ends_at_the_stored_score(
        results: Path, tab: Tab) -> None:
    records = {(g["tournament_id"], g["game_key"]): g
               for g in map(json.loads, (results / "games.jsonl").read_text().splitlines())}
    page = tab.open(results / "report.html")
    rows = page.locator("#games tbody tr")
    refs = [rows.nth(i).get_attribute("data-game") or "" for i in range(rows.count())]
    assert len(refs) == len(records)
    for i, ref in enumerate(refs):
        page = tab.open(results / "report.html")
        page.locator("#games tbody tr").nth(i).locator("a", has_text="replay").click()
        page.wait_for_selector("#score")
        tournament, key = ref.split("/", 1)
        stored = records[(tournament, key)]
        page.keyboard.press("End")
        assert page.locator("#score").get_attribute("data-score") == "-".join(
            map(str, stored["scores"]))
        assert key in page.locator("h1").inner_text()
    assert tab.errors == []


def test_replay_command_writes_the_viewer_page(results: Path, tmp_path: Path) -> None:
    key = json.loads((results / "games.jsonl").read_text().splitlines()[0])["game_key"]
    out = tmp_path / "game.html"
    cli("replay", key, "--store", str(results / "results.sqlite"), "--html", str(out))
    text = out.read_text()
    assert 'id="game-data"' in text and key in text
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")


def deck_size(record: dict[str, Any]) -> int:
    return len(record["hands"][0]["deck"].split())


@pytest.mark.parametrize("rules", FORMS, ids=lambda r: f"{r['form']}-{r['deck']}")
def test_viewer_steps_through_a_whole_game_to_the_recorded_score(
        rules: dict[str, Any], tab: Tab, tmp_path: Path) -> None:
    # A game to 5 points: several hands, each step of them pressed through, at half the
    # key presses of a game to 10.
    record = random_record({**rules, "target": 5}, 21)
    assert len(record["hands"]) > 1
    path = tmp_path / "game.html"
    path.write_text(replay_html(record), encoding="utf-8")
    page = tab.open(path)
    # Step 0 shows every card of the deck face up: the hands, the kitty (the upcard once)
    # and, in cutthroat, the dummy; with the 25-card deck that includes the Joker.
    assert page.locator("#table .card").count() == deck_size(record)
    assert page.locator("#table .card.joker").count() == (1 if rules["deck"] == "25" else 0)
    assert page.locator("#table .dummy").count() == (1 if rules["form"] == "cutthroat" else 0)
    steps = sum(1 + len(h["actions"]) for h in record["hands"])
    assert step_to_the_end(page) == steps - 1
    assert page.locator("#score").get_attribute("data-score") == "-".join(
        map(str, record["scores"]))
    page.screenshot(path=str(tmp_path / "viewer-end.png"), full_page=True)
    assert tab.errors == []


def test_viewer_steps_back_and_by_hand_with_keyboard_and_mouse(tab: Tab,
                                                               tmp_path: Path) -> None:
    record = random_record(FORMS[0], 8)
    path = tmp_path / "game.html"
    path.write_text(replay_html(record), encoding="utf-8")
    page = tab.open(path)
    body = page.locator("body")

    def position() -> int:
        return int(body.get_attribute("data-position") or "-1")

    first_hand = 1 + len(record["hands"][0]["actions"])
    page.keyboard.press("PageDown")
    assert position() == first_hand
    assert page.locator("#position").inner_text().startswith("hand 2/")
    page.click("#next")
    page.click("#next")
    assert position() == first_hand + 2
    page.click("#prev")
    assert position() == first_hand + 1
    page.keyboard.press("ArrowLeft")
    assert position() == first_hand
    page.keyboard.press("PageUp")
    assert position() == 0
    assert page.locator("#prev").is_disabled()
    page.locator("#log li").nth(5).click()  # a later step of the hand, by the mouse
    assert position() == 5
    assert page.locator("#log li.current").inner_text() == page.locator(
        "#log li").nth(5).inner_text()
    page.click("#next-hand")
    assert position() == first_hand
    page.keyboard.press("End")
    score = page.locator("#score").get_attribute("data-score")
    assert score == "-".join(map(str, record["scores"]))
    page.keyboard.press("Home")
    assert position() == 0
    assert page.locator("#score").get_attribute("data-score") == "-".join(
        "0" for _ in record["scores"])
    page.screenshot(path=str(tmp_path / "viewer.png"))
    assert tab.errors == []
