"""A rating as every table prints it, without the fit: ``+123 ± 45``, a clean sweep's
bound, the anchor's mark. Light on purpose (no numpy), so that a short command that only
prints ratings a referee sent (``ctl``) does not load the fit."""

from __future__ import annotations

import enum

__all__ = ["ANCHOR_MARK", "Sweep", "rating_text"]


class Sweep(enum.Enum):
    """A bot whose every rated game went one way."""

    ALL_LOST = "all_lost"
    ALL_WON = "all_won"

    def describe(self, bound: float | None, games: float | None = None) -> str:
        """``"all games lost: below -312"`` or ``"all games won: above +280"``; with no
        bound (too few games for one that says anything), ``"won 2 of 2; too few games
        to rate"`` (``"all games won; too few to rate"`` without ``games``)."""
        won = self is Sweep.ALL_WON
        if bound is None:
            if games is None:
                return f"all games {'won' if won else 'lost'}; too few to rate"
            n = f"{games:g}"
            return f"{'won' if won else 'lost'} {n} of {n}; too few games to rate"
        if not won:
            return f"all games lost: below {_signed(bound)}"
        return f"all games won: above {_signed(bound)}"


ANCHOR_MARK = "(anchor)"
"""Follows the anchor's rating in every table: its rating is fixed, not measured."""


def _signed(x: float) -> str:
    return f"{round(x) + 0:+d}"


def rating_text(elo: float | None, ci95: float | None = None, *, sweep: str | None = None,
                bound: float | None = None, anchor: bool = False,
                games: float | None = None) -> str:
    """A rating as every table prints it: ``+123`` (with ``ci95``, ``+123 ± 45``); for a
    bot that won or lost every game, the bound its results support (``sweep`` and
    ``bound``, see :class:`Sweep`; no bound: ``games`` won or lost, too few to rate);
    for the anchor, its fixed rating and ``(anchor)``; ``-`` when not rated. Never
    ``-0``."""
    if sweep:
        return Sweep(sweep).describe(bound, games)
    if elo is None:
        return "-"
    if anchor:
        return f"{_signed(elo)} {ANCHOR_MARK}"
    return _signed(elo) if ci95 is None else f"{_signed(elo)} ± {ci95:.0f}"
