"""The ``report`` command: write ``report.html`` (and a replay page per game) from a
results folder.

    euchre-harness report [FOLDER] [--tournament ID] [--anchor BOT]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.store import ResultsStore
from harness.tournament.runner import store_path


def register(sub: Any) -> None:
    """Add the ``report`` sub-command to ``sub`` (an argparse sub-parsers object)."""
    p = sub.add_parser("report", help="write report.html and a replay page per game from a "
                                      "results folder")
    p.add_argument("folder", nargs="?", default="results",
                   help="a results folder, as written by run or sprt (default: results)")
    p.add_argument("--tournament", help="tournament id (needed if the store holds several)")
    p.add_argument("--anchor", help="fix this bot's rating (default: mean 0)")
    p.add_argument("--anchor-rating", type=float, default=0.0)
    p.add_argument("--output", help="where to write report.html (default: the folder)")
    p.set_defaults(handler=handle)


def _tournament(store: ResultsStore, wanted: str | None) -> str:
    ids = store.tournament_ids()
    if wanted is not None:
        if wanted not in ids:
            raise HarnessError(f"no tournament {wanted!r} in {store.path}; it has: "
                               f"{', '.join(ids) or 'none'}")
        return wanted
    if len(ids) != 1:
        raise HarnessError(f"{store.path} holds {len(ids)} tournaments; choose one with "
                           f"--tournament ({', '.join(ids) or 'none'})")
    return ids[0]


def handle(args: argparse.Namespace) -> int:
    from harness.web import write_report_html

    folder = Path(args.folder)
    path = store_path(folder)
    if not path.is_file() or path.stat().st_size == 0:
        raise HarnessError(f"no results store at {path}")
    with ResultsStore(path) as store:
        tid = _tournament(store, args.tournament)
        out = write_report_html(Path(args.output or folder), store, tid, anchor=args.anchor,
                                anchor_rating=args.anchor_rating)
    print(out, file=sys.stdout)
    return 0
