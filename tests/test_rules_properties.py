"""Property tests of the rules engine: seeded random play over every form and deck.

Each property is checked against an oracle written from docs/rules.md, not from
the engine: the follow-suit rule, the card order, who sits out and who leads, the scoring
tables, the target and the cutthroat tie rule, the dealing method documented in
``harness/rules/hand.py``, and what a seat may see (section 7). All randomness comes from
``random.Random`` with fixed seeds (and hypothesis with ``derandomize=True``), so a
failure reproduces exactly.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import IllegalActionError
from harness.rules import (
    JOKER,
    Action,
    ActionKind,
    Card,
    DeckKind,
    Form,
    Game,
    HandKind,
    JokerUpcard,
    LonerLead,
    Observation,
    Phase,
    RulesConfig,
    Suit,
    deck_cards,
)
from harness.rules.hand import Hand
from harness.rules.observation import observe

FORMS = (Form.FOUR_HANDED, Form.TWO_HANDED, Form.CUTTHROAT)
DECKS = (DeckKind.D24, DeckKind.D32, DeckKind.D25)
COMBOS = [(f, d) for f in FORMS for d in DECKS]
COMBO_IDS = [f"{f.value}-{d.value}" for f, d in COMBOS]
MAX_STEPS = 80  # far more decisions than any hand needs


def configs_for(form: Form, deck: DeckKind) -> list[RulesConfig]:
    """The default rules and a few option combinations valid for the form and deck."""
    out = [
        RulesConfig(form=form, deck=deck),
        RulesConfig(form=form, deck=deck, dealer_must_take=True, stick_the_dealer=True,
                    allow_turned_down_suit=True, loner_lead=LonerLead.LEFT_OF_DEALER),
    ]
    if form is Form.FOUR_HANDED:
        out.append(RulesConfig(form=form, deck=deck, partner_may_go_alone=False,
                               lone_defender=False, target=5))
        out.append(RulesConfig(form=form, deck=deck, lone_defender=False,
                               loner_lead=LonerLead.LEFT_OF_DEALER))
    if form is Form.CUTTHROAT:
        out.append(RulesConfig(form=form, deck=deck, lone_defender=False, target=3))
    if deck is DeckKind.D25:
        out.append(RulesConfig(form=form, deck=deck, joker_upcard=JokerUpcard.HEARTS))
    return out


ALL_CONFIGS = [c for f, d in COMBOS for c in configs_for(f, d)]


# ---------------------------------------------------------------------------
# Oracles from docs/rules.md

SAME_COLOUR = {Suit.CLUBS: Suit.SPADES, Suit.SPADES: Suit.CLUBS,
               Suit.DIAMONDS: Suit.HEARTS, Suit.HEARTS: Suit.DIAMONDS}
JACK = "J"


@functools.cache  # the oracles are pure; caching keeps the thousands of hands cheap
def suit_of(card: Card, trump: Suit) -> Suit:
    """Section 1: the left bower and the Joker belong to the trump suit."""
    if card == JOKER:
        return trump
    text = str(card)
    suit = Suit.parse(text[1])
    if text[0] == JACK and suit is SAME_COLOUR[trump]:
        return trump
    return suit


RANKS = "789TJQKA"


@functools.cache
def strength(card: Card, trump: Suit, led: Suit) -> int:
    """Section 1 card order for one trick: Joker > right > left > A > K > Q > (J) > 10 > 9
    > 8 > 7 in trump; the led suit by rank; anything else cannot win."""
    if card == JOKER:
        return 300
    text = str(card)
    rank = RANKS.index(text[0])
    if suit_of(card, trump) is trump:
        if text[0] == JACK:
            return 299 if Suit.parse(text[1]) is trump else 298
        return 200 + rank
    return 100 + rank if suit_of(card, trump) is led else 0


def trick_winner(plays: Sequence[tuple[int, Card]], trump: Suit) -> int:
    led = suit_of(plays[0][1], trump)
    return max(plays, key=lambda p: strength(p[1], trump, led))[0]


def legal_plays(hand: Sequence[Card], trick: Sequence[tuple[int, Card]],
                trump: Suit) -> set[Card]:
    """Section 2 Play: follow the led suit if able, else any card."""
    if not trick:
        return set(hand)
    led = suit_of(trick[0][1], trump)
    follow = {c for c in hand if suit_of(c, trump) is led}
    return follow or set(hand)


def deal_oracle(config: RulesConfig, dealer: int, deck: Sequence[Card]
                ) -> tuple[list[list[Card]], list[Card], list[Card]]:
    """The documented dealing: receivers from the dealer's left (then the dummy), packets
    3-2-3-2 then 2-3-2-3, the rest the kitty (first card = upcard)."""
    n = config.players
    receivers = [(dealer + 1 + i) % n for i in range(n)]
    if config.form is Form.CUTTHROAT:
        receivers.append(n)
    piles: dict[int, list[Card]] = {r: [] for r in receivers}
    pos = 0
    for first in (True, False):
        for i, r in enumerate(receivers):
            size = (3 if i % 2 == 0 else 2) if first else (2 if i % 2 == 0 else 3)
            piles[r].extend(deck[pos:pos + size])
            pos += size
    return [piles[s] for s in range(n)], piles.get(n, []), list(deck[pos:])


def makers_side(form: Form, maker: int, seat: int) -> bool:
    return seat % 2 == maker % 2 if form is Form.FOUR_HANDED else seat == maker


def expected_sitting_out(form: Form, maker: int, alone: Sequence[int]) -> set[int]:
    if form is Form.FOUR_HANDED:
        return {(s + 2) % 4 for s in alone}
    if form is Form.CUTTHROAT:
        return {d for s in alone if s != maker for d in range(3) if d not in (s, maker)}
    return set()


def next_active(seat: int, n: int, out: set[int]) -> int:
    nxt = (seat + 1) % n
    while nxt in out:
        nxt = (nxt + 1) % n
    return nxt


def expected_leader(config: RulesConfig, dealer: int, maker: int, alone: Sequence[int],
                    out: set[int]) -> int:
    """Sections 2-4: left of the dealer; with loner_lead=left_of_lone, left of a lone
    player, or the lone defender when two go alone (sitting-out seats skipped)."""
    n = config.players
    if not alone or config.loner_lead is LonerLead.LEFT_OF_DEALER:
        return next_active(dealer, n, out)
    if len(alone) == 2:
        return next(s for s in alone if not makers_side(config.form, maker, s))
    return next_active(alone[0], n, out)


def team_of(form: Form, seat: int) -> int:
    """The scoring unit: the partnership in four-handed play, the seat otherwise."""
    return seat % 2 if form is Form.FOUR_HANDED else seat


def expected_score(form: Form, maker: int, alone: Sequence[int],
                   tricks_won: Sequence[int]) -> tuple[str, tuple[int, ...]]:
    """The scoring tables of sections 3, 4 and 5: (kind, points per team or seat)."""
    n = len(tricks_won)
    teams = 2 if form is Form.FOUR_HANDED else n
    mine = team_of(form, maker)
    taken = sum(t for s, t in enumerate(tricks_won) if team_of(form, s) == mine)
    maker_alone = any(makers_side(form, maker, s) for s in alone)
    lone_defender = any(not makers_side(form, maker, s) for s in alone)
    if taken >= 3:
        if form is Form.FOUR_HANDED:
            value = (4 if maker_alone else 2) if taken == 5 else 1
        elif form is Form.TWO_HANDED:
            value = 2 if taken == 5 else 1
        else:
            value = 3 if taken == 5 else 1  # cutthroat: no bonus for going alone
        kind = "march" if taken == 5 else "made"
        return kind, tuple(value if t == mine else 0 for t in range(teams))
    if lone_defender:
        value, kind = (4, "lone_defence_march") if taken == 0 else (2, "lone_defence")
    else:
        value, kind = 2, "euchred"
    return kind, tuple(0 if t == mine else value for t in range(teams))


def allowed_points(form: Form) -> set[tuple[int, ...]]:
    if form is Form.FOUR_HANDED:
        return {(0, 0), (1, 0), (0, 1), (2, 0), (0, 2), (4, 0), (0, 4)}
    if form is Form.TWO_HANDED:
        return {(0, 0), (1, 0), (0, 1), (2, 0), (0, 2)}
    out: set[tuple[int, ...]] = {(0, 0, 0)}
    for maker in range(3):
        for v in (1, 3):
            out.add(tuple(v if s == maker else 0 for s in range(3)))
        for v in (2, 4):
            out.add(tuple(0 if s == maker else v for s in range(3)))
    return out


# ---------------------------------------------------------------------------
# Playing and checking one hand

def obs(hand: Hand, seat: int) -> Observation:
    return observe(hand, seat, (), 0)


def check_decision(hand: Hand, config: RulesConfig) -> None:
    """The legal list at a decision point is exactly what docs/rules.md allows."""
    seat = hand.current
    assert seat is not None
    legal = hand.legal_actions()
    assert len(set(legal)) == len(legal)
    got = set(legal)
    o = obs(hand, seat)
    assert set(o.legal_actions) == got
    assert seat not in o.sitting_out
    phase = hand.phase
    n = config.players
    joker_as_heart = o.upcard == JOKER and config.joker_upcard is JokerUpcard.HEARTS
    upcard_suit = Suit.HEARTS if joker_as_heart else None
    if o.upcard != JOKER:
        upcard_suit = Suit.parse(str(o.upcard)[1])
    if phase is Phase.PLAY:
        assert o.trump is not None and len(o.hand) == 5 - len(o.tricks)
        expected = legal_plays(o.hand, o.current_trick, o.trump)
        assert got == {Action(ActionKind.PLAY, card=c) for c in expected}
    elif phase is Phase.BID_ROUND_1:
        assert got == {Action.parse("pass"), Action.parse("order")}
    elif phase is Phase.DEALER_PICKUP:
        assert seat == hand.dealer and not config.dealer_must_take
        assert got == {Action.parse("take"), Action.parse("leave")}
    elif phase is Phase.DEALER_DISCARD:
        assert seat == o.dealer and len(o.hand) == 5 and o.upcard not in o.hand
        assert got == {Action(ActionKind.DISCARD, card=c) for c in o.hand}
    elif phase is Phase.BID_ROUND_2:
        calls = {Action(ActionKind.CALL, suit=s) for s in Suit
                 if s is not upcard_suit or config.allow_turned_down_suit}
        may_pass = not (config.stick_the_dealer and seat == o.dealer)
        assert got == calls | ({Action.parse("pass")} if may_pass else set())
    elif phase is Phase.GO_ALONE:
        assert config.form is not Form.TWO_HANDED
        assert got == {Action.parse("alone"), Action.parse("not-alone")}
    elif phase is Phase.DUMMY_DISCARD:
        assert config.form is Form.CUTTHROAT and seat == o.maker and seat not in o.alone
        assert 6 <= len(o.hand) <= 10 and len(o.dummy) == 5
        assert got == {Action(ActionKind.DISCARD, card=c) for c in o.hand}
    elif phase is Phase.NAME_TRUMP:
        assert o.upcard == JOKER and config.joker_upcard is JokerUpcard.DEALER_NAMES
        assert seat == o.dealer and o.hand == () and len(o.public_actions) == 0
        assert got == {Action(ActionKind.CALL, suit=s) for s in Suit}
    else:
        raise AssertionError(f"decision in phase {phase}")
    assert all(obs(hand, s).legal_actions == () for s in range(n) if s != seat)


def check_finished(hand: Hand, config: RulesConfig, dealer: int,
                   deck: Sequence[Card]) -> tuple[int, ...]:
    """Card accounting, trick structure, leads and scoring of a finished hand; returns
    the hand's points."""
    n = config.players
    form = config.form
    pack = deck_cards(config.deck)
    seen = [obs(hand, s) for s in range(n)]
    o = seen[0]
    dealt, dummy, kitty = deal_oracle(config, dealer, deck)
    assert o.upcard == kitty[0]
    result = hand.result
    assert result is not None and hand.phase is Phase.HAND_OVER and hand.current is None
    points = tuple(result.points)
    assert points in allowed_points(form)
    if result.kind is HandKind.THROWN_IN:
        assert points == (0,) * len(points) and o.tricks == () and o.trump is None
        assert all(Counter(seen[s].hand) == Counter(dealt[s]) for s in range(n))
        assert len(o.public_actions) == 2 * n  # everybody passed twice
        return points
    maker, trump = o.maker, o.trump
    assert maker is not None and trump is not None
    # Who went alone and who sits out.
    out = set(o.sitting_out)
    assert len(out) == len(o.sitting_out) == len(expected_sitting_out(form, maker, o.alone))
    assert out == expected_sitting_out(form, maker, o.alone)
    assert len(o.alone) <= 2 and (form is not Form.TWO_HANDED or not o.alone)
    assert sum(makers_side(form, maker, s) for s in o.alone) <= 1
    if not config.lone_defender:
        assert all(makers_side(form, maker, s) for s in o.alone)
    if form is Form.FOUR_HANDED and not config.partner_may_go_alone:
        assert all(s == maker or not makers_side(form, maker, s) for s in o.alone)
    # Tricks: one card per active seat, clockwise, the right winner, the winner leads.
    active = [s for s in range(n) if s not in out]
    assert len(o.tricks) == 5
    leader = expected_leader(config, dealer, maker, o.alone, out)
    for trick in o.tricks:
        seats = [s for s, _ in trick.plays]
        assert trick.leader == seats[0] == leader
        assert sorted(seats) == active
        for a, b in itertools.pairwise(seats):
            assert b == next_active(a, n, out)
        assert trick.winner == trick_winner(trick.plays, trump) and trick.winner in seats
        leader = trick.winner
    tricks_won = Counter(t.winner for t in o.tricks)
    assert tuple(o.tricks_won) == tuple(tricks_won[s] for s in range(n))
    # Every card accounted for exactly once.
    cards: list[Card] = []
    for s in range(n):
        cards += seen[s].hand + seen[s].discards
    cards += [c for t in o.tricks for _, c in t.plays]
    took = bool(o.dealer_took_upcard)
    cards += kitty[1:] if took else kitty
    dummy_taken = bool(seen[maker].dummy)
    assert dummy_taken == (form is Form.CUTTHROAT and maker not in o.alone)
    if dummy_taken:
        assert Counter(seen[maker].dummy) == Counter(dummy)
        assert len(seen[maker].discards) == 5 + (1 if maker == dealer and took else 0)
    else:
        cards += dummy
    assert Counter(cards) == Counter(pack)
    for s in range(n):
        if s in out:  # a sitting-out hand is what was dealt, after any pick-up
            held = Counter(dealt[s]) - Counter(seen[s].discards)
            if s == dealer and took:
                held[kitty[0]] += 1
            assert Counter(seen[s].hand) == held
        else:
            assert seen[s].hand == ()
        if s != maker and s != dealer:
            assert seen[s].discards == ()
    if took:  # the pick-up discard is one of the five dealt cards, never the upcard
        first, *later = seen[dealer].discards
        assert first in dealt[dealer]
        assert set(later) <= set(dealt[dealer]) | set(dummy) | {kitty[0]}
    # Scoring.
    kind, expected_points = expected_score(form, maker, o.alone, o.tricks_won)
    assert (result.kind.value, points) == (kind, expected_points)
    return points


