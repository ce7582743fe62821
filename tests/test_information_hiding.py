"""Information hiding: an audit of every message the referee sends to every seat.

docs/rules.md section 7: a player sees only what a player at a real table sees. This test
records every message the referee sends to each seat over many complete games, in every
form and with several decks and options, and checks each card in each message against
what that seat may know at the moment the message was sent:

* its own dealt cards (the blind dealer of a turned-up Joker under ``dealer_names`` only
  after naming trump);
* the upcard (public: the dealer's picked-up upcard too);
* every card played so far in the hand;
* its own discards, and the dummy only if it is the cutthroat maker who took it.

Anything else (another hand, the kitty under the upcard, another player's discard, an
unused dummy, a sitting-out partner's hand, a card before it is played) is a leak.

How it is recorded. ``Game.apply`` is wrapped to count the actions applied in the game
(the *clock*), and every message delivered to a seat is stored with the clock at the
moment of delivery (a Bundle as the messages it holds): either through fake sessions
handed to :class:`~harness.referee.match.GameRunner` (fast; they answer with random legal
actions, some seats taking Bundles and some not), or by wrapping ``Session.send`` while
real ``sample_bots.random_bot`` processes play over gRPC. What a seat may know is computed
independently of the referee's observation code, from the game record alone: the deck
order and dealer of each hand give the deal (``harness.rules.hand.Hand``), and the
recorded actions say when each card was played, discarded or taken
(``audit_support.knowledge``). Cards are found in
messages generically: every field of type ``euchre.v1.Card`` at any depth.

The audit is itself tested: leaks injected into the referee (another seat's card in the
HandStart, the dealer's discard sent to everybody, the dummy shown to all, the blind
dealer dealt cards, the card under the upcard) and a recording replayed with the clock
turned back must all be reported.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import sys
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
from audit_support import HandKnowledge, knowledge
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

from harness._generated.euchre.v1 import euchre_pb2 as pb
from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness.errors import ProtocolViolation
from harness.protocol import convert
from harness.protocol import messages as wire
from harness.referee.arena import Arena
from harness.referee.match import GameRunner
from harness.referee.outcome import GameResult, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.referee.session import Session
from harness.rules.actions import Action
from harness.rules.cards import DeckKind
from harness.rules.config import Form, JokerUpcard, LonerLead, RulesConfig
from harness.rules.game import Game, seeded_deck, seeded_first_dealer
from harness.rules.hand import Event, EventKind, Hand
from harness.rules.observation import Observation, observe

T = TypeVar("T")
REPO = Path(__file__).resolve().parent.parent
UNSPENT_BANK = 600.0  # seconds: the games here audit what seats see, not their clocks
CARD = pb.Card.DESCRIPTOR

# --------------------------------------------------------------------------- the audit


def _may_hold_card(desc: Descriptor, seen: frozenset[str] = frozenset()) -> bool:
    """Whether a message of this type can contain a Card at some depth."""
    if desc is CARD:
        return True
    if desc.full_name in seen:  # a recursive type: its other fields decide
        return False
    inner = seen | {desc.full_name}
    return any(f.message_type is not None and _may_hold_card(f.message_type, inner)
               for f in desc.fields)


_HOLDS_CARD: dict[str, bool] = {}


def may_hold_card(desc: Descriptor) -> bool:
    known = _HOLDS_CARD.get(desc.full_name)
    if known is None:
        known = _HOLDS_CARD[desc.full_name] = _may_hold_card(desc)
    return known


def cards_in(msg: Message, path: str = "") -> Iterator[tuple[str, pb.Card]]:
    """Every euchre.v1.Card anywhere in ``msg``, with its field path. (Sub-messages
    whose type cannot hold a Card at any depth are skipped, for speed.)"""
    for field, value in msg.ListFields():
        sub = field.message_type
        if sub is None or not may_hold_card(sub):
            continue
        if sub.GetOptions().map_entry:
            entry_value = sub.fields_by_name["value"]
            items = list(value.values()) if entry_value.message_type is not None else []
        else:
            items = list(value) if field.is_repeated else [value]
        for i, item in enumerate(items):
            where = f"{path}.{field.name}" + (f"[{i}]" if field.is_repeated else "")
            if sub is CARD:
                yield where, item
            else:
                yield from cards_in(item, where)


def hand_number(msg: rpb.ConnectResponse) -> int | None:
    which = msg.WhichOneof("payload")
    if which == "hand_start":
        return msg.hand_start.hand_number
    if which == "game_event":
        return msg.game_event.hand_number
    if which == "decision_request":
        return msg.decision_request.observation.hand_number
    return None


Sent = Mapping[int, Sequence[tuple[int, rpb.ConnectResponse]]]  # seat -> (clock, message)


@dataclasses.dataclass
class AuditReport:
    leaks: list[str]
    messages: int
    cards: int


def audit(record: Mapping[str, Any], sent: Sent,
          hands: Sequence[HandKnowledge] | None = None) -> AuditReport:
    """Check every card sent to every seat against what it may know at that moment.
    ``hands`` is ``knowledge(record)``, if already computed."""
    hands = knowledge(record) if hands is None else hands
    report = AuditReport([], 0, 0)
    for seat, messages in sent.items():
        current = 0
        for clock, msg in messages:
            report.messages += 1
            which = msg.WhichOneof("payload")
            number = hand_number(msg)
            h = current if number is None else number
            current = h
            if which == "game_event":
                event = msg.game_event
                private = event.WhichOneof("event")
                if private in ("discarded", "dummy_cards"):
                    owner = getattr(event, private).seat
                    if owner != seat:
                        report.leaks.append(f"seat {seat}, hand {h}: private {private} event "
                                            f"of seat {owner}")
            for path, pbcard in cards_in(msg):
                report.cards += 1
                try:
                    card = convert.card_from_pb(pbcard)
                except ProtocolViolation as e:
                    report.leaks.append(f"seat {seat}, hand {h}: {path[1:]}: {e}")
                    continue
                if h >= len(hands):
                    report.leaks.append(f"seat {seat}: {path[1:]} = {card} names hand {h}, "
                                        f"which was never dealt")
                    continue
                hk = hands[h]
                if not hk.known(seat, card, clock):
                    report.leaks.append(
                        f"seat {seat}, hand {h}, after {clock - hk.start} of its actions: "
                        f"{path[1:]} = {card}, from {hk.where.get(card, 'outside the deck')}")
    return report


def blind_dealer_checks(hands: Sequence[HandKnowledge], sent: Sent) -> int:
    """For each hand whose dealer names trump blind: the dealer's HandStart holds no
    card, the NAME_TRUMP request shows an empty hand, and the DEALER_DISCARD request
    that follows shows exactly the five dealt cards. Returns the hands checked."""
    checked = 0
    for h, hk in enumerate(hands):
        if not hk.blind:
            continue
        mine = [m for _, m in sent[hk.dealer] if hand_number(m) == h]
        (start,) = [m.hand_start for m in mine if m.WhichOneof("payload") == "hand_start"]
        assert len(start.hand) == 0 and start.upcard.rank == pb.RANK_JOKER
        requests = [m.decision_request for m in mine
                    if m.WhichOneof("payload") == "decision_request"]
        assert requests[0].kind == pb.DECISION_KIND_NAME_TRUMP
        assert len(requests[0].observation.hand) == 0
        assert requests[1].kind == pb.DECISION_KIND_DEALER_DISCARD
        shown = {convert.card_from_pb(c) for c in requests[1].observation.hand}
        assert shown == set(hk.dealt[hk.dealer])
        checked += 1
    return checked


# --------------------------------------------------------------------------- recording


class Recorder:
    """Messages sent per receiver, each with the game clock at the time of sending."""

    def __init__(self) -> None:
        self.clock = 0
        self.sent: dict[Any, list[tuple[int, rpb.ConnectResponse]]] = {}

    def reset(self) -> None:
        self.clock = 0
        self.sent = {}

    def record(self, receiver: Any, message: rpb.ConnectResponse) -> None:
        """Store a message as it is sent; a Bundle as the messages it holds, each of
        which the bot handles as if it had arrived alone."""
        if message.WhichOneof("payload") == "bundle":
            for inner in message.bundle.messages:
                self.record(receiver, inner)
            return
        self.sent.setdefault(receiver, []).append((self.clock, message))

    def by_seat(self) -> dict[int, list[tuple[int, rpb.ConnectResponse]]]:
        """Re-key by seat, which each receiver learns from its GameStart."""
        out: dict[int, list[tuple[int, rpb.ConnectResponse]]] = {}
        for messages in self.sent.values():
            starts = [m.game_start for _, m in messages
                      if m.WhichOneof("payload") == "game_start"]
            assert len(starts) == 1, "one game per recording"
            assert starts[0].seat not in out
            out[starts[0].seat] = messages
        return out


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    rec = Recorder()
    apply = Game.apply

    def counting_apply(game: Game, action: Action) -> None:
        apply(game, action)
        rec.clock += 1

    send = Session.send

    async def recording_send(session: Session, message: wire.Outgoing) -> None:
        # As the bot reads it (a message written as its wire bytes is parsed).
        rec.record((session.slot.name, session.slot.instance), wire.decode(message))
        await send(session, message)

    monkeypatch.setattr(Game, "apply", counting_apply)
    monkeypatch.setattr(Session, "send", recording_send)
    return rec


class FakeSeat:
    """Stands in for a Session: records what it delivers, answers at random. Like a
    Session it queues posted messages and delivers them on ``flush``: at once (the
    GameRunner flushes eager seats after every action) or, with ``bundles``, with the
    seat's next decision request or game over."""

    def __init__(self, recorder: Recorder, seat: int, rng: random.Random,
                 bundles: bool) -> None:
        self.recorder = recorder
        self.seat = seat
        self.rng = rng
        self.bundles = bundles
        self.violated = False
        self._outbox: list[wire.Outgoing] = []
        self._request_id = 0

    def new_request_id(self) -> int:
        self._request_id += 1
        return self._request_id

    def post(self, message: wire.Outgoing) -> None:
        self._outbox.append(message)

    async def flush(self, last: wire.Outgoing | None = None, *,
                    timeout: float = 0.0) -> None:
        queued, self._outbox = self._outbox, []
        for message in [*queued, *([last] if last is not None else [])]:
            await self.send(message)

    async def send(self, message: wire.Outgoing) -> None:
        self.recorder.record(("fake", self.seat), wire.decode(message))

    async def decide(self, request_id: int, message: wire.Outgoing,
                     timeout: float) -> rpb.DecisionReply:
        await self.flush(message)
        request = wire.decode(message).decision_request
        assert request.request_id == request_id
        return rpb.DecisionReply(request_id=request_id,
                                 action=self.rng.choice(request.legal_actions))


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def play_fake(recorder: Recorder, config: RulesConfig, seed: int) -> GameResult:
    recorder.reset()
    rng = random.Random(seed * 7919 + 1)
    seats = [FakeSeat(recorder, s, rng, bundles=(seed + s) % 2 == 1)
             for s in range(config.players)]
    # The clock is not what this audits: a bank no stall can use up. (With none, a
    # pause of this process on a loaded machine was charged to a seat that takes every
    # message at once, as time the game waited for it to read them, and forfeited it.)
    runner = GameRunner(f"audit-{seed}", config, seed, cast(list[Session], seats),
                        [f"p{s}" for s in range(config.players)],
                        time_control=TimeControl(1.0, UNSPENT_BANK))
    result = run(runner.play())
    assert result.termination is Termination.NORMAL
    return result


