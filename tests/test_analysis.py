"""Decision analysis (``harness.analysis``): it finds the best action where the best is
known, a deliberately weakened bot is charged more mistakes than the heuristic bot, and
an analysis is the same for the same seed."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from harness.analysis import Analysis, analyze_position, analyze_record, summarize
from harness.referee.inprocess import InProcessArena
from harness.rules import Action, Card, Game, RulesConfig, deck_cards, parse_cards
from harness.rules import actions as A
from harness.rules.dealing import deal_plan
from sample_bots.heuristic_bot import HeuristicBot


def deck_for(config: RulesConfig, dealer: int, hands: Mapping[int, str],
             upcard: str) -> tuple[Card, ...]:
    """A deck order that deals ``hands`` (seat -> cards) and turns up ``upcard``; every
    other card where it falls."""
    plan, rest = deal_plan(config.players, False, dealer)
    deck: list[Card | None] = [None] * config.deck.size
    for seat, text in hands.items():
        a, b, c, d = plan[seat]
        for slot, card in zip([*range(a, b), *range(c, d)], parse_cards(text), strict=True):
            deck[slot] = card
    deck[rest] = Card.parse(upcard)
    placed = {c for c in deck if c is not None}
    spare = iter(c for c in deck_cards(config.deck) if c not in placed)
    return tuple(c if c is not None else next(spare) for c in deck)


def position(options: Mapping[str, Any], hands: Mapping[int, str], upcard: str,
             actions: Sequence[str]) -> Game:
    config = RulesConfig.from_dict(dict(options))
    deck = deck_for(config, 0, hands, upcard)
    game = Game(config, 0, first_dealer=0, decks=lambda i: deck)
    for text in actions:
        game.apply(Action.parse(text))
    return game


FOUR = {"form": "four-handed", "dealer_must_take": True, "loner_lead": "left_of_dealer",
        "lone_defender": False}
# Seat 1 (left of the dealer) orders hearts up holding the five best hearts.
TOP_FIVE = {1: "Jh Jd Ah Kh Qh"}


def test_going_alone_with_the_five_best_trumps_is_found_best() -> None:
    game = position(FOUR, TOP_FIVE, "9h", ["order", "discard " + str(_dealers_first(FOUR))])
    assert game.current == 1 and game.legal_actions() == (A.GO_ALONE, A.NOT_ALONE)
    found = analyze_position(game, A.NOT_ALONE, Analysis(rollouts=40, seed=1))
    assert found is not None
    assert found.best is A.GO_ALONE
    # Alone the hand is a sure march (4 points); with a partner, a sure 2.
    assert found.values[A.GO_ALONE] == pytest.approx(4.0)
    assert found.values[A.NOT_ALONE] == pytest.approx(2.0)
    assert found.loss == pytest.approx(2.0) and found.mistake
    assert found.phase == "going alone"


def _dealers_first(options: Mapping[str, Any]) -> Card:
    config = RulesConfig.from_dict(dict(options))
    deck = deck_for(config, 0, TOP_FIVE, "9h")
    return Game(config, 0, first_dealer=0, decks=lambda i: deck).hand.hands[0][0]


def test_the_lead_that_keeps_the_march_is_found() -> None:
    # Seat 1 goes alone in hearts and draws trumps; at trick 4 it holds Ah and As, and
    # the one trump it has not seen (Kh) may sit with the dealer, who may have no spade.
    # Leading Ah draws it and marches in every world (4 points); leading As first lets
    # such a dealer ruff (1 point).
    hands = {0: "Kh Th 9c Tc Kc", 1: "Jh Jd Ah As Ac", 2: "Qh Ks Qs 9s Ts",
             3: "9d Td Qd Kd Ad"}
    game = position(FOUR, hands, "9h", [
        "order", "discard 9c", "alone",
        "play Jh", "play Qh", "play 9h",
        "play Jd", "play Ks", "play Th",
        "play Ac", "play Qs", "play Tc"])
    assert game.current == 1 and game.hand.tricks_won[1] == 3
    found = analyze_position(game, A.play(Card.parse("As")), Analysis(rollouts=400, seed=2))
    assert found is not None
    assert found.best is A.play(Card.parse("Ah"))
    assert found.values[found.best] == pytest.approx(4.0)
    assert found.loss > 0.1 and found.mistake is (found.loss > Analysis().threshold)
    assert found.phase == "lead"


# --------------------------------------------------------------------------- whole games


def play_games(seeds: Sequence[int]) -> list[dict[str, Any]]:
    arena = InProcessArena({"heuristic": HeuristicBot,
                            "weak": lambda: HeuristicBot(epsilon=1.0, seed=7)})
    config = RulesConfig.from_dict({"form": "four-handed", "target": 5})

    async def main() -> list[dict[str, Any]]:
        out = []
        for i, seed in enumerate(seeds):
            seats = ["heuristic", "weak"] * 2 if i % 2 == 0 else ["weak", "heuristic"] * 2
            out.append((await arena.play(f"g{seed}", config, seed, seats)).record)
        return out
    return asyncio.run(main())


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return play_games([1])


def test_a_weakened_bot_makes_more_mistakes_than_the_heuristic(
        records: list[dict[str, Any]]) -> None:
    analysis = Analysis(rollouts=40, seed=0)
    decisions = [d for r in records for d in analyze_record(r, analysis)]
    by_bot = {s.bot: s for s in summarize(decisions)}
    weak, good = by_bot["weak"].total, by_bot["heuristic"].total
    assert weak.decisions > 15 and good.decisions > 15
    assert weak.mistakes_per_100 > good.mistakes_per_100
    assert weak.average_loss > good.average_loss
    assert sum(t.decisions for t in by_bot["weak"].phases.values()) == weak.decisions


def test_an_analysis_is_the_same_for_the_same_seed(records: list[dict[str, Any]]) -> None:
    only = set(range(0, 40))
    first = [d.to_dict() for d in analyze_record(records[0], Analysis(30, seed=3), only=only)]
    again = [d.to_dict() for d in analyze_record(records[0], Analysis(30, seed=3), only=only)]
    other = [d.to_dict() for d in analyze_record(records[0], Analysis(30, seed=4), only=only)]
    assert first == again and len(first) > 8
    assert [d["values"] for d in first] != [d["values"] for d in other]
