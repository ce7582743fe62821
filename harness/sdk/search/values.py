"""What a card is worth keeping: the card values of the heuristic player.

The heuristic sample bot (``sample_bots/heuristic_bot.py``) bids, discards and throws by
these values, and the search's rollout policy (:mod:`harness.sdk.search.rollout`) plays by
the same ones, so a rollout plays the way that bot would.
"""

from __future__ import annotations

from harness.rules.cards import TRUMP_POWER, Card, Rank, Suit

__all__ = ["TRUMP_VALUE", "card_value"]

TRUMP_VALUE = {100: 3.5, 99: 3.0, 98: 2.5, 14: 2.0, 13: 1.6, 12: 1.4, 10: 1.2, 9: 1.0, 8: 0.9,
               7: 0.8}
"""A trump's value by its trump power (the Joker, the right and left bowers, then A...7)."""


def card_value(card: Card, trump: Suit | None) -> float:
    """How much a card is worth keeping if ``trump`` were trump."""
    if trump is not None:
        p = TRUMP_POWER[trump][card.id]
        if p:
            return TRUMP_VALUE[p]
    if card.rank is Rank.ACE:
        return 0.8
    return (int(card.rank) - 6) / 20.0