def joker_seeds(config: RulesConfig, count: int) -> list[int]:
    """Seeds whose first hand turns up the Joker."""
    found = []
    for seed in range(10_000):
        deck = seeded_deck(config, seed, 0)
        if Hand(config, seeded_first_dealer(config, seed), deck).upcard.is_joker:
            found.append(seed)
            if len(found) == count:
                break
    return found


# --------------------------------------------------------------------------- the tests

D24, D25, D32 = DeckKind.D24, DeckKind.D25, DeckKind.D32
FOUR, TWO, CUT = Form.FOUR_HANDED, Form.TWO_HANDED, Form.CUTTHROAT
HEARTS = JokerUpcard.HEARTS
CONFIGS: dict[str, RulesConfig] = {
    "four-24": RulesConfig(),
    "four-32-must-take-stick": RulesConfig(deck=D32, dealer_must_take=True,
                                           stick_the_dealer=True,
                                           loner_lead=LonerLead.LEFT_OF_DEALER),
    "four-25-dealer-names": RulesConfig(deck=D25),
    "four-25-hearts": RulesConfig(deck=D25, joker_upcard=HEARTS, allow_turned_down_suit=True),
    "four-no-partner-alone": RulesConfig(partner_may_go_alone=False, lone_defender=False),
    "two-24": RulesConfig(form=TWO),
    "two-32-stick": RulesConfig(form=TWO, deck=D32, stick_the_dealer=True),
    "two-25-dealer-names": RulesConfig(form=TWO, deck=D25),
    "two-25-hearts": RulesConfig(form=TWO, deck=D25, joker_upcard=HEARTS),
    "cutthroat-24": RulesConfig(form=CUT),
    "cutthroat-32-no-lone-defender": RulesConfig(form=CUT, deck=D32, lone_defender=False,
                                                 dealer_must_take=True),
    "cutthroat-25-dealer-names": RulesConfig(form=CUT, deck=D25),
    "cutthroat-25-hearts": RulesConfig(form=CUT, deck=D25, joker_upcard=HEARTS),
}
GAMES = 30


