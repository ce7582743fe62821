"""``match`` stores its games (results/matches.sqlite by default) and prints the command
that replays one; that command works, as text and as the replay viewer."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from cli_support import harness_command

from harness.storage.results import ResultsStore

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return harness_command(*args, cwd=cwd)


def test_match_games_are_stored_and_the_printed_replay_command_works(tmp_path: Path) -> None:
    done = cli("match", "--form", "two-handed", "--target", "3", "--games", "2",
               "--bot", "r={python} -m sample_bots.random_bot",
               "--bot", "h={python} -m sample_bots.heuristic_bot", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("replay a game: euchre-harness replay match-"), last
    command = shlex.split(last.removeprefix("replay a game: "))
    store = tmp_path / "results" / "matches.sqlite"
    assert command[-2:] == ["--store", str(Path("results") / "matches.sqlite")]
    with ResultsStore(store) as s:
        (match_id,) = s.tournament_ids()
        rows = list(s.games(match_id))
    assert [r.game_key for r in rows] == ["g1", "g2"]
    assert [r.seats for r in rows] == [("r", "h"), ("h", "r")]
    shown = cli(*command[1:], cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"Game {match_id}/g1") and "Hand 1" in shown.stdout
    page = cli(*command[1:], "--html", cwd=tmp_path)
    assert page.returncode == 0, page.stderr
    written = tmp_path / page.stdout.strip()
    assert written == tmp_path / "results" / "replays" / f"{match_id}_g1.html"
    assert "<html" in written.read_text()
