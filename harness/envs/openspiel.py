"""``python_euchre``: every form, deck and rule option as an OpenSpiel game.

``import harness.envs.openspiel`` registers the game; then::

    import pyspiel
    game = pyspiel.load_game("python_euchre", {"form": "cutthroat", "deck": 25,
                                               "target": 0, "rules": '{"stick_the_dealer": true}'})

Parameters: ``form`` (``four-handed``, ``two-handed``, ``cutthroat``), ``deck`` (24, 32
or 25), ``target`` (points to win a game; 0 plays a single hand) and ``rules`` (the other
options of docs/rules.md as a JSON object).

Chance deals: the first dealer (one outcome per seat), then each hand's deck order, one
card at a time (outcome = :attr:`Card.id`); the engine deals that order as the referee
does. Player actions are :attr:`Action.id` integers, as in the PettingZoo environment.

Returns: for a single hand, the points of the player's side minus the mean of the other
sides' (zero-sum); for a game, 1 for the winning side and ``-1 / (sides - 1)`` for the
others. The tensors are :func:`harness.envs.encoding.flatten` of the player's
observation (perfect recall within a hand; scores summarise earlier hands); the
information-state string also holds the player's final view of every earlier hand.

:meth:`EuchreState.resample_from_infostate` draws a state consistent with what a player
has seen, with the project's uniform world sampler (:mod:`harness.sdk.search.worlds`), for
search algorithms such as ISMCTS.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pyspiel

from harness.envs.encoding import FIELDS, NUM_ACTIONS, VECTOR_SIZE, describe, encode, flatten
from harness.envs.euchre_v0 import rules_config, side_rewards
from harness.rules import Action, Card, Hand, Observation, RulesConfig
from harness.rules.cards import ALL_CARDS, PACK_SETS
from harness.rules.observation import observe
from harness.rules.scoring import team_count, team_of
from harness.sdk.search.worlds import WorldSampler

__all__ = ["GAME_NAME", "EuchreGame", "EuchreState", "config_of", "load"]

GAME_NAME = "python_euchre"
_MOVES_PER_HAND = 48  # an upper bound on the decisions in one hand
_PARAMS: dict[str, Any] = {"form": "four-handed", "deck": 24, "target": 0, "rules": "{}"}

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Euchre (euchre-harness rules engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_PARAMS,
)


def config_of(params: Mapping[str, Any]) -> tuple[RulesConfig, bool]:
    """The engine's rules for the game parameters, and whether it is a single hand."""
    p = {**_PARAMS, **params}
    target = int(p["target"])
    rules = json.loads(p["rules"]) if isinstance(p["rules"], str) else dict(p["rules"])
    return rules_config(str(p["form"]), p["deck"], max(1, target), rules), target <= 0


class EuchreGame(pyspiel.Game):  # type: ignore[misc]
    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = {**_PARAMS, **(params or {})}
        self.config, self.single_hand = config_of(params)
        n = self.config.players
        hands = 1 if self.single_hand else 20 * self.config.target
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=len(ALL_CARDS),
            num_players=n,
            min_utility=-4.0 if self.single_hand else -1.0,
            max_utility=4.0 if self.single_hand else 1.0,
            utility_sum=0.0,
            max_game_length=hands * _MOVES_PER_HAND)
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> EuchreState:
        return EuchreState(self)

    def make_py_observer(self, iig_obs_type: Any = None,
                         params: Mapping[str, Any] | None = None) -> EuchreObserver:
        perfect = iig_obs_type is None or iig_obs_type.perfect_recall
        return EuchreObserver(self.config, perfect_recall=perfect)


