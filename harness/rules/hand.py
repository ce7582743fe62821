"""One hand of Euchre, from the deal to the score, for every form.

A :class:`Hand` is a state machine: :attr:`Hand.phase` says what kind of decision is due,
:attr:`Hand.current` whose it is, :meth:`Hand.legal_actions` the complete list, and
:meth:`Hand.apply` plays one (or raises :class:`~harness.errors.IllegalActionError` and
changes nothing). Every applied action is appended to :attr:`Hand.transitions` and every
consequence to :attr:`Hand.events`, each event tagged with who may see it.

Dealing (docs/rules.md section 3 leaves the method to the referee). The deck order is given;
the receivers are the players clockwise from the dealer's left, then (cutthroat) the
dummy. Each receiver takes a packet from the top of the deck: 3, 2, 3, 2, ... in the
first round and 2, 3, 2, 3, ... in the second, so each ends with five. The remaining
cards are the kitty, in deck order; its first card is the upcard.
"""

from __future__ import annotations

import enum
import functools
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

from harness.errors import IllegalActionError
from harness.rules import actions as A
from harness.rules.actions import Action
from harness.rules.cards import (
    ALL_CARDS,
    EFFECTIVE_SUIT,
    PACK_SETS,
    RANK_VALUE,
    TRUMP_POWER,
    Card,
    Suit,
    format_cards,
)
from harness.rules.config import Form, JokerUpcard, LonerLead, RulesConfig
from harness.rules.observation import TrickView
from harness.rules.scoring import HandResult, score_hand, thrown_in

HAND_SIZE = 5


class Phase(enum.Enum):
    """What kind of decision a hand is waiting for."""

    NAME_TRUMP = "name_trump"  # dealer names trump on a turned-up Joker (dealer_names)
    BID_ROUND_1 = "bid_round_1"  # pass or order it up
    DEALER_PICKUP = "dealer_pickup"  # ordered up by another player: take or leave
    DEALER_DISCARD = "dealer_discard"  # dealer took the upcard: discard one dealt card
    BID_ROUND_2 = "bid_round_2"  # pass or name a suit
    GO_ALONE = "go_alone"  # alone or not
    DUMMY_DISCARD = "dummy_discard"  # cutthroat maker with ten cards discards down to five
    PLAY = "play"
    HAND_OVER = "hand_over"
    GAME_OVER = "game_over"  # used by Game, never by a Hand


_PLAY = Phase.PLAY
_PLAYS = A.PLAY_ACTIONS
# Legal lists that never vary are shared: callers must not modify what legal_actions()
# returns.
_ROUND_1 = [A.PASS, A.ORDER_UP]
_ALONE = [A.GO_ALONE, A.NOT_ALONE]
_PICKUP = [A.TAKE_UPCARD, A.LEAVE_UPCARD]
_DISCARD_KIND = A.ActionKind.DISCARD


class Transition(NamedTuple):
    """One applied action: who, what, and in which phase."""

    seat: int
    action: Action
    phase: Phase


class EventKind(enum.Enum):
    DEAL = "deal"  # private: the seat's own five cards (and the public upcard)
    BID = "bid"  # public: pass / order / call in either round, or naming on a Joker
    TRUMP = "trump"  # public: trump fixed, by whom
    PICKUP = "pickup"  # public: the dealer takes (or leaves) the upcard
    DISCARD = "discard"  # private to the discarder
    DUMMY = "dummy"  # private to the maker: the dummy's five cards
    ALONE = "alone"  # public: a going-alone decision
    PLAY = "play"  # public: a card played
    TRICK = "trick"  # public: the winner of a trick
    HAND_END = "hand_end"  # public: the hand's result


class Event(NamedTuple):
    """Something that happened. ``to`` is the one seat that may see it, or ``None`` for
    every seat. ``cards`` holds the cards involved; ``suit`` a suit; ``flag`` a yes/no
    (alone or not, took or left); ``result`` the hand result on ``HAND_END``."""

    kind: EventKind
    seat: int | None
    to: int | None = None
    cards: tuple[Card, ...] = ()
    suit: Suit | None = None
    flag: bool | None = None
    action: Action | None = None
    result: HandResult | None = None