@pytest.mark.parametrize("name", list(CONFIGS))
def test_no_seat_sees_more_than_a_player_at_the_table(recorder: Recorder, name: str) -> None:
    config = CONFIGS[name]
    seeds = list(range(1, GAMES + 1))
    if config.deck is D25:  # make sure the Joker is turned up, however the games go
        seeds = joker_seeds(config, 3) + seeds[3:]
    hands: list[HandKnowledge] = []
    cards = blind = 0
    for seed in seeds:
        result = play_fake(recorder, config, seed)
        sent = recorder.by_seat()
        assert sorted(sent) == list(range(config.players))
        known = knowledge(result.record)
        report = audit(result.record, sent, known)
        assert report.leaks == [], "\n".join(report.leaks[:20])
        cards += report.cards
        blind += blind_dealer_checks(known, sent)
        hands += known
    # The games covered what they were meant to (else the audit proves little).
    assert cards > 1000
    assert any(h.discards for h in hands)
    if config.form is FOUR:
        assert any(h.sitting_out for h in hands)  # a lone hand: the partner sits out
    if config.form is CUT:
        assert any(h.dummy_taken for h in hands)  # the maker took the dummy
        assert any(h.dummy_taken is False for h in hands)  # the maker alone: dummy unused
        if config.lone_defender:
            assert any(h.sitting_out for h in hands)
    if config.deck is D25:
        jokers = sum(h.upcard.is_joker for h in hands)
        assert jokers >= 3
        assert blind == (jokers if config.joker_upcard is JokerUpcard.DEALER_NAMES else 0)


