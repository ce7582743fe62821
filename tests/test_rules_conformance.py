"""Conformance of the rules engine to docs/rules.md, one case per rule.

The cases are data (:data:`CASES`): each names the docs/rules.md section it checks, the rule
options, the first dealer, and per hand the intended cards (hands per seat, upcard,
kitty, dummy; or a raw deck order) and the steps to play. A step is ``"SEAT ACTION"``
(the seat is the one expected to be on turn) with optional expectations checked before
it (phase, exact legal set, what a seat's observation shows), or ``illegal=True`` when
the engine must refuse it and change nothing. ``PLAY_OUT`` plays the rest of the hand,
each seat playing its cards in the order the case lists them. After a hand's steps an
:class:`End` is checked (trump, maker, who went alone and sits out, trick winners, the
result and points, game scores, ...), and after the last hand an :class:`Outcome`.

Decks are built from the intended hands by the dealing method documented in
``harness/rules/hand.py``: receivers clockwise from the dealer's left, then (cutthroat)
the dummy; packets of 3, 2, 3, 2, ... then 2, 3, 2, 3, ...; the rest is the kitty, whose
first card is the upcard. Cards a case leaves unspecified are filled in canonical order.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from harness.errors import ConfigError, IllegalActionError, ReplayError
from harness.rules import (
    JOKER,
    Action,
    ActionKind,
    Card,
    DeckKind,
    Form,
    Game,
    Observation,
    RulesConfig,
    Suit,
    deck_cards,
    parse_cards,
)
from harness.rules.hand import Hand
from harness.rules.observation import observe

# ---------------------------------------------------------------------------
# The case format

PLAY_OUT = "play out"


@dataclasses.dataclass(frozen=True)
class Step:
    """``do`` is ``"SEAT ACTION"`` (SEAT must be on turn) or :data:`PLAY_OUT`. The other
    fields are checked before the step; ``illegal`` means the action must be refused."""

    do: str
    phase: str | None = None
    legal: str | None = None
    illegal: bool = False
    hand: Mapping[int, str] | None = None
    dummy: Mapping[int, str] | None = None


@dataclasses.dataclass(frozen=True)
class End:
    """Expectations after a hand's steps; ``None`` means not checked."""

    phase: str | None = None
    current: int | None = None
    legal: str | None = None
    trump: str | None = None
    maker: int | None = None
    alone: tuple[int, ...] | None = None
    sitting_out: tuple[int, ...] | None = None
    leader: int | None = None
    winners: tuple[int, ...] | None = None
    kind: str | None = None
    points: tuple[int, ...] | None = None
    dealer_took: bool | None = None
    hand: Mapping[int, str] | None = None
    discards: Mapping[int, str] | None = None
    dummy: Mapping[int, str] | None = None
    upcard: str | None = None
    dealer: int | None = None
    scores: tuple[int, ...] | None = None
    game_over: bool | None = None


@dataclasses.dataclass(frozen=True)
class Deal:
    """One hand: the intended cards (or a raw ``deck`` order), the steps, the end."""

    steps: tuple[Step, ...] = ()
    hands: Mapping[int, str] | None = None
    upcard: str | None = None
    kitty: str = ""
    dummy: str | None = None
    deck: str | None = None
    end: End = End()


@dataclasses.dataclass(frozen=True)
class Outcome:
    scores: tuple[int, ...]
    winner: int
    places: tuple[int, ...]
    hands: int


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    section: str
    deals: tuple[Deal, ...]
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    dealer: int = 0
    outcome: Outcome | None = None
    engine_bug: str | None = None  # set => strict xfail with this reason


def seq(*items: str | Step) -> tuple[Step, ...]:
    """Steps from strings (comma-separated ``"SEAT ACTION"`` items) and Step objects."""
    out: list[Step] = []
    for item in items:
        if isinstance(item, Step):
            out.append(item)
        else:
            out.extend(Step(p.strip()) for p in item.split(",") if p.strip())
    return tuple(out)


def hand_case(name: str, section: str, steps: tuple[Step, ...], *, end: End = End(),
              options: Mapping[str, Any] | None = None, dealer: int = 0,
              hands: Mapping[int, str] | None = None, upcard: str | None = None,
              kitty: str = "", dummy: str | None = None, deck: str | None = None,
              engine_bug: str | None = None) -> Case:
    """A case of a single hand."""
    return Case(name, section, (Deal(steps, hands, upcard, kitty, dummy, deck, end),),
                dict(options or {}), dealer, None, engine_bug)


def discards(cards: str) -> str:
    """``"9c Tc"`` -> ``"discard 9c, discard Tc"`` (for legal-set expectations)."""
    return ", ".join(f"discard {c}" for c in cards.split())


def plays(cards: str) -> str:
    return ", ".join(f"play {c}" for c in cards.split())


def discard_steps(seat: int, cards: str) -> str:
    return ", ".join(f"{seat} discard {c}" for c in cards.split())


def order_up(maker: int, dealer: int = 0, players: int = 4) -> str:
    """Round 1 from the dealer's left: pass until ``maker`` orders; an ordered-up dealer
    leaves the upcard (a dealer who orders must then discard: add that step)."""
    seats = [(dealer + 1 + i) % players for i in range(players)]
    idx = seats.index(maker)
    parts = [f"{s} pass" for s in seats[:idx]] + [f"{maker} order"]
    if maker != dealer:
        parts.append(f"{dealer} leave")
    return ", ".join(parts)


def nobody_alone(maker: int, players: int = 4) -> str:
    """Everybody asked declines to go alone, in the order docs/rules.md gives."""
    if players == 4:
        seats = [maker, (maker + 2) % 4, (maker + 1) % 4, (maker + 3) % 4]
    else:
        seats = [maker, (maker + 1) % 3, (maker + 2) % 3]
    return ", ".join(f"{s} not-alone" for s in seats)


def round1_all_pass(dealer: int = 0, players: int = 4) -> str:
    return ", ".join(f"{(dealer + 1 + i) % players} pass" for i in range(players))


# ---------------------------------------------------------------------------
# A card-order oracle written from docs/rules.md section 2 (independent of the engine)

SUITS = "cdhs"
SAME_COLOUR = {"c": "s", "s": "c", "d": "h", "h": "d"}
RANK_ORDER = "789TJQKA"


def oracle_suit(card: Card, trump: str) -> str:
    """The suit a card belongs to with ``trump``: the left bower and the Joker are trump."""
    text = str(card)
    if card == JOKER:
        return trump
    if text[0] == "J" and text[1] == SAME_COLOUR[trump]:
        return trump
    return text[1]


def oracle_legal(hand: Sequence[Card], led: Card | None, trump: str) -> set[str]:
    """The legal plays: follow the led suit if able, else anything."""
    if led is None:
        return {str(c) for c in hand}
    follow = [c for c in hand if oracle_suit(c, trump) == oracle_suit(led, trump)]
    return {str(c) for c in (follow or hand)}


# ---------------------------------------------------------------------------
# Building a deck order from intended hands (the dealing method of hand.py)

def build_deal(config: RulesConfig, dealer: int, deal: Deal
               ) -> tuple[tuple[Card, ...], dict[int, list[Card]]]:
    """The deck order that deals the intended cards, and each receiver's cards in the
    case's listed order (seat -1 is the dummy)."""
    players = config.players
    cutthroat = config.form is Form.CUTTHROAT
    receivers = [(dealer + 1 + i) % players for i in range(players)] + ([-1] if cutthroat
                                                                        else [])
    pack = deck_cards(config.deck)
    if deal.deck is not None:
        order = tuple(parse_cards(deal.deck))
        piles: dict[int, list[Card]] = {r: [] for r in receivers}
        pos = 0
        for first in (True, False):
            for i, r in enumerate(receivers):
                size = (3 if i % 2 == 0 else 2) if first else (2 if i % 2 == 0 else 3)
                piles[r].extend(order[pos:pos + size])
                pos += size
        return order, piles
    piles = {s: parse_cards(t) for s, t in (deal.hands or {}).items()}
    if deal.dummy is not None:
        piles[-1] = parse_cards(deal.dummy)
    upcard = [Card.parse(deal.upcard)] if deal.upcard is not None else []
    kitty = upcard + parse_cards(deal.kitty)
    used = [c for pile in piles.values() for c in pile] + kitty
    assert len(set(used)) == len(used), f"a card is given twice: {used}"
    assert set(used) <= set(pack), "a card is not in this pack"
    free = [c for c in pack if c not in used]
    for r in receivers:
        if r not in piles:
            piles[r], free = free[:5], free[5:]
        assert len(piles[r]) == 5, f"receiver {r} must get 5 cards"
    kitty += free
    order_list: list[Card] = []
    taken = dict.fromkeys(receivers, 0)
    for first in (True, False):
        for i, r in enumerate(receivers):
            size = (3 if i % 2 == 0 else 2) if first else (2 if i % 2 == 0 else 3)
            order_list.extend(piles[r][taken[r]:taken[r] + size])
            taken[r] += size
    order_list.extend(kitty)
    assert sorted(order_list) == sorted(pack)
    return tuple(order_list), piles


# ---------------------------------------------------------------------------
# The runner

def card_set(text: str) -> set[Card]:
    cards = parse_cards(text)
    assert len(set(cards)) == len(cards)
    return set(cards)


def action_set(text: str) -> set[Action]:
    return {Action.parse(p) for p in text.split(",") if p.strip()}


def observe_all(hand: Hand, players: int, index: int) -> list[Observation]:
    return [observe(hand, s, (), index) for s in range(players)]


def check_seen(observations: Sequence[Observation], hand: Mapping[int, str] | None,
               dummy: Mapping[int, str] | None, where: str) -> None:
    for seat, text in (hand or {}).items():
        got = observations[seat].hand
        assert len(got) == len(set(got)), f"{where}: seat {seat} sees a card twice"
        assert set(got) == card_set(text), f"{where}: seat {seat} hand"
    for seat, text in (dummy or {}).items():
        assert set(observations[seat].dummy) == card_set(text), f"{where}: seat {seat} dummy"


