"""The ladder's standings table, one for both ways of reading it: ``euchre-harness ladder
CONFIG standings`` (from the store) and ``euchre-harness ctl standings`` (from a running
ladder's operator API). Both feed it the rows of ``ctl standings --json``
(:func:`harness.protocol.ladder.standing_to_dict`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tabulate import tabulate

from harness.results.rating_text import rating_text

__all__ = ["elo_text", "note", "standings_table"]

HEADERS = ("bot", "owner", "elo", "games", "note")


def elo_text(row: Mapping[str, Any]) -> str:
    """The rating column: ``+123 ± 45``, a sweep's bound, or ``-`` when unrated."""
    return rating_text(row["elo"] if row["rated"] else None, row["ci95"], sweep=row["sweep"],
                       bound=row["bound"], games=row["games"])


def note(row: Mapping[str, Any]) -> str:
    """The last column: a hosted bot's build when it is not ready (``build failed``,
    ``building``), retired, benched with the reason, or whose rating an unrated version
    shows."""
    if row.get("build") and row["build"] != "ready":
        return str(row["build"])
    if row["retired"]:
        return "retired"
    if row["benched"]:
        return f"benched: {row['benched']}"
    return f"rating of {row['inherited_from']}" if row["inherited_from"] else ""


def standings_table(rows: Iterable[Mapping[str, Any]]) -> str:
    """The standings as a text table: bot, owner, elo, games and the note."""
    return tabulate([(r["name"], r["owner"], elo_text(r), f"{r['games']:g}", note(r))
                     for r in rows], headers=HEADERS)
