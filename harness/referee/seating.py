"""Seat assignment for a simple match between a few bots (``euchre-harness match``)."""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import ConfigError
from harness.rules.config import Form


def match_seats(form: Form, bots: Sequence[str], game_index: int) -> tuple[str, ...]:
    """Who sits where in game ``game_index`` of a match.

    * one bot: it takes every seat (self-play);
    * four-handed, two bots: partnerships, A at seats 0+2 and B at 1+3, swapped every
      other game;
    * otherwise exactly one bot per seat, rotated by one seat each game.

    Consecutive games ``2k`` and ``2k + 1`` share a seed, so with two sides every deal is
    played from both sides (duplicate).
    """
    n = form.players
    if len(bots) == 1:
        return (bots[0],) * n
    if form is Form.FOUR_HANDED and len(bots) == 2:
        a, b = (bots[0], bots[1]) if game_index % 2 == 0 else (bots[1], bots[0])
        return (a, b, a, b)
    if len(bots) != n:
        raise ConfigError("bot", f"{form.value} takes 1 or {n} bots"
                          + (" (or 2 partnerships)" if form is Form.FOUR_HANDED else "")
                          + f"; got {len(bots)}")
    shift = game_index % n
    return tuple(bots[(i - shift) % n] for i in range(n))


def match_seed(base_seed: int, game_index: int, form: Form, bots: int) -> int:
    """Games that rotate the same bots through the seats share a seed (duplicate): two
    games for two partnerships, one per seat otherwise, one for self-play."""
    cycle = 1 if bots == 1 else 2 if form is Form.FOUR_HANDED and bots == 2 else form.players
    return base_seed + game_index // cycle
