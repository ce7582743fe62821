"""report.html shows the head-to-head Elo of every pair of bots with its 95% interval, as
report.md does, and the pentanomial counts behind it. A real run of real bots."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from cli_support import harness_command
from configs import HEURISTIC, bot, toml_config

ROOT = Path(__file__).resolve().parent.parent


def test_report_html_shows_each_duels_elo_interval_and_pentanomial_counts(
        tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(toml_config(
        "t", games=3, tc="5+30", rules={"form": "two-handed", "target": 5},
        bots=(bot("noisy", f"{HEURISTIC} --epsilon 0.3"), bot("heuristic"))))
    done = harness_command("run", "t.toml", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "results"
    summary = json.loads((out / "summary.json").read_text())
    duel = summary["head_to_head"]["heuristic"]["noisy"]["duels"]
    assert duel["kind"] == "pentanomial" and sum(duel["counts"]) == 3
    page = html.unescape((out / "report.html").read_text())
    section = page[page.index("<h2>Head-to-head Elo</h2>"):]
    cell = re.search(r'<td class="duel-noisy">(.*?)<br><small class="muted">(.*?)</small>',
                     section)
    assert cell, section[:2000]
    counts = ", ".join(f"{c:g}" for c in duel["counts"])
    assert cell.group(2) == f"pairs by score 0, ½, 1, 1½, 2: {counts}"
    # The same text as report.md's head-to-head Elo table.
    assert cell.group(1) in (out / "report.md").read_text(), cell.group(1)
    assert cell.group(1).endswith("(3 pairs)")
