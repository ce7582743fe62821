"""The Quick start's first command: the built-in tournament measures a rating with an
interval for every sample bot, prints a brief report that fits 100 columns and ends with
where the full report is and the command that adds your own bot; that command works."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from configs import bot, toml_config

from harness.results.tables import BRIEF_WIDTH
from harness.storage.results import ResultsStore
from harness.tournament.runner import store_path

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=600, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def standings(stdout: str) -> dict[str, str]:
    """Bot name -> its standings row, from the brief report."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("#  Bot"))
    rows = {}
    for line in lines[start + 2:]:
        if not line.strip():
            break
        rows[line.split()[1]] = line
    return rows


def test_a_bot_added_with_bot_joins_the_field_under_its_own_id(tmp_path: Path) -> None:
    (tmp_path / "field.toml").write_text(
        toml_config("field", games=1, tc="5+30", rules={"target": 3}))
    done = cli("run", "field.toml", "--quiet", "--bot",
               "mybot={python} -m sample_bots.heuristic_bot --epsilon 0.3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.rstrip().splitlines()
    assert max(len(line) for line in lines) <= BRIEF_WIDTH
    assert set(standings(done.stdout)) == {"random", "heuristic", "mybot"}
    assert "Head to head" not in done.stdout and "Statistics" not in done.stdout
    assert lines[-3:] == [
        f"Full report (head to head, statistics, faults): {Path('results') / 'report.md'}",
        f"Charts and a replay of every game: {Path('results') / 'report.html'}",
        "Add your own bot to this field: euchre-harness run field.toml "
        "--bot mybot='python3 my_bot.py'"]
    with ResultsStore(store_path(tmp_path / "results")) as store:
        assert store.tournament_ids() == ["field-with-mybot"]
        assert len(list(store.games("field-with-mybot"))) == 6  # 3 pairings x 2 tables
    assert "Head to head" in (tmp_path / "results" / "report.md").read_text()
    assert (tmp_path / "results" / "report.html").stat().st_size > 0


def test_a_clean_sweep_after_a_few_games_reads_as_a_count(tmp_path: Path) -> None:
    (tmp_path / "two.toml").write_text(toml_config(
        "two", games=1, tc="5+30", rules={"form": "two-handed", "target": 3},
        bots=(bot("random", seed=3), bot("heuristic"))))
    done = cli("run", "two.toml", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = standings(done.stdout)
    # Two games, both won by heuristic (the seeded deals and random bot): the counts,
    # never a bound on the wrong side ("above -106").
    assert "won 2 of 2; too few games to rate" in rows["heuristic"], rows
    assert "lost 2 of 2; too few games to rate" in rows["random"], rows


@pytest.mark.slow
def test_the_quick_start_measures_every_sample_bot(tmp_path: Path) -> None:
    done = cli("run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.rstrip().splitlines()
    assert max(len(line) for line in lines) <= BRIEF_WIDTH
    rows = standings(done.stdout)
    assert set(rows) == {"random", "noisy-40", "noisy-15", "heuristic"}
    assert all("±" in row and "too few" not in row for row in rows.values()), rows
    assert list(rows) == ["heuristic", "noisy-15", "noisy-40", "random"]
    assert lines[-2] == f"Charts and a replay of every game: {Path('results') / 'report.html'}"
    assert lines[-1] == ("Add your own bot to this field: euchre-harness run "
                         "--bot mybot='python3 my_bot.py'")
    page = (tmp_path / "results" / "report.html").read_text()
    assert "No rated games yet" not in page
