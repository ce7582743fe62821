"""Dealing: which cards each hand starts from, and who gets which.

Seeding (docs/rules.md section 7). From a game seed (any integer) the referee derives:

* the first dealer: ``derive(seed, "dealer", 0) % players``;
* the deck order of hand ``i`` (0-based, throw-ins included): take the pack in canonical
  order (:func:`~harness.rules.cards.deck_cards`) and ``r = derive(seed, "deck", i)``;
  for ``k`` from ``len(pack) - 1`` down to 1: ``r, j = divmod(r, k + 1)`` and swap the
  cards at ``k`` and ``j`` (a Fisher-Yates shuffle driven by ``r``),

where ``derive(seed, label, i)`` is the SHA-512 digest of the UTF-8 text
``f"euchre-harness/v1/{seed}/{label}/{i}"`` read as one big-endian integer. This is
portable (any language can recompute a deal) and its bias is below 2**-390. The deals
depend only on the seed, the deck and the hand number, never on the players' actions:
the same seed played again with the seats swapped gives each entrant the cards another
had.

Dealing a deck order (docs/rules.md section 3 leaves the method to the referee): the
receivers are the players clockwise from the dealer's left, then (cutthroat) the dummy.
Each receiver takes a packet from the top of the deck: 3, 2, 3, 2, ... in the first
round and 2, 3, 2, 3, ... in the second, so each ends with five. The remaining cards are
the kitty, in deck order; its first card is the upcard.
"""

from __future__ import annotations

import functools
import hashlib
import operator
from collections.abc import Sequence
from typing import Any

from harness.rules.cards import Card, deck_cards
from harness.rules.config import Form, RulesConfig


def derive(seed: int, label: str, index: int) -> int:
    digest = hashlib.sha512(f"euchre-harness/v1/{seed}/{label}/{index}".encode()).digest()
    return int.from_bytes(digest, "big")


def seeded_deck(config: RulesConfig, seed: int, hand_index: int) -> tuple[Card, ...]:
    """The deck order of hand ``hand_index`` of the game seeded with ``seed``."""
    cards = list(deck_cards(config.deck))
    r = derive(seed, "deck", hand_index)
    k = len(cards) - 1
    while k > 1:  # two steps per divmod: the same digits as divmod(r, k+1) then (r, k)
        r, x = divmod(r, (k + 1) * k)
        j, j2 = x % (k + 1), x // (k + 1)
        cards[k], cards[j] = cards[j], cards[k]
        cards[k - 1], cards[j2] = cards[j2], cards[k - 1]
        k -= 2
    if k == 1:
        j = r % 2
        cards[1], cards[j] = cards[j], cards[1]
    return tuple(cards)


def seeded_first_dealer(config: RulesConfig, seed: int) -> int:
    return derive(seed, "dealer", 0) % config.players


@functools.cache
def deal_plan(players: int, with_dummy: bool, dealer: int
              ) -> tuple[tuple[tuple[int, int, int, int], ...], int]:
    """For each seat (then the dummy), the two deck slices ``[a:b]`` and ``[c:d]`` it is
    dealt, and where the kitty starts."""
    receivers = [(dealer + 1 + i) % players for i in range(players)]
    if with_dummy:
        receivers.append(players)
    slices: dict[int, list[int]] = {r: [] for r in receivers}
    pos = 0
    for first_round in (True, False):
        for i, r in enumerate(receivers):
            size = (3 if i % 2 == 0 else 2) if first_round else (2 if i % 2 == 0 else 3)
            slices[r] += [pos, pos + size]
            pos += size
    plan = tuple((a, b, c, d) for r in sorted(slices) for a, b, c, d in [slices[r]])
    return plan, pos


@functools.cache
def _dealers(players: int, with_dummy: bool, dealer: int
             ) -> tuple[tuple[operator.itemgetter[Any], ...], int]:
    plan, rest = deal_plan(players, with_dummy, dealer)
    return tuple(operator.itemgetter(*range(a, b), *range(c, d)) for a, b, c, d in plan), rest


def deal(config: RulesConfig, dealer: int, deck: Sequence[Card]
         ) -> tuple[list[list[Card]], list[Card] | None, list[Card]]:
    """Split a deck order into (hands per seat, dummy or None, kitty) as documented above."""
    n = config.players
    with_dummy = config.form is Form.CUTTHROAT
    getters, rest = _dealers(n, with_dummy, dealer)
    piles = [list(g(deck)) for g in getters]
    return piles[:n], (piles[n] if with_dummy else None), list(deck[rest:])