def random_deck(config: RulesConfig, rng: random.Random, joker_up: bool) -> list[Card]:
    deck = list(deck_cards(config.deck))
    rng.shuffle(deck)
    if joker_up and JOKER in deck:  # put the Joker on the upcard's place
        i, j = deck.index(JOKER), config.players * 5 + (5 if config.form is
                                                          Form.CUTTHROAT else 0)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def expected_alone_askers(config: RulesConfig, maker: int, answers: Sequence[bool]
                          ) -> list[int]:
    """Sections 2 and 4: the maker; the maker's partner if the maker did not go alone
    (four-handed, partner_may_go_alone); then the defenders clockwise from the maker's
    left, the second only if the first did not (lone_defender)."""
    form = config.form
    if form is Form.TWO_HANDED:
        return []
    n = config.players
    asked: list[int] = []

    def ask(seat: int) -> bool:
        asked.append(seat)
        return answers[len(asked) - 1] if len(asked) <= len(answers) else False

    if not ask(maker) and form is Form.FOUR_HANDED and config.partner_may_go_alone:
        ask((maker + 2) % 4)
    if config.lone_defender:
        first, second = (maker + 1) % n, (maker + 3) % 4 if n == 4 else (maker + 2) % 3
        if not ask(first):
            ask(second)
    return asked