class EuchreState(pyspiel.State):  # type: ignore[misc]
    def __init__(self, game: EuchreGame) -> None:
        super().__init__(game)
        self.config = game.config
        self.single_hand = game.single_hand
        self.first_dealer: int | None = None
        self.deck: list[Card] = []  # the next hand's deck order, as drawn so far
        self.hands: list[Hand] = []
        self.scores = [0] * team_count(self.config.form)
        self.hand_scores: list[tuple[int, ...]] = []  # the scores as each hand began
        self.over = False
        self.winner: int | None = None
        self.resamples = 0

    # ------------------------------------------------------------------ queries
    @property
    def hand(self) -> Hand | None:
        return self.hands[-1] if self.hands and self.hands[-1].result is None else None

    def current_player(self) -> int:
        if self.over:
            return int(pyspiel.PlayerId.TERMINAL)
        hand = self.hand
        if hand is None:
            return int(pyspiel.PlayerId.CHANCE)
        assert hand.current is not None
        return hand.current

    def _legal_actions(self, player: int) -> list[int]:
        hand = self.hand
        assert hand is not None and player == hand.current
        return sorted(a.id for a in hand.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.first_dealer is None:
            n = self.config.players
            return [(s, 1.0 / n) for s in range(n)]
        drawn = set(self.deck)
        left = sorted(c.id for c in PACK_SETS[self.config.deck] if c not in drawn)
        return [(c, 1.0 / len(left)) for c in left]

    @classmethod
    def from_hand(cls, game: EuchreGame, hand: Hand) -> EuchreState:
        """A single-hand state whose hand in play is ``hand`` (a copy is made)."""
        state = cls(game)
        state.first_dealer = hand.dealer
        state.hand_scores.append(tuple(state.scores))
        state.hands.append(_copy_hand(hand))
        return state

    def observation(self, player: int) -> Observation:
        """The engine's observation of ``player`` in the hand in play (or the last one)."""
        if not self.hands:
            raise ValueError("no hand has been dealt yet")
        index = len(self.hands) - 1
        return observe(self.hands[index], player, self.hand_scores[index], index)

    # ------------------------------------------------------------------ moves
    def _apply_action(self, action: int) -> None:
        if self.is_chance_node():
            self._apply_chance(action)
            return
        hand = self.hand
        assert hand is not None
        hand.apply(Action.from_id(action))
        if hand.result is None:
            return
        for team, points in enumerate(hand.result.points):
            self.scores[team] += points
        best = max(self.scores)
        if self.single_hand:
            self.over = True
        elif best >= self.config.target and self.scores.count(best) == 1:
            self.over = True
            self.winner = self.scores.index(best)

    def _apply_chance(self, outcome: int) -> None:
        if self.first_dealer is None:
            self.first_dealer = outcome
            return
        self.deck.append(ALL_CARDS[outcome])
        if len(self.deck) == self.config.deck.size:
            dealer = (self.first_dealer + len(self.hands)) % self.config.players
            self.hand_scores.append(tuple(self.scores))
            self.hands.append(Hand(self.config, dealer, self.deck))
            self.deck = []

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self.first_dealer is None:
                return f"dealer {action}"
            return f"deal {ALL_CARDS[action]}"
        return str(Action.from_id(action))

    def is_terminal(self) -> bool:
        return self.over

    def returns(self) -> list[float]:
        n = self.config.players
        if not self.over:
            return [0.0] * n
        if self.single_hand:
            result = self.hands[-1].result
            assert result is not None
            return [side_rewards(self.config, result.points, s) for s in range(n)]
        teams = team_count(self.config.form)
        return [1.0 if team_of(self.config.form, s) == self.winner else -1.0 / (teams - 1)
                for s in range(n)]

    def __str__(self) -> str:
        parts = [f"scores {self.scores}"]
        for i, h in enumerate(self.hands):
            parts.append(f"hand {i}: {h.to_record()}")
        if self.deck:
            parts.append(f"dealing {' '.join(map(str, self.deck))}")
        return "\n".join(parts)

    # ------------------------------------------------------------------ search
    def resample_from_infostate(self, player_id: int,
                                probability_sampler: Callable[[], float] | None = None
                                ) -> EuchreState:
        """A copy of this state in which the hidden cards of the hand in play are redrawn,
        uniformly among the deals consistent with what ``player_id`` has seen."""
        clone: EuchreState = self.clone()
        hand = self.hand
        if hand is None:
            return clone
        # Mixed with a count of the draws made from this state, so that a sampler made
        # afresh for each call (as OpenSpiel's ISMCTS does) still varies the worlds.
        self.resamples += 1
        value = probability_sampler() if callable(probability_sampler) else random.random()
        rng = random.Random(f"{value}/{self.resamples}")
        world = WorldSampler(self.observation(player_id), self.config).sample(rng)
        clone.hands[-1] = world.to_hand()
        return clone

    def __deepcopy__(self, memo: dict[int, Any]) -> EuchreState:
        # pyspiel clones a Python state through copy.deepcopy: copy the engine's hands
        # as records replayed, which is faster and shares the immutable tables.
        clone = EuchreState(self.get_game())
        clone.first_dealer = self.first_dealer
        clone.deck = list(self.deck)
        clone.hands = [_copy_hand(h) for h in self.hands]
        clone.scores = list(self.scores)
        clone.hand_scores = list(self.hand_scores)
        clone.over = self.over
        clone.winner = self.winner
        return clone


def _copy_hand(hand: Hand) -> Hand:
    copied = Hand(hand.config, hand.dealer, hand.deck)
    for seat, action, _ in hand.transitions:
        assert copied.current == seat
        copied.apply(action)
    return copied


class EuchreObserver:
    """OpenSpiel's observer for ``python_euchre``: the tensor and its named views are the
    encoding of :mod:`harness.envs.encoding`."""

    def __init__(self, config: RulesConfig, *, perfect_recall: bool) -> None:
        self.config = config
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(VECTOR_SIZE, np.float32)
        self.dict: dict[str, np.ndarray[Any, Any]] = {}
        at = 0
        for name, shape in FIELDS.items():
            size = int(np.prod(shape))
            self.dict[name] = self.tensor[at:at + size].reshape(shape)
            at += size

    def set_from(self, state: EuchreState, player: int) -> None:
        if not state.hands:
            self.tensor.fill(0.0)
            return
        self.tensor[:] = flatten(encode(state.observation(player), self.config))

    def string_from(self, state: EuchreState, player: int) -> str:
        if not state.hands:
            dealer = "-" if state.first_dealer is None else str(state.first_dealer)
            return f"seat {player} dealing; first dealer {dealer}"
        current = describe(state.observation(player), self.config)
        if not self.perfect_recall:
            return current
        earlier = [describe(observe(h, player, state.hand_scores[i], i), self.config)
                   for i, h in enumerate(state.hands[:-1])]
        return "\n--\n".join([*earlier, current])


def load(**params: Any) -> Any:
    """``pyspiel.load_game("python_euchre", params)`` with the values converted."""
    converted = dict(params)
    if "rules" in converted and not isinstance(converted["rules"], str):
        converted["rules"] = json.dumps(converted["rules"])
    for key in ("deck", "target"):
        if key in converted:
            converted[key] = int(converted[key])
    return pyspiel.load_game(GAME_NAME, converted)


pyspiel.register_game(_GAME_TYPE, EuchreGame)
