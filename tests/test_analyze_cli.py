"""``euchre-harness analyze`` on a stored run: the printed decisions, the JSON and the
per-bot table agree, ``--bot`` samples one bot's decisions over the store, and the
replay viewer shows the analysis (an evaluation bar per decision, mistakes marked in the
log, each legal action's value at the current step) in a real browser."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from browser_support import CHROMIUM
from cli_support import harness_command
from test_web_pages import Tab, browser, tab

ROOT = Path(__file__).resolve().parent.parent
__all__ = ["browser", "tab"]  # the browser fixtures, shared with test_web_pages


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = harness_command(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One short game, the same on every run: the deals come from the run's seed and the
    bots' random choices from ``EUCHRE_BOT_SEED``. (Unseeded, a game to 4 points can end
    after one hand, a loner's march, with too few decisions to analyse.)"""
    out = tmp_path_factory.mktemp("analyze") / "out"
    cli("run", "--in-process", "--quiet", "--set", "games=1", "--set", "rules.target=4",
        "--set", f"output={out}", env={"EUCHRE_BOT_SEED": "3"})
    return out


@pytest.fixture(scope="module")
def analysed(results: Path, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], Path]:
    folder = tmp_path_factory.mktemp("analysis")
    done = cli("analyze", "1", "--store", str(results / "results.sqlite"), "--rollouts", "20",
               "--json", str(folder / "a.json"), "--html", str(folder / "a.html"))
    return done, json.loads((folder / "a.json").read_text()), folder / "a.html"


def test_analyze_prints_each_decision_and_a_table_that_agree(
        analysed: tuple[subprocess.CompletedProcess[str], dict[str, Any], Path]) -> None:
    done, data, _ = analysed
    lines = [line for line in done.stdout.splitlines() if line.startswith("#")]
    decisions = data["decisions"]
    assert len(lines) == len(decisions) > 20
    assert sum(b["decisions"] for b in data["bots"]) == len(decisions)
    for bot in data["bots"]:
        mine = [d for d in decisions if d["bot"] == bot["bot"]]
        assert bot["mistakes"] == sum(d["mistake"] for d in mine)
        assert bot["bot"] in done.stdout
    for d in decisions:
        assert d["loss"] == pytest.approx(max(d["values"].values()) - d["values"][d["chosen"]],
                                          abs=2e-4)
        assert d["mistake"] == (d["loss"] > data["settings"]["threshold"])
    assert sum("MISTAKE" in line for line in lines) == sum(d["mistake"] for d in decisions)


def test_analyze_bot_samples_that_bots_decisions(results: Path, tmp_path: Path) -> None:
    cli("analyze", "--bot", "random", str(results), "--sample", "15", "--rollouts", "10",
        "--json", str(tmp_path / "r.json"))
    data = json.loads((tmp_path / "r.json").read_text())
    assert 0 < len(data["decisions"]) <= 15
    assert {d["bot"] for d in data["decisions"]} == {"random"}
    again = harness_command("analyze", "--bot", "nobody", str(results))
    assert again.returncode == 2 and "nobody" in again.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium executable")
def test_the_replay_viewer_shows_the_analysis(
        analysed: tuple[subprocess.CompletedProcess[str], dict[str, Any], Path],
        tab: Tab, tmp_path: Path) -> None:
    _, data, page_path = analysed
    page = tab.open(page_path)
    first_hand = [d for d in data["decisions"] if d["hand"] == 0]
    assert page.locator("#log .evalbar").count() == len(first_hand)
    assert page.locator("#log li.mistake").count() == sum(d["mistake"] for d in first_hand)
    # Step to each analysed decision of the first hand: the panel lists every legal
    # action with its value, the chosen one marked.
    steps = page.locator("#log li")
    for d in first_hand[:6]:
        item = steps.filter(has=page.locator(".evalbar")).nth(first_hand.index(d))
        item.click()
        rows = page.locator("#analysis tr")
        assert rows.count() == len(d["values"])
        for action, value in d["values"].items():
            row = page.locator(f'#analysis tr[data-action="{action}"]')
            assert row.locator("td.value").inner_text() == f"{value:+.2f}"
        assert page.locator("#analysis tr.chosen").get_attribute("data-action") == d["chosen"]
    page.screenshot(path=str(tmp_path / "analysis.png"), full_page=True)
    assert tab.errors == []
