"""A lean play phase for search: the rest of a hand played out from a world in a few µs
per card.

:class:`PlayRollout` is built once per decision from the observation (trump, maker, who
is alone, the trick on the table, the tricks won) and then plays out any number of
worlds (each seat's cards now, as card ids). It does only what the play phase needs:
following suit (the bowers and the Joker counted as trump), trick winners, and the
hand's points from the makers' tricks, scored by the engine's own scoring table. Cards
are plain ints (``Card.id``) and every per-card fact is a precomputed table, so one
rollout costs about as much as the engine's random play of a whole hand.

The players' policy is the heuristic bot's card play (``sample_bots.heuristic_bot``),
expressed over those tables: its card values are the same
:func:`~harness.sdk.search.values.card_value`, and ``tests/test_search_rollout.py``
checks that it picks the heuristic bot's card.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence

from harness.rules import Form, Observation, Rank, RulesConfig, Suit
from harness.rules.cards import ALL_CARDS, EFFECTIVE_SUIT, RANK_VALUE, TRUMP_POWER
from harness.rules.scoring import score_hand, team_of
from harness.sdk.search.values import card_value

_SINGLETON_BONUS = -0.3  # the heuristic's weakest(): a lone plain card is cheaper
_TOP_TRUMP = 99  # right bower or the Joker
_SAFE_WIN = 214  # a partner's card this strong is left alone: any trump or an ace led


class Tables:
    """Per-card facts under one trump, indexed by ``Card.id``."""

    def __init__(self, trump: Suit) -> None:
        t = int(trump)
        self.trump = t
        self.eff: list[int] = [int(s) if s is not None else t for s in EFFECTIVE_SUIT[t]]
        self.power: list[int] = list(TRUMP_POWER[t])  # order among trumps, 0 if none
        self.follow_rank: list[int] = list(RANK_VALUE)
        self.keep: list[float] = [card_value(c, trump) for c in ALL_CARDS]
        # A lone card of its suit is thrown first unless it is a trump or an ace.
        self.bonus: list[float] = [0.0 if self.eff[c.id] == t or c.rank is Rank.ACE
                                   else _SINGLETON_BONUS for c in ALL_CARDS]
        self.off_ace: list[bool] = [c.rank is Rank.ACE and self.eff[c.id] != t
                                    for c in ALL_CARDS]


@functools.cache
def tables(trump: Suit) -> Tables:
    return Tables(trump)


def weakest(t: Tables, cards: Sequence[int]) -> int:
    """The heuristic's card to give up among ``cards``: the cheapest to keep, a lone
    card of a plain suit counting as cheaper."""
    if len(cards) == 1:
        return cards[0]
    eff = t.eff
    counts = [0, 0, 0, 0]
    for c in cards:
        counts[eff[c]] += 1
    keep = t.keep
    bonus = t.bonus
    best = cards[0]
    best_key = keep[best] + (bonus[best] if counts[eff[best]] == 1 else 0.0)
    for c in cards[1:]:
        k = keep[c] + (bonus[c] if counts[eff[c]] == 1 else 0.0)
        if k < best_key or (k == best_key and c < best):
            best, best_key = c, k
    return best


class PlayRollout:
    """Plays the rest of a hand from the observed moment, for the observing seat.

    ``run(hands, first)`` plays the seat to move's card ``first`` and then every player
    by the heuristic policy (``first=None``: the heuristic from the start), and returns
    the hand's points for the observer's side minus the mean of the other sides'."""

    def __init__(self, obs: Observation, config: RulesConfig) -> None:
        if obs.trump is None or obs.maker is None or obs.current is None:
            raise ValueError("a rollout starts in the play phase, with a player to move")
        self.t = tables(obs.trump)
        n = config.players
        form = config.form
        out = set(obs.sitting_out)
        self.next_seat = [(s + 1) % n for s in range(n)]
        for s in range(n):
            while self.next_seat[s] in out:
                self.next_seat[s] = (self.next_seat[s] + 1) % n
        self.active = n - len(out)
        self.current = obs.current
        maker = obs.maker
        self.maker_side = [_side(form, s, maker) for s in range(n)]
        # mates[s]: the seats whose winning card s leaves alone (its partner).
        self.mates = [_mates(form, s, maker) for s in range(n)]
        self.trick = [(s, c.id) for s, c in obs.current_trick]
        self.table = self._on_table()
        self.makers_tricks = sum(w for s, w in enumerate(obs.tricks_won)
                                 if self.maker_side[s])
        self.tricks_left = 5 - len(obs.tricks)
        me = team_of(form, obs.seat)
        values = []
        for made in range(6):
            won = [0] * n
            won[maker] = made  # score_hand only counts the makers' side's total
            pts = score_hand(form, maker, obs.alone, won).points
            others = [p for i, p in enumerate(pts) if i != me]
            values.append(pts[me] - sum(others) / len(others))
        self.values = values

    def _on_table(self) -> tuple[int, int, int]:
        """The trick on the table: its led suit, the best power so far and who holds it
        (-1 each when it is empty)."""
        t = self.t
        led = best = winner = -1
        for s, c in self.trick:
            if led < 0:
                led = t.eff[c]
            p = t.power[c]
            p = 200 + p if p else (t.follow_rank[c] if t.eff[c] == led else 0)
            if p > best:
                best, winner = p, s
        return led, best, winner

    def policy(self, hand: list[int]) -> int:
        """The heuristic policy's card for the seat to move, holding ``hand``."""
        seat = self.current
        led, best, winner = self.table
        if not self.trick:
            return _lead(self.t, hand, self.maker_side[seat])
        last = len(self.trick) == self.active - 1
        return _follow(self.t, hand, led, best,
                       winner in self.mates[seat] and (last or best >= _SAFE_WIN))

    def run(self, hands: list[list[int]], first: int | None = None) -> float:
        """One rollout; ``hands`` (card ids per seat) is consumed."""
        t = self.t
        eff = t.eff
        power = t.power
        follow_rank = t.follow_rank
        next_seat = self.next_seat
        active = self.active
        maker_side = self.maker_side
        mates = self.mates
        seat = self.current
        played = len(self.trick)
        made = self.makers_tricks
        led, best, winner = self.table
        for _ in range(self.tricks_left):
            while played < active:
                hand = hands[seat]
                if first is not None:
                    card = first
                    first = None
                elif played == 0:
                    card = _lead(t, hand, maker_side[seat])
                else:
                    card = _follow(t, hand, led, best,
                                   winner in mates[seat] and (played == active - 1
                                                              or best >= _SAFE_WIN))
                hand.remove(card)
                if played == 0:
                    led = eff[card]
                    best = -1
                p = power[card]
                p = 200 + p if p else (follow_rank[card] if eff[card] == led else 0)
                if p > best:
                    best, winner = p, seat
                played += 1
                seat = next_seat[seat]
            if maker_side[winner]:
                made += 1
            seat = winner
            played = 0
        return self.values[made]

    def random_run(self, hands: list[list[int]], rng: random.Random) -> float:
        """One rollout with uniformly random legal cards (a speed baseline)."""
        eff = self.t.eff
        power = self.t.power
        follow_rank = self.t.follow_rank
        choice = rng.choice
        seat = self.current
        played = len(self.trick)
        made = self.makers_tricks
        led, best, winner = self.table
        for _ in range(self.tricks_left):
            while played < self.active:
                hand = hands[seat]
                if played:
                    card = choice([c for c in hand if eff[c] == led] or hand)
                else:
                    card = choice(hand)
                    led, best = eff[card], -1
                hand.remove(card)
                p = power[card]
                p = 200 + p if p else (follow_rank[card] if eff[card] == led else 0)
                if p > best:
                    best, winner = p, seat
                played += 1
                seat = self.next_seat[seat]
            made += self.maker_side[winner]
            seat = winner
            played = 0
        return self.values[made]