# NamedTuple's generated __new__ is a Python function; the hot path builds the tuples
# directly (same fields, same order, same type).
_new_tuple = tuple.__new__


def _event(kind: EventKind, seat: int | None, to: int | None = None,
           cards: tuple[Card, ...] = (), suit: Suit | None = None, flag: bool | None = None,
           action: Action | None = None, result: HandResult | None = None) -> Event:
    return _new_tuple(Event, (kind, seat, to, cards, suit, flag, action, result))


_DEAL = EventKind.DEAL
# Events that depend only on (seat, card) or (seat, yes/no) are immutable, so they are
# built once here and shared: the hot path appends them without allocating.
_SEATS = range(4)
_PLAY_EVENTS = [[_event(EventKind.PLAY, s, cards=(c,)) for c in ALL_CARDS] for s in _SEATS]
_TRICK_EVENTS = [_event(EventKind.TRICK, s) for s in _SEATS]
_ROUND_1_EVENTS = [[_event(EventKind.BID, s, action=a) for a in (A.PASS, A.ORDER_UP)]
                   for s in _SEATS]
_ALONE_EVENTS = [[_event(EventKind.ALONE, s, flag=f) for f in (False, True)] for s in _SEATS]
_SEAT_CARD = [[(s, c) for c in ALL_CARDS] for s in _SEATS]
# The suit a PLAY action's card belongs to, by trump and action id (None for others).
_EFF_BY_ACTION = [[EFFECTIVE_SUIT[t][a.card.id] if a.kind is A.ActionKind.PLAY and a.card
                   else None for a in A.Action._by_id] for t in range(5)]
_PLAY_TRANSITIONS = [[Transition(s, A.PLAY_ACTIONS[c.id], Phase.PLAY) for c in ALL_CARDS]
                     for s in _SEATS]
_ALONE_TRANSITIONS = [[Transition(s, a, Phase.GO_ALONE) for a in (A.NOT_ALONE, A.GO_ALONE)]
                      for s in _SEATS]
_ROUND_1_TRANSITIONS = [[Transition(s, a, Phase.BID_ROUND_1) for a in (A.PASS, A.ORDER_UP)]
                        for s in _SEATS]
_GO_ALONE = Phase.GO_ALONE
_ROUND_1_PHASE = Phase.BID_ROUND_1
_NEXT_SEAT = {n: [(s + 1) % n for s in range(n)] for n in (2, 3, 4)}
_BID_EV = EventKind.BID
_TRUMP_EV = EventKind.TRUMP
_END_EV = EventKind.HAND_END
_PICKUP_EV = EventKind.PICKUP


@functools.cache
def _round_2_legal(turned_down: Suit | None, allow_turned_down: bool,
                   stuck_dealer: bool) -> list[Action]:
    calls = [A.CALL_ACTIONS[s] for s in Suit if s is not turned_down or allow_turned_down]
    return calls if stuck_dealer else [A.PASS, *calls]


@functools.cache
def _alone_stages(form: Form, n: int, maker: int, partner_may: bool | None,
                  lone_defender: bool | None) -> tuple[tuple[int, ...], ...]:
    """Who is asked about going alone, in order, in stages: within a stage the next is
    asked only if the previous declined (docs/rules.md section 3)."""
    if form is Form.FOUR_HANDED:
        first = (maker, (maker + 2) % 4) if partner_may else (maker,)
        second = ((maker + 1) % 4, (maker + 3) % 4)
    else:
        first = (maker,)
        second = ((maker + 1) % n, (maker + 2) % n)
    return (first, second) if lone_defender else (first,)


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