def run_step(game: Game, hand: Hand, index: int, step: Step,
             plan: Mapping[int, Sequence[Card]]) -> None:
    players = game.config.players
    if step.do == PLAY_OUT:
        for _ in range(60):
            if hand.phase.value != "play":
                return
            seat = game.current
            assert seat is not None
            held = set(game.observation(seat).hand)
            card = next(c for c in plan[seat] if c in held)
            action = Action.parse(f"play {card}")
            assert action in game.legal_actions(), (
                f"planned play {card} by seat {seat} is not legal: {game.legal_actions()}")
            game.apply(action)
        raise AssertionError("play did not end")
    seat_text, _, action_text = step.do.partition(" ")
    seat, action = int(seat_text), Action.parse(action_text)
    where = f"before {step.do!r}"
    assert game.current == seat, f"{where}: seat {game.current} is on turn"
    if step.phase is not None:
        assert game.phase.value == step.phase, f"{where}: phase"
    if step.legal is not None:
        assert set(game.legal_actions()) == action_set(step.legal), f"{where}: legal actions"
    check_seen([game.observation(s) for s in range(players)], step.hand, step.dummy, where)
    if not step.illegal:
        game.apply(action)
        return
    record = game.to_record()
    legal = list(game.legal_actions())
    seen = [game.observation(s) for s in range(players)]
    with pytest.raises(IllegalActionError) as info:
        game.apply(action)
    err = info.value
    assert err.action == action and err.seat == seat
    message = str(err)
    assert str(action) in message and f"seat {seat}" in message
    assert hand.phase.value in message, "the error names the state"
    assert game.to_record() == record, "an illegal action changed the record"
    assert list(game.legal_actions()) == legal, "an illegal action changed the legal list"
    assert [game.observation(s) for s in range(players)] == seen
    assert game.hand is hand and len(game.hands) == index + 1


def check_end(game: Game, hand: Hand, index: int, end: End) -> None:
    players = game.config.players
    obs = observe_all(hand, players, index)
    o = obs[0]
    if end.phase is not None:
        assert hand.phase.value == end.phase, "end: phase"
    if end.current is not None:
        assert hand.current == end.current, "end: current seat"
    if end.legal is not None:
        assert set(hand.legal_actions()) == action_set(end.legal), "end: legal actions"
    if end.trump is not None:
        assert o.trump is Suit.parse(end.trump), "end: trump"
    if end.maker is not None:
        assert o.maker == end.maker, "end: maker"
    if end.alone is not None:
        assert o.alone == end.alone, "end: who went alone"
    if end.sitting_out is not None:
        assert sorted(o.sitting_out) == sorted(end.sitting_out), "end: who sits out"
    if end.leader is not None:
        leader: int | None
        if o.tricks:
            leader = o.tricks[0].leader
        elif o.current_trick:
            leader = o.current_trick[0][0]
        else:
            assert hand.phase.value == "play"
            leader = hand.current
        assert leader == end.leader, "end: leader of the first trick"
    if end.winners is not None:
        assert tuple(t.winner for t in o.tricks) == end.winners, "end: trick winners"
    if end.kind is not None or end.points is not None:
        assert hand.result is not None, "end: the hand has no result"
        if end.kind is not None:
            assert hand.result.kind.value == end.kind, "end: result kind"
        if end.points is not None:
            assert tuple(hand.result.points) == end.points, "end: points"
    if end.dealer_took is not None:
        assert o.dealer_took_upcard is end.dealer_took, "end: dealer took the upcard"
    check_seen(obs, end.hand, end.dummy, "end")
    for seat, text in (end.discards or {}).items():
        assert sorted(obs[seat].discards) == sorted(card_set(text)), f"end: {seat} discards"
    if end.upcard is not None:
        assert o.upcard == Card.parse(end.upcard), "end: upcard"
    if end.dealer is not None:
        assert o.dealer == end.dealer, "end: dealer"
    if end.scores is not None:
        assert tuple(game.scores) == end.scores, "end: game scores"
    if end.game_over is not None:
        assert game.is_over is end.game_over, "end: game over"


def run_case(case: Case) -> None:
    config = RulesConfig.from_dict(case.options)
    players = config.players
    built = [build_deal(config, (case.dealer + k) % players, d)
             for k, d in enumerate(case.deals)]
    fallback = deck_cards(config.deck)
    game = Game(config, 0, first_dealer=case.dealer,
                decks=lambda i: built[i][0] if i < len(built) else fallback)
    for k, deal in enumerate(case.deals):
        assert len(game.hands) == k + 1, f"hand {k} was not dealt"
        hand = game.hands[k]
        order, piles = built[k]
        upcard = order[sum(len(p) for p in piles.values())]
        plan = {s: [*piles[s], upcard, *piles.get(-1, [])] for s in range(players)}
        for step in deal.steps:
            run_step(game, hand, k, step, plan)
        check_end(game, hand, k, deal.end)
    if case.outcome is not None:
        assert game.outcome is not None, "the game is not over"
        out = case.outcome
        assert tuple(game.outcome.scores) == out.scores
        assert game.outcome.winner == out.winner
        assert tuple(game.outcome.places) == out.places
        assert game.outcome.hands == out.hands == len(game.hands)


# ---------------------------------------------------------------------------
# Section 1: card order. Bowers in every trump suit, generated per suit.

def other_suits(t: str) -> tuple[str, str]:
    x, y = (s for s in SUITS if s not in (t, SAME_COLOUR[t]))
    return x, y


def bower_cases(t: str) -> list[Case]:
    """Trump ``t`` ordered up by seat 1 (dealer 0 leaves the upcard 9t); seat 1 leads."""
    p = SAME_COLOUR[t]
    x, y = other_suits(t)
    opening = seq(Step("1 order", phase="bid_round_1", legal="pass, order"),
                  Step("0 leave", phase="dealer_pickup", legal="take, leave"),
                  nobody_alone(1))
    right = hand_case(
        f"right_bower_beats_left_bower_trump_{t}", "2 Card order",
        seq(*opening,
            Step(f"1 play A{t}", phase="play"),
            Step(f"2 play J{p}", legal=f"play J{p}"),  # the left bower follows trump
            Step(f"3 play K{t}", legal=f"play K{t}"),
            Step(f"0 play J{t}", legal=plays(f"J{t} Q{t} T{t}"))),
        hands={1: f"A{t} A{x} K{x} Q{x} J{x}", 2: f"J{p} 9{x} T{x} A{y} K{y}",
               3: f"K{t} Q{y} J{y} T{y} 9{y}", 0: f"J{t} Q{t} T{t} A{p} K{p}"},
        upcard=f"9{t}",
        end=End(trump=t, maker=1, winners=(0,), current=0, phase="play"))
    left = hand_case(
        f"left_bower_beats_ace_trump_{t}", "2 Card order",
        seq(*opening,
            Step(f"1 play A{t}", phase="play"),
            Step(f"2 play K{t}", legal=f"play K{t}"),
            Step(f"3 play Q{y}", illegal=True),  # renege: the left bower is a trump
            Step(f"3 play J{p}", legal=f"play J{p}"),
            Step(f"0 play Q{t}", legal=plays(f"J{t} Q{t} T{t}"))),
        hands={1: f"A{t} A{x} K{x} Q{x} J{x}", 2: f"K{t} 9{x} T{x} A{y} K{y}",
               3: f"J{p} Q{y} J{y} T{y} 9{y}", 0: f"J{t} Q{t} T{t} A{p} K{p}"},
        upcard=f"9{t}",
        end=End(trump=t, winners=(3,), current=3))
    return [right, left]


def trick_case(name: str, section: str, trump: str, trick: str, winner: int, *,
               deck: str = "24", engine_bug: str | None = None) -> Case:
    """One trick with trump ``trump``: ``trick`` is ``"1:Ac 2:Jd 3:Kc 0:Qc"`` (seats 1, 2,
    3, 0 in turn; dealer 0, seat 1 orders up the lowest plain card of the trump suit,
    the dealer leaves it, nobody goes alone). The other cards are filled so that every
    seat that does not follow suit is void; the legal set of each follower is checked
    against the follow-suit oracle."""
    played = [(int(s), Card.parse(c)) for s, c in (p.split(":") for p in trick.split())]
    assert [s for s, _ in played] == [1, 2, 3, 0]
    played_cards = {c for _, c in played}
    pack = deck_cards(DeckKind.parse(deck))
    upcard = next(c for c in pack if str(c)[1:] == trump and str(c)[0] != "J"
                  and c not in played_cards)
    led_suit = oracle_suit(played[0][1], trump)
    pool = [c for c in pack if c not in played_cards and c != upcard]
    non_led = [c for c in pool if oracle_suit(c, trump) != led_suit]
    led_pool = [c for c in pool if oracle_suit(c, trump) == led_suit]
    hands: dict[int, list[Card]] = {s: [c] for s, c in played}
    voids = [s for s, c in played if oracle_suit(c, trump) != led_suit]
    for s in voids + [s for s, _ in played if s not in voids]:
        while len(hands[s]) < 5:
            if non_led:
                hands[s].append(non_led.pop(0))
            else:
                assert s not in voids, "cannot fill a void hand"
                hands[s].append(led_pool.pop(0))
    steps: list[Step] = list(seq(f"1 order, 0 leave, {nobody_alone(1)}"))
    for i, (s, c) in enumerate(played):
        legal = oracle_legal(hands[s], played[0][1] if i else None, trump)
        steps.append(Step(f"{s} play {c}", phase="play", legal=plays(" ".join(legal))))
    return hand_case(name, section, tuple(steps), options={"deck": deck},
                     hands={s: " ".join(str(c) for c in h) for s, h in hands.items()},
                     upcard=str(upcard), engine_bug=engine_bug,
                     end=End(trump=trump, winners=(winner,), current=winner))


CARD_ORDER_CASES: list[Case] = [
    *(c for t in SUITS for c in bower_cases(t)),
    trick_case("trump_queen_beats_ten_beats_nine", "2 Card order", "h",
               "1:Th 2:Qh 3:9h 0:As", 2),
    trick_case("trump_ace_beats_king", "2 Card order", "s", "1:Ks 2:9s 3:As 0:Ts", 3),
    trick_case("plain_suit_ace_king_queen_jack_ten_nine", "2 Card order", "h",
               "1:Tc 2:Jc 3:9c 0:Qc", 0),
    trick_case("plain_suit_ace_is_highest", "2 Card order", "d", "1:Ks 2:As 3:Qs 0:9s", 2),
    trick_case("left_bower_suit_is_short_of_a_jack", "2 Card order", "h",
               "1:Kd 2:Qd 3:Ad 0:Td", 3),
    trick_case("any_trump_beats_the_led_suit", "3 Play", "h", "1:As 2:9h 3:Ks 0:Qs", 2),
    trick_case("card_of_neither_suit_never_wins", "3 Play", "h", "1:9s 2:Ac 3:Ad 0:Ts", 0),
    trick_case("left_bower_trumps_a_plain_lead_clubs", "3 Play", "s",
               "1:Ah 2:Jc 3:Kh 0:Qh", 2),
    trick_case("left_bower_trumps_a_plain_lead_diamonds", "3 Play", "h",
               "1:Ac 2:Jd 3:Kc 0:Qc", 2),
    trick_case("higher_trump_wins_over_lower_trump", "3 Play", "c",
               "1:Ad 2:9c 3:Tc 0:Kd", 3),
    # 32-card deck: the 8 and 7 rank below the 9, in trump and out.
    trick_case("deck32_plain_nine_eight_seven", "2 Deck", "h", "1:7c 2:8c 3:9c 0:As", 3,
               deck="32"),
    trick_case("deck32_trump_eight_beats_seven", "2 Deck", "h", "1:7h 2:8h 3:Ac 0:Ad", 2,
               deck="32"),
    trick_case("deck32_trump_seven_beats_plain_ace", "2 Deck", "s", "1:Ad 2:7s 3:Kd 0:8d", 2,
               deck="32"),
    # 25-card deck: the Joker is the highest trump in every suit.
    *(trick_case(f"joker_beats_right_bower_trump_{t}", "2 Joker", t,
                 f"1:J{t} 2:JK 3:A{t} 0:J{SAME_COLOUR[t]}", 2, deck="25") for t in SUITS),
    *(trick_case(f"joker_trumps_a_plain_lead_trump_{t}", "2 Joker", t,
                 f"1:A{other_suits(t)[0]} 2:JK 3:K{other_suits(t)[0]} "
                 f"0:Q{other_suits(t)[0]}", 2, deck="25") for t in SUITS),
]