def check_turn_order(config: RulesConfig, dealer: int,
                     history: Sequence[tuple[Phase, int, Action]], maker: int | None) -> None:
    """Who was asked when: both bidding rounds clockwise from the dealer's left, the
    dealer for pick-up, discard and naming, the going-alone order of docs/rules.md."""
    n = config.players
    for rnd in (Phase.BID_ROUND_1, Phase.BID_ROUND_2):
        seats = [s for p, s, _ in history if p is rnd]
        assert seats == [(dealer + 1 + i) % n for i in range(len(seats))] and len(seats) <= n
    for phase in (Phase.DEALER_PICKUP, Phase.DEALER_DISCARD, Phase.NAME_TRUMP):
        assert all(s == dealer for p, s, _ in history if p is phase)
    alone = [(s, a.kind is ActionKind.GO_ALONE) for p, s, a in history if p is Phase.GO_ALONE]
    if maker is not None:
        assert [s for s, _ in alone] == expected_alone_askers(
            config, maker, [yes for _, yes in alone])
    else:
        assert alone == []


PASS = Action.parse("pass")


def choose(legal: Sequence[Action], rng: random.Random) -> Action:
    """A random legal action, passing more often than uniform play would (so that hands
    are thrown in and round 2 is reached often)."""
    if PASS in legal and rng.random() < 0.6:
        return PASS
    return rng.choice(legal)


