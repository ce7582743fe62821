"""A ladder's start: what the running ladder counted, rebuilt from its store.

Sets left in progress by the last run (a crash, a kill) are marked cut short; the
pairing counts come from the stored sets; the ratings from every stored game (as the
running ladder counted each the moment it was stored); the quarantine's windows from
each bot's games since its last bench. Games in flight at a crash were never stored and
are not rated.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from datetime import datetime

from harness.errors import ConfigError
from harness.ladder.matchmaking import Matchmaker
from harness.ladder.quarantine import Quarantine
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import Registry
from harness.ladder.sets import SetLog
from harness.ladder.uploads import Uploads
from harness.storage.results import GameRow, ResultsStore

__all__ = ["HOUSE_OWNER", "rebuild", "refill_quarantine"]

log = logging.getLogger("euchre.ladder")

HOUSE_OWNER = "house"
"""The owner recorded for house bots in the registry."""


def rebuild(ladder_id: str, house: Iterable[str], *, registry: Registry,
            results: ResultsStore, uploads: Uploads, sets: SetLog, matchmaker: Matchmaker,
            ratings: LadderRatings, quarantine: Quarantine) -> None:
    """Prepare the store and rebuild the counts (see the module docstring)."""
    for name in house:
        try:
            registry.get(name)
        except ConfigError:
            registry.register(name, HOUSE_OWNER)  # its token is not needed
    results.ensure_tournament(ladder_id, "ladder", {"kind": "ladder"})
    swept = uploads.sweep()
    if swept:
        log.info("removed %d unfinished uploads or builds of the last run", len(swept))
    closed = sets.close_unfinished("the ladder stopped while it was played")
    if closed:
        log.info("%d deal sets left unfinished by the last run are cut short", closed)
    stored = sets.sets()
    matchmaker.add_played(SetLog.pair_counts(stored))
    matchmaker.next_index = len(stored)
    rows = list(results.games(ladder_id))
    ratings.add_games(rows)  # every stored game counts, as it did when it ended
    ratings.refresh(force=True)
    refill_quarantine(quarantine, rows)


def refill_quarantine(quarantine: Quarantine, rows: list[GameRow]) -> None:
    """Refill the quarantine's windows with each bot's games since its last bench."""
    since = {name: max((b.started_at for b in quarantine.history(name)), default=-math.inf)
             for name in {bot for row in rows for bot in row.seats}}
    for row in sorted(rows, key=lambda r: (r.finished_at, r.game_key)):
        finished = datetime.fromisoformat(row.finished_at).timestamp()
        for bot in set(row.seats):
            if finished >= since[bot]:
                quarantine.remember(bot, [f.kind.value for f in row.faults if f.bot == bot])
