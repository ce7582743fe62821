"""The replay viewer in Chromium: autoplay with a speed control, each decision's time and
the time banks, a forfeit that says who won and shows its fault once, and a log that
names the seat of a bot that partners itself. The game is a real ``match`` (a bot that
plays an illegal card at its 12th decision, against heuristic), replayed by
``replay --html``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
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
    page = browser.new_page()
    page.goto(page_path.as_uri())
    assert page.evaluate("document.body.dataset.position") == "0"
    page.select_option("#speed", "8")
    page.click("#play")
    assert page.evaluate("document.body.dataset.playing") == "true"
    page.wait_for_function("Number(document.body.dataset.position) >= 5", timeout=60_000)
    page.click("#play")  # pause
    assert page.evaluate("document.body.dataset.playing") == "false"
    paused = page.evaluate("document.body.dataset.position")
    page.wait_for_timeout(500)  # at 8x a step is 0.1 s: a running autoplay would move on
    assert page.evaluate("document.body.dataset.position") == paused
    page.keyboard.press("End")
    page.keyboard.press(" ")  # play from the end starts again from the beginning
    page.wait_for_function("document.body.dataset.playing === 'true'")
    page.wait_for_function("Number(document.body.dataset.position) >= 1", timeout=60_000)
    page.close()
