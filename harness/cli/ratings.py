"""``euchre-harness ratings [STORE]``: the tables again, from a results store.

It prints and writes nothing else: ``report.html`` is the ``report`` command's, and
``report.md``/``summary.json`` are written when a tournament ends. Its tables have mean 0
unless ``--anchor`` is given (a tournament's own ``anchor`` setting is not applied).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.cli import COMMANDS
from harness.cli.common import existing_store
from harness.storage.results import ResultsStore
from harness.tournament.runner import store_path


def register(sub: Any) -> None:
    default = store_path(Path("results"))
    g = sub.add_parser("ratings", help=COMMANDS["ratings"],
                       description="Recompute the standings, head-to-head and statistics "
                                   "from a results store and print them; no file is "
                                   "written (report.html is the report command's).")
    g.add_argument("store", nargs="?", default=str(default),
                   help=f"the results store (default {default})")
    g.add_argument("--tournament", help="tournament id (default: every one in the store, "
                                          "one table each)")
    g.add_argument("--anchor", help="fix this bot's rating (default: mean 0)")
    g.add_argument("--anchor-rating", type=float, default=0.0,
                   help="the anchor's rating (default 0)")
    g.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    g.add_argument("--pool", action="store_true",
                   help="one table over every tournament (their rules must match); "
                        "default: one table per tournament")
    g.set_defaults(handler=cmd_ratings)


def cmd_ratings(args: argparse.Namespace) -> int:
    from harness.results.summary import store_report

    path = existing_store(args.store)
    with ResultsStore(path) as store:
        print(store_report(store, args.tournament, anchor=args.anchor,
                           anchor_rating=args.anchor_rating, markdown=args.markdown,
                           pool=args.pool))
    return 0
