"""``euchre-harness match`` with a bot that cannot start (a typo in its module) stops at
the first failure by default, with one line naming the bot, the reason and the end of
this attempt's log, and exit status 2; with ``--max-startup-failures N`` after N games
in a row, the first failure explained when it happens. Real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import harness_command

ROOT = Path(__file__).resolve().parent.parent
TYPO = "a={python} -m sample_bots.heuristc_bot"
GOOD = "b={python} -m sample_bots.random_bot"


def _match(tmp_path: Path, *extra: str, typo: str = TYPO) -> subprocess.CompletedProcess[str]:
    return harness_command("match", "--bot", typo, "--bot", GOOD,
                           "--log-dir", str(tmp_path / "logs"),
                           "--store", str(tmp_path / "m.sqlite"), *extra)


@pytest.mark.parametrize("limit", [None, "2"])
def test_a_bot_that_never_starts_stops_the_match_with_its_reason_and_log(
        tmp_path: Path, limit: str | None) -> None:
    times = 1 if limit is None else int(limit)  # the default: stop at the first
    result = _match(tmp_path, "--games", "6",
                    *(() if limit is None else ("--max-startup-failures", limit)))
    assert result.returncode == 2, result.stderr
    games = [line for line in result.stdout.splitlines() if line.startswith("game")]
    assert len(games) == times and all("a@" in g and "startup_failure" in g for g in games)
    lines = result.stderr.strip().splitlines()
    log = tmp_path / "logs" / "a-0.log"
    said = (f"exited with code 1 before the handshake; its log {log} ends: "
            f"{sys.executable}: No module named sample_bots.heuristc_bot")
    in_a_row = "" if times == 1 else f" {times} times in a row"
    assert lines[-1] == (f"euchre-harness: error: bot 'a' failed to start{in_a_row}, so the "
                         f"match stops: {said}"), lines[-1]
    notices = [line for line in lines if line.startswith("bot 'a' did not start")]
    # With a limit above one, the first failure is explained when it happens.
    assert notices == ([] if times == 1 else
                       [f"bot 'a' did not start (it forfeits the game): {said}"]), lines


def test_without_a_limit_every_game_is_played_and_forfeited(tmp_path: Path) -> None:
    result = _match(tmp_path, "--games", "4", "--max-startup-failures", "0")
    assert result.returncode == 0, result.stderr
    games = [line for line in result.stdout.splitlines() if line.startswith("game")]
    assert len(games) == 4 and all("startup_failure" in g for g in games)
    assert "wins: a 0, b 4" in result.stdout
    assert sum("bot 'a' did not start" in line for line in result.stderr.splitlines()) == 1


def test_the_quote_is_this_attempts_end_not_an_old_runs_start(tmp_path: Path) -> None:
    """A log appended across runs: a later, different failure quotes its own last
    words (the traceback's last line), not the first lines of the file."""
    first = _match(tmp_path)
    assert "No module named sample_bots.heuristc_bot" in first.stderr
    bot = tmp_path / "crash.py"
    bot.write_text("print('loading the model')\n"
                   "import sample_bots.random_bot\n"
                   "raise RuntimeError('the model file is missing')\n")
    second = _match(tmp_path, typo=f"a={{python}} {bot}")
    last = second.stderr.strip().splitlines()[-1]
    assert last.endswith("ends: RuntimeError: the model file is missing"), last
    assert "heuristc_bot" not in last
    assert (tmp_path / "logs" / "a-0.log").read_text().count("--- start: ") == 2