def play_checked_hand(config: RulesConfig, rng: random.Random, dealer: int,
                      deck: Sequence[Card], check_every_step: bool = True
                      ) -> tuple[Hand, list[tuple[int, Action]]]:
    hand = Hand(config, dealer, deck)
    dealt, _, kitty = deal_oracle(config, dealer, deck)
    for s in range(config.players):  # the documented dealing method
        blind = hand.phase is Phase.NAME_TRUMP and s == dealer
        assert Counter(obs(hand, s).hand) == (Counter() if blind else Counter(dealt[s]))
    assert obs(hand, 0).upcard == kitty[0]
    actions: list[tuple[int, Action]] = []
    history: list[tuple[Phase, int, Action]] = []
    for _ in range(MAX_STEPS):
        if hand.is_over:
            break
        if check_every_step:
            check_decision(hand, config)
        seat = hand.current
        assert seat is not None
        action = choose(hand.legal_actions(), rng)
        history.append((hand.phase, seat, action))
        hand.apply(action)
        actions.append((seat, action))
    else:
        raise AssertionError("the hand did not end")
    check_turn_order(config, dealer, history, obs(hand, 0).maker)
    return hand, actions


# ---------------------------------------------------------------------------
# Properties of single hands

HANDS_PER_COMBO = 3000