def _follow(t: Tables, hand: list[int], led: int, best: int, partner_safe: bool) -> int:
    """The heuristic's card when following: the weakest legal card when the partner
    is safely winning, else the cheapest card that wins, else the weakest."""
    eff = t.eff
    legal = [c for c in hand if eff[c] == led] or hand
    if len(legal) == 1:
        return legal[0]
    if not partner_safe:
        power = t.power
        follow_rank = t.follow_rank
        card = -1
        low = 1000
        for c in legal:
            p = power[c]
            p = 200 + p if p else (follow_rank[c] if eff[c] == led else 0)
            if best < p < low:
                card, low = c, p
        if card >= 0:
            return card
    return weakest(t, legal)


def _lead(t: Tables, hand: list[int], makers: bool) -> int:
    """The heuristic's lead: its side's top trump when it made trump and holds the
    right bower (or the Joker) or three trumps; else an off-suit ace; else its weakest
    plain card."""
    trump = t.trump
    eff = t.eff
    if makers:
        power = t.power
        top = -1
        top_power = 0
        trumps = 0
        for c in hand:
            if eff[c] == trump:
                trumps += 1
                if power[c] > top_power:
                    top, top_power = c, power[c]
        if trumps and (top_power >= _TOP_TRUMP or trumps >= 3):
            return top
    off_ace = t.off_ace
    for c in hand:
        if off_ace[c]:
            return c
    plain = [c for c in hand if eff[c] != trump]
    return weakest(t, plain or hand)


def _side(form: Form, seat: int, maker: int) -> bool:
    if form is Form.FOUR_HANDED:
        return seat % 2 == maker % 2
    return seat == maker


def _mates(form: Form, seat: int, maker: int) -> frozenset[int]:
    """The heuristic's teammates of ``seat`` other than itself."""
    if form is Form.FOUR_HANDED:
        return frozenset({(seat + 2) % 4})
    if form is Form.CUTTHROAT and seat != maker:
        return frozenset(s for s in range(3) if s not in (seat, maker))
    return frozenset()
