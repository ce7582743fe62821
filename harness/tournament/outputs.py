"""A tournament's output files and report, from its configuration (the results
themselves are computed by :mod:`harness.results`)."""

from __future__ import annotations

from pathlib import Path

from harness.results.sprt import Sprt
from harness.results.summary import SprtSetup, report_tournament
from harness.storage.results import ResultsStore
from harness.tournament.config import TournamentConfig
from harness.tournament.runner import store_path
from harness.web import write_report_html

__all__ = ["sprt_setup", "tournament_report"]


def sprt_setup(config: TournamentConfig) -> SprtSetup | None:
    """The SPRT an ``sprt`` tournament runs; None for other formats."""
    s = config.sprt
    if config.format != "sprt" or s is None:
        return None
    return SprtSetup(Sprt(s.elo0, s.elo1, s.alpha, s.beta), s.candidate, s.baseline,
                     config.duplicate)


def tournament_report(config: TournamentConfig, *, markdown: bool = False,
                      brief: bool = False) -> str:
    """Write report.md, summary.json, games.jsonl and report.html (with a replay page per
    game) for a tournament; return the report as text (or Markdown; with ``brief``, the
    standings and a few key figures, 100 columns wide at most)."""
    output = Path(config.output)
    with ResultsStore(store_path(output)) as store:
        text = report_tournament(store, config.id, output, title=config.name,
                                 anchor=config.anchor, anchor_rating=config.anchor_rating,
                                 sprt=sprt_setup(config), markdown=markdown,
                                 brief=brief)
        write_report_html(output, store, config.id, anchor=config.anchor,
                          anchor_rating=config.anchor_rating)
    return text