def test_audit_over_grpc_with_real_bots(tmp_path: Path, recorder: Recorder) -> None:
    """The same audit with sample_bots.random_bot processes playing over gRPC: the
    messages are recorded as the sessions write them to the wire."""
    games = [
        ("four-25-dealer-names", joker_seeds(CONFIGS["four-25-dealer-names"], 1)[0]),
        ("four-24", 31),
        ("two-32-stick", 32),
        ("cutthroat-24", 33),
        ("cutthroat-25-hearts", joker_seeds(CONFIGS["cutthroat-25-hearts"], 1)[0]),
        ("cutthroat-25-dealer-names", joker_seeds(CONFIGS["cutthroat-25-dealer-names"], 1)[0]),
    ]

    async def go() -> None:
        command = BotCommand((sys.executable, "-m", "sample_bots.random_bot"), cwd=str(REPO))
        async with Arena(log_dir=tmp_path / "logs", startup_timeout=10.0) as arena:
            arena.add(Entrant("random", command), 4)
            blind = 0
            for name, seed in games:
                config = CONFIGS[name]
                recorder.reset()
                result = await arena.play(f"{name}-{seed}", config, seed,
                                          ["random"] * config.players,
                                          time_control=TimeControl(5.0, UNSPENT_BANK))
                assert result.termination is Termination.NORMAL, result.detail
                sent = recorder.by_seat()
                assert sorted(sent) == list(range(config.players))
                report = audit(result.record, sent)
                assert report.leaks == [], "\n".join(report.leaks[:20])
                assert report.cards > 100
                blind += blind_dealer_checks(knowledge(result.record), sent)
            assert blind >= 2
    run(go())


# --------------------------------------------------------------------------- injected leaks


def leaks_with(recorder: Recorder, config: RulesConfig, seeds: Sequence[int]) -> list[str]:
    leaks: list[str] = []
    for seed in seeds:
        result = play_fake(recorder, config, seed)
        leaks += audit(result.record, recorder.by_seat()).leaks
    return leaks


