"""Every page fits a 390 px wide phone screen without scrolling sideways: report.html,
a replay page, and the live pages of ``serve`` (index and a tournament's page), in
Chromium through Playwright, from a real run and a real ``serve``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from browser_support import chromium, needs_chromium
from cli_support import harness_command
from configs import HEURISTIC, RANDOM, bot, toml_config
from playwright.sync_api import Browser, Page, ViewportSize
from serve_support import config, serve, stub, watch_until
from waiting import WAIT_S

from harness.protocol import operator as op
from harness.web.replay import VIEWER_FILES

ROOT = Path(__file__).resolve().parent.parent
PHONE: ViewportSize = {"width": 390, "height": 844}

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield b


def overflow(page: Page) -> int:
    """How far the page scrolls sideways (0: it fits)."""
    return int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


def test_report_and_replay_pages_fit_a_phone(tmp_path: Path, browser: Browser) -> None:
    (tmp_path / "t.toml").write_text(toml_config(
        "phone", games=1, tc="5+30", rules={"target": 3},
        bots=(bot("random-with-a-long-name", RANDOM),
              bot("heuristic-with-a-long-name", HEURISTIC),
              bot("noisy-heuristic-bot", f"{HEURISTIC} --epsilon 0.3"))))
    done = harness_command("run", "t.toml", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "results"
    page = browser.new_page(viewport=PHONE)
    page.goto((out / "report.html").as_uri())
    assert page.locator("#standings").count() == 1
    page.screenshot(path=str(tmp_path / "report-phone.png"), full_page=True)
    assert overflow(page) <= 0
    replay = sorted((out / "replays").glob("*.html"))[0]
    # The pages of the folder share one style sheet and one script, written once.
    text = replay.read_text()
    assert '<script src="viewer.js"></script>' in text and 'href="viewer.css"' in text
    assert VIEWER_FILES["viewer.js"] not in text and "<style>" not in text
    for name, content in VIEWER_FILES.items():
        assert (out / "replays" / name).read_text() == content
    page.goto(replay.as_uri())
    page.wait_for_selector("#score div")  # drawn by the shared script
    page.keyboard.press("End")
    page.screenshot(path=str(tmp_path / "replay-phone.png"), full_page=True)
    assert overflow(page) <= 0
    # The score and the action log are on the page, not cut off to the right.
    for selector in ("#score", "#log"):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"], selector
    page.close()


def test_the_live_pages_fit_a_phone(tmp_path: Path, browser: Browser) -> None:
    with serve(tmp_path / "out", "--http-port", "0") as server, \
            grpc.insecure_channel(server.address) as channel:
        stub(channel).StartTournament(op.StartTournamentRequest(
            config_toml=config("phone", games=1)))
        watch_until(stub(channel), "phone")
        url = server.said("live page on ").rstrip("/")
        page = browser.new_page(viewport=PHONE)
        page.goto(url + "/")
        page.wait_for_selector('#tournaments tr[data-tournament="phone"]',
                               timeout=WAIT_S * 1000)
        assert overflow(page) <= 0
        page.goto(url + "/t/phone")
        page.wait_for_selector("#status.finished", timeout=WAIT_S * 1000)
        page.locator("#recent tbody tr").first.wait_for(timeout=WAIT_S * 1000)
        page.screenshot(path=str(tmp_path / "live-phone.png"), full_page=True)
        assert overflow(page) <= 0
        page.close()
        # The report's replay pages get their shared script from the live server too.
        page = browser.new_page(viewport=PHONE)
        page.goto(url + "/t/phone/report.html")
        page.locator("#games a").first.click()
        page.wait_for_selector("#score div", timeout=WAIT_S * 1000)
        assert overflow(page) <= 0
        page.close()