# ---------------------------------------------------------------------------
# Section 2 Play: following suit with the bowers and the Joker (explicit hands)

FOLLOW_CASES: list[Case] = [
    hand_case(
        "holding_only_the_left_bower_of_the_led_colour_is_void", "3 Play",
        # Trump hearts; diamonds are led; seat 2's only diamond-coloured card is the Jd,
        # which is a heart now, so seat 2 is void in diamonds and may play anything.
        seq(order_up(1), nobody_alone(1),
            Step("1 play Ad", phase="play"),
            Step("2 play Jd", legal=plays("Jd 9c Tc 9s Ts")),
            Step("3 play Kd", legal=plays("Kd Qd")),
            Step("0 play Td", legal=plays("Td 9d"))),
        hands={1: "Ad Ac Kc Qc Jc", 2: "Jd 9c Tc 9s Ts", 3: "Kd Qd Js Qs Ks",
               0: "Td 9d As Ah Kh"},
        upcard="9h",
        end=End(trump="h", winners=(2,), current=2)),
    hand_case(
        "led_left_bower_is_a_trump_lead", "3 Play",
        # Trump hearts; the Jd is led: followers must play hearts, not diamonds.
        seq(order_up(1), nobody_alone(1),
            Step("1 play Jd", phase="play"),
            Step("2 play Ad", illegal=True),
            Step("2 play 9h", legal="play 9h"),
            Step("3 play Kd", legal=plays("Kd Qd Js Qs Ks")),
            Step("0 play Ah", legal=plays("Ah Kh"))),
        hands={1: "Jd Ac Kc Qc Jc", 2: "9h Ad 9c Tc 9s", 3: "Kd Qd Js Qs Ks",
               0: "Ah Kh Td 9d As"},
        upcard="Th",
        end=End(trump="h", winners=(1,), current=1)),
    hand_case(
        "joker_led_is_a_trump_lead", "2 Joker",
        seq(order_up(1), nobody_alone(1),
            Step("1 play JK", phase="play"),
            Step("2 play Ts", legal="play Ts"),
            Step("3 play Td", legal=plays("Ad Kd Qd Jd Td")),
            Step("0 play As", legal=plays("As Ks"))),
        options={"deck": "25"},
        hands={1: "JK Ac Kc Qc Jc", 2: "Ts Ah Kh Qh Jh", 3: "Ad Kd Qd Jd Td",
               0: "As Ks 9c Tc 9d"},
        upcard="9s",
        end=End(trump="s", winners=(1,), current=1)),
    hand_case(
        "joker_follows_a_trump_lead", "2 Joker",
        seq(order_up(1), nobody_alone(1),
            Step("1 play 9c", phase="play"),
            Step("2 play Ad", illegal=True),
            Step("2 play JK", legal="play JK"),
            Step("3 play Ac", legal="play Ac"),
            Step("0 play 9d", legal=plays("9d Td Jd Qd Kd"))),
        options={"deck": "25"},
        hands={1: "9c 9h Th Jh Qh", 2: "JK Ad Kh Ah 9s", 3: "Ac Ts Qs Ks As",
               0: "9d Td Jd Qd Kd"},
        upcard="Tc",
        end=End(trump="c", winners=(2,), current=2)),
    hand_case(
        "winner_leads_next_and_five_tricks_are_played", "3 Play",
        seq(order_up(1), nobody_alone(1),
            Step("1 play Ac", phase="play"), "2 play 9c, 3 play Tc, 0 play Qc",
            Step("1 play Ad", phase="play"), "2 play 9d, 3 play Td, 0 play Qd",
            Step("1 play Kc"), "2 play Jc, 3 play 9s, 0 play 9h",
            Step("0 play As"), "1 play Ks, 2 play Js, 3 play Ts",
            Step("0 play Jh"), "1 play Kd, 2 play Ah, 3 play Th"),
        hands={1: "Ac Ad Kc Ks Kd", 2: "9c 9d Jc Js Ah", 3: "Tc Td 9s Ts Th",
               0: "Qc Qd 9h As Jh"},
        upcard="Qh",
        end=End(phase="hand_over", trump="h", maker=1, leader=1, winners=(1, 1, 0, 0, 0),
                kind="euchred", points=(2, 0))),
]

# ---------------------------------------------------------------------------
# Sections 1-3: dealing (the documented method, explicit deck orders)

CANON24 = " ".join(str(c) for c in deck_cards(DeckKind.D24))
CANON32 = " ".join(str(c) for c in deck_cards(DeckKind.D32))
CANON25 = " ".join(str(c) for c in deck_cards(DeckKind.D25))

DEAL_CASES: list[Case] = [
    hand_case("deal_four_handed_packets_3_2_then_2_3", "3 Setup",
              seq(Step("1 pass", phase="bid_round_1", legal="pass, order")),
              deck=CANON24,
              end=End(hand={1: "9c Tc Jc Kd Ad", 2: "Qc Kc 9h Th Jh", 3: "Ac 9d Td Qh Kh",
                            0: "Jd Qd Ah 9s Ts"},
                      upcard="Js", dealer=0, current=2)),
    hand_case("deal_four_handed_from_dealer_2", "3 Setup", (), deck=CANON24, dealer=2,
              end=End(hand={3: "9c Tc Jc Kd Ad", 0: "Qc Kc 9h Th Jh", 1: "Ac 9d Td Qh Kh",
                            2: "Jd Qd Ah 9s Ts"},
                      upcard="Js", dealer=2, current=3, phase="bid_round_1")),
    hand_case("deal_32_card_deck_kitty_of_12", "2 Deck", (), deck=CANON32,
              options={"deck": "32"},
              # 20 cards dealt; the kitty is cards 21-32 and the upcard is card 21.
              end=End(hand={1: "7c 8c 9c 9d Td", 2: "Tc Jc Jd Qd Kd", 3: "Qc Kc Ac Ad 7h",
                            0: "7d 8d 8h 9h Th"},
                      upcard="Jh")),
    hand_case("deal_25_card_deck_kitty_of_5", "2 Deck", (), deck=CANON25,
              options={"deck": "25"},
              end=End(hand={1: "9c Tc Jc Kd Ad", 2: "Qc Kc 9h Th Jh", 3: "Ac 9d Td Qh Kh",
                            0: "Jd Qd Ah 9s Ts"},
                      upcard="Js", phase="bid_round_1")),
    hand_case("deal_two_handed_kitty_of_14", "4 Two-handed", (), deck=CANON24, dealer=1,
              options={"form": "two-handed"},
              end=End(hand={0: "9c Tc Jc Ac 9d", 1: "Qc Kc Td Jd Qd"}, upcard="Kd",
                      current=0, phase="bid_round_1")),
    hand_case("deal_cutthroat_dummy_is_the_fourth_receiver", "5 Cutthroat",
              seq("0 order", "2 take", "2 discard Ac", nobody_alone(0, 3)),
              deck=CANON24, dealer=2, options={"form": "cutthroat"},
              end=End(hand={0: "9c Tc Jc Kd Ad Jd Qd Ah 9s Ts", 1: "Qc Kc 9h Th Jh",
                            2: "9d Td Qh Kh Js"},
                      dummy={0: "Jd Qd Ah 9s Ts", 1: "", 2: ""},
                      upcard="Js", phase="dummy_discard", current=0)),
]

# ---------------------------------------------------------------------------
# Section 2: bidding, round 1 and round 2

D0 = "9c Tc 9d Td Qs"  # the dealer's hand in the bidding cases (upcard Ts)

