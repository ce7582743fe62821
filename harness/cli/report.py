"""The ``report`` command: write ``report.html`` (and a replay page per game) from a
results folder.

    euchre-harness report [FOLDER] [--tournament ID] [--anchor BOT]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from harness.cli import COMMANDS
from harness.errors import HarnessError
from harness.storage.results import ResultsStore
from harness.tournament.runner import store_path


def register(sub: Any) -> None:
    """Add the ``report`` sub-command to ``sub`` (an argparse sub-parsers object)."""
    p = sub.add_parser("report", help=COMMANDS["report"],
                       description="Write report.html (standings, charts, head-to-head, "
                                   "statistics, faults) and a replay page per game, from a "
                                   "results folder written by run, sprt or serve.")
    p.add_argument("folder", nargs="?", default="results",
                   help="a results folder, as written by run or sprt (default: results)")
    p.add_argument("--tournament",
                   help="tournament id (default: the newest tournament in the store)")
    p.add_argument("--anchor", help="fix this bot's rating (default: the anchor in the "
                                    "folder's summary.json of that tournament, else mean 0)")
    p.add_argument("--anchor-rating", type=float, default=0.0,
                   help="the anchor's rating (default 0)")
    p.add_argument("--output", help="where to write report.html (default: the folder)")
    p.set_defaults(handler=handle)


def _tournament(store: ResultsStore, wanted: str | None) -> str:
    """``wanted``, or else the newest tournament of the store (named on stderr when there
    are several, with how to choose another)."""
    ids = store.tournament_ids()
    if wanted is not None:
        if wanted not in ids:
            raise HarnessError(f"no tournament {wanted!r} in {store.path}; it has: "
                               f"{', '.join(ids) or 'none'}")
        return wanted
    if not ids:
        raise HarnessError(f"{store.path} holds no tournament yet")
    if len(ids) > 1:
        print(f"report of {ids[-1]!r}, the newest of {len(ids)} tournaments in {store.path} "
              f"(--tournament ID for another: {', '.join(ids[:-1])})", file=sys.stderr)
    return ids[-1]


def _summary_anchor(folder: Path, tournament_id: str) -> tuple[str | None, float]:
    """The anchor and its rating that the run wrote into ``folder/summary.json`` for this
    tournament (the store does not keep them), so that a regenerated page reads as
    report.md does; ``(None, 0.0)`` if there is none."""
    try:
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        ratings = summary["ratings"] if summary["tournament_id"] == tournament_id else {}
        anchor = ratings.get("anchor")
        rating = next(float(p["elo"]) for p in ratings["players"] if p["name"] == anchor)
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None, 0.0
    return (str(anchor), rating) if anchor else (None, 0.0)


def handle(args: argparse.Namespace) -> int:
    from harness.web import write_report_html

    folder = Path(args.folder)
    path = store_path(folder)
    if not path.is_file() or path.stat().st_size == 0:
        raise HarnessError(f"no results store at {path}")
    with ResultsStore(path) as store:
        tid = _tournament(store, args.tournament)
        anchor, rating = ((args.anchor, args.anchor_rating) if args.anchor
                          else _summary_anchor(folder, tid))
        out = write_report_html(Path(args.output or folder), store, tid, anchor=anchor,
                                anchor_rating=rating)
    print(out, file=sys.stdout)
    return 0
