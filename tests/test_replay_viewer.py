"""The replay viewer in Chromium: autoplay with a speed control, each decision's time and
the time banks, a forfeit that says who won and shows its fault once, and a log that
names the seat of a bot that partners itself. The game is a real ``match`` (a bot that
plays an illegal card at its 12th decision, against heuristic), replayed by
``replay --html``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from browser_support import chromium, needs_chromium
from cli_support import harness_command
from playwright.sync_api import Browser

ROOT = Path(__file__).resolve().parent.parent

pytestmark = needs_chromium


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = harness_command(*args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def page_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("viewer")
    done = cli("match", "--games", "1", "--bot",
               "faulty={python} -m sample_bots.faulty_bot --mode illegal --after 12",
               "--bot", "heuristic={python} -m sample_bots.heuristic_bot", cwd=folder)
    replay = done.stdout.strip().splitlines()[-1].removeprefix("replay a game: ").split()
    written = cli(*replay[1:], "--html", cwd=folder).stdout.strip()
    return folder / written


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield b


def test_a_forfeit_says_who_won_and_shows_its_fault_once(page_path: Path,
                                                         browser: Browser) -> None:
    page = browser.new_page()
    page.goto(page_path.as_uri())
    outcome = page.locator("#outcome").inner_text()
    assert outcome.startswith("Won by heuristic. Final score: "), outcome
    assert "Ended by forfeit: seat " in outcome and "(faulty) forfeits: illegal_action" in outcome
    assert outcome.count("illegal_action") == 1, outcome
    page.close()


def test_the_log_names_seats_and_shows_decision_times_and_banks(page_path: Path,
                                                                browser: Browser) -> None:
    page = browser.new_page()
    page.goto(page_path.as_uri())
    page.keyboard.press("PageDown")  # the end of the first hand, or of the game
    page.keyboard.press("ArrowLeft")
    log = page.locator("#log li").all_inner_texts()
    acted = [line for line in log[1:] if line]
    # Each bot holds two seats (it partners itself): every line names the seat.
    assert all(line.startswith(("faulty (seat ", "heuristic (seat ")) for line in acted), log
    assert all(line.endswith(" ms") or line.endswith(" s") for line in acted), log
    banks = page.locator(".seat .badge.clock").all_inner_texts()
    assert len(banks) == 4 and all(b.startswith("bank ") and b.endswith(" s") for b in banks)
    page.close()


def test_autoplay_steps_through_the_game_at_the_chosen_speed_and_pauses(
        page_path: Path, browser: Browser) -> None:
    # The page's timers run on Playwright's clock, paused: it moves only when the test
    # says (run_for), so on a loaded machine the autoplay cannot run on (to the end of
    # the game, and start again on the next click) while the test is on its way to the
    # pause button.
    start = datetime(2026, 1, 1, tzinfo=UTC)
    page = browser.new_page()
    page.clock.install(time=start)
    page.goto(page_path.as_uri())
    page.clock.pause_at(start + timedelta(days=1))  # no timer runs before play

    def position() -> int:
        return int(page.evaluate("document.body.dataset.position"))

    assert position() == 0
    assert int(page.evaluate("document.body.dataset.last")) > 10
    page.select_option("#speed", "8")
    page.click("#play")
    assert page.evaluate("document.body.dataset.playing") == "true"
    page.clock.run_for(500)  # at 8x a step every 0.1 s
    assert position() == 5
    page.click("#play")  # pause
    assert page.evaluate("document.body.dataset.playing") == "false"
    page.clock.run_for(2000)
    assert position() == 5
    page.keyboard.press("End")
    page.keyboard.press(" ")  # play from the end starts again from the beginning
    assert page.evaluate("document.body.dataset.playing") == "true" and position() == 0
    page.clock.run_for(100)
    assert position() == 1
    page.close()
