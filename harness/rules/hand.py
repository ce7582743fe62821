"""One hand of Euchre, from the deal to the score, for every form.

A :class:`Hand` is a state machine: :attr:`Hand.phase` says what kind of decision is due,
:attr:`Hand.current` whose it is, :meth:`Hand.legal_actions` the complete list, and
:meth:`Hand.apply` plays one (or raises :class:`~harness.errors.IllegalActionError` and
changes nothing). Every applied action is appended to :attr:`Hand.transitions` and every
consequence to :attr:`Hand.events`, each event tagged with who may see it
(:mod:`harness.rules.records`). The cards come from :func:`harness.rules.dealing.deal`.

Each phase has its own pair of methods, ``_legal_<phase>`` and ``_apply_<phase>``,
reached through the tables ``_LEGAL`` and ``_APPLY`` at the end of this module. Playing a
card (three decisions in four) is the one exception: :meth:`Hand.legal_actions` and
:meth:`Hand.apply` handle it inline, in the section marked "fast path".
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

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
from harness.rules.dealing import deal, deal_plan
from harness.rules.records import (
    ALONE_EVENTS,
    ALONE_TRANSITIONS,
    PLAY_EVENTS,
    PLAY_TRANSITIONS,
    ROUND_1_EVENTS,
    ROUND_1_TRANSITIONS,
    TRICK_EVENTS,
    Event,
    EventKind,
    Phase,
    Transition,
    TrickView,
    event,
    new_tuple,
    transition,
)
from harness.rules.scoring import HandResult, score_hand, thrown_in

# Re-exported: the public API of this module before dealing and records moved out.
__all__ = ["HAND_SIZE", "Event", "EventKind", "Hand", "Phase", "Transition", "deal",
           "deal_plan"]

HAND_SIZE = 5

_PLAY = Phase.PLAY
_PLAYS = A.PLAY_ACTIONS
# Legal action lists that never vary are shared by every hand, as tuples: nobody can
# change one under another game.
_ROUND_1 = (A.PASS, A.ORDER_UP)
_ALONE = (A.GO_ALONE, A.NOT_ALONE)
_PICKUP = (A.TAKE_UPCARD, A.LEAVE_UPCARD)
_NAMES = tuple(A.CALL_ACTIONS)
_NONE: tuple[Action, ...] = ()
_DISCARD_KIND = A.ActionKind.DISCARD
_DEAL = EventKind.DEAL
# The suit a PLAY action's card belongs to, by trump and action id (None for others).
_EFF_BY_ACTION = [[EFFECTIVE_SUIT[t][a.card.id] if a.kind is A.ActionKind.PLAY and a.card
                   else None for a in A.Action._by_id] for t in range(5)]
# (seat, card) pairs of the trick in play, shared like the records.
_SEAT_CARD = [[(s, c) for c in ALL_CARDS] for s in range(4)]
_NEXT_SEAT = {n: [(s + 1) % n for s in range(n)] for n in (2, 3, 4)}


@functools.cache
def _round_2_legal(turned_down: Suit | None, allow_turned_down: bool,
                   stuck_dealer: bool) -> tuple[Action, ...]:
    calls = tuple(A.CALL_ACTIONS[s] for s in Suit if s is not turned_down or allow_turned_down)
    return calls if stuck_dealer else (A.PASS, *calls)


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
        self._legal: tuple[Action, ...] | None = None
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
            self._log[0:0] = [new_tuple(Event, (_DEAL, s, s, d, None, None, None, None))
                              for s, d in enumerate(self.dealt)]
            self._deal_logged = True
        return self._log

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.HAND_OVER

    def state_name(self) -> str:
        return (f"hand(dealer={self.dealer}, phase={self.phase.value}, "
                f"turn={self.current}, trump={self.trump.name if self.trump is not None else '-'})")

    def legal_actions(self) -> tuple[Action, ...]:
        """Every legal action for :attr:`current`, in a fixed order; empty when the hand is
        over (a tuple: it is cached until the next :meth:`apply`, and shared)."""
        legal = self._legal
        if legal is None:
            if self.phase is _PLAY:
                # Fast path (plays): each seat's PLAY actions are kept beside its cards
                # (_start_play), so this copies or filters a list instead of building one.
                plays = self._plays[self.current]  # type: ignore[index]
                if self.trick:
                    eff = self._eff_play
                    led = self._led
                    legal = tuple([a for a in plays if eff[a.id] is led] or plays)
                else:
                    legal = tuple(plays)
            else:
                legal = _LEGAL[self.phase](self)
            self._legal = legal
        return legal

    def _legal_name_trump(self) -> tuple[Action, ...]:
        return _NAMES

    def _legal_bid_round_1(self) -> tuple[Action, ...]:
        return _ROUND_1

    def _legal_dealer_pickup(self) -> tuple[Action, ...]:
        return _PICKUP

    def _legal_discard(self) -> tuple[Action, ...]:
        """DEALER_DISCARD and DUMMY_DISCARD: any card in the hand."""
        return tuple([A.DISCARD_ACTIONS[c.id] for c in self.hands[self.current]])  # type: ignore[index]

    def _legal_bid_round_2(self) -> tuple[Action, ...]:
        cfg = self.config
        return _round_2_legal(self.upcard_suit, cfg.allow_turned_down_suit,
                              self.current == self.dealer and cfg.stick_the_dealer)

    def _legal_go_alone(self) -> tuple[Action, ...]:
        return _ALONE

    def _legal_none(self) -> tuple[Action, ...]:
        return _NONE

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
        if phase is not _PLAY:
            _APPLY[phase](self, seat, action)
            return
        # Fast path (plays): inline, with shared records and precomputed tables.
        card: Card = action.card  # type: ignore[assignment]
        cid = card.id
        self._transitions.append(PLAY_TRANSITIONS[seat][cid])
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
        self._log.append(PLAY_EVENTS[seat][cid])
        if power > self._best:
            self._best = power
            self._winner = seat
        if len(trick) < self._active:
            self.current = self._next_seat[seat]
        else:
            self._trick_done()

    # One method per phase other than PLAY (see _APPLY): record the action, then move on.
    def _apply_name_trump(self, seat: int, action: Action) -> None:
        self._transitions.append(transition(seat, action, Phase.NAME_TRUMP))
        self._log.append(event(EventKind.BID, seat, action=action, suit=action.suit))
        self._fix_trump(action.suit, seat)  # type: ignore[arg-type]
        self.dealer_took = True
        self._log.append(event(EventKind.PICKUP, seat, flag=True))
        self.phase = Phase.DEALER_DISCARD
        self.current = self.dealer

    def _apply_bid_round_1(self, seat: int, action: Action) -> None:
        ordered = action is A.ORDER_UP
        self._transitions.append(ROUND_1_TRANSITIONS[seat][ordered])
        self._log.append(ROUND_1_EVENTS[seat][ordered])
        if ordered:
            self._fix_trump(self.upcard_suit, seat)  # type: ignore[arg-type]
            self.current = self.dealer
            if seat == self.dealer or self.config.dealer_must_take:
                self.dealer_took = True
                self._log.append(event(EventKind.PICKUP, self.dealer, flag=True))
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

    def _apply_dealer_pickup(self, seat: int, action: Action) -> None:
        self._transitions.append(transition(seat, action, Phase.DEALER_PICKUP))
        took = action is A.TAKE_UPCARD
        self.dealer_took = took
        self._log.append(event(EventKind.PICKUP, seat, flag=took))
        if took:
            self.phase = Phase.DEALER_DISCARD
        else:
            self._bidding_done()

    def _apply_dealer_discard(self, seat: int, action: Action) -> None:
        self._transitions.append(transition(seat, action, Phase.DEALER_DISCARD))
        self._discard(seat, action)
        self.hands[seat].append(self.upcard)
        self._bidding_done()

    def _apply_bid_round_2(self, seat: int, action: Action) -> None:
        self._transitions.append(transition(seat, action, Phase.BID_ROUND_2))
        self._log.append(event(EventKind.BID, seat, suit=action.suit, action=action))
        if action is A.PASS:
            self._passes += 1
            if self._passes == self.n:
                self._finish(thrown_in(self.form, self.n))
            else:
                self.current = (seat + 1) % self.n
            return
        self._fix_trump(action.suit, seat)  # type: ignore[arg-type]
        self._bidding_done()

    def _apply_go_alone(self, seat: int, action: Action) -> None:
        alone = action is A.GO_ALONE
        self._transitions.append(ALONE_TRANSITIONS[seat][alone])
        self._log.append(ALONE_EVENTS[seat][alone])
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

    def _apply_dummy_discard(self, seat: int, action: Action) -> None:
        self._transitions.append(transition(seat, action, Phase.DUMMY_DISCARD))
        self._discard(seat, action)
        if len(self.hands[seat]) == HAND_SIZE:
            self._start_play()

    # ------------------------------------------------------------------ shared steps
    def _discard(self, seat: int, action: Action) -> None:
        card = action.card
        assert card is not None
        self.hands[seat].remove(card)
        self.discards.setdefault(seat, []).append(card)
        self._log.append(event(EventKind.DISCARD, seat, seat, (card,)))

    def _fix_trump(self, suit: Suit, maker: int) -> None:
        self.trump = suit
        self.maker = maker
        self._log.append(event(EventKind.TRUMP, maker, suit=suit))

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
            self._log.append(event(EventKind.DUMMY, maker, maker, tuple(self.dummy)))
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
        self.tricks.append(new_tuple(TrickView, (trick[0][0], tuple(trick), winner)))
        self.tricks_won[winner] += 1
        self._log.append(TRICK_EVENTS[winner])
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
        self._log.append(event(EventKind.HAND_END, None, result=result))

    # ------------------------------------------------------------------ records
    def to_record(self) -> dict[str, object]:
        return {
            "dealer": self.dealer,
            "deck": format_cards(self.deck),
            "actions": [[s, str(a)] for s, a, _ in self._transitions],
            "result": self.result.to_dict() if self.result is not None else None,
        }


# The per-phase methods. PLAY is absent from both: it is the inline fast path.
_LEGAL: dict[Phase, Callable[[Hand], tuple[Action, ...]]] = {
    Phase.NAME_TRUMP: Hand._legal_name_trump,
    Phase.BID_ROUND_1: Hand._legal_bid_round_1,
    Phase.DEALER_PICKUP: Hand._legal_dealer_pickup,
    Phase.DEALER_DISCARD: Hand._legal_discard,
    Phase.BID_ROUND_2: Hand._legal_bid_round_2,
    Phase.GO_ALONE: Hand._legal_go_alone,
    Phase.DUMMY_DISCARD: Hand._legal_discard,
    Phase.HAND_OVER: Hand._legal_none,
    Phase.GAME_OVER: Hand._legal_none,
}
_APPLY: dict[Phase, Callable[[Hand, int, Action], None]] = {
    Phase.NAME_TRUMP: Hand._apply_name_trump,
    Phase.BID_ROUND_1: Hand._apply_bid_round_1,
    Phase.DEALER_PICKUP: Hand._apply_dealer_pickup,
    Phase.DEALER_DISCARD: Hand._apply_dealer_discard,
    Phase.BID_ROUND_2: Hand._apply_bid_round_2,
    Phase.GO_ALONE: Hand._apply_go_alone,
    Phase.DUMMY_DISCARD: Hand._apply_dummy_discard,
}
