"""``heuristic``: a rule-based player.

Bidding counts trump strength (bowers, the Joker, high trumps), off-suit aces and short
suits; the dealer discards to void a suit; the maker goes alone with a very strong hand.
In play it leads trump when its side made trump and it holds the top, otherwise an
off-suit ace; it does not overtake a partner who is winning, wins a trick as cheaply as
it can, and otherwise throws its cheapest card.

``--epsilon P`` (or ``EUCHRE_BOT_EPSILON``) makes it play a random legal action with
probability P: a weaker variant for power measurements. With ``EUCHRE_BOT_SEED`` those
random choices restart from that seed (and its seat) at every game, as the random bot's
do, so a game's moves depend on the deal and seat only.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Mapping, Sequence

from harness.rules.actions import Action, ActionKind
from harness.rules.cards import (
    TRUMP_POWER,
    Card,
    Rank,
    Suit,
    effective_suit,
    trick_power,
)
from harness.rules.config import RulesConfig
from harness.rules.hand import Phase
from harness.rules.observation import Observation
from harness.sdk import Bot, run
from harness.sdk.search.values import card_value

ORDER_THRESHOLD = 6.0
ALONE_THRESHOLD = 9.5


def strength(cards: Sequence[Card], trump: Suit) -> float:
    total = sum(card_value(c, trump) for c in cards)
    trumps = sum(1 for c in cards if effective_suit(c, trump) is trump)
    suits = {effective_suit(c, trump) for c in cards} - {trump}
    if trumps >= 2:
        total += 0.4 * (3 - len(suits))
    return total


def weakest(cards: Sequence[Card], trump: Suit | None) -> Card:
    """The card to give up: the cheapest, preferring one whose loss voids a suit."""
    def key(c: Card) -> tuple[float, float]:
        suit = effective_suit(c, trump)
        same = sum(1 for o in cards if effective_suit(o, trump) is suit)
        singleton_bonus = -0.3 if same == 1 and suit is not trump and c.rank is not Rank.ACE \
            else 0.0
        return (card_value(c, trump) + singleton_bonus, c.id)
    return min(cards, key=key)


class HeuristicBot(Bot):
    name = "heuristic"
    version = "1.0"

    def __init__(self, epsilon: float = 0.0, seed: int | None = None) -> None:
        self.epsilon = epsilon
        self.seed = seed
        self.rng = random.Random(seed)
        self.rules = RulesConfig()
        self.players = 4

    def on_game_start(self, rules: RulesConfig, seat: int, names: Sequence[str]) -> None:
        self.rules = rules
        self.players = rules.players
        if self.seed is not None:
            self.rng = random.Random(f"{self.seed}:{seat}")

    def decide_action(self, obs: Observation, legal: Sequence[Action]) -> Action:
        if self.epsilon and self.rng.random() < self.epsilon:
            return self.rng.choice(legal)
        phase = obs.phase
        if phase is Phase.PLAY:
            return self._play(obs, legal)
        if phase is Phase.BID_ROUND_1:
            return self._round_1(obs, legal)
        if phase is Phase.BID_ROUND_2:
            return self._round_2(obs, legal)
        if phase in (Phase.DEALER_DISCARD, Phase.DUMMY_DISCARD):
            card = weakest([a.card for a in legal if a.card is not None], obs.trump)
            return next(a for a in legal if a.card is card)
        if phase is Phase.DEALER_PICKUP:
            return next(a for a in legal if a.kind is ActionKind.TAKE_UPCARD)
        if phase is Phase.GO_ALONE:
            alone = (obs.seat == obs.maker and obs.trump is not None
                     and strength(obs.hand, obs.trump) >= ALONE_THRESHOLD)
            want = ActionKind.GO_ALONE if alone else ActionKind.NOT_ALONE
            return next(a for a in legal if a.kind is want)
        return legal[0]  # naming trump blind on a Joker upcard: nothing to go on

    choose = decide_action

    # ------------------------------------------------------------------ bidding
    def _partner(self, obs: Observation, seat: int) -> bool:
        return self.players == 4 and (seat - obs.seat) % 2 == 0 and seat != obs.seat

    def _round_1(self, obs: Observation, legal: Sequence[Action]) -> Action:
        up = obs.upcard
        trump = effective_suit(up, None) or Suit.HEARTS
        cards = list(obs.hand)
        s = strength(cards, trump)
        up_value = card_value(up, trump)
        if obs.dealer == obs.seat:
            s = strength([*cards, up], trump) - card_value(weakest([*cards, up], trump), trump)
        elif self._partner(obs, obs.dealer):
            s += up_value * 0.6
        else:
            s -= up_value * 0.6
        order = next(a for a in legal if a.kind is ActionKind.ORDER_UP)
        return order if s >= ORDER_THRESHOLD else next(a for a in legal
                                                     if a.kind is ActionKind.PASS)

    def _round_2(self, obs: Observation, legal: Sequence[Action]) -> Action:
        calls = [a for a in legal if a.kind is ActionKind.CALL]
        best = max(calls, key=lambda a: strength(obs.hand, a.suit))  # type: ignore[arg-type]
        must = not any(a.kind is ActionKind.PASS for a in legal)
        if must or strength(obs.hand, best.suit) >= ORDER_THRESHOLD - 0.5:  # type: ignore[arg-type]
            return best
        return next(a for a in legal if a.kind is ActionKind.PASS)

    # ------------------------------------------------------------------ play
    def _teammates(self, obs: Observation) -> set[int]:
        if self.players == 4:
            return {obs.seat, (obs.seat + 2) % 4}
        if self.players == 3 and obs.maker is not None and obs.seat != obs.maker:
            return {s for s in range(3) if s != obs.maker}
        return {obs.seat}

    def _play(self, obs: Observation, legal: Sequence[Action]) -> Action:
        trump = obs.trump
        assert trump is not None
        cards = [a.card for a in legal if a.card is not None]
        by_card = {a.card: a for a in legal}
        trick = obs.current_trick
        mates = self._teammates(obs)
        if not trick:
            return by_card[self._lead(obs, cards, trump, mates)]
        led = effective_suit(trick[0][1], trump)
        assert led is not None
        best_seat, best_card = max(trick, key=lambda sc: trick_power(sc[1], trump, led))
        best_power = trick_power(best_card, trump, led)
        winners = [c for c in cards if trick_power(c, trump, led) > best_power]
        active = self.players - len(obs.sitting_out)
        last = len(trick) == active - 1
        if best_seat in mates and best_seat != obs.seat and (last or best_power >= 214):
            return by_card[weakest(cards, trump)]
        if winners:
            return by_card[min(winners, key=lambda c: trick_power(c, trump, led))]
        return by_card[weakest(cards, trump)]

    def _lead(self, obs: Observation, cards: Sequence[Card], trump: Suit,
              mates: set[int]) -> Card:
        trumps = [c for c in cards if effective_suit(c, trump) is trump]
        makers = obs.maker in mates
        if trumps and makers:
            top = max(trumps, key=lambda c: TRUMP_POWER[trump][c.id])
            if TRUMP_POWER[trump][top.id] >= 99 or len(trumps) >= 3:
                return top
        aces = [c for c in cards if c.rank is Rank.ACE and effective_suit(c, trump) is not trump]
        if aces:
            return aces[0]
        off = [c for c in cards if effective_suit(c, trump) is not trump]
        return weakest(off or cards, trump)


def make_bot(argv: list[str], env: Mapping[str, str]) -> HeuristicBot:
    """The bot for a command line (``--epsilon E`` is taken out of ``argv``) and
    environment (``EUCHRE_BOT_EPSILON``, ``EUCHRE_BOT_SEED``)."""
    epsilon = float(env.get("EUCHRE_BOT_EPSILON", "0") or 0)
    if "--epsilon" in argv:
        i = argv.index("--epsilon")
        epsilon = float(argv[i + 1])
        del argv[i:i + 2]
    seed = env.get("EUCHRE_BOT_SEED")
    bot = HeuristicBot(epsilon, int(seed) if seed else None)
    if epsilon:
        bot.name = f"heuristic-e{epsilon:g}"
    return bot


def in_process_bot(argv: Sequence[str], env: Mapping[str, str]) -> HeuristicBot:
    """The bot for in-process play (harness.referee.inprocess)."""
    return make_bot(list(argv), {**os.environ, **env})


def main() -> None:
    run(make_bot(sys.argv, os.environ))


if __name__ == "__main__":
    main()
