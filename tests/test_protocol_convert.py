"""Tests of the protobuf <-> engine translation (harness/protocol/convert.py), and of the
generated code and .proto files being in order (gen_proto.py --check, buf lint/breaking).

The converter builds its hot-path messages from wire bytes; the reference builders here
set fields one by one with the ordinary protobuf API, so every comparison checks the
fast path against an independent construction.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import Message

from harness.errors import ConfigError, ProtocolViolation
from harness.protocol import PROTOCOL_VERSION, convert, messages, pb, rpb
from harness.referee.outcome import FaultKind, Termination
from harness.rules import actions as A
from harness.rules.actions import Action, ActionKind
from harness.rules.cards import ALL_CARDS, JOKER, Card, DeckKind, Rank, Suit, parse_cards
from harness.rules.config import Form, JokerUpcard, LonerLead, RulesConfig
from harness.rules.game import Game, seeded_deck
from harness.rules.hand import Event, EventKind, Hand, Phase
from harness.rules.observation import Observation, observe
from harness.rules.scoring import HandKind, HandResult

REPO_ROOT = Path(__file__).resolve().parent.parent
ALL_ACTIONS: tuple[Action, ...] = (
    A.PASS, A.ORDER_UP, A.TAKE_UPCARD, A.LEAVE_UPCARD, A.GO_ALONE, A.NOT_ALONE,
    *A.CALL_ACTIONS, *A.DISCARD_ACTIONS, *A.PLAY_ACTIONS,
)
DECISION_PHASES: list[Phase] = [p for p in Phase if p not in (Phase.HAND_OVER, Phase.GAME_OVER)]

# Rule sets that between them reach every phase, event kind and form.
GAME_CONFIGS: list[RulesConfig] = [
    RulesConfig(),
    RulesConfig(form=Form.TWO_HANDED, stick_the_dealer=True),
    RulesConfig(form=Form.CUTTHROAT),
    RulesConfig(form=Form.CUTTHROAT, deck=DeckKind.D25, loner_lead=LonerLead.LEFT_OF_DEALER),
    RulesConfig(deck=DeckKind.D25, target=15),
    RulesConfig(deck=DeckKind.D25, joker_upcard=JokerUpcard.HEARTS, dealer_must_take=True),
    RulesConfig(deck=DeckKind.D32, allow_turned_down_suit=True, partner_may_go_alone=False),
]


# --------------------------------------------------------------------------- references


def ref_card(card: Card) -> pb.Card:
    suit = pb.SUIT_UNSPECIFIED if card.suit is None else pb.Suit.Value(f"SUIT_{card.suit.name}")
    return pb.Card(rank=pb.Rank.Value(f"RANK_{card.rank.name}"), suit=suit)


def ref_action(action: Action) -> pb.Action:
    msg = pb.Action(kind=pb.ActionKind.Value(f"ACTION_KIND_{action.kind.name}"))
    if action.card is not None:
        msg.card.CopyFrom(ref_card(action.card))
    if action.suit is not None:
        msg.suit = pb.Suit.Value(f"SUIT_{action.suit.name}")
    return msg


def ref_observation(obs: Observation) -> pb.Observation:
    msg = pb.Observation(
        seat=obs.seat,
        hand_number=obs.hand_number,
        dealer=obs.dealer,
        decision=(pb.DECISION_KIND_UNSPECIFIED if obs.phase not in DECISION_PHASES
                  else pb.DecisionKind.Value(f"DECISION_KIND_{obs.phase.name}")),
        hand=[ref_card(c) for c in obs.hand],
        upcard=ref_card(obs.upcard),
        upcard_turned_down=obs.upcard_turned_down,
        trump=(pb.SUIT_UNSPECIFIED if obs.trump is None
               else pb.Suit.Value(f"SUIT_{obs.trump.name}")),
        alone=obs.alone,
        sitting_out=obs.sitting_out,
        public_actions=[pb.SeatAction(seat=s, action=ref_action(a))
                        for s, a in obs.public_actions],
        discards=[ref_card(c) for c in obs.discards],
        dummy=[ref_card(c) for c in obs.dummy],
        tricks=[pb.Trick(leader=t.leader, winner=t.winner,
                         plays=[pb.SeatCard(seat=s, card=ref_card(c)) for s, c in t.plays])
                for t in obs.tricks],
        current_trick=[pb.SeatCard(seat=s, card=ref_card(c)) for s, c in obs.current_trick],
        tricks_won=obs.tricks_won,
        scores=obs.scores,
    )
    if obs.current is not None:
        msg.current_seat = obs.current
    if obs.dealer_took_upcard is not None:
        msg.dealer_took_upcard = obs.dealer_took_upcard
    if obs.maker is not None:
        msg.maker = obs.maker
    return msg


def pb_cards(msg: Message) -> list[Card]:
    """Every Card anywhere inside ``msg`` (decoded), in field order."""
    out: list[Card] = []
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        items = list(value) if field.is_repeated else [value]
        for item in items:
            if field.message_type is pb.Card.DESCRIPTOR:
                out.append(convert.card_from_pb(item))
            else:
                out.extend(pb_cards(item))
    return out


def obs_cards(obs: Observation) -> list[Card]:
    """Every card an observation holds (a played card counts in public_actions and in its
    trick, as in the protobuf form)."""
    cards = [*obs.hand, obs.upcard, *obs.discards, *obs.dummy]
    cards += [a.card for _, a in obs.public_actions if a.card is not None]
    cards += [c for t in obs.tricks for _, c in t.plays]
    cards += [c for _, c in obs.current_trick]
    return cards


def random_games(config: RulesConfig, seeds: range) -> Iterator[Game]:
    """Games played to the end with random legal actions, yielding the game before every
    decision (so callers can observe it)."""
    for seed in seeds:
        rng = random.Random(seed)
        game = Game(config, seed)
        while not game.is_over:
            yield game
            game.apply(rng.choice(game.legal_actions()))


def optional_field(msg: Message, field: str) -> int | bool | None:
    value: int | bool | None = getattr(msg, field) if msg.HasField(field) else None
    return value


# --------------------------------------------------------------------------- enums


@pytest.mark.parametrize(("engine", "pb_enum", "prefix"), [
    (Suit, pb.Suit, "SUIT_"), (Rank, pb.Rank, "RANK_"), (ActionKind, pb.ActionKind,
                                                         "ACTION_KIND_"),
    (Form, pb.Form, "FORM_"), (LonerLead, pb.LonerLead, "LONER_LEAD_"),
    (JokerUpcard, pb.JokerUpcard, "JOKER_UPCARD_"), (HandKind, pb.HandKind, "HAND_KIND_"),
])
def test_enums_mirror_the_engine(engine: type[enum.Enum], pb_enum: Any, prefix: str) -> None:
    names = set(pb_enum.DESCRIPTOR.values_by_name) - {prefix + "UNSPECIFIED"}
    assert names == {prefix + m.name for m in engine}


def test_deck_and_decision_kind_mirror_the_engine() -> None:
    assert set(pb.Deck.keys()) - {"DECK_UNSPECIFIED"} == {f"DECK_{d.value}" for d in DeckKind}
    assert set(pb.DecisionKind.keys()) - {"DECISION_KIND_UNSPECIFIED"} == {
        f"DECISION_KIND_{p.name}" for p in DECISION_PHASES}


def test_rank_numbers_are_face_values() -> None:
    for rank in Rank:
        assert convert.RANK_TO_PB[rank] == int(rank)


def test_phase_decision_kind_round_trip() -> None:
    for phase in DECISION_PHASES:
        kind = convert.phase_to_decision_kind(phase)
        assert pb.DecisionKind.Name(kind) == f"DECISION_KIND_{phase.name}"
        assert convert.decision_kind_to_phase(kind) is phase
    for phase in (Phase.HAND_OVER, Phase.GAME_OVER):
        assert convert.phase_to_decision_kind(phase) == pb.DECISION_KIND_UNSPECIFIED
    for bad in (pb.DECISION_KIND_UNSPECIFIED, 99):
        with pytest.raises(ProtocolViolation, match="not a decision kind"):
            convert.decision_kind_to_phase(bad)


# --------------------------------------------------------------------------- cards


@pytest.mark.parametrize("card", ALL_CARDS, ids=str)
def test_card_round_trip(card: Card) -> None:
    msg = convert.card_to_pb(card)
    assert msg == ref_card(card)
    assert convert.card_from_pb(msg) is card
    assert convert.card_from_pb(pb.Card.FromString(msg.SerializeToString())) is card


def test_joker_is_rank_joker_without_suit() -> None:
    msg = convert.card_to_pb(JOKER)
    assert (msg.rank, msg.suit) == (pb.RANK_JOKER, pb.SUIT_UNSPECIFIED)


@pytest.mark.parametrize(("rank", "suit", "message"), [
    (0, 0, "no rank"),
    (0, 2, "no rank"),
    (5, 1, "rank 5 is not a Rank value"),
    (99, 1, "rank 99 is not a Rank value"),
    (14, 0, "RANK_ACE card needs a suit"),
    (14, 9, "suit 9 is not a Suit value"),
    (14, -1, "suit -1 is not a Suit value"),
    (15, 3, "the Joker has no suit, but suit is SUIT_HEARTS"),
])
def test_malformed_cards(rank: int, suit: int, message: str) -> None:
    msg = pb.Card(rank=pb.Rank.ValueType(rank), suit=pb.Suit.ValueType(suit))
    with pytest.raises(ProtocolViolation, match=message):
        convert.card_from_pb(msg)


# --------------------------------------------------------------------------- actions


@pytest.mark.parametrize("action", ALL_ACTIONS, ids=str)
def test_action_round_trip(action: Action) -> None:
    msg = convert.action_to_pb(action)
    assert msg == ref_action(action)
    assert convert.action_from_pb(msg) is action
    assert convert.action_from_pb(pb.Action.FromString(msg.SerializeToString())) is action


def _action(kind: int, card: tuple[int, int] | None = None, suit: int = 0) -> pb.Action:
    msg = pb.Action(kind=pb.ActionKind.ValueType(kind), suit=pb.Suit.ValueType(suit))
    if card is not None:
        msg.card.rank = pb.Rank.ValueType(card[0])
        msg.card.suit = pb.Suit.ValueType(card[1])
    return msg


@pytest.mark.parametrize(("msg", "message"), [
    (pb.Action(), r"no kind \(ACTION_KIND_UNSPECIFIED\)"),
    (_action(0, card=(11, 1)), "no kind"),
    (_action(42), "kind 42 is not an ActionKind value"),
    (_action(pb.ACTION_KIND_PLAY), "ACTION_KIND_PLAY needs a card"),
    (_action(pb.ACTION_KIND_DISCARD, suit=pb.SUIT_HEARTS), "ACTION_KIND_DISCARD needs a card"),
    (_action(pb.ACTION_KIND_PLAY, card=(11, 1), suit=pb.SUIT_HEARTS),
     r"takes a card, not a suit \(got SUIT_HEARTS\)"),
    (_action(pb.ACTION_KIND_PLAY, card=(0, 0)), "ACTION_KIND_PLAY: malformed card: no rank"),
    (_action(pb.ACTION_KIND_PLAY, card=(14, 0)), "RANK_ACE card needs a suit"),
    (_action(pb.ACTION_KIND_DISCARD, card=(15, 4)), "the Joker has no suit"),
    (_action(pb.ACTION_KIND_CALL), "ACTION_KIND_CALL needs a suit"),
    (_action(pb.ACTION_KIND_CALL, suit=7), "suit 7 is not a Suit value"),
    (_action(pb.ACTION_KIND_CALL, card=(9, 1), suit=pb.SUIT_CLUBS), "takes a suit, not a card"),
    (_action(pb.ACTION_KIND_PASS, card=(9, 1)), "ACTION_KIND_PASS takes no card and no suit, "
                                               "but has a card"),
    (_action(pb.ACTION_KIND_GO_ALONE, suit=pb.SUIT_SPADES),
     r"ACTION_KIND_GO_ALONE takes no card and no suit, but has a suit \(SUIT_SPADES\)"),
    (_action(pb.ACTION_KIND_ORDER_UP, suit=12), r"but has a suit \(12\)"),
])
def test_malformed_actions(msg: pb.Action, message: str) -> None:
    with pytest.raises(ProtocolViolation, match=message):
        convert.action_from_pb(msg)


def test_an_empty_card_message_counts_as_present() -> None:
    msg = pb.Action(kind=pb.ACTION_KIND_TAKE_UPCARD)
    msg.card.SetInParent()
    with pytest.raises(ProtocolViolation, match="takes no card"):
        convert.action_from_pb(msg)


# --------------------------------------------------------------------------- rules


def all_rule_configs() -> Iterator[RulesConfig]:
    """Every valid combination of form, deck and option values (targets 1, 10 and 31)."""
    tri = (None, False, True)
    for (form, deck, must, turned, stick, partner, lone, lead, joker, target) in (
            itertools.product(Form, DeckKind, (False, True), (False, True), (False, True),
                              tri, tri, LonerLead, JokerUpcard, (1, 10, 31))):
        try:
            yield RulesConfig(form=form, deck=deck, target=target, dealer_must_take=must,
                              allow_turned_down_suit=turned, stick_the_dealer=stick,
                              partner_may_go_alone=partner, lone_defender=lone,
                              loner_lead=lead, joker_upcard=joker)
        except ConfigError:
            continue


def test_rules_options_has_a_field_per_option() -> None:
    assert set(pb.RulesOptions.DESCRIPTOR.fields_by_name) == {
        f.name for f in dataclasses.fields(RulesConfig)}


def test_rules_round_trip_every_combination() -> None:
    seen: set[tuple[Form, DeckKind]] = set()
    count = 0
    for config in all_rule_configs():
        msg = convert.rules_to_pb(config)
        # The referee sends every option resolved: no defaults left to the reader.
        assert msg.form and msg.deck and msg.target and msg.loner_lead and msg.joker_upcard
        assert msg.HasField("partner_may_go_alone") and msg.HasField("lone_defender")
        assert convert.rules_from_pb(msg) == config
        assert convert.rules_from_pb(pb.RulesOptions.FromString(msg.SerializeToString())) \
            == config
        seen.add((config.form, config.deck))
        count += 1
    assert len(seen) == 9
    assert count > 1000


def test_rules_defaults_from_an_empty_message() -> None:
    assert convert.rules_from_pb(pb.RulesOptions()) == RulesConfig()
    assert convert.rules_from_pb(pb.RulesOptions(form=pb.FORM_CUTTHROAT)) == RulesConfig(
        form=Form.CUTTHROAT)
    two = convert.rules_from_pb(pb.RulesOptions(form=pb.FORM_TWO_HANDED,
                                                partner_may_go_alone=False))
    assert two == RulesConfig(form=Form.TWO_HANDED)


@pytest.mark.parametrize(("msg", "option"), [
    (pb.RulesOptions(form=pb.FORM_TWO_HANDED, lone_defender=True), "lone_defender"),
    (pb.RulesOptions(form=pb.FORM_CUTTHROAT, partner_may_go_alone=True),
     "partner_may_go_alone"),
    (pb.RulesOptions(joker_upcard=pb.JOKER_UPCARD_HEARTS), "joker_upcard"),
    (pb.RulesOptions(form=pb.Form.ValueType(9)), "form"),
    # 24 is not the value of DECK_24: an unknown value must not be read as a deck size.
    (pb.RulesOptions(deck=pb.Deck.ValueType(24)), "deck"),
    (pb.RulesOptions(loner_lead=pb.LonerLead.ValueType(3)), "loner_lead"),
    (pb.RulesOptions(deck=pb.DECK_25, joker_upcard=pb.JokerUpcard.ValueType(5)),
     "joker_upcard"),
])
def test_invalid_rules_raise_config_error(msg: pb.RulesOptions, option: str) -> None:
    with pytest.raises(ConfigError) as info:
        convert.rules_from_pb(msg)
    assert info.value.option == option


# --------------------------------------------------------------------------- observations


def check_observation(obs: Observation) -> pb.Observation:
    msg = convert.observation_to_pb(obs)
    assert msg == ref_observation(obs), f"seat {obs.seat}, phase {obs.phase}"
    assert pb.Observation.FromString(msg.SerializeToString()) == msg
    # Exactly the observation's cards, and its own hand field by field.
    assert Counter(pb_cards(msg)) == Counter(obs_cards(obs))
    assert [convert.card_from_pb(c) for c in msg.hand] == list(obs.hand)
    assert convert.card_from_pb(msg.upcard) is obs.upcard
    assert [convert.card_from_pb(c) for c in msg.discards] == list(obs.discards)
    assert [convert.card_from_pb(c) for c in msg.dummy] == list(obs.dummy)
    assert [(p.seat, convert.action_from_pb(p.action)) for p in msg.public_actions] == list(
        obs.public_actions)
    assert [(t.leader, [(p.seat, convert.card_from_pb(p.card)) for p in t.plays], t.winner)
            for t in msg.tricks] == [(t.leader, list(t.plays), t.winner) for t in obs.tricks]
    assert [(p.seat, convert.card_from_pb(p.card)) for p in msg.current_trick] == list(
        obs.current_trick)
    assert optional_field(msg, "current_seat") == obs.current
    assert optional_field(msg, "maker") == obs.maker
    assert optional_field(msg, "dealer_took_upcard") == obs.dealer_took_upcard
    assert (msg.trump == pb.SUIT_UNSPECIFIED) == (obs.trump is None)
    if obs.trump is not None:
        assert convert.SUIT_FROM_PB[msg.trump] is obs.trump
    assert (tuple(msg.alone), tuple(msg.sitting_out)) == (obs.alone, obs.sitting_out)
    assert (tuple(msg.tricks_won), tuple(msg.scores)) == (obs.tricks_won, obs.scores)
    assert msg.hand_number == obs.hand_number and msg.dealer == obs.dealer
    return msg


def check_decision_request(obs: Observation, obs_msg: pb.Observation,
                           request_id: int) -> None:
    req = convert.decision_request_to_pb(request_id, obs, 1500, 60000)
    assert req.request_id == request_id
    assert req.kind == convert.phase_to_decision_kind(obs.phase) == obs_msg.decision
    assert [convert.action_from_pb(a) for a in req.legal_actions] == list(obs.legal_actions)
    assert (req.time_left_ms, req.bank_ms) == (1500, 60000)
    assert req.observation == obs_msg
    assert rpb.DecisionRequest.FromString(req.SerializeToString()) == req
    # What the SDK builds from the request is the engine's Observation itself: in-process
    # play hands a bot the latter and skips the wire (harness.referee.inprocess).
    assert convert.observation_from_pb(req.observation, req.legal_actions) == obs


def test_observations_at_every_decision_of_random_games() -> None:
    phases: set[Phase] = set()
    request_id = 0
    blind_namings = 0
    for config in GAME_CONFIGS:
        for game in random_games(config, range(3)):
            seat = game.current
            assert seat is not None
            for s in range(config.players):
                obs = game.observation(s)
                msg = check_observation(obs)
                if s == seat:
                    request_id += 1
                    check_decision_request(obs, msg, request_id)
            phases.add(game.phase)
            if game.phase is Phase.NAME_TRUMP:
                blind_namings += 1
                dealer_view = convert.observation_to_pb(game.observation(seat))
                assert len(dealer_view.hand) == 0  # the dealer names trump blind
    assert phases == set(DECISION_PHASES)
    assert blind_namings > 0


def test_observation_after_the_hand_is_over() -> None:
    game = Game(RulesConfig(), 3)
    rng = random.Random(3)
    hand = game.hand
    while not hand.is_over:
        game.apply(rng.choice(game.legal_actions()))
    obs = observe(hand, 1, tuple(game.scores), 0)
    msg = check_observation(obs)
    assert msg.decision == pb.DECISION_KIND_UNSPECIFIED
    assert not msg.HasField("current_seat")
    with pytest.raises(ValueError, match="no decision to make"):
        convert.decision_request_to_pb(1, obs, 1000, 1000)


def test_large_values_use_multibyte_varints() -> None:
    game = Game(RulesConfig(target=1000), 1)
    obs = game.observation(game.current or 0)._replace(hand_number=300, scores=(200, 100_000))
    msg = check_observation(obs)
    assert msg.hand_number == 300 and list(msg.scores) == [200, 100_000]
    req = convert.decision_request_to_pb(2**40, obs, 2**31, 129)
    assert (req.request_id, req.time_left_ms, req.bank_ms) == (2**40, 2**31, 129)


# --------------------------------------------------------------------------- events


def check_event(hand_number: int, event: Event, msg: rpb.GameEvent | None,
                trick_number: int, scores: tuple[int, ...]) -> None:
    if event.kind is EventKind.DEAL:
        assert msg is None
        return
    assert msg is not None
    assert msg.hand_number == hand_number
    which = msg.WhichOneof("event")
    expected = {
        EventKind.BID: "bid", EventKind.TRUMP: "trump_fixed", EventKind.PICKUP: "pickup",
        EventKind.DISCARD: "discarded", EventKind.DUMMY: "dummy_cards",
        EventKind.ALONE: "alone_decision", EventKind.PLAY: "card_played",
        EventKind.TRICK: "trick_won", EventKind.HAND_END: "hand_end",
    }[event.kind]
    assert which == expected
    if event.kind is EventKind.BID:
        assert event.seat is not None and event.action is not None
        assert msg == rpb.GameEvent(hand_number=hand_number, bid=rpb.Bid(
            seat=event.seat, action=ref_action(event.action)))
        assert (msg.bid.seat, convert.action_from_pb(msg.bid.action)) == (event.seat,
                                                                          event.action)
    elif event.kind is EventKind.TRUMP:
        assert event.suit is not None
        assert (msg.trump_fixed.maker, convert.SUIT_FROM_PB[msg.trump_fixed.suit]) == (
            event.seat, event.suit)
    elif event.kind is EventKind.PICKUP:
        assert (msg.pickup.dealer, msg.pickup.took) == (event.seat, event.flag)
    elif event.kind is EventKind.DISCARD:
        assert (msg.discarded.seat, convert.card_from_pb(msg.discarded.card)) == (
            event.seat, event.cards[0])
    elif event.kind is EventKind.DUMMY:
        assert msg.dummy_cards.seat == event.seat
        assert tuple(convert.card_from_pb(c) for c in msg.dummy_cards.cards) == event.cards
        assert len(event.cards) == 5
    elif event.kind is EventKind.ALONE:
        assert (msg.alone_decision.seat, msg.alone_decision.alone) == (event.seat, event.flag)
    elif event.kind is EventKind.PLAY:
        assert event.seat is not None
        assert msg == rpb.GameEvent(hand_number=hand_number, card_played=rpb.CardPlayed(
            seat=event.seat, card=ref_card(event.cards[0])))
        assert (msg.card_played.seat, convert.card_from_pb(msg.card_played.card)) == (
            event.seat, event.cards[0])
    elif event.kind is EventKind.TRICK:
        assert event.seat is not None
        assert msg == rpb.GameEvent(hand_number=hand_number, trick_won=rpb.TrickWon(
            seat=event.seat, trick_number=trick_number))
        assert (msg.trick_won.seat, msg.trick_won.trick_number) == (event.seat, trick_number)
    else:
        assert event.result is not None
        assert msg.hand_end.result == convert.hand_result_to_pb(event.result)
        check_hand_result(msg.hand_end.result, event.result)
        assert tuple(msg.hand_end.scores) == scores
    assert rpb.GameEvent.FromString(msg.SerializeToString()) == msg


def check_hand_result(msg: pb.HandResult, result: HandResult) -> None:
    assert pb.HandKind.Name(msg.kind) == f"HAND_KIND_{result.kind.name}"
    assert tuple(msg.points) == result.points
    assert optional_field(msg, "maker") == result.maker
    assert msg.makers_tricks == result.makers_tricks
    assert msg.maker_alone == result.maker_alone
    assert optional_field(msg, "lone_defender") == result.defender_alone
    assert tuple(msg.tricks_won) == result.tricks_won


def test_event_to_pb_covers_every_event_kind() -> None:
    kinds: set[EventKind] = set()
    hand_kinds: set[HandKind] = set()
    for config in GAME_CONFIGS:
        for seed in range(4):
            game = Game(config, seed)
            rng = random.Random(seed)
            while not game.is_over:
                game.apply(rng.choice(game.legal_actions()))
            scores = [0] * len(game.scores)
            for hand_number, hand in enumerate(game.hands):
                tricks = 0
                for event in hand.events:
                    if event.kind is EventKind.TRICK:
                        tricks += 1
                    if event.kind is EventKind.HAND_END:
                        assert event.result is not None
                        scores = [s + p for s, p in zip(scores, event.result.points,
                                                        strict=True)]
                        hand_kinds.add(event.result.kind)
                    msg = convert.event_to_pb(hand_number, event, trick_number=tricks,
                                              scores=scores)
                    check_event(hand_number, event, msg, tricks, tuple(scores))
                    # The referee's message: the same event (the frequent kinds are
                    # parsed from wire bytes in one piece).
                    sent = messages.game_event(hand_number, event, trick_number=tricks,
                                               scores=scores)
                    assert sent == (None if msg is None
                                    else rpb.ConnectResponse(game_event=msg))
                    kinds.add(event.kind)
            assert tuple(scores) == tuple(game.scores)
    assert kinds == set(EventKind)
    assert hand_kinds == set(HandKind)


def test_event_to_pb_needs_trick_number_and_scores() -> None:
    trick = Event(EventKind.TRICK, 2)
    with pytest.raises(ValueError, match="trick_number"):
        convert.event_to_pb(0, trick)
    with pytest.raises(ValueError, match="trick_number"):
        convert.event_to_pb(0, trick, trick_number=6)
    msg = convert.event_to_pb(4, trick, trick_number=5)
    assert msg is not None and msg.trick_won.trick_number == 5
    result = HandResult(HandKind.THROWN_IN, (0, 0), None, 0, False, None, (0, 0, 0, 0))
    end = Event(EventKind.HAND_END, None, result=result)
    with pytest.raises(ValueError, match="scores"):
        convert.event_to_pb(0, end)
    msg = convert.event_to_pb(0, end, scores=(3, 7))
    assert msg is not None and list(msg.hand_end.scores) == [3, 7]
    assert not msg.hand_end.result.HasField("maker")
    assert convert.event_to_pb(0, Event(EventKind.DEAL, 1, 1, (JOKER,))) is None


# --------------------------------------------------------------------------- hand start


def test_hand_start_uses_dealt_cards() -> None:
    config = RulesConfig()
    hand = Hand(config, 1, seeded_deck(config, 9, 0))
    for seat in range(4):
        msg = convert.hand_start_to_pb(hand, seat, 7, (4, 9))
        assert [convert.card_from_pb(c) for c in msg.hand] == list(hand.dealt[seat])
        assert convert.card_from_pb(msg.upcard) is hand.upcard
        assert (msg.hand_number, msg.dealer, list(msg.scores)) == (7, 1, [4, 9])


@pytest.mark.parametrize("joker_upcard", list(JokerUpcard))
def test_hand_start_of_a_blind_dealer(joker_upcard: JokerUpcard) -> None:
    config = RulesConfig(deck=DeckKind.D25, joker_upcard=joker_upcard)
    # Four hands of five (20 cards), then the kitty: the Joker on top is the upcard.
    rest = [c for c in seeded_deck(config, 1, 0) if c is not JOKER]
    deck = [*rest[:20], JOKER, *rest[20:]]
    hand = Hand(config, 2, deck)
    assert hand.upcard is JOKER
    blind = joker_upcard is JokerUpcard.DEALER_NAMES
    for seat in range(4):
        msg = convert.hand_start_to_pb(hand, seat, 0, (0, 0))
        assert len(msg.hand) == (0 if blind and seat == 2 else 5)
        assert msg.upcard == convert.card_to_pb(JOKER)


def test_parse_cards_helper_agrees() -> None:
    # The text form and the protobuf form name the same cards.
    for card, msg in zip(parse_cards("Js 9c Td Ah JK"),
                         [(11, 4), (9, 1), (10, 2), (14, 3), (15, 0)], strict=True):
        assert (convert.card_to_pb(card).rank, convert.card_to_pb(card).suit) == msg


def test_protocol_version() -> None:
    assert PROTOCOL_VERSION == 1


HARNESS = Path(__file__).resolve().parent.parent / "harness"


def test_protocol_version_is_defined_once() -> None:
    definitions = [str(path.relative_to(HARNESS)) for path in HARNESS.rglob("*.py")
                   if "_generated" not in path.parts
                   and re.search(r"^PROTOCOL_VERSION\b.*=", path.read_text(), re.M)]
    assert definitions == ["protocol/messages.py"]


@pytest.mark.parametrize("module", ["referee/match.py", "referee/session.py",
                                    "referee/server.py", "referee/pool.py",
                                    "referee/arena.py", "sdk/__init__.py"])
def test_referee_and_sdk_reach_the_generated_code_only_through_the_protocol_package(
        module: str) -> None:
    assert "_generated" not in (HARNESS / module).read_text()


def test_fault_notices_name_every_kind_the_protocol_has() -> None:
    for kind in FaultKind:
        notice = messages.fault(kind.value, "d", strikes=1, request_id=7).fault
        expected = {"timeout": rpb.FAULT_KIND_TIMEOUT,
                    "illegal_action": rpb.FAULT_KIND_ILLEGAL_ACTION,
                    "protocol_violation": rpb.FAULT_KIND_PROTOCOL_VIOLATION}.get(
            kind.value, rpb.FAULT_KIND_UNSPECIFIED)
        assert (notice.kind, notice.strikes, notice.request_id) == (expected, 1, 7)
    late = messages.fault("late_reply", "d").fault
    assert late.kind == rpb.FAULT_KIND_LATE_REPLY and not late.HasField("played_action")
    played = messages.fault("timeout", "d", played_action=A.PASS).fault
    assert convert.action_from_pb(played.played_action) is A.PASS


def test_game_over_names_every_termination() -> None:
    for termination in Termination:
        over = messages.game_over("g", termination=termination.value, scores=(3, 10),
                                  places=(2, 1), seat=1, winner_team=1, forfeit_seat=None,
                                  detail="x", hands_played=4).game_over
        assert rpb.GameTermination.Name(over.termination) == (
            f"GAME_TERMINATION_{termination.name}")
        assert over.your_place == 1 and not over.HasField("forfeit_seat")


def test_status_messages() -> None:
    welcome = messages.welcome("s1", "9.9").welcome
    assert (welcome.session_id, welcome.protocol_version, welcome.referee_version) == (
        "s1", PROTOCOL_VERSION, "9.9")
    refusal = messages.refusal(rpb.REFUSAL_REASON_BAD_TOKEN, "unknown token").refusal
    assert messages.refusal_reason_name(refusal.reason) == "REFUSAL_REASON_BAD_TOKEN"
    assert messages.shutdown("bye").shutdown.reason == "bye"
    assert messages.form_name(pb.FORM_CUTTHROAT) == "FORM_CUTTHROAT"
    assert messages.deck_name(99) == "99"


def test_bundle_holds_copies_of_the_messages_in_order() -> None:
    game = Game(RulesConfig(), 5)
    obs = game.observation(game.current or 0)
    play = messages.game_event(0, Event(EventKind.PLAY, 1, None, (obs.hand[0],)))
    assert play is not None
    inner = [messages.shutdown("a"), play,
             messages.decision_request(convert.decision_request_to_pb(3, obs, 900, 800))]
    built = messages.bundle(inner)
    assert built == rpb.ConnectResponse(bundle=rpb.Bundle(messages=inner))
    assert list(built.bundle.messages) == inner
    inner[0].shutdown.reason = "changed later"  # a copy: the bundle keeps what was sent
    assert built.bundle.messages[0].shutdown.reason == "a"
    assert messages.bundle([]) == rpb.ConnectResponse(bundle=rpb.Bundle())


def ref_request_bytes(request_id: int, obs: Observation, time_left_ms: int,
                      bank_ms: int) -> bytes:
    """What protobuf writes for the ConnectResponse of a DecisionRequest built field by
    field."""
    return rpb.ConnectResponse(decision_request=rpb.DecisionRequest(
        request_id=request_id, kind=convert.phase_to_decision_kind(obs.phase),
        legal_actions=[ref_action(a) for a in obs.legal_actions],
        time_left_ms=time_left_ms, bank_ms=bank_ms,
        observation=ref_observation(obs))).SerializeToString()


def test_wire_bytes_are_protobufs_own_at_every_decision_of_random_games() -> None:
    """The messages the referee writes as wire bytes (the decision requests, the events
    of every form, the Bundles around them) are byte for byte what protobuf writes for
    the same messages built field by field, at every decision of seeded games in every
    form: a bot reads the same bytes as from messages built the slow way."""
    forms: set[Form] = set()
    request_id = 0
    for config in GAME_CONFIGS:
        for game in random_games(config, range(3)):
            forms.add(config.form)
            seat = game.current
            assert seat is not None
            obs = game.observation(seat)
            request_id += 1
            time_left, bank = 900 + request_id, 300 * request_id  # one and two-byte varints
            data = messages.decision_request_bytes(request_id, obs, time_left, bank)
            assert data == ref_request_bytes(request_id, obs, time_left, bank)
            assert messages.size(data) == len(data)
            # The events the seat gets with it, in one Bundle.
            hand = game.hand
            trick_number = sum(1 for e in hand.events if e.kind is EventKind.TRICK)
            events: list[bytes] = []
            for ev in hand.events[-3:]:
                encoded = messages.game_event_bytes(len(game.hands) - 1, ev,
                                                    trick_number=max(trick_number, 1),
                                                    scores=game.scores)
                if encoded is None:
                    assert ev.kind is EventKind.DEAL
                    continue
                built = messages.game_event(len(game.hands) - 1, ev,
                                            trick_number=max(trick_number, 1),
                                            scores=game.scores)
                assert built is not None and encoded == built.SerializeToString()
                events.append(encoded)
            queued: list[messages.Outgoing] = [messages.shutdown("x"), *events, data]
            slow = messages.bundle([messages.decode(m) for m in queued])
            assert messages.bundle_bytes(queued) == slow.SerializeToString()
    assert forms == set(Form)
    assert messages.bundle_bytes([]) == messages.bundle([]).SerializeToString()


def test_a_decision_request_needs_a_decision() -> None:
    game = Game(RulesConfig(), 3)
    seat = game.current
    assert seat is not None
    obs = game.observation((seat + 1) % 4)
    with pytest.raises(ValueError, match="no decision to make"):
        messages.decision_request_bytes(1, obs, 1000, 1000)


def test_bytes_and_messages_encode_decode_and_size_alike() -> None:
    msg = messages.shutdown("bye", restarting=True)
    data = msg.SerializeToString()
    assert messages.encode(msg) == messages.encode(data) == data
    assert messages.decode(data) == messages.decode(msg) == msg
    assert messages.size(msg) == messages.size(data) == len(data)


def test_hello_and_reply_round_trip() -> None:
    hello = messages.hello("b", "1", "tok", forms=[Form.TWO_HANDED], bundles=True).hello
    assert hello.protocol_version == PROTOCOL_VERSION
    assert list(hello.capabilities.forms) == [pb.FORM_TWO_HANDED]
    assert hello.capabilities.bundles and not hello.capabilities.decks
    reply = messages.decision_reply(9, A.ORDER_UP).decision_reply
    assert reply.request_id == 9 and convert.action_from_pb(reply.action) is A.ORDER_UP


# --------------------------------------------------------------------------- tooling


def _buf() -> str | None:
    local = Path(sys.executable).parent / "buf"
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return shutil.which("buf")


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
                          check=False)


def test_generated_code_is_up_to_date() -> None:
    proc = _run([sys.executable, "scripts/gen_proto.py", "--check"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_buf_lint() -> None:
    buf = _buf()
    if buf is None:
        pytest.skip("the buf binary is not installed (pip install buf-bin)")
    proc = _run([buf, "lint", "proto"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_buf_breaking_against_the_committed_image() -> None:
    buf = _buf()
    if buf is None:
        pytest.skip("the buf binary is not installed (pip install buf-bin)")
    proc = _run([buf, "breaking", "proto", "--against", "proto/euchre_v1.binpb"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
