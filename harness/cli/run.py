"""``euchre-harness run [CONFIG]``: a tournament from a TOML file (none: the sample bots).

``--bot NAME=COMMAND`` adds a local bot to the file's field (repeatable): the tournament
is then stored under its own id (``ID-with-NAME``, unless ``--id`` says otherwise), so the
field's own results stay as they are and the same command resumes it."""

from __future__ import annotations

import argparse
from typing import Any

from harness.cli import COMMANDS
from harness.cli._tournament import add_tournament_flags, load, play
from harness.cli.common import split_assignment
from harness.errors import ConfigError
from harness.tournament.config import RawConfig, slug


def register(sub: Any) -> None:
    p = sub.add_parser("run", help=COMMANDS["run"],
                       description="Run a tournament from a TOML file, or the built-in "
                                   "tournament of the sample bots, and print the standings. "
                                   "Running it again resumes it.")
    p.add_argument("config", nargs="?", help="a TOML file (see examples/tournament.toml); "
                                             "none = the built-in sample-bots tournament")
    p.add_argument("--bot", action="append", default=[], metavar="NAME=COMMAND",
                   help="add a local bot to the field (repeatable; {python} is this "
                        "interpreter); the tournament is then stored as ID-with-NAME")
    add_tournament_flags(p, "run")
    p.add_argument("--in-process", action="store_true",
                   help="play Python bots that allow it in this process, without the "
                        "referee: much faster, for experiments only (no clock, the bots' "
                        "code is trusted); stored like any run")
    p.set_defaults(handler=cmd_run)


def add_bots(raw: RawConfig, given: dict[str, str], specs: list[str]) -> None:
    """Append the ``--bot NAME=COMMAND`` bots to the document's field and, unless an id
    was given, store the tournament under ``ID-with-NAME...``."""
    if not specs:
        return
    bots = raw.data.setdefault("bot", [])
    if not isinstance(bots, list):
        raise ConfigError("bot", "must be an array of tables: write each bot as [[bot]]")
    names = []
    for spec in specs:
        name, command = split_assignment(spec, "--bot", what="NAME=COMMAND")
        if not command:
            raise ConfigError("--bot", f"{name}: the command line is empty")
        bots.append({"name": name, "command": command})
        names.append(name)
    if "id" not in given:
        base = str(raw.data.get("id") or slug(str(raw.data.get("name", ""))))
        raw.data["id"] = slug("-".join([base, "with", *names]))


def cmd_run(args: argparse.Namespace) -> int:
    return play(load(args, lambda raw, given: add_bots(raw, given, args.bot)), args)