@pytest.mark.parametrize(("form", "deck"), COMBOS, ids=COMBO_IDS)
def test_random_hands_follow_the_rules_and_account_for_every_card(form: Form,
                                                                    deck: DeckKind) -> None:
    rng = random.Random(f"hands/{form.value}/{deck.value}")
    configs = configs_for(form, deck)
    kinds: Counter[str] = Counter()
    for i in range(HANDS_PER_COMBO):
        config = configs[i % len(configs)]
        dealer = rng.randrange(config.players)
        cards = random_deck(config, rng, joker_up=i % 10 == 0)
        hand, _ = play_checked_hand(config, rng, dealer, cards, check_every_step=i % 2 == 0)
        check_finished(hand, config, dealer, cards)
        assert hand.result is not None
        kinds[hand.result.kind.value] += 1
    # The random play reached every kind of result the form has.
    expected = {"thrown_in", "made", "march", "euchred"}
    if form is not Form.TWO_HANDED:
        expected |= {"lone_defence", "lone_defence_march"}
    assert set(kinds) == expected, kinds


@settings(max_examples=500, derandomize=True, deadline=None)
@given(config=st.sampled_from(ALL_CONFIGS), seed=st.integers(0, 2**32 - 1),
       dealer=st.integers(0, 3), joker_up=st.booleans())
