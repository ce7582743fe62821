"""``euchre-harness sprt [CONFIG]``: a head-to-head SPRT between two bots."""

from __future__ import annotations

import argparse
from typing import Any

from harness.cli import COMMANDS
from harness.cli._tournament import add_tournament_flags, load, play
from harness.errors import HarnessError
from harness.tournament.config import RawConfig


def register(sub: Any) -> None:
    p = sub.add_parser("sprt", help=COMMANDS["sprt"],
                       description="A sequential probability ratio test between a candidate "
                                   "and a baseline on duplicate pairs; it stops as soon as it "
                                   "can decide. The flags override the file's [sprt] table "
                                   "only when given.")
    p.add_argument("config", nargs="?", help="a TOML file with the bots, and optionally an "
                                             "[sprt] table (default: the sample bots)")
    add_tournament_flags(p, "sprt")
    p.set_defaults(handler=cmd_sprt)


def _as_sprt(raw: RawConfig, given: dict[str, str]) -> None:
    """Make the document an SPRT and, unless given, name it after its two bots."""
    raw.data["format"] = "sprt"
    table = raw.data.get("sprt")
    pair = (table.get("candidate"), table.get("baseline")) if isinstance(table, dict) \
        else (None, None)
    if not all(isinstance(name, str) and name for name in pair):
        raise HarnessError("sprt needs a candidate and a baseline: give --candidate and "
                           "--baseline, or an [sprt] table in the file")
    candidate, baseline = pair
    if "id" not in given:
        raw.data["id"] = f"sprt-{candidate}-vs-{baseline}"
    if "name" not in given:
        raw.data["name"] = f"SPRT {candidate} vs {baseline}"


def cmd_sprt(args: argparse.Namespace) -> int:
    return play(load(args, _as_sprt), args)
