"""``euchre-harness match`` with a bot that cannot start (a typo in its module) stops
after ``--max-startup-failures`` games in a row, as ``run`` does: one line naming the
bot, the reason and the first lines of its log, and exit status 2. Real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TYPO = "a={python} -m sample_bots.heuristc_bot"
GOOD = "b={python} -m sample_bots.random_bot"


def _match(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", "match", "--bot", TYPO, "--bot", GOOD,
         "--log-dir", str(tmp_path / "logs"), *extra],
        cwd=ROOT, text=True, capture_output=True, timeout=300, check=False)


@pytest.mark.parametrize("limit", [None, "2"])
def test_a_bot_that_never_starts_stops_the_match_with_its_reason_and_log(
        tmp_path: Path, limit: str | None) -> None:
    times = 3 if limit is None else int(limit)  # 3: the default of max_startup_failures
    result = _match(tmp_path, "--games", "6",
                    *(() if limit is None else ("--max-startup-failures", limit)))
    assert result.returncode == 2, result.stderr
    games = [line for line in result.stdout.splitlines() if line.startswith("game")]
    assert len(games) == times and all("a@" in g and "startup_failure" in g for g in games)
    last = result.stderr.strip().splitlines()[-1]
    log = tmp_path / "logs" / "a-0.log"
    assert last.startswith(
        f"euchre-harness: error: bot 'a' failed to start {times} times in a row (exited "
        f"with code 1 before the handshake); the match stops; its log {log} begins: "), last
    assert "No module named sample_bots.heuristc_bot" in last


def test_without_a_limit_every_game_is_played_and_forfeited(tmp_path: Path) -> None:
    result = _match(tmp_path, "--games", "4", "--max-startup-failures", "0")
    assert result.returncode == 0, result.stderr
    games = [line for line in result.stdout.splitlines() if line.startswith("game")]
    assert len(games) == 4 and all("startup_failure" in g for g in games)
    assert "wins: a 0, b 4" in result.stdout