def test_any_option_combination_plays_legally_to_a_tabled_score(
        config: RulesConfig, seed: int, dealer: int, joker_up: bool) -> None:
    rng = random.Random(seed)
    dealer %= config.players
    cards = random_deck(config, rng, joker_up)
    hand, _ = play_checked_hand(config, rng, dealer, cards)
    check_finished(hand, config, dealer, cards)


def test_illegal_actions_change_nothing_in_random_states() -> None:
    rng = random.Random("illegal")
    every = [Action.parse(t) for t in ("pass", "order", "take", "leave", "alone",
                                       "not-alone", "call c", "call d", "call h", "call s")]
    every += [Action(k, card=c) for k in (ActionKind.PLAY, ActionKind.DISCARD)
              for c in deck_cards(DeckKind.D25)]
    refused = 0
    for i in range(120):
        config = ALL_CONFIGS[i % len(ALL_CONFIGS)]
        hand = Hand(config, 0, random_deck(config, rng, joker_up=i % 5 == 0))
        while not hand.is_over:
            record, legal = hand.to_record(), list(hand.legal_actions())
            views = [obs(hand, s) for s in range(config.players)]
            for bad in rng.sample([a for a in every if a not in legal], 3):
                with pytest.raises(IllegalActionError) as info:
                    hand.apply(bad)
                assert info.value.action == bad and info.value.seat == hand.current
                refused += 1
            assert hand.to_record() == record and list(hand.legal_actions()) == legal
            assert [obs(hand, s) for s in range(config.players)] == views
            hand.apply(rng.choice(legal))
    assert refused > 3000


# ---------------------------------------------------------------------------
# Properties of games

GAMES_PER_COMBO = 60


def play_random_game(config: RulesConfig, seed: int, rng: random.Random,
                     stop_after: int | None = None) -> Game:
    game = Game(config, seed)
    steps = 0
    while not game.is_over and (stop_after is None or steps < stop_after):
        game.apply(choose(game.legal_actions(), rng))
        steps += 1
        assert steps < 100_000
    return game


def check_game(game: Game) -> None:
    config = game.config
    n = config.players
    target = config.target
    totals = [0] * len(game.scores)
    finished = [h for h in game.hands if h.result is not None]
    for i, hand in enumerate(game.hands):
        assert hand.dealer == (game.first_dealer + i) % n, "the deal passes to the left"
        assert hand.result is not None or hand is game.hands[-1]
        if hand.result is None:
            continue
        for t, p in enumerate(hand.result.points):
            totals[t] += p
        best = max(totals)
        decided = best >= target and totals.count(best) == 1
        last = i == len(finished) - 1 and game.is_over
        assert decided == last, (i, totals)
    assert list(game.scores) == totals, "game scores are the sum of hand points"
    if game.outcome is not None:
        out = game.outcome
        assert list(out.scores) == totals and out.hands == len(game.hands)
        assert totals[out.winner] == max(totals) >= target
        assert tuple(out.places) == tuple(
            1 + sum(v > totals[team_of(config.form, s)] for v in totals) for s in range(n))
        assert game.phase is Phase.GAME_OVER and game.legal_actions() == ()


