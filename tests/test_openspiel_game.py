"""The OpenSpiel game ``python_euchre`` (``harness.envs.openspiel``): OpenSpiel's own
random-simulation checks in every form, move-for-move agreement with OpenSpiel's
built-in four-handed ``euchre`` on shared deals, and resampling from an information
state."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyspiel
import pytest
from audit_support import cards_shown, knowledge

import harness.envs.openspiel as spiel_euchre
from harness.envs import encoding
from harness.rules import Action, ActionKind, Card, RulesConfig
from harness.rules.dealing import seeded_deck, seeded_first_dealer
from harness.rules.hand import Hand

GAMES: list[dict[str, Any]] = [
    {"form": "four-handed", "deck": 24, "target": 0},
    {"form": "four-handed", "deck": 25, "target": 0, "rules": {"lone_defender": False}},
    {"form": "two-handed", "deck": 32, "target": 0},
    {"form": "cutthroat", "deck": 24, "target": 0},
    {"form": "cutthroat", "deck": 25, "target": 0, "rules": {"joker_upcard": "dealer_names",
                                                           "stick_the_dealer": True}},
    {"form": "two-handed", "deck": 24, "target": 3},
]


@pytest.mark.parametrize("params", GAMES, ids=lambda p: f"{p['form']}-{p['deck']}-{p['target']}")
def test_random_sim_test_passes(params: dict[str, Any]) -> None:
    game = spiel_euchre.load(**params)
    pyspiel.random_sim_test(game, num_sims=4, serialize=False, verbose=False)


def test_registered_under_its_name_with_parameters() -> None:
    game = pyspiel.load_game("python_euchre", {"form": "cutthroat", "deck": 25})
    assert game.num_players() == 3
    assert game.get_type().short_name == "python_euchre"
    assert game.num_distinct_actions() == len(Action._by_id)


# --------------------------------------------------------------------------- agreement

SUIT_ACTION = 25  # OpenSpiel's euchre: 24 pass, 25..28 clubs..spades, 29 alone, 30 partner


def os_card(card: Card) -> int:
    assert card.suit is not None
    return (int(card.rank) - 9) * 4 + int(card.suit)


def os_action(action: Action, hand: Hand) -> int:
    kind = action.kind
    if kind is ActionKind.PASS:
        return 24
    if kind is ActionKind.ORDER_UP:
        assert hand.upcard.suit is not None
        return SUIT_ACTION + int(hand.upcard.suit)
    if kind is ActionKind.CALL:
        assert action.suit is not None
        return SUIT_ACTION + int(action.suit)
    if kind is ActionKind.GO_ALONE:
        return 29
    if kind is ActionKind.NOT_ALONE:
        return 30
    assert action.card is not None
    return os_card(action.card)


def agree_on(seed: int, stick: bool) -> int:
    """Play one hand of the seeded deal in both games with the same random choices;
    assert the same player, legal set and returns at every step. Returns the moves."""
    config = RulesConfig.from_dict({
        "form": "four-handed", "deck": "24", "dealer_must_take": True,
        "partner_may_go_alone": False, "lone_defender": False,
        "loner_lead": "left_of_dealer", "stick_the_dealer": stick})
    dealer = seeded_first_dealer(config, seed)
    deck = seeded_deck(config, seed, 0)
    ours = spiel_euchre.load(form="four-handed", deck=24, target=0,
                             rules={k: v for k, v in config.to_dict().items()
                                    if k not in ("form", "deck", "target")}
                             ).new_initial_state()
    builtin = pyspiel.load_game("euchre", {"stick_the_dealer": stick,
                                           "allow_lone_defender": False}).new_initial_state()
    ours.apply_action(dealer)
    for card in deck:
        ours.apply_action(card.id)
    hand = ours.hands[-1]
    builtin.apply_action(dealer)
    for k in range(20):
        builtin.apply_action(os_card(hand.hands[(dealer + k) % 4][k // 4]))
    builtin.apply_action(os_card(hand.upcard))
    rng = random.Random(seed)
    moves = 0
    while not ours.is_terminal():
        assert not builtin.is_terminal()
        assert ours.current_player() == builtin.current_player()
        legal = [Action.from_id(a) for a in ours.legal_actions()]
        mapped = {os_action(a, hand): a for a in legal}
        assert sorted(mapped) == sorted(builtin.legal_actions()), hand.state_name()
        choice = rng.choice(sorted(mapped))
        builtin.apply_action(choice)
        ours.apply_action(mapped[choice].id)
        moves += 1
    assert builtin.is_terminal()
    assert ours.returns() == pytest.approx(builtin.returns())
    return moves


@pytest.mark.parametrize("stick", [True, False])
def test_four_handed_hands_agree_with_openspiels_euchre(stick: bool) -> None:
    moves = sum(agree_on(seed, stick) for seed in range(60))
    assert moves > 60 * 10


# --------------------------------------------------------------------------- search support


def test_resampled_states_keep_the_players_information_state() -> None:
    game = spiel_euchre.load(form="cutthroat", deck=25, target=0)
    rng = random.Random(5)
    checked = 0
    for _ in range(5):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
                continue
            player = state.current_player()
            sampler = pyspiel.UniformProbabilitySampler(rng.randrange(1 << 30), 0.0, 1.0)
            other = state.resample_from_infostate(player, sampler)
            assert other.information_state_string(player) == state.information_state_string(player)
            assert other.information_state_tensor(player) == state.information_state_tensor(player)
            assert other.legal_actions() == state.legal_actions()
            checked += 1
            state.apply_action(rng.choice(state.legal_actions()))
    assert checked > 20


# --------------------------------------------------------------------------- information


def unflatten(vector: Sequence[float]) -> encoding.Arrays:
    values = np.asarray(vector, dtype=np.float32)
    out: encoding.Arrays = {}
    at = 0
    for name, shape in encoding.FIELDS.items():
        size = int(np.prod(shape))
        out[name] = values[at:at + size].reshape(shape)
        at += size
    assert at == len(values)
    return out


@pytest.mark.parametrize("params", GAMES, ids=lambda p: f"{p['form']}-{p['deck']}-{p['target']}")
def test_no_player_is_shown_more_than_a_player_at_the_table(params: dict[str, Any]) -> None:
    """The information audit on OpenSpiel's own API: every card in every player's
    information-state and observation tensors, after every move, against what that seat
    may know then (computed from the game record alone)."""
    game = spiel_euchre.load(**params)
    n = game.num_players()
    rng = random.Random(11)
    leaks: list[str] = []
    checked = 0
    for _ in range(3):
        state = game.new_initial_state()
        shown: list[tuple[int, int, int, encoding.Arrays]] = []
        clock = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
                continue
            for p in range(n):
                for tensor in (state.information_state_tensor(p), state.observation_tensor(p)):
                    shown.append((p, len(state.hands) - 1, clock, unflatten(tensor)))
            state.apply_action(rng.choice(state.legal_actions()))
            clock += 1
        record = {"rules": state.config.to_dict(), "hands": [h.to_record() for h in state.hands]}
        hands = knowledge(record)
        for seat, h, at, arrays in shown:
            for field, cards in cards_shown(arrays).items():
                for card in cards:
                    checked += 1
                    if not hands[h].known(seat, card, at):
                        leaks.append(f"seat {seat}, hand {h}, clock {at}: {field} shows {card}")
    assert leaks == []
    assert checked > 300
