"""What each seat may know, card by card, from a game record alone (docs/rules.md section 7).

The information audits (the referee's messages in ``test_information_hiding.py``, the
research environments' observations in ``test_envs.py`` and ``test_openspiel_game.py``)
check every card a seat is shown
against :func:`knowledge`, computed independently of the code that builds observations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.envs.encoding import Arrays
from harness.rules.actions import Action, ActionKind
from harness.rules.cards import ALL_CARDS, Card, parse_cards
from harness.rules.config import JokerUpcard, RulesConfig
from harness.rules.hand import Hand, Phase

NEVER = 1 << 30


@dataclasses.dataclass(frozen=True, slots=True)
class HandKnowledge:
    """When each seat may first know each card, in one hand of a game record."""

    start: int  # the game clock (actions applied in the game) when the hand was dealt
    length: int  # actions in the hand
    dealer: int
    upcard: Card
    dealt: tuple[tuple[Card, ...], ...]
    learned: tuple[dict[Card, int], ...]  # per seat: card -> after how many actions
    where: dict[Card, str]  # where each card lies, for reports
    blind: bool  # the dealer names trump on a turned-up Joker without seeing the hand
    discards: int
    sitting_out: tuple[int, ...]
    dummy_taken: bool | None  # None: no dummy (not cutthroat, or a throw-in)

    def known(self, seat: int, card: Card, clock: int) -> bool:
        k = min(clock - self.start, self.length)
        return k >= 0 and self.learned[seat].get(card, NEVER) <= k


def knowledge(record: Mapping[str, Any]) -> list[HandKnowledge]:
    """Replay the record's hands and note when each seat may first know each card."""
    config = RulesConfig.from_dict(record["rules"])
    n = config.players
    out: list[HandKnowledge] = []
    clock = 0
    for h in record["hands"]:
        hand = Hand(config, h["dealer"], parse_cards(h["deck"]))
        blind = hand.upcard.is_joker and config.joker_upcard is JokerUpcard.DEALER_NAMES
        where = {c: "the kitty under the upcard" for c in hand.kitty[1:]}
        where.update({c: "the dummy" for c in hand.dummy or ()})
        for s in range(n):
            where.update({c: f"seat {s}'s hand" for c in hand.dealt[s]})
        where[hand.upcard] = "the upcard"
        learned: list[dict[Card, int]] = []
        for s in range(n):
            own = {} if blind and s == hand.dealer else dict.fromkeys(hand.dealt[s], 0)
            own[hand.upcard] = 0
            learned.append(own)
        discards = 0
        actions = h["actions"]
        for k, (seat, text) in enumerate(actions, 1):
            phase = hand.phase
            action = Action.parse(text)
            hand.apply(action)  # raises if the record does not replay
            if phase is Phase.NAME_TRUMP:  # the blind dealer now picks up the hand
                for c in hand.dealt[seat]:
                    learned[seat].setdefault(c, k)
            if action.kind is ActionKind.PLAY:
                assert action.card is not None
                for s in range(n):
                    learned[s].setdefault(action.card, k)
            elif action.kind is ActionKind.DISCARD:
                assert action.card is not None
                learned[seat].setdefault(action.card, k)
                discards += 1
            if hand.dummy_taken:
                assert hand.maker is not None and hand.dummy is not None
                for c in hand.dummy:
                    learned[hand.maker].setdefault(c, k)
        dummy_taken = hand.dummy_taken if hand.dummy is not None and hand.maker is not None \
            else None
        out.append(HandKnowledge(clock, len(actions), hand.dealer, hand.upcard, hand.dealt,
                                 tuple(learned), where, blind, discards,
                                 tuple(hand.sitting_out), dummy_taken))
        clock += len(actions)
    return out


def cards_shown(arrays: Arrays) -> dict[str, set[Card]]:
    """Every card each field of a research environment's dict observation names
    (``harness.envs.encoding``)."""
    out: dict[str, set[Card]] = {}
    for name in ("hand", "upcard", "discards", "dummy"):
        out[name] = {ALL_CARDS[i] for i in np.flatnonzero(arrays[name])}
    out["tricks"] = {ALL_CARDS[i] for i in np.flatnonzero(arrays["tricks"].sum(axis=(0, 1)))}
    return out