class Hand:
    """The state of one hand. See the module docstring for the protocol."""

    __slots__ = (
        "_active",
        "_alone_pos",
        "_alone_queue",
        "_best",
        "_deal_logged",
        "_dealt",
        "_eff",
        "_eff_play",
        "_led",
        "_legal",
        "_log",
        "_next_seat",
        "_passes",
        "_plays",
        "_power",
        "_public",
        "_public_tuple",
        "_public_upto",
        "_transitions",
        "_winner",
        "alone",
        "config",
        "current",
        "dealer",
        "dealer_took",
        "deck",
        "discards",
        "dummy",
        "dummy_taken",
        "form",
        "hands",
        "kitty",
        "leader",
        "maker",
        "n",
        "phase",
        "result",
        "sitting_out",
        "trick",
        "tricks",
        "tricks_won",
        "trump",
        "turned_down",
        "upcard",
        "upcard_suit",
    )

    def __init__(self, config: RulesConfig, dealer: int, deck: Sequence[Card]) -> None:
        deck = tuple(deck)
        expected = PACK_SETS[config.deck]
        if len(deck) != len(expected) or frozenset(deck) != expected:
            raise ValueError(f"deck order must hold exactly the {config.deck.value}-card pack "
                             f"once each; got {len(deck)} cards")
        n = config.players
        if not 0 <= dealer < n:
            raise ValueError(f"dealer must be a seat 0..{n - 1}; got {dealer}")
        self.config = config
        self.form = config.form
        self.n = n
        self.dealer = dealer
        self.deck = deck
        self.hands, self.dummy, self.kitty = deal(config, dealer, deck)
        self._dealt: tuple[tuple[Card, ...], ...] | None = None
        self._log: list[Event] = []  # events after the deal (see the events property)
        self._deal_logged = False
        self.upcard: Card = self.kitty[0]
        # The suit the upcard stands for in round 1 (a Joker counts as a heart if so ruled).
        self.upcard_suit: Suit | None = self.upcard.suit
        self.trump: Suit | None = None
        self.maker: int | None = None
        self.dealer_took: bool | None = None
        self.turned_down = False
        self.alone: list[int] = []
        self.sitting_out: list[int] = []
        self.discards: dict[int, list[Card]] = {}
        self.dummy_taken = False
        self.tricks: list[TrickView] = []
        self.trick: list[tuple[int, Card]] = []
        self.leader: int | None = None
        self.tricks_won = [0] * n
        self.result: HandResult | None = None
        self._transitions: list[Transition] = []
        self._public: list[tuple[int, Action]] = []
        self._public_upto = 0
        self._public_tuple: tuple[tuple[int, Action], ...] = ()
        self._passes = 0
        self._alone_queue: list[tuple[int, ...]] = []
        self._alone_pos = 0
        self._legal: list[Action] | None = None
        self._led: Suit | None = None
        self._active = n
        self._next_seat: list[int] = []
        self._power: list[int] = []
        self._eff: list[Suit | None] = []
        self._eff_play: list[Suit | None] = []
        self._plays: list[list[Action]] = []
        self._best = -1
        self._winner = 0
        self.phase = Phase.BID_ROUND_1
        self.current: int | None = (dealer + 1) % n
        if self.upcard.is_joker:
            if config.joker_upcard is JokerUpcard.DEALER_NAMES:
                self.phase = Phase.NAME_TRUMP
                self.current = dealer
            else:
                self.upcard_suit = Suit.HEARTS

    # ------------------------------------------------------------------ queries
    @property
    def blind_dealer(self) -> bool:
        """The dealer is naming trump on a turned-up Joker without seeing the hand."""
        return self.phase is Phase.NAME_TRUMP

    @property
    def dealt(self) -> tuple[tuple[Card, ...], ...]:
        """Each seat's five cards as dealt (recomputed from the deck on first use)."""
        if self._dealt is None:
            self._dealt = tuple(map(tuple, deal(self.config, self.dealer, self.deck)[0]))
        return self._dealt

    @property
    def events(self) -> list[Event]:
        """Everything that happened, in order: first a DEAL event per seat (private to
        it), then one or more events per action. Read-only for callers."""
        if not self._deal_logged:  # the deal events are made on first use
            self._log[0:0] = [_new_tuple(Event, (_DEAL, s, s, d, None, None, None, None))
                              for s, d in enumerate(self.dealt)]
            self._deal_logged = True
        return self._log

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.HAND_OVER

    def state_name(self) -> str:
        return (f"hand(dealer={self.dealer}, phase={self.phase.value}, "
                f"turn={self.current}, trump={self.trump.name if self.trump is not None else '-'})")

    def legal_actions(self) -> list[Action]:
        """Every legal action for :attr:`current`, in a fixed order; empty when the hand is
        over. The list is cached until the next :meth:`apply`: do not modify it."""
        legal = self._legal
        if legal is None:
            if self.phase is _PLAY:  # the hot path, inline
                plays = self._plays[self.current]  # type: ignore[index]
                if self.trick:
                    eff = self._eff_play
                    led = self._led
                    legal = [a for a in plays if eff[a.id] is led] or plays[:]
                else:
                    legal = plays[:]
            else:
                legal = self._compute_legal()
            self._legal = legal
        return legal

    def _compute_legal(self) -> list[Action]:
        phase = self.phase
        seat = self.current
        if phase is _PLAY:
            self._legal = None
            return self.legal_actions()
        if phase is Phase.BID_ROUND_1:
            return _ROUND_1
        if phase is Phase.BID_ROUND_2:
            cfg = self.config
            return _round_2_legal(self.upcard_suit, cfg.allow_turned_down_suit,
                                  seat == self.dealer and cfg.stick_the_dealer)
        if phase is Phase.GO_ALONE:
            return _ALONE
        if phase is Phase.DEALER_PICKUP:
            return _PICKUP
        if phase is Phase.DEALER_DISCARD:
            assert seat is not None
            return [A.DISCARD_ACTIONS[c.id] for c in self.hands[seat]]
        if phase is Phase.DUMMY_DISCARD:
            assert seat is not None
            return [A.DISCARD_ACTIONS[c.id] for c in self.hands[seat]]
        if phase is Phase.NAME_TRUMP:
            return list(A.CALL_ACTIONS)
        return []

    @property
    def transitions(self) -> list[Transition]:
        """Every applied action in order, as frozen records (built on each access)."""
        return list(self._transitions)

    @property
    def public_actions(self) -> tuple[tuple[int, Action], ...]:
        """(seat, action) of every action all players see: all but the discards. Built
        incrementally on demand, so observations stay cheap late in a hand."""
        cache = self._public
        done = self._public_upto
        transitions = self._transitions
        if done < len(transitions):
            cache.extend((s, a) for s, a, _ in transitions[done:]
                         if a.kind is not _DISCARD_KIND)
            self._public_upto = len(transitions)
            self._public_tuple = tuple(cache)
        return self._public_tuple

    # ------------------------------------------------------------------ transitions
    def apply(self, action: Action) -> None:
        """Apply ``action`` for :attr:`current`. Raises IllegalActionError (state unchanged)
        if it is not among :meth:`legal_actions`."""
        legal = self._legal
        if legal is None:
            legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(action, self.current, self.state_name(), list(legal))
        seat: int = self.current  # type: ignore[assignment]
        phase = self.phase
        self._legal = None
        if phase is _PLAY:  # the hot path, inline
            card: Card = action.card  # type: ignore[assignment]
            cid = card.id
            self._transitions.append(_PLAY_TRANSITIONS[seat][cid])
            self.hands[seat].remove(card)
            self._plays[seat].remove(action)
            trick = self.trick
            eff = self._eff
            if trick:
                led = self._led
            else:
                self._led = led = eff[cid]
                self._best = -1
            # cards.trick_power(), inlined: trumps above the led suit, others worth 0.
            power = self._power[cid]
            if power:
                power += 200
            elif eff[cid] is led:
                power = RANK_VALUE[cid]
            trick.append(_SEAT_CARD[seat][cid])
            self._log.append(_PLAY_EVENTS[seat][cid])
            if power > self._best:
                self._best = power
                self._winner = seat
            if len(trick) < self._active:
                self.current = self._next_seat[seat]
            else:
                self._trick_done()
            return
        if phase is _GO_ALONE:  # the commonest decisions after plays: shared records
            alone = action is A.GO_ALONE
            self._transitions.append(_ALONE_TRANSITIONS[seat][alone])
            self._go_alone(seat, alone)
            return
        if phase is _ROUND_1_PHASE:
            self._transitions.append(_ROUND_1_TRANSITIONS[seat][action is A.ORDER_UP])
            self._bid_round_1(seat, action)
            return
        self._transitions.append(_new_tuple(Transition, (seat, action, phase)))
        if phase is Phase.BID_ROUND_2:
            self._bid_round_2(seat, action)
        elif phase is Phase.DEALER_PICKUP:
            took = action is A.TAKE_UPCARD
            self.dealer_took = took
            self._log.append(_new_tuple(Event, (_PICKUP_EV, seat, None, (), None, took, None,
                                                  None)))
            if took:
                self.phase = Phase.DEALER_DISCARD
            else:
                self._bidding_done()
        elif phase is Phase.DEALER_DISCARD:
            self._discard(seat, action)
            self.hands[seat].append(self.upcard)
            self._bidding_done()
        elif phase is Phase.DUMMY_DISCARD:
            self._discard(seat, action)
            if len(self.hands[seat]) == HAND_SIZE:
                self._start_play()
        elif phase is Phase.NAME_TRUMP:
            self._log.append(_event(EventKind.BID, seat, action=action, suit=action.suit))
            self._fix_trump(action.suit, seat)  # type: ignore[arg-type]
            self.dealer_took = True
            self._log.append(_event(EventKind.PICKUP, seat, flag=True))
            self.phase = Phase.DEALER_DISCARD
            self.current = self.dealer

    def _discard(self, seat: int, action: Action) -> None:
        card = action.card
        assert card is not None
        self.hands[seat].remove(card)
        self.discards.setdefault(seat, []).append(card)
        self._log.append(_event(EventKind.DISCARD, seat, seat, (card,)))

    def _fix_trump(self, suit: Suit, maker: int) -> None:
        self.trump = suit
        self.maker = maker
        self._log.append(_new_tuple(Event, (_TRUMP_EV, maker, None, (), suit, None, None, None)))

    def _bid_round_1(self, seat: int, action: Action) -> None:
        self._log.append(_ROUND_1_EVENTS[seat][action is A.ORDER_UP])
        if action is A.ORDER_UP:
            self._fix_trump(self.upcard_suit, seat)  # type: ignore[arg-type]
            self.current = self.dealer
            if seat == self.dealer or self.config.dealer_must_take:
                self.dealer_took = True
                self._log.append(_event(EventKind.PICKUP, self.dealer, flag=True))
                self.phase = Phase.DEALER_DISCARD
            else:
                self.phase = Phase.DEALER_PICKUP
            return
        self._passes += 1
        if self._passes == self.n:
            self.turned_down = True
            self._passes = 0
            self.phase = Phase.BID_ROUND_2
        self.current = (seat + 1) % self.n

    def _bid_round_2(self, seat: int, action: Action) -> None:
        self._log.append(_new_tuple(Event, (_BID_EV, seat, None, (), action.suit, None, action,
                                              None)))
        if action is A.PASS:
            self._passes += 1
            if self._passes == self.n:
                self._finish(thrown_in(self.form, self.n))
            else:
                self.current = (seat + 1) % self.n
            return
        self._fix_trump(action.suit, seat)  # type: ignore[arg-type]
        self._bidding_done()

    def _bidding_done(self) -> None:
        """Trump is fixed and any discard made: ask about going alone, or play."""
        maker = self.maker
        assert maker is not None
        form = self.form
        n = self.n
        if form is Form.TWO_HANDED:
            self._after_alone()
            return
        cfg = self.config
        self._alone_queue = list(_alone_stages(form, n, maker, cfg.partner_may_go_alone,
                                               cfg.lone_defender))
        self._alone_pos = 0
        self.phase = Phase.GO_ALONE
        self.current = maker

    def _go_alone(self, seat: int, alone: bool) -> None:
        self._log.append(_ALONE_EVENTS[seat][alone])
        queue = self._alone_queue
        pos = self._alone_pos + 1
        if alone:  # nobody else on this side is asked
            self.alone.append(seat)
            pos = len(queue[0])
        if pos == len(queue[0]):
            queue.pop(0)
            pos = 0
        self._alone_pos = pos
        if queue:
            self.current = queue[0][pos]
        else:
            self._after_alone()

    def _after_alone(self) -> None:
        maker = self.maker
        assert maker is not None
        for s in self.alone:
            if self.form is Form.FOUR_HANDED:
                self.sitting_out.append((s + 2) % 4)
            elif s != maker:  # a lone cutthroat defender: the other defender sits out
                self.sitting_out.extend(d for d in range(3) if d not in (s, maker))
        if self.form is Form.CUTTHROAT and maker not in self.alone:
            assert self.dummy is not None
            self.dummy_taken = True
            self._log.append(_event(EventKind.DUMMY, maker, maker, tuple(self.dummy)))
            self.hands[maker].extend(self.dummy)
            self.phase = Phase.DUMMY_DISCARD
            self.current = maker
            return
        self._start_play()

    def _next_active(self, seat: int) -> int:
        n = self.n
        nxt = (seat + 1) % n
        while nxt in self.sitting_out:
            nxt = (nxt + 1) % n
        return nxt

    def _start_play(self) -> None:
        n = self.n
        nxt = ([self._next_active(s) for s in range(n)] if self.sitting_out
               else _NEXT_SEAT[n])
        leader = nxt[self.dealer]
        alone = self.alone
        if alone and self.config.loner_lead is LonerLead.LEFT_OF_LONE:
            # The maker's side is asked first, so with two alone the second is the lone
            # defender, who leads; with one, the player to the lone player's left leads.
            leader = alone[1] if len(alone) == 2 else nxt[alone[0]]
        self.phase = _PLAY
        self.leader = leader
        self.current = leader
        self._active = n - len(self.sitting_out)
        self._next_seat = nxt
        trump = self.trump
        assert trump is not None
        self._power = TRUMP_POWER[trump]
        self._eff = EFFECTIVE_SUIT[trump]
        self._eff_play = _EFF_BY_ACTION[trump]
        # Each seat's PLAY actions, kept beside its cards while tricks are played, so that
        # legal_actions() copies or filters a list instead of building one per decision.
        self._plays = [[_PLAYS[c.id] for c in h] for h in self.hands]

    def _trick_done(self) -> None:
        trick = self.trick
        winner = self._winner
        self.tricks.append(_new_tuple(TrickView, (trick[0][0], tuple(trick), winner)))
        self.tricks_won[winner] += 1
        self._log.append(_TRICK_EVENTS[winner])
        self.trick = []
        if len(self.tricks) == HAND_SIZE:
            assert self.maker is not None
            self._finish(score_hand(self.form, self.maker, self.alone, self.tricks_won))
        else:
            self.current = winner

    def _finish(self, result: HandResult) -> None:
        self.result = result
        self.phase = Phase.HAND_OVER
        self.current = None
        self._log.append(_new_tuple(Event, (_END_EV, None, None, (), None, None, None, result)))

    # ------------------------------------------------------------------ records
    def to_record(self) -> dict[str, object]:
        return {
            "dealer": self.dealer,
            "deck": format_cards(self.deck),
            "actions": [[s, str(a)] for s, a, _ in self._transitions],
            "result": self.result.to_dict() if self.result is not None else None,
        }
