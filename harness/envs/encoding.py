"""One seat's observation as fixed-size arrays and as text, for learning libraries.

Everything here is computed from the engine's :class:`~harness.rules.Observation` of a
seat, the same object the protocol turns into the messages bots receive, so an
environment built on it shows a seat exactly what a bot at that seat is shown, nothing
more (docs/rules.md section 7).

Seats are *relative*: slot 0 is the observing seat, slot 1 the player on its left, and so
on (four slots in every form; unused slots stay zero). Cards are indexed by
:attr:`Card.id` (33 slots: the 32-card pack and the Joker) and actions by
:attr:`Action.id`, whatever the deck, so one network fits every form and deck.

:func:`encode` gives a dict of named float32 arrays (the *dict observation*; the key
order is :data:`FIELDS`); :func:`flatten` concatenates them into the *vector*
observation. :func:`action_mask` marks the legal actions; :func:`describe` is a
readable text of the same information.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.rules import Action, ActionKind, Observation, Phase, RulesConfig
from harness.rules.actions import Action as _Action
from harness.rules.cards import ALL_CARDS, format_cards
from harness.rules.config import Form
from harness.rules.hand import HAND_SIZE
from harness.rules.scoring import team_count, team_of

NUM_CARDS = len(ALL_CARDS)
NUM_ACTIONS = len(_Action._by_id)
SEATS = 4
DECISION_PHASES: tuple[Phase, ...] = (
    Phase.NAME_TRUMP, Phase.BID_ROUND_1, Phase.DEALER_PICKUP, Phase.DEALER_DISCARD,
    Phase.BID_ROUND_2, Phase.GO_ALONE, Phase.DUMMY_DISCARD, Phase.PLAY, Phase.HAND_OVER,
)
# Per relative seat, which public decisions it made this hand.
BIDS = ("r1-pass", "r1-order", "r2-pass", "r2-c", "r2-d", "r2-h", "r2-s",
        "name-c", "name-d", "name-h", "name-s", "take", "leave", "alone", "not-alone")

FIELDS: dict[str, tuple[int, ...]] = {
    "phase": (len(DECISION_PHASES),),
    "to_move": (SEATS,),
    "dealer": (SEATS,),
    "hand": (NUM_CARDS,),
    "upcard": (NUM_CARDS,),
    "upcard_state": (3,),  # turned down, taken by the dealer, left by the dealer
    "trump": (4,),
    "maker": (SEATS,),
    "alone": (SEATS,),
    "sitting_out": (SEATS,),
    "bids": (SEATS, len(BIDS)),
    "discards": (NUM_CARDS,),
    "dummy": (NUM_CARDS,),
    "tricks": (HAND_SIZE, SEATS, NUM_CARDS),  # trick i: the card each seat played
    "leaders": (HAND_SIZE, SEATS),
    "tricks_won": (SEATS,),
    "scores": (SEATS,),  # per side, own side first, as a fraction of the target
}
VECTOR_SIZE = sum(int(np.prod(shape)) for shape in FIELDS.values())

Arrays = dict[str, npt.NDArray[np.float32]]


def _bid_index(obs: Observation, n: int) -> list[tuple[int, int]]:
    """(seat, BIDS index) for each public decision of the hand."""
    out: list[tuple[int, int]] = []
    passes = 0
    round_two = False
    for seat, action in obs.public_actions:
        kind = action.kind
        if kind is ActionKind.PASS:
            out.append((seat, 2 if round_two else 0))
            passes += 1
            if passes == n and not round_two:
                round_two, passes = True, 0
        elif kind is ActionKind.ORDER_UP:
            out.append((seat, 1))
        elif kind is ActionKind.CALL:
            assert action.suit is not None
            out.append((seat, (3 if round_two else 7) + int(action.suit)))
        elif kind is ActionKind.TAKE_UPCARD:
            out.append((seat, 11))
        elif kind is ActionKind.LEAVE_UPCARD:
            out.append((seat, 12))
        elif kind is ActionKind.GO_ALONE:
            out.append((seat, 13))
        elif kind is ActionKind.NOT_ALONE:
            out.append((seat, 14))
    return out


def encode(obs: Observation, config: RulesConfig) -> Arrays:
    """The observation of one seat as named arrays (see the module docstring)."""
    n = config.players
    me = obs.seat
    a = {name: np.zeros(shape, dtype=np.float32) for name, shape in FIELDS.items()}

    def rel(seat: int) -> int:
        return (seat - me) % n

    a["phase"][DECISION_PHASES.index(obs.phase)] = 1.0
    if obs.current is not None:
        a["to_move"][rel(obs.current)] = 1.0
    a["dealer"][rel(obs.dealer)] = 1.0
    for card in obs.hand:
        a["hand"][card.id] = 1.0
    a["upcard"][obs.upcard.id] = 1.0
    a["upcard_state"][:] = (obs.upcard_turned_down, obs.dealer_took_upcard is True,
                            obs.dealer_took_upcard is False)
    if obs.trump is not None:
        a["trump"][int(obs.trump)] = 1.0
    if obs.maker is not None:
        a["maker"][rel(obs.maker)] = 1.0
    for seat in obs.alone:
        a["alone"][rel(seat)] = 1.0
    for seat in obs.sitting_out:
        a["sitting_out"][rel(seat)] = 1.0
    for seat, index in _bid_index(obs, n):
        a["bids"][rel(seat), index] = 1.0
    for card in obs.discards:
        a["discards"][card.id] = 1.0
    for card in obs.dummy:
        a["dummy"][card.id] = 1.0
    tricks = [(t.leader, t.plays) for t in obs.tricks]
    if obs.current_trick:
        tricks.append((obs.current_trick[0][0], obs.current_trick))
    for i, (leader, plays) in enumerate(tricks):
        a["leaders"][i, rel(leader)] = 1.0
        for seat, card in plays:
            a["tricks"][i, rel(seat), card.id] = 1.0
    for seat, won in enumerate(obs.tricks_won):
        a["tricks_won"][rel(seat)] = won / HAND_SIZE
    form = config.form
    teams = team_count(form)
    own = team_of(form, me)
    for team, score in enumerate(obs.scores[:teams]):
        a["scores"][(team - own) % teams] = min(1.0, score / config.target)
    return a


def flatten(arrays: Arrays) -> npt.NDArray[np.float32]:
    """The vector observation: the named arrays concatenated in :data:`FIELDS` order."""
    return np.concatenate([arrays[name].ravel() for name in FIELDS])


def action_mask(legal: Sequence[Action]) -> npt.NDArray[np.int8]:
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    for action in legal:
        mask[action.id] = 1
    return mask


def describe(obs: Observation, config: RulesConfig) -> str:
    """A readable text of what the seat knows (absolute seat numbers)."""
    lines = [f"seat {obs.seat} hand #{obs.hand_number} dealer {obs.dealer} "
             f"phase {obs.phase.value} to move {obs.current}",
             f"cards {format_cards(obs.hand) or '-'} upcard {obs.upcard}"
             f"{' (turned down)' if obs.upcard_turned_down else ''}"]
    if obs.dealer_took_upcard is not None:
        lines.append(f"dealer {'took' if obs.dealer_took_upcard else 'left'} the upcard")
    if obs.trump is not None:
        lines.append(f"trump {obs.trump.letter} maker {obs.maker}"
                     f" alone {list(obs.alone)} sitting out {list(obs.sitting_out)}")
    bids = " ".join(f"{seat}:{action}" for seat, action in obs.public_actions
                    if action.kind is not ActionKind.PLAY)
    lines.append(f"bids {bids or '-'}")
    if obs.discards:
        lines.append(f"my discards {format_cards(obs.discards)}")
    if obs.dummy:
        lines.append(f"dummy {format_cards(obs.dummy)}")
    for i, t in enumerate(obs.tricks):
        plays = " ".join(f"{s}:{c}" for s, c in t.plays)
        lines.append(f"trick {i + 1} {plays} won by {t.winner}")
    if obs.current_trick:
        lines.append("on the table " + " ".join(f"{s}:{c}" for s, c in obs.current_trick))
    lines.append(f"tricks won {list(obs.tricks_won)} scores "
                 f"{list(obs.scores[:team_count(config.form)])}"
                 f"{' (partners: seats 0+2, 1+3)' if config.form is Form.FOUR_HANDED else ''}")
    return "\n".join(lines)