BIDDING_CASES: list[Case] = [
    hand_case("round1_starts_left_of_dealer_each_seat_once", "3 Round 1",
              seq(Step("3 pass", phase="bid_round_1", legal="pass, order"),
                  Step("0 pass", legal="pass, order"), Step("1 pass", legal="pass, order"),
                  Step("2 pass", legal="pass, order")),
              dealer=2, end=End(phase="bid_round_2", current=3)),
    hand_case("round1_opponent_orders_dealer_takes_and_discards_a_dealt_card", "3 Round 1",
              seq(Step("1 order", phase="bid_round_1"),
                  Step("0 take", phase="dealer_pickup", legal="take, leave"),
                  Step("0 discard Ts", phase="dealer_discard", legal=discards(D0),
                       illegal=True),
                  Step("0 discard 9c", legal=discards(D0))),
              hands={0: D0}, upcard="Ts",
              end=End(phase="go_alone", current=1, trump="s", maker=1, dealer_took=True,
                      hand={0: "Tc 9d Td Qs Ts"}, discards={0: "9c", 1: ""})),
    hand_case("round1_dealer_may_leave_the_upcard", "3 Round 1",
              seq("1 pass", Step("2 order"), Step("0 leave", phase="dealer_pickup")),
              hands={0: D0}, upcard="Ts",
              end=End(phase="go_alone", current=2, trump="s", maker=2, dealer_took=False,
                      hand={0: D0}, discards={0: ""})),
    hand_case("round1_first_order_ends_the_bidding", "3 Round 1",
              seq("1 pass", "2 pass", "3 order"), hands={0: D0}, upcard="Ts",
              end=End(phase="dealer_pickup", current=0, trump="s", maker=3)),
    hand_case("round1_dealer_accepts_own_upcard_and_discards", "3 Round 1",
              seq("1 pass, 2 pass, 3 pass",
                  Step("0 order", phase="bid_round_1", legal="pass, order"),
                  Step("0 leave", illegal=True),
                  Step("0 discard Ts", illegal=True),
                  Step("0 discard Qs", phase="dealer_discard", legal=discards(D0))),
              hands={0: D0}, upcard="Ts",
              end=End(phase="go_alone", current=0, trump="s", maker=0, dealer_took=True,
                      hand={0: "9c Tc 9d Td Ts"}, discards={0: "Qs"})),
    hand_case("dealer_must_take_option_makes_taking_compulsory", "3 Round 1",
              seq("1 pass", "2 order",
                  Step("0 leave", phase="dealer_discard", legal=discards(D0), illegal=True),
                  Step("0 take", illegal=True),
                  "0 discard 9d"),
              options={"dealer_must_take": True}, hands={0: D0}, upcard="Ts",
              end=End(phase="go_alone", current=2, trump="s", maker=2, dealer_took=True,
                      hand={0: "9c Tc Td Qs Ts"})),
    hand_case("round2_turned_down_suit_cannot_be_named", "3 Round 2",
              seq(round1_all_pass(),
                  Step("1 call s", phase="bid_round_2",
                       legal="pass, call c, call d, call h", illegal=True),
                  Step("1 order", illegal=True),
                  "1 pass",
                  Step("2 call h", legal="pass, call c, call d, call h")),
              hands={0: D0}, upcard="Ts",
              end=End(phase="go_alone", current=2, trump="h", maker=2, hand={0: D0})),
    hand_case("round2_allow_turned_down_suit_option", "3 Round 2",
              seq(round1_all_pass(),
                  Step("1 call s", legal="pass, call c, call d, call h, call s")),
              options={"allow_turned_down_suit": True}, hands={0: D0}, upcard="Ts",
              end=End(phase="go_alone", trump="s", maker=1, hand={0: D0})),
    hand_case("round2_all_pass_throws_the_hand_in", "3 Round 2",
              seq(round1_all_pass(), "1 pass, 2 pass, 3 pass",
                  Step("0 pass", phase="bid_round_2", legal="pass, call c, call d, call h")),
              upcard="Ts",
              end=End(phase="hand_over", kind="thrown_in", points=(0, 0), scores=(0, 0))),
    hand_case("stick_the_dealer_dealer_may_not_pass_in_round2", "3 Round 2",
              seq(round1_all_pass(),
                  Step("1 pass", legal="pass, call c, call d, call h"),
                  "2 pass, 3 pass",
                  Step("0 pass", phase="bid_round_2", legal="call c, call d, call h",
                       illegal=True),
                  Step("0 call s", illegal=True),
                  "0 call d"),
              options={"stick_the_dealer": True}, upcard="Ts",
              end=End(phase="go_alone", current=0, trump="d", maker=0)),
    hand_case("stick_the_dealer_with_turned_down_suit_allowed", "3 Round 2",
              seq(round1_all_pass(), "1 pass, 2 pass, 3 pass",
                  Step("0 call s", legal="call c, call d, call h, call s")),
              options={"stick_the_dealer": True, "allow_turned_down_suit": True},
              upcard="Ts", end=End(trump="s", maker=0)),
    hand_case("stick_the_dealer_round1_dealer_may_still_pass", "3 Round 2",
              seq("1 pass, 2 pass, 3 pass", Step("0 pass", legal="pass, order")),
              options={"stick_the_dealer": True}, upcard="Ts",
              end=End(phase="bid_round_2", current=1)),
    hand_case("actions_outside_the_legal_list_are_refused", "7 Referee",
              seq(Step("1 call h", illegal=True), Step("1 play 9c", illegal=True),
                  Step("1 alone", illegal=True), Step("1 take", illegal=True),
                  "1 order",
                  Step("0 pass", illegal=True), Step("0 discard 9c", illegal=True),
                  "0 take",
                  Step("0 play 9c", illegal=True), Step("0 discard Ah", illegal=True),
                  "0 discard 9c",
                  Step("1 pass", illegal=True), Step("1 discard Ts", illegal=True),
                  nobody_alone(1),
                  Step("1 play Ah", illegal=True), Step("1 not-alone", illegal=True)),
              hands={0: D0, 1: "Ac Kc Qc Jc 9h"}, upcard="Ts",
              end=End(phase="play", current=1)),
    # Two-handed bidding (section 4)
    hand_case("two_handed_round1_nondealer_then_dealer_accepts", "4 Two-handed",
              seq(Step("1 pass", phase="bid_round_1", legal="pass, order"),
                  Step("0 order", legal="pass, order"),
                  Step("0 discard 9c", phase="dealer_discard", legal=discards(D0))),
              options={"form": "two-handed"}, hands={0: D0}, upcard="Ts",
              end=End(phase="play", current=1, leader=1, trump="s", maker=0,
                      dealer_took=True, hand={0: "Tc 9d Td Qs Ts"})),
    hand_case("two_handed_nondealer_orders_dealer_may_leave", "4 Two-handed",
              seq("1 order", Step("0 leave", phase="dealer_pickup", legal="take, leave")),
              options={"form": "two-handed"}, hands={0: D0}, upcard="Ts",
              end=End(phase="play", current=1, trump="s", maker=1, dealer_took=False,
                      hand={0: D0}, alone=(), sitting_out=())),
    hand_case("two_handed_nondealer_orders_dealer_takes", "4 Two-handed",
              seq("1 order", "0 take", Step("0 discard Qs", legal=discards(D0))),
              options={"form": "two-handed"}, hands={0: D0}, upcard="Ts",
              end=End(phase="play", current=1, trump="s", maker=1, dealer_took=True,
                      hand={0: "9c Tc 9d Td Ts"})),
    hand_case("two_handed_dealer_must_take", "4 Two-handed",
              seq("1 order", Step("0 discard Td", phase="dealer_discard")),
              options={"form": "two-handed", "dealer_must_take": True}, hands={0: D0},
              upcard="Ts", end=End(phase="play", current=1, dealer_took=True)),
    hand_case("two_handed_round2_and_throw_in", "4 Two-handed",
              seq("1 pass, 0 pass",
                  Step("1 pass", phase="bid_round_2", legal="pass, call c, call d, call h"),
                  Step("0 pass", legal="pass, call c, call d, call h")),
              options={"form": "two-handed"}, upcard="Ts",
              end=End(phase="hand_over", kind="thrown_in", points=(0, 0))),
    hand_case("two_handed_round2_call_nondealer_leads", "4 Two-handed",
              seq("1 pass, 0 pass, 1 pass", Step("0 call h")),
              options={"form": "two-handed"}, upcard="Ts",
              end=End(phase="play", current=1, trump="h", maker=0)),
    hand_case("two_handed_stick_the_dealer", "4 Two-handed",
              seq("1 pass, 0 pass, 1 pass",
                  Step("0 pass", legal="call c, call d, call h", illegal=True),
                  "0 call c"),
              options={"form": "two-handed", "stick_the_dealer": True}, upcard="Ts",
              end=End(phase="play", trump="c", maker=0)),
    # Cutthroat bidding (section 5)
    hand_case("cutthroat_round1_three_players_dealer_last", "5 Cutthroat",
              seq(Step("2 pass", phase="bid_round_1", legal="pass, order"),
                  Step("0 pass"), Step("1 order", legal="pass, order"),
                  Step("1 discard Td", phase="dealer_discard", legal=discards(D0))),
              options={"form": "cutthroat"}, dealer=1, hands={1: D0}, upcard="Ts",
              end=End(phase="go_alone", current=1, trump="s", maker=1,
                      hand={1: "9c Tc 9d Qs Ts"})),
    hand_case("cutthroat_ordered_up_dealer_may_leave", "5 Cutthroat",
              seq("1 order", Step("0 leave", phase="dealer_pickup", legal="take, leave")),
              options={"form": "cutthroat"}, hands={0: D0}, upcard="Ts",
              end=End(phase="go_alone", current=1, trump="s", maker=1, hand={0: D0})),
    hand_case("cutthroat_round2_all_pass_throw_in", "5 Cutthroat",
              seq("1 pass, 2 pass, 0 pass",
                  Step("1 pass", phase="bid_round_2", legal="pass, call c, call d, call h"),
                  "2 pass", Step("0 pass", legal="pass, call c, call d, call h")),
              options={"form": "cutthroat"}, upcard="Ts",
              end=End(phase="hand_over", kind="thrown_in", points=(0, 0, 0))),
    hand_case("cutthroat_stick_the_dealer", "5 Cutthroat",
              seq("1 pass, 2 pass, 0 pass, 1 pass, 2 pass",
                  Step("0 pass", legal="call c, call d, call h", illegal=True),
                  "0 call h"),
              options={"form": "cutthroat", "stick_the_dealer": True}, upcard="Ts",
              end=End(phase="go_alone", trump="h", maker=0)),
]

# ---------------------------------------------------------------------------
# Section 2: going alone and the opening lead (dealer 0)

BID_2 = order_up(2)  # seat 2 (the dealer's partner) orders up; the dealer leaves it
BID_1 = order_up(1)
BID_3 = order_up(3)
ASK = "go_alone"