@pytest.mark.parametrize(("form", "deck"), COMBOS, ids=COMBO_IDS)
def test_games_score_sums_target_dealing_and_replay(form: Form, deck: DeckKind) -> None:
    rng = random.Random(f"games/{form.value}/{deck.value}")
    configs = configs_for(form, deck)
    first_dealers: set[int] = set()
    for g in range(GAMES_PER_COMBO):
        config = configs[g % len(configs)]
        seed = rng.randrange(10**9)
        game = play_random_game(config, seed, rng)
        check_game(game)
        first_dealers.add(game.first_dealer)
        record = game.to_record()
        assert Game.from_record(record).to_record() == record
        # Part of a game replays too, and can be played on.
        partial = play_random_game(config, seed, random.Random(g), stop_after=g * 7 + 1)
        replayed = Game.from_record(partial.to_record())
        assert replayed.to_record() == partial.to_record()
        assert [replayed.observation(s) for s in range(config.players)] == \
            [partial.observation(s) for s in range(config.players)]
        # Section 5: the same seed deals the same cards whatever the players do.
        other = play_random_game(config, seed, random.Random(-g))
        assert other.first_dealer == game.first_dealer
        for mine, theirs in zip(record["hands"], other.to_record()["hands"], strict=False):
            assert mine["deck"] == theirs["deck"] and mine["dealer"] == theirs["dealer"]
    assert first_dealers == set(range(Form(form).players)), "the first dealer varies"


@pytest.mark.parametrize("target", [1, 2, 3, 4])
def test_cutthroat_ties_at_the_target_are_played_out(target: int) -> None:
    rng = random.Random(f"ties/{target}")
    config = RulesConfig(form=Form.CUTTHROAT, target=target)
    level_continued = 0
    for _ in range(150):
        game = play_random_game(config, rng.randrange(10**9), rng)
        check_game(game)
        totals = [0, 0, 0]
        for hand in game.hands[:-1]:
            assert hand.result is not None
            totals = [a + b for a, b in zip(totals, hand.result.points, strict=True)]
            if max(totals) >= target and totals.count(max(totals)) > 1:
                level_continued += 1
    assert level_continued > 10, "random play should reach level scores at the target"


# ---------------------------------------------------------------------------
# The no-leak property (section 7)

def trace(config: RulesConfig, dealer: int, deck: Sequence[Card],
          actions: Sequence[tuple[int, Action]], seat: int) -> list[Observation] | None:
    """``seat``'s observation at the start and after every action; None if an action is
    illegal in this deal (the deal contradicts what was played)."""
    hand = Hand(config, dealer, deck)
    views = [obs(hand, seat)]
    for who, action in actions:
        assert hand.current == who, "whose turn it is must not depend on hidden cards"
        try:
            hand.apply(action)
        except IllegalActionError:
            return None
        views.append(obs(hand, seat))
    return views


def seen_by(config: RulesConfig, dealer: int, deck: Sequence[Card],
            actions: Sequence[tuple[int, Action]], seat: int, final: Observation
            ) -> set[Card]:
    """What ``seat`` has seen: its dealt cards, the upcard, every card played, and the
    dummy if it is the cutthroat maker who took it (not alone, once the going-alone
    decisions are over). Decided from public facts, never from the observed dummy."""
    dealt, dummy, kitty = deal_oracle(config, dealer, deck)
    seen = set(dealt[seat]) | {kitty[0]}
    seen |= {a.card for _, a in actions if a.kind is ActionKind.PLAY and a.card is not None}
    took_dummy = (config.form is Form.CUTTHROAT and final.maker == seat
                  and seat not in final.alone
                  and final.phase in (Phase.DUMMY_DISCARD, Phase.PLAY, Phase.HAND_OVER))
    if took_dummy:
        seen |= set(dummy)
    return seen