def test_audit_reports_another_seats_card_in_hand_start(recorder: Recorder,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    original = convert.hand_start_to_pb

    def leaky(hand: Hand, seat: int, number: int, scores: Sequence[int]) -> rpb.HandStart:
        msg = original(hand, seat, number, scores)
        msg.hand.append(convert.card_to_pb(hand.dealt[(seat + 1) % hand.n][0]))
        return msg

    monkeypatch.setattr(convert, "hand_start_to_pb", leaky)
    leaks = leaks_with(recorder, RulesConfig(), [1])
    assert leaks and all("hand_start.hand[5]" in x and "'s hand" in x for x in leaks)


def test_audit_reports_the_card_under_the_upcard(recorder: Recorder,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    original = convert.hand_start_to_pb

    def leaky(hand: Hand, seat: int, number: int, scores: Sequence[int]) -> rpb.HandStart:
        msg = original(hand, seat, number, scores)
        if number == 2 and seat == 0:
            msg.upcard.CopyFrom(convert.card_to_pb(hand.kitty[1]))
        return msg

    monkeypatch.setattr(convert, "hand_start_to_pb", leaky)
    leaks = leaks_with(recorder, RulesConfig(form=Form.TWO_HANDED), [2])
    assert len(leaks) == 1 and "the kitty under the upcard" in leaks[0], leaks
    assert leaks[0].startswith("seat 0, hand 2, after 0 of its actions: hand_start.upcard")


def test_audit_reports_a_discard_sent_to_everybody(recorder: Recorder,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    original = Game.new_events

    def public(game: Game, cursor: tuple[int, int]) -> tuple[list[tuple[int, Event]],
                                                            tuple[int, int]]:
        events, cursor = original(game, cursor)
        return [(h, e._replace(to=None) if e.kind is EventKind.DISCARD else e)
                for h, e in events], cursor

    monkeypatch.setattr(Game, "new_events", public)
    leaks = leaks_with(recorder, RulesConfig(), [3, 4])
    assert any("game_event.discarded.card" in x for x in leaks), leaks
    assert any("private discarded event" in x for x in leaks), leaks


def test_audit_reports_an_unused_dummy(recorder: Recorder,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def shows_dummy(hand: Hand, seat: int, scores: tuple[int, ...], number: int) -> Observation:
        obs = observe(hand, seat, scores, number)
        return obs._replace(dummy=tuple(hand.dummy or ()))

    monkeypatch.setattr("harness.rules.game.observe", shows_dummy)  # what Game.observation calls
    leaks = leaks_with(recorder, RulesConfig(form=Form.CUTTHROAT), [5])
    assert any("observation.dummy" in x and "the dummy" in x for x in leaks), leaks


def test_audit_reports_a_blind_dealer_dealt_cards(recorder: Recorder,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    config = RulesConfig(deck=DeckKind.D25)
    seed = joker_seeds(config, 1)[0]

    def sighted(hand: Hand, seat: int, number: int, scores: Sequence[int]) -> rpb.HandStart:
        return rpb.HandStart(hand_number=number, dealer=hand.dealer,
                             hand=[convert.card_to_pb(c) for c in hand.dealt[seat]],
                             upcard=convert.card_to_pb(hand.upcard), scores=scores)

    monkeypatch.setattr(convert, "hand_start_to_pb", sighted)
    leaks = leaks_with(recorder, config, [seed])
    dealer = seeded_first_dealer(config, seed)
    prefix = f"seat {dealer}, hand 0, after 0 of its actions: hand_start.hand["
    assert len([x for x in leaks if x.startswith(prefix)]) == 5, leaks
    assert all(": hand_start.hand[" in x for x in leaks), leaks


def test_audit_reports_cards_before_they_are_played(recorder: Recorder) -> None:
    """A clean recording replayed as if every message had been sent at the start of its
    hand: the cards of later plays, shown in earlier messages, are leaks."""
    result = play_fake(recorder, RulesConfig(), 6)
    sent = recorder.by_seat()
    assert audit(result.record, sent).leaks == []
    hands = knowledge(result.record)

    def turned_back(clock: int, msg: rpb.ConnectResponse) -> int:
        h = hand_number(msg)
        return clock if h is None else hands[h].start

    early = {seat: [(turned_back(c, m), m) for c, m in messages]
             for seat, messages in sent.items()}
    leaks = audit(result.record, early).leaks
    assert len(leaks) > 50 and all("after 0 of its actions" in x for x in leaks)