ALONE_CASES: list[Case] = [
    hand_case("alone_asked_maker_partner_then_defenders_clockwise", "3 Going alone",
              seq(BID_2, Step("2 not-alone", phase=ASK, legal="alone, not-alone"),
                  Step("0 not-alone", phase=ASK), Step("3 not-alone", phase=ASK),
                  Step("1 not-alone", phase=ASK, legal="alone, not-alone")),
              end=End(phase="play", current=1, leader=1, alone=(), sitting_out=())),
    hand_case("maker_alone_partner_sits_out_and_is_not_asked", "3 Going alone",
              seq(BID_2, "2 alone", Step("3 not-alone", phase=ASK), "1 not-alone"),
              end=End(phase="play", alone=(2,), sitting_out=(0,), leader=3)),
    hand_case("partner_may_go_alone_if_maker_does_not", "3 Going alone",
              seq(BID_2, "2 not-alone", Step("0 alone", phase=ASK), "3 not-alone",
                  "1 not-alone"),
              end=End(phase="play", alone=(0,), sitting_out=(2,), leader=1)),
    hand_case("partner_may_go_alone_false_partner_not_asked", "3 Going alone",
              seq(BID_2, "2 not-alone", Step("3 not-alone", phase=ASK), "1 not-alone"),
              options={"partner_may_go_alone": False},
              end=End(phase="play", alone=(), leader=1)),
    hand_case("first_defender_alone_second_not_asked", "3 Going alone",
              seq(BID_2, "2 not-alone, 0 not-alone", Step("3 alone", phase=ASK)),
              end=End(phase="play", alone=(3,), sitting_out=(1,), leader=0)),
    hand_case("second_defender_asked_only_if_first_declines", "3 Going alone",
              seq(BID_2, "2 not-alone, 0 not-alone, 3 not-alone", Step("1 alone", phase=ASK)),
              end=End(phase="play", alone=(1,), sitting_out=(3,), leader=2)),
    hand_case("lone_defender_false_defenders_not_asked", "3 Going alone",
              seq(BID_2, "2 not-alone", Step("0 not-alone", phase=ASK)),
              options={"lone_defender": False},
              end=End(phase="play", alone=(), sitting_out=(), leader=1)),
    hand_case("lone_defender_false_after_maker_alone_play_starts", "3 Going alone",
              seq(BID_2, "2 alone"),
              options={"lone_defender": False},
              end=End(phase="play", alone=(2,), sitting_out=(0,), leader=3)),
    hand_case("both_options_false_only_maker_asked", "3 Going alone",
              seq(BID_2, Step("2 not-alone", phase=ASK)),
              options={"lone_defender": False, "partner_may_go_alone": False},
              end=End(phase="play", alone=(), leader=1)),
    hand_case("alone_asked_after_the_dealer_discards", "3 Going alone",
              seq("1 order", "0 take", Step("0 discard 9c", phase="dealer_discard"),
                  Step("1 not-alone", phase=ASK)),
              hands={0: D0}, upcard="Ts", end=End(phase=ASK, current=3)),
    # Leads (loner_lead).
    hand_case("no_one_alone_left_of_dealer_leads", "3 Play",
              seq(order_up(1, dealer=3), nobody_alone(1)), dealer=3,
              end=End(phase="play", leader=0)),
    hand_case("left_of_lone_one_alone_left_of_lone_leads", "3 Play",
              seq(BID_3, "3 alone, 0 not-alone, 2 not-alone"),
              end=End(phase="play", alone=(3,), sitting_out=(1,), leader=0)),
    hand_case("left_of_dealer_one_alone_skips_sitting_out_seat", "3 Play",
              seq(BID_3, "3 alone, 0 not-alone, 2 not-alone"),
              options={"loner_lead": "left_of_dealer"},
              end=End(phase="play", alone=(3,), sitting_out=(1,), leader=2)),
    hand_case("left_of_dealer_one_alone_left_of_dealer_active", "3 Play",
              seq(BID_2, "2 alone, 3 not-alone, 1 not-alone"),
              options={"loner_lead": "left_of_dealer"},
              end=End(phase="play", alone=(2,), sitting_out=(0,), leader=1)),
    hand_case("left_of_lone_two_alone_lone_defender_leads", "3 Play",
              seq(BID_1, "1 alone", Step("2 alone", phase=ASK)),
              end=End(phase="play", alone=(1, 2), sitting_out=(0, 3), leader=2)),
    hand_case("left_of_dealer_two_alone_left_of_dealer_leads", "3 Play",
              seq(BID_1, "1 alone, 2 alone"),
              options={"loner_lead": "left_of_dealer"},
              end=End(phase="play", alone=(1, 2), sitting_out=(0, 3), leader=1)),
    hand_case("left_of_dealer_two_alone_skips_sitting_out_seat", "3 Play",
              seq(BID_2, "2 alone, 3 alone"),
              options={"loner_lead": "left_of_dealer"},
              end=End(phase="play", alone=(2, 3), sitting_out=(0, 1), leader=2)),
    hand_case("left_of_lone_partner_alone_and_defender_alone", "3 Play",
              seq(BID_2, "2 not-alone, 0 alone, 3 not-alone, 1 alone"),
              end=End(phase="play", alone=(0, 1), sitting_out=(2, 3), leader=1)),
    hand_case("sitting_out_seat_is_skipped_in_play", "3 Play",
              seq(BID_2, "2 alone, 3 not-alone, 1 not-alone",
                  Step("3 play 9s", phase="play"), Step("1 play Ts"), Step("2 play Js")),
              hands={3: "9s Qh Kh Ah 9d", 1: "Ts 9c Tc Jc Qc", 2: "Js Kc Ac 9h Th"},
              upcard="Qs",
              end=End(phase="play", current=2, winners=(2,), sitting_out=(0,))),
    # Cutthroat (section 5): ask order, who sits out, who leads.
    hand_case("cutthroat_alone_asked_maker_then_defenders_clockwise", "5 Cutthroat",
              seq(order_up(1, 0, 3),
                  Step("1 not-alone", phase=ASK, legal="alone, not-alone"),
                  Step("2 not-alone", phase=ASK), Step("0 not-alone", phase=ASK)),
              options={"form": "cutthroat"},
              end=End(phase="dummy_discard", current=1, alone=(), sitting_out=())),
    hand_case("cutthroat_maker_alone_nobody_sits_out", "5 Cutthroat",
              seq(order_up(1, 0, 3), "1 alone", Step("2 not-alone", phase=ASK),
                  "0 not-alone"),
              options={"form": "cutthroat"},
              end=End(phase="play", alone=(1,), sitting_out=(), leader=2)),
    hand_case("cutthroat_maker_alone_left_of_dealer", "5 Cutthroat",
              seq(order_up(2, 0, 3), "2 alone, 0 not-alone, 1 not-alone"),
              options={"form": "cutthroat", "loner_lead": "left_of_dealer"},
              end=End(phase="play", alone=(2,), sitting_out=(), leader=1)),
    hand_case("cutthroat_lone_defender_other_defender_sits_out", "5 Cutthroat",
              seq(order_up(1, 0, 3), "1 not-alone", Step("2 alone", phase=ASK),
                  Step("1 discard 9d", phase="dummy_discard"),
                  discard_steps(1, "Td Jd Qd Kd")),
              options={"form": "cutthroat"}, hands={1: "9d Td Jd Qd Kd"},
              # Left of the lone defender (2) is 0, who sits out: the maker leads.
              end=End(phase="play", alone=(2,), sitting_out=(0,), leader=1)),
    hand_case("cutthroat_second_defender_alone", "5 Cutthroat",
              seq(order_up(1, 0, 3), "1 not-alone, 2 not-alone", Step("0 alone", phase=ASK),
                  discard_steps(1, "9d Td Jd Qd Kd")),
              options={"form": "cutthroat"}, hands={1: "9d Td Jd Qd Kd"},
              end=End(phase="play", alone=(0,), sitting_out=(2,), leader=1)),
    hand_case("cutthroat_both_alone_lone_defender_leads", "5 Cutthroat",
              seq(order_up(2, 0, 3), "2 alone", "0 alone"),
              options={"form": "cutthroat"},
              end=End(phase="play", alone=(2, 0), sitting_out=(1,), leader=0)),
    hand_case("cutthroat_both_alone_left_of_dealer", "5 Cutthroat",
              seq(order_up(2, 0, 3), "2 alone", "0 alone"),
              options={"form": "cutthroat", "loner_lead": "left_of_dealer"},
              end=End(phase="play", alone=(2, 0), sitting_out=(1,), leader=2)),
    hand_case("cutthroat_lone_defender_false", "5 Cutthroat",
              seq(order_up(2, 0, 3), Step("2 alone", phase=ASK)),
              options={"form": "cutthroat", "lone_defender": False},
              end=End(phase="play", alone=(2,), sitting_out=(), leader=0)),
    hand_case("two_handed_nobody_is_asked_to_go_alone", "4 Two-handed",
              seq("1 pass", "0 pass", "1 call h", ),
              options={"form": "two-handed"}, upcard="Ts",
              end=End(phase="play", alone=(), sitting_out=(), leader=1)),
    hand_case("two_handed_dealer_maker_nondealer_leads", "4 Two-handed",
              seq("0 pass", "1 pass", "0 pass", "1 call c"),
              options={"form": "two-handed"}, dealer=1, upcard="Ts",
              end=End(phase="play", maker=1, leader=0)),
]

# ---------------------------------------------------------------------------
# Section 4: the dummy

CT = {"form": "cutthroat"}

DUMMY_CASES: list[Case] = [
    hand_case(
        "dummy_taken_after_dealer_discard_and_alone_discarded_one_at_a_time",
        "5 Cutthroat",
        seq(Step("1 order", dummy={1: ""}),
            Step("0 take", dummy={1: ""}),
            Step("0 discard 9c", phase="dealer_discard", dummy={1: ""}),
            Step("1 not-alone", phase=ASK, hand={1: "Ac 9d Td Jd Qd"}, dummy={1: ""}),
            Step("2 not-alone", dummy={1: ""}),
            Step("0 not-alone", dummy={1: ""}),
            Step("1 discard 9d", phase="dummy_discard",
                 legal=discards("Ac 9d Td Jd Qd Kd Ad 9h Th Jh"),
                 hand={1: "Ac 9d Td Jd Qd Kd Ad 9h Th Jh"},
                 dummy={1: "Kd Ad 9h Th Jh", 2: "", 0: ""}),
            Step("1 discard Td", phase="dummy_discard"),
            Step("1 discard 9h", phase="dummy_discard"),
            Step("1 discard Th", phase="dummy_discard", legal=discards("Ac Jd Qd Kd Ad Th Jh")),
            Step("1 discard 9s", illegal=True),
            Step("1 discard Kd", phase="dummy_discard", legal=discards("Ac Jd Qd Kd Ad Jh"))),
        options=CT, hands={0: "9c Tc Jc Qc Kc", 1: "Ac 9d Td Jd Qd"},
        dummy="Kd Ad 9h Th Jh", upcard="9s",
        end=End(phase="play", current=1, leader=1, trump="s", maker=1,
                hand={1: "Ac Jd Qd Ad Jh", 0: "Tc Jc Qc Kc 9s"},
                discards={1: "9d Td 9h Th Kd", 0: "9c", 2: ""},
                dummy={1: "Kd Ad 9h Th Jh", 0: "", 2: ""})),
    hand_case(
        "maker_alone_does_not_take_the_dummy", "5 Cutthroat",
        seq(order_up(1, 0, 3), "1 alone", "2 not-alone", "0 not-alone"),
        options=CT, hands={1: "Ac 9d Td Jd Qd"}, dummy="Kd Ad 9h Th Jh", upcard="9s",
        end=End(phase="play", leader=2, hand={1: "Ac 9d Td Jd Qd"},
                dummy={0: "", 1: "", 2: ""}, discards={1: ""})),
    hand_case(
        "dealer_maker_takes_dummy_after_own_discard", "5 Cutthroat",
        seq("1 pass", "2 pass", "0 order", Step("0 discard 9c", phase="dealer_discard",
                                                legal=discards("9c Tc Jc Qc Kc")),
            Step("0 not-alone", phase=ASK, hand={0: "Tc Jc Qc Kc 9s"}),
            "1 not-alone, 2 not-alone",
            Step("0 discard Tc", phase="dummy_discard",
                 hand={0: "Tc Jc Qc Kc 9s Kd Ad 9h Th Jh"}),
            discard_steps(0, "Jc Qc Kd Ad")),
        options=CT, hands={0: "9c Tc Jc Qc Kc"}, dummy="Kd Ad 9h Th Jh", upcard="9s",
        end=End(phase="play", leader=1, maker=0, hand={0: "Kc 9s 9h Th Jh"},
                discards={0: "9c Tc Jc Qc Kd Ad"})),
    hand_case(
        "maker_takes_dummy_when_a_defender_goes_alone", "5 Cutthroat",
        seq(order_up(2, 0, 3), "2 not-alone", "0 alone",
            Step("2 discard 9d", phase="dummy_discard", dummy={2: "Kd Ad 9h Th Jh", 0: ""}),
            discard_steps(2, "Td Jd Qd Ac")),
        options=CT, hands={2: "Ac 9d Td Jd Qd"}, dummy="Kd Ad 9h Th Jh", upcard="9s",
        end=End(phase="play", sitting_out=(1,), leader=2,
                hand={2: "Kd Ad 9h Th Jh"})),
]