def redeal(deck: Sequence[Card], actions: Sequence[tuple[int, Action]], seat: int,
           hidden: list[Card], rng: random.Random
           ) -> tuple[list[Card], list[tuple[int, Action]], bool]:
    """Permute the hidden cards among their places in the deck (a random shuffle or a
    random transposition), rewriting other seats' actions that name a hidden card."""
    image = list(hidden)
    if rng.random() < 0.5:
        i, j = rng.sample(range(len(image)), 2)
        image[i], image[j] = image[j], image[i]
    else:
        rng.shuffle(image)
    perm = dict(zip(hidden, image, strict=True))
    new_deck = [perm.get(c, c) for c in deck]
    new_actions: list[tuple[int, Action]] = []
    rewritten = False
    for who, action in actions:
        card = action.card
        if who != seat and card is not None and card in perm and perm[card] != card:
            assert action.kind is ActionKind.DISCARD, "only discards may name unseen cards"
            action = Action(action.kind, card=perm[card])
            rewritten = True
        new_actions.append((who, action))
    return new_deck, new_actions, rewritten


NO_LEAK_HANDS = 150
TRIES = 6


@pytest.mark.parametrize(("form", "deck"), COMBOS, ids=COMBO_IDS)
def test_no_leak_observations_do_not_depend_on_unseen_cards(form: Form,
                                                            deck: DeckKind) -> None:
    rng = random.Random(f"leak/{form.value}/{deck.value}")
    configs = configs_for(form, deck)
    checked = rejected = rewritten_checked = mid_hand_checked = 0
    for i in range(NO_LEAK_HANDS):
        config = configs[i % len(configs)]
        dealer = rng.randrange(config.players)
        cards = random_deck(config, rng, joker_up=i % 7 == 0)
        _, actions = play_checked_hand(config, rng, dealer, cards, check_every_step=False)
        for seat in range(config.players):
            # The finished hand, and the hand cut at a random point.
            for cut in (len(actions), rng.randrange(1, len(actions) + 1)):
                prefix = actions[:cut]
                original = trace(config, dealer, cards, prefix, seat)
                assert original is not None
                hidden = [c for c in cards
                          if c not in seen_by(config, dealer, cards, prefix, seat,
                                              original[-1])]
                if len(hidden) < 2:
                    continue
                accepted = 0
                for _ in range(TRIES):
                    new_deck, new_actions, rewritten = redeal(cards, prefix, seat, hidden,
                                                              rng)
                    views = trace(config, dealer, new_deck, new_actions, seat)
                    if views is None:
                        rejected += 1
                        continue
                    assert views == original, (
                        f"seat {seat} sees a difference after re-dealing unseen cards")
                    checked += 1
                    accepted += 1
                    rewritten_checked += rewritten
                    mid_hand_checked += cut < len(actions)
                    if accepted == 2:
                        break
    # Not vacuous: most of the attempted comparisons were made, some rewriting hidden
    # discards, many mid-hand, and some re-deals were refused because they contradicted
    # what the seat saw (a revealed void).
    most = NO_LEAK_HANDS * Form(form).players * 2 * 2
    print(f"no-leak {form.value}-{deck.value}: {checked}/{most} re-deals compared, "
          f"{rewritten_checked} with rewritten discards, {mid_hand_checked} mid-hand, "
          f"{rejected} refused")
    assert checked >= most * 0.8, checked
    assert mid_hand_checked >= most * 0.3, mid_hand_checked
    assert rewritten_checked >= most * 0.05, rewritten_checked
    assert rejected > 0
