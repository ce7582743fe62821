"""``euchre-harness replay GAME``: a stored game, hand by hand."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.cli import COMMANDS
from harness.cli.common import existing_store
from harness.errors import HarnessError
from harness.storage.results import ResultsStore
from harness.tournament.runner import store_path


def register(sub: Any) -> None:
    default = store_path(Path("results"))
    p = sub.add_parser("replay", help=COMMANDS["replay"],
                       description="Show a stored game hand by hand. A game is named by "
                                   "TOURNAMENT/KEY (e.g. sample-bots/rr/0000/000/t0), by its "
                                   "key alone when only one tournament has it, or by row id.")
    p.add_argument("game", help="TOURNAMENT/KEY, a game key (e.g. rr/0000/000/t0), or a row id")
    p.add_argument("--store", default=str(default),
                   help=f"the results store (default {default})")
    p.add_argument("--html", metavar="FILE", nargs="?", const="",
                   help="write the game's replay viewer (an HTML page) instead of printing "
                        "it: to FILE, or without one to replays/TOURNAMENT_KEY.html beside "
                        "the store (where report.html links it)")
    p.set_defaults(handler=cmd_replay)


def cmd_replay(args: argparse.Namespace) -> int:
    from harness.results.game_text import render_game

    path = existing_store(args.store)
    with ResultsStore(path) as store:
        row = store.find_game(args.game)
    if row is None:
        raise HarnessError(f"no game {args.game!r} in {path}")
    if args.html is not None:
        from harness.web import replay_html
        from harness.web.report import REPLAY_DIR, replay_file_base

        ref = f"{row.tournament_id}/{row.game_key}"
        target = (Path(args.html) if args.html
                  else path.parent / REPLAY_DIR / f"{replay_file_base(ref)}.html")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(replay_html(dict(row.record)), encoding="utf-8")
        print(target)
        return 0
    print(render_game(row))
    return 0