# ---------------------------------------------------------------------------
# Section 1: the Joker as upcard (deck 25)

J25 = {"deck": "25"}
DH = "9c Tc 9d Td Qs"

JOKER_UPCARD_CASES: list[Case] = [
    hand_case(
        "joker_upcard_dealer_names_any_suit_without_seeing_the_hand", "2 Joker",
        seq(Step("0 call c", phase="name_trump", legal="call c, call d, call h, call s",
                 hand={0: "", 1: "Ac Kc Qc Jc 9h"}),
            Step("0 discard JK", phase="dealer_discard", legal=discards(DH), illegal=True),
            "0 discard 9d",
            Step("0 not-alone", phase=ASK), "2 not-alone, 1 not-alone, 3 not-alone"),
        options=J25, hands={0: DH, 1: "Ac Kc Qc Jc 9h"}, upcard="JK",
        end=End(phase="play", leader=1, trump="c", maker=0, dealer_took=True,
                hand={0: "9c Tc Td Qs JK"}, discards={0: "9d"})),
    hand_case(
        "joker_upcard_nobody_bids_before_the_dealer_names", "2 Joker",
        seq(Step("0 pass", phase="name_trump", illegal=True),
            Step("0 order", illegal=True), "0 call h"),
        options=J25, hands={0: DH}, upcard="JK",
        end=End(phase="dealer_discard", current=0, trump="h", maker=0)),
    hand_case(
        "joker_upcard_going_alone_still_asked", "2 Joker",
        seq("0 call h", "0 discard 9c", Step("0 alone", phase=ASK),
            Step("1 not-alone", phase=ASK), "3 not-alone"),
        options=J25, hands={0: DH}, upcard="JK",
        end=End(phase="play", alone=(0,), sitting_out=(2,), leader=1)),
    hand_case(
        "joker_upcard_dealers_partner_may_go_alone", "2 Joker",
        seq("0 call h", "0 discard 9c", "0 not-alone",
            Step("2 alone", phase=ASK), "1 not-alone", "3 not-alone"),
        options=J25, hands={0: DH}, upcard="JK", dealer=0,
        end=End(phase="play", maker=0, alone=(2,), sitting_out=(0,), leader=3)),
    hand_case(
        "joker_upcard_dealer_names_two_handed", "2 Joker",
        seq(Step("0 call d", phase="name_trump", hand={0: ""}),
            Step("0 discard 9c", phase="dealer_discard")),
        options={**J25, "form": "two-handed"}, hands={0: DH}, upcard="JK",
        end=End(phase="play", leader=1, trump="d", maker=0, hand={0: "Tc 9d Td Qs JK"})),
    hand_case(
        "joker_upcard_dealer_names_cutthroat_then_dummy", "2 Joker",
        seq(Step("0 call s", phase="name_trump", hand={0: ""}),
            "0 discard 9c",
            Step("0 not-alone", phase=ASK), "1 not-alone, 2 not-alone",
            Step("0 discard Tc", phase="dummy_discard")),
        options={**J25, "form": "cutthroat"}, hands={0: DH}, upcard="JK",
        end=End(phase="dummy_discard", current=0, trump="s", maker=0)),
    hand_case(
        "joker_upcard_hearts_round1_ordering_makes_hearts_trump", "2 Joker",
        seq(Step("1 pass", phase="bid_round_1", legal="pass, order"), "2 order",
            Step("0 take", phase="dealer_pickup"),
            Step("0 discard JK", illegal=True), "0 discard Qs"),
        options={**J25, "joker_upcard": "hearts"}, hands={0: DH}, upcard="JK",
        end=End(phase=ASK, current=2, trump="h", maker=2, dealer_took=True,
                hand={0: "9c Tc 9d Td JK"})),
    hand_case(
        "joker_upcard_hearts_round2_cannot_name_hearts", "2 Joker",
        seq(round1_all_pass(),
            Step("1 call h", phase="bid_round_2", legal="pass, call c, call d, call s",
                 illegal=True),
            "1 call s"),
        options={**J25, "joker_upcard": "hearts"}, upcard="JK",
        end=End(phase=ASK, trump="s", maker=1)),
    hand_case(
        "joker_upcard_hearts_turned_down_allowed", "2 Joker",
        seq(round1_all_pass(),
            Step("1 call h", legal="pass, call c, call d, call h, call s")),
        options={**J25, "joker_upcard": "hearts", "allow_turned_down_suit": True},
        upcard="JK", end=End(trump="h", maker=1)),
]

# ---------------------------------------------------------------------------
# Sections 2-4: scoring. Planned deals (32-card deck, trump hearts): in trick k every
# seat follows suit with its k-th listed card, so ``winners`` fixes who takes each trick.

TRICK_SETS = ("Ac 9c 8c 7c", "Kc Qc Jc Tc", "As 9s 8s 7s", "Ks Qs Js Ts", "Jh Ah Kh Qh")
PLAN_DUMMY = "8d 9d Td Qd Kd"
DUMMY_OUT = discard_steps(1, PLAN_DUMMY)


def planned_hands(players: int, winners: Sequence[int],
                  sitting_out: Sequence[int] = ()) -> dict[int, str]:
    """Hands in which trick k is won by ``winners[k]`` when every seat plays its cards in
    the listed order: the winner holds the top card of the trick's set, the other active
    seats the next ones, seats sitting out the lowest."""
    hands: dict[int, list[str]] = {s: [] for s in range(players)}
    for cards_text, w in zip(TRICK_SETS, winners, strict=True):
        cards = cards_text.split()
        rest = [s for s in range(players) if s != w and s not in sitting_out]
        rest += list(sitting_out)
        hands[w].append(cards[0])
        for s, c in zip(rest, cards[1:], strict=False):
            hands[s].append(c)
    return {s: " ".join(h) for s, h in hands.items()}


def scored(name: str, section: str, form: str, steps: str, winners: tuple[int, ...],
           kind: str, points: tuple[int, ...], *, sitting_out: tuple[int, ...] = (),
           alone: tuple[int, ...] | None = None, engine_bug: str | None = None) -> Case:
    """Dealer 0; seat 1 orders up the 7h (dealer leaves it); ``steps`` the going-alone
    decisions (and cutthroat dummy discards); then the hand is played out."""
    players = Form.parse(form).players
    return hand_case(
        name, section, seq(order_up(1, 0, players), steps, PLAY_OUT),
        options={"form": form, "deck": "32"},
        hands=planned_hands(players, winners, sitting_out), upcard="7h",
        dummy=PLAN_DUMMY if form == "cutthroat" else None, engine_bug=engine_bug,
        end=End(phase="hand_over", winners=winners, kind=kind, points=points, maker=1,
                trump="h", sitting_out=sitting_out, alone=alone))


FOUR = "four-handed"
NONE_1 = nobody_alone(1)
ALONE_1 = "1 alone, 2 not-alone, 0 not-alone"
DEF_2 = "1 not-alone, 3 not-alone, 2 alone"
BOTH_1_2 = "1 alone, 2 alone"

