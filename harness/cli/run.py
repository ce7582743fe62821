"""``euchre-harness run [CONFIG]``: a tournament from a TOML file (none: the sample bots)."""

from __future__ import annotations

import argparse
from typing import Any

from harness.cli._tournament import add_tournament_flags, load, play


def register(sub: Any) -> None:
    p = sub.add_parser("run", help="run a tournament (default: the sample bots) and print the "
                                   "standings",
                       description="Run a tournament from a TOML file, or the built-in "
                                   "tournament of the sample bots, and print the standings. "
                                   "Running it again resumes it.")
    p.add_argument("config", nargs="?", help="a TOML file (see examples/tournament.toml); "
                                             "none = the built-in sample-bots tournament")
    add_tournament_flags(p, "run")
    p.add_argument("--in-process", action="store_true",
                   help="play Python bots that allow it in this process, without the "
                        "referee: much faster, for experiments only (no clock, the bots' "
                        "code is trusted); stored like any run")
    p.set_defaults(handler=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    return play(load(args), args)