SCORING_CASES: list[Case] = [
    # Four-handed (section 2): points are (team of seats 0+2, team of seats 1+3).
    scored("four_makers_3_tricks_1_point", "3 Scoring", FOUR, NONE_1, (1, 3, 1, 0, 2),
           "made", (0, 1), alone=()),
    scored("four_makers_4_tricks_1_point", "3 Scoring", FOUR, NONE_1, (1, 3, 3, 1, 0),
           "made", (0, 1)),
    scored("four_makers_march_2_points", "3 Scoring", FOUR, NONE_1, (1, 1, 3, 3, 1),
           "march", (0, 2)),
    scored("four_maker_alone_3_tricks_1_point", "3 Scoring", FOUR, ALONE_1,
           (1, 1, 2, 1, 0), "made", (0, 1), sitting_out=(3,), alone=(1,)),
    scored("four_maker_alone_4_tricks_1_point", "3 Scoring", FOUR, ALONE_1,
           (1, 1, 1, 1, 2), "made", (0, 1), sitting_out=(3,)),
    scored("four_maker_alone_march_4_points", "3 Scoring", FOUR, ALONE_1,
           (1, 1, 1, 1, 1), "march", (0, 4), sitting_out=(3,)),
    scored("four_partner_alone_march_4_points", "3 Scoring", FOUR,
           "1 not-alone, 3 alone, 2 not-alone, 0 not-alone", (3, 3, 3, 3, 3), "march",
           (0, 4), sitting_out=(1,), alone=(3,)),
    scored("four_makers_euchred_2_tricks_2_points", "3 Scoring", FOUR, NONE_1,
           (0, 2, 1, 3, 0), "euchred", (2, 0)),
    scored("four_makers_euchred_no_tricks_still_2_points", "3 Scoring", FOUR, NONE_1,
           (0, 2, 0, 2, 0), "euchred", (2, 0)),
    scored("four_maker_alone_euchred_2_points", "3 Scoring", FOUR, ALONE_1,
           (2, 0, 1, 1, 2), "euchred", (2, 0), sitting_out=(3,)),
    scored("four_lone_defender_3_tricks_2_points", "3 Scoring", FOUR, DEF_2,
           (2, 2, 1, 3, 2), "lone_defence", (2, 0), sitting_out=(0,), alone=(2,)),
    scored("four_lone_defender_4_tricks_2_points", "3 Scoring", FOUR, DEF_2,
           (2, 2, 2, 3, 2), "lone_defence", (2, 0), sitting_out=(0,)),
    scored("four_lone_defender_march_4_points", "3 Scoring", FOUR, DEF_2,
           (2, 2, 2, 2, 2), "lone_defence_march", (4, 0), sitting_out=(0,)),
    scored("four_lone_defender_makers_take_3_makers_row", "3 Scoring", FOUR, DEF_2,
           (1, 3, 1, 2, 2), "made", (0, 1), sitting_out=(0,)),
    scored("four_both_alone_makers_3_maker_alone_row", "3 Scoring", FOUR, BOTH_1_2,
           (1, 2, 1, 2, 1), "made", (0, 1), sitting_out=(0, 3), alone=(1, 2)),
    scored("four_both_alone_makers_4_maker_alone_row", "3 Scoring", FOUR, BOTH_1_2,
           (1, 1, 1, 1, 2), "made", (0, 1), sitting_out=(0, 3)),
    scored("four_both_alone_makers_march_4_points", "3 Scoring", FOUR, BOTH_1_2,
           (1, 1, 1, 1, 1), "march", (0, 4), sitting_out=(0, 3)),
    scored("four_both_alone_lone_defender_3_tricks_2_points", "3 Scoring", FOUR, BOTH_1_2,
           (2, 1, 2, 1, 2), "lone_defence", (2, 0), sitting_out=(0, 3)),
    scored("four_both_alone_lone_defender_4_tricks_2_points", "3 Scoring", FOUR, BOTH_1_2,
           (2, 2, 2, 1, 2), "lone_defence", (2, 0), sitting_out=(0, 3)),
    scored("four_both_alone_lone_defender_march_4_points", "3 Scoring", FOUR, BOTH_1_2,
           (2, 2, 2, 2, 2), "lone_defence_march", (4, 0), sitting_out=(0, 3)),
    # Two-handed (section 3): points per seat.
    scored("two_maker_3_tricks_1_point", "4 Two-handed", "two-handed", "",
           (1, 0, 1, 0, 1), "made", (0, 1), alone=()),
    scored("two_maker_4_tricks_1_point", "4 Two-handed", "two-handed", "",
           (1, 1, 1, 0, 1), "made", (0, 1)),
    scored("two_maker_march_2_points", "4 Two-handed", "two-handed", "",
           (1, 1, 1, 1, 1), "march", (0, 2)),
    scored("two_maker_euchred_defender_2_points", "4 Two-handed", "two-handed", "",
           (0, 1, 0, 1, 0), "euchred", (2, 0)),
    scored("two_maker_no_tricks_defender_2_points", "4 Two-handed", "two-handed", "",
           (0, 0, 0, 0, 0), "euchred", (2, 0)),
    # Cutthroat (section 4): points per seat; the maker has no bonus for going alone.
    scored("cutthroat_maker_3_tricks_1_point", "5 Cutthroat", "cutthroat",
           f"{nobody_alone(1, 3)}, {DUMMY_OUT}", (1, 2, 1, 0, 1), "made", (0, 1, 0),
           alone=()),
    scored("cutthroat_maker_4_tricks_1_point", "5 Cutthroat", "cutthroat",
           f"{nobody_alone(1, 3)}, {DUMMY_OUT}", (1, 1, 1, 0, 1), "made", (0, 1, 0)),
    scored("cutthroat_maker_march_3_points", "5 Cutthroat", "cutthroat",
           f"{nobody_alone(1, 3)}, {DUMMY_OUT}", (1, 1, 1, 1, 1), "march", (0, 3, 0)),
    scored("cutthroat_maker_alone_march_no_bonus_3_points", "5 Cutthroat", "cutthroat",
           "1 alone, 2 not-alone, 0 not-alone", (1, 1, 1, 1, 1), "march", (0, 3, 0),
           alone=(1,)),
    scored("cutthroat_maker_alone_3_tricks_1_point", "5 Cutthroat", "cutthroat",
           "1 alone, 2 not-alone, 0 not-alone", (1, 0, 1, 2, 1), "made", (0, 1, 0)),
    scored("cutthroat_maker_euchred_each_defender_2", "5 Cutthroat", "cutthroat",
           f"{nobody_alone(1, 3)}, {DUMMY_OUT}", (0, 2, 1, 0, 1), "euchred", (2, 0, 2)),
    scored("cutthroat_maker_alone_euchred_each_defender_2", "5 Cutthroat", "cutthroat",
           "1 alone, 2 not-alone, 0 not-alone", (0, 0, 2, 2, 2), "euchred", (2, 0, 2)),
    scored("cutthroat_lone_defender_3_tricks_each_defender_2", "5 Cutthroat", "cutthroat",
           f"1 not-alone, 2 alone, {DUMMY_OUT}", (2, 2, 1, 1, 2), "lone_defence",
           (2, 0, 2), sitting_out=(0,), alone=(2,)),
    scored("cutthroat_lone_defender_4_tricks_each_defender_2", "5 Cutthroat", "cutthroat",
           f"1 not-alone, 2 not-alone, 0 alone, {DUMMY_OUT}", (0, 0, 1, 0, 0),
           "lone_defence", (2, 0, 2), sitting_out=(2,), alone=(0,)),
    scored("cutthroat_lone_defender_march_each_defender_4", "5 Cutthroat", "cutthroat",
           f"1 not-alone, 2 alone, {DUMMY_OUT}", (2, 2, 2, 2, 2), "lone_defence_march",
           (4, 0, 4), sitting_out=(0,)),
    scored("cutthroat_both_alone_maker_3_tricks_1_point", "5 Cutthroat", "cutthroat",
           "1 alone, 2 alone", (1, 2, 1, 2, 1), "made", (0, 1, 0), sitting_out=(0,)),
    scored("cutthroat_both_alone_lone_defender_march_each_4", "5 Cutthroat", "cutthroat",
           "1 alone, 2 alone", (2, 2, 2, 2, 2), "lone_defence_march", (4, 0, 4),
           sitting_out=(0,)),
]

# ---------------------------------------------------------------------------
# Games: dealer rotation, throw-ins, the target, the cutthroat tie rule


def passes_all(dealer: int, players: int) -> str:
    return f"{round1_all_pass(dealer, players)}, {round1_all_pass(dealer, players)}"


def planned_deal(players: int, bidding: str, alone: str, winners: tuple[int, ...],
                 sitting_out: tuple[int, ...] = (), end: End = End(),
                 upcard: str = "7h") -> Deal:
    """A planned hand inside a game (see :func:`planned_hands`); trump is hearts, so a
    round-2 call of hearts needs another ``upcard`` (7d)."""
    return Deal(seq(bidding, alone, PLAY_OUT), planned_hands(players, winners, sitting_out),
                upcard, dummy=PLAN_DUMMY if players == 3 else None, end=end)


def throw_in(dealer: int, players: int, scores: tuple[int, ...]) -> Deal:
    return Deal(seq(passes_all(dealer, players)),
                end=End(dealer=dealer, kind="thrown_in", scores=scores, game_over=False))


G32 = {"deck": "32"}

GAME_CASES: list[Case] = [
    Case("throw_in_next_dealer_is_left_of_dealer", "3 Round 2",
         (throw_in(3, 4, (0, 0)),
          Deal(end=End(dealer=0, phase="bid_round_1", current=1, game_over=False))),
         dealer=3),
    Case("deal_passes_to_the_left_four_handed", "3 Setup",
         (*(throw_in(d, 4, (0, 0)) for d in (2, 3, 0, 1)), Deal(end=End(dealer=2))),
         dealer=2),
    Case("deal_passes_to_the_left_two_handed", "4 Two-handed",
         (*(throw_in(d, 2, (0, 0)) for d in (1, 0, 1)), Deal(end=End(dealer=0))),
         options={"form": "two-handed"}, dealer=1),
    Case("deal_passes_to_the_left_cutthroat_dummy_never_deals", "5 Cutthroat",
         (*(throw_in(d, 3, (0, 0, 0)) for d in (2, 0, 1, 2)), Deal(end=End(dealer=0))),
         options={"form": "cutthroat"}, dealer=2),
    Case("target_10_reached_with_overshoot_9_plus_4", "3 Winning",
         (planned_deal(4, order_up(2, 0), "2 alone, 3 not-alone, 1 not-alone", (2,) * 5,
                       (0,), End(points=(4, 0), scores=(4, 0), dealer=0, game_over=False)),
          planned_deal(4, order_up(2, 1), "2 alone, 3 not-alone, 1 not-alone", (2,) * 5,
                       (0,), End(points=(4, 0), scores=(8, 0), dealer=1, game_over=False)),
          planned_deal(4, order_up(0, 2), nobody_alone(0), (0, 0, 2, 1, 3), (),
                       End(points=(1, 0), scores=(9, 0), dealer=2, game_over=False)),
          planned_deal(4, order_up(0, 3), "0 alone, 1 not-alone, 3 not-alone", (0,) * 5,
                       (2,), End(points=(4, 0), scores=(13, 0), dealer=3, game_over=True))),
         options=G32, outcome=Outcome((13, 0), 0, (1, 2, 1, 2), 4)),
    Case("target_option_game_ends_when_reached", "3 Winning",
         (planned_deal(4, order_up(1, 0), nobody_alone(1), (1, 3, 1, 0, 2), (),
                       End(points=(0, 1), scores=(0, 1), game_over=False)),
          planned_deal(4, order_up(3, 1), nobody_alone(3), (1, 3, 1, 0, 2), (),
                       End(points=(0, 1), scores=(0, 2), game_over=True))),
         options={**G32, "target": 2}, outcome=Outcome((0, 2), 1, (2, 1, 2, 1), 2)),
    Case("two_handed_first_to_target_wins", "4 Two-handed",
         (planned_deal(2, order_up(1, 0, 2), "", (1, 1, 1, 1, 1), (),
                       End(points=(0, 2), scores=(0, 2), game_over=False)),
          planned_deal(2, order_up(0, 1, 2), "", (0, 0, 0, 1, 0), (),
                       End(kind="made", points=(1, 0), scores=(1, 2), game_over=False)),
          planned_deal(2, order_up(1, 0, 2), "", (1, 1, 1, 0, 0), (),
                       End(points=(0, 1), scores=(1, 3), game_over=True))),
         options={"form": "two-handed", "deck": "32", "target": 3},
         outcome=Outcome((1, 3), 1, (2, 1), 3)),
    Case("cutthroat_two_reach_target_on_one_hand_higher_wins", "5 Cutthroat",
         (planned_deal(3, order_up(1, 0, 3), "1 alone, 2 not-alone, 0 not-alone", (1,) * 5,
                       (), End(points=(0, 3, 0), scores=(0, 3, 0), game_over=False)),
          planned_deal(3, order_up(0, 1, 3), "0 alone, 1 not-alone, 2 alone", (2,) * 5,
                       (1,), End(kind="lone_defence_march", points=(0, 4, 4),
                                 scores=(0, 7, 4), game_over=True))),
         options={"form": "cutthroat", "deck": "32", "target": 4},
         outcome=Outcome((0, 7, 4), 1, (3, 1, 2), 2)),
    Case("cutthroat_level_at_target_play_continues_until_one_is_ahead", "5 Cutthroat",
         (planned_deal(3, order_up(1, 0, 3), "1 alone, 2 not-alone, 0 not-alone",
                       (2, 0, 2, 0, 1), (),
                       End(kind="euchred", points=(2, 0, 2), scores=(2, 0, 2),
                           game_over=False)),
          planned_deal(3, order_up(2, 1, 3), "2 alone, 0 not-alone, 1 not-alone",
                       (2, 0, 1, 0, 1), (),
                       End(kind="euchred", points=(2, 2, 0), scores=(4, 2, 2),
                           game_over=True))),
         options={"form": "cutthroat", "deck": "32", "target": 2},
         outcome=Outcome((4, 2, 2), 0, (1, 2, 2), 2)),
    Case("cutthroat_level_twice_then_one_ahead", "5 Cutthroat",
         (planned_deal(3, order_up(1, 0, 3), "1 alone, 2 not-alone, 0 not-alone",
                       (2, 0, 2, 0, 1), (),
                       End(points=(2, 0, 2), scores=(2, 0, 2), game_over=False)),
          planned_deal(3, "2 pass, 0 pass, 1 pass, 2 pass, 0 pass, 1 call h",
                       "1 alone, 2 not-alone, 0 not-alone", (1, 1, 1, 0, 2), (),
                       End(points=(0, 1, 0), scores=(2, 1, 2), game_over=False), "7d"),
          planned_deal(3, order_up(0, 2, 3), "0 alone, 1 not-alone, 2 not-alone",
                       (0, 0, 0, 1, 2), (),
                       End(points=(1, 0, 0), scores=(3, 1, 2), game_over=True))),
         options={"form": "cutthroat", "deck": "32", "target": 2},
         outcome=Outcome((3, 1, 2), 0, (1, 3, 2), 3)),
]

CASES: list[Case] = [*CARD_ORDER_CASES, *FOLLOW_CASES, *DEAL_CASES, *BIDDING_CASES,
                     *ALONE_CASES, *DUMMY_CASES, *JOKER_UPCARD_CASES, *SCORING_CASES,
                     *GAME_CASES]

SECTIONS = ("2 Deck", "2 Card order", "2 Joker", "3 Setup", "3 Round 1", "3 Round 2",
            "3 Going alone", "3 Play", "3 Scoring", "3 Winning", "4 Two-handed",
            "5 Cutthroat", "7 Referee")


def _param(case: Case) -> Any:
    marks = ([pytest.mark.xfail(strict=True, reason=f"engine bug: {case.engine_bug}")]
             if case.engine_bug else [])
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_engine_conforms_to_rules_md(case: Case) -> None:
    run_case(case)


def test_conformance_table_is_well_formed() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    assert {c.section for c in CASES} == set(SECTIONS)


# ---------------------------------------------------------------------------
# Section 5 and the rest: the referee's own decisions

def test_no_action_after_game_over() -> None:
    config = RulesConfig(target=1, deck=DeckKind.D32)
    deal = planned_deal(4, order_up(1, 0), nobody_alone(1), (1, 1, 1, 1, 1))
    order, piles = build_deal(config, 0, deal)
    game = Game(config, 0, first_dealer=0, decks=lambda i: order)
    plan = {s: piles[s] for s in range(4)}
    for step in deal.steps:
        run_step(game, game.hand, 0, step, plan)
    assert game.is_over and game.phase.value == "game_over" and game.legal_actions() == ()
    record = game.to_record()
    with pytest.raises(IllegalActionError):
        game.apply(Action.parse("pass"))
    assert game.to_record() == record


def test_hand_rejects_a_deck_of_the_wrong_size_or_a_foreign_card() -> None:
    config = RulesConfig()
    pack = list(deck_cards(config.deck))
    with pytest.raises(ValueError):
        Hand(config, 0, pack[:-1])
    with pytest.raises(ValueError):
        Hand(config, 0, [*pack[:-1], JOKER])
    with pytest.raises(ValueError):
        Hand(config, 4, pack)


def test_hand_rejects_a_deck_with_a_duplicated_card() -> None:
    config = RulesConfig()
    pack = list(deck_cards(config.deck))
    with pytest.raises(ValueError):
        Hand(config, 0, [*pack[:-1], pack[0]])  # the 9c twice, no As


# --- configuration validation

INVALID_OPTIONS: list[tuple[dict[str, Any], str]] = [
    ({"target": 0}, "target"),
    ({"target": -3}, "target"),
    ({"target": True}, "target"),
    ({"target": "10"}, "target"),
    ({"form": "two-handed", "lone_defender": True}, "lone_defender"),
    ({"form": "two-handed", "partner_may_go_alone": True}, "partner_may_go_alone"),
    ({"form": "cutthroat", "partner_may_go_alone": True}, "partner_may_go_alone"),
    ({"joker_upcard": "hearts"}, "joker_upcard"),
    ({"joker_upcard": "hearts", "deck": "32"}, "joker_upcard"),
    ({"joker_upcard": "spades", "deck": "25"}, "joker_upcard"),
    ({"deck": "36"}, "deck"),
    ({"form": "five-handed"}, "form"),
    ({"loner_lead": "left_of_maker"}, "loner_lead"),
    ({"dealer_must_take": "yes"}, "dealer_must_take"),
    ({"stick_the_dealer": 1}, "stick_the_dealer"),
    ({"allow_turned_down_suit": None}, "allow_turned_down_suit"),
    ({"lone_defender": "no"}, "lone_defender"),
    ({"no_such_option": True}, "no_such_option"),
]


@pytest.mark.parametrize(("options", "option"), INVALID_OPTIONS,
                         ids=[f"{o}-{i}" for i, (_, o) in enumerate(INVALID_OPTIONS)])
def test_invalid_option_raises_config_error_naming_it(options: dict[str, Any],
                                                       option: str) -> None:
    with pytest.raises(ConfigError) as info:
        RulesConfig.from_dict(options)
    assert info.value.option == option
    assert option in str(info.value)


DEFAULTS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({}, {"form": "four-handed", "deck": "24", "target": 10, "dealer_must_take": False,
          "allow_turned_down_suit": False, "stick_the_dealer": False,
          "partner_may_go_alone": True, "lone_defender": True,
          "loner_lead": "left_of_lone", "joker_upcard": "dealer_names"}),
    ({"form": "two-handed"}, {"partner_may_go_alone": False, "lone_defender": False}),
    ({"form": "two-handed", "lone_defender": False}, {"lone_defender": False}),
    ({"form": "cutthroat"}, {"partner_may_go_alone": False, "lone_defender": True}),
    ({"form": "cutthroat", "lone_defender": False}, {"lone_defender": False}),
    ({"deck": "25", "joker_upcard": "hearts"}, {"joker_upcard": "hearts"}),
    ({"deck": 32, "target": 1}, {"deck": "32", "target": 1}),
]


@pytest.mark.parametrize(("options", "expected"), DEFAULTS,
                         ids=[str(i) for i in range(len(DEFAULTS))])
def test_options_take_the_documented_defaults(options: dict[str, Any],
                                              expected: dict[str, Any]) -> None:
    config = RulesConfig.from_dict(options)
    as_dict = config.to_dict()
    for key, value in expected.items():
        assert as_dict[key] == value, key
    assert RulesConfig.from_dict(as_dict) == config


# --- text forms of cards and actions

ALL_CARDS = sorted(set(deck_cards(DeckKind.D32)) | set(deck_cards(DeckKind.D25)))


def test_every_card_prints_and_parses_both_ways() -> None:
    assert len(ALL_CARDS) == 33
    texts = {str(c) for c in ALL_CARDS}
    assert texts == {r + s for r in RANK_ORDER for s in SUITS} | {"JK"}
    for card in ALL_CARDS:
        assert Card.parse(str(card)) is card
        assert Card.parse(str(card).lower()) is card
    assert Card.parse("10h") is Card.parse("Th")
    assert Card.parse("Joker") is JOKER
    assert parse_cards("Js Jc JK") == [Card.parse("Js"), Card.parse("Jc"), JOKER]


@pytest.mark.parametrize("text", ["", "J", "Zs", "Jx", "1h", "Jss", "K"])
def test_bad_card_text_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Card.parse(text)


def all_actions() -> list[Action]:
    simple = [Action(k) for k in (ActionKind.PASS, ActionKind.ORDER_UP,
                                  ActionKind.TAKE_UPCARD, ActionKind.LEAVE_UPCARD,
                                  ActionKind.GO_ALONE, ActionKind.NOT_ALONE)]
    calls = [Action(ActionKind.CALL, suit=s) for s in Suit]
    cards = [Action(k, card=c) for k in (ActionKind.DISCARD, ActionKind.PLAY)
             for c in ALL_CARDS]
    return simple + calls + cards


def test_every_action_prints_and_parses_both_ways() -> None:
    actions = all_actions()
    assert len(actions) == 6 + 4 + 2 * 33
    texts = [str(a) for a in actions]
    assert len(set(texts)) == len(texts)
    assert set(texts[:10]) == {"pass", "order", "take", "leave", "alone", "not-alone",
                               "call c", "call d", "call h", "call s"}
    for action in actions:
        assert Action.parse(str(action)) is action
        assert Action.parse(f"  {str(action).upper()} ") is action
        assert Action.from_id(action.id) is action
    assert len({a.id for a in actions}) == len(actions)
    assert str(Action.parse("play Js")) == "play Js"
    assert str(Action.parse("discard 10d")) == "discard Td"
    assert str(Action.parse("call hearts")) == "call h"
    assert str(Action.parse("play JK")) == "play JK"


@pytest.mark.parametrize("text", ["", "bid", "play", "play Js Jc", "call", "call x",
                                  "pass s", "discard", "alone now", "play Zz"])
def test_bad_action_text_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Action.parse(text)


def test_a_record_whose_result_was_altered_does_not_replay() -> None:
    rng = random.Random(5)
    game = Game(RulesConfig(), 11)
    while game.outcome is None:
        game.apply(rng.choice(game.legal_actions()))
    record = game.to_record()
    Game.from_record(record)  # the genuine record replays
    forged = json.loads(json.dumps(record))
    forged["scores"] = list(reversed(forged["scores"]))
    with pytest.raises(ReplayError, match="scores"):
        Game.from_record(forged)
    forged = json.loads(json.dumps(record))
    forged["outcome"]["winner"] = 1 - forged["outcome"]["winner"]
    with pytest.raises(ReplayError, match="outcome"):
        Game.from_record(forged)
