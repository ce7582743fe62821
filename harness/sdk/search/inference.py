"""Keeping the worlds in which a model of the other players would have bid as they did.

Uniform worlds ignore what the bidding says (a maker usually holds trumps; players who
passed usually do not). :class:`BidFilter` replays each world's bidding on the engine and
keeps it only if the model policy, dealt that world's cards, makes every bid the other
seats made. This is exact inference when they play that policy, and a model of them
otherwise. When too many worlds are refused (the model explains the bidding badly) the
filter gives up and accepts every world.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.rules import Action, Hand, Observation, Phase
from harness.rules.observation import observe
from harness.sdk.search.worlds import World, WorldRejected

Policy = Callable[[Observation], Action]
MAX_REJECTIONS = 20  # per world accepted, before the filter gives up


def observe_any(hand: Hand, seat: int) -> Observation:
    """A seat's observation of ``hand`` (scores and hand number do not matter here)."""
    return observe(hand, seat, (0, 0, 0), 0)


class BidFilter:
    """Accepts worlds consistent with ``policy`` for every seat but ``seat`` (see the
    module docstring); counts what it refused."""

    def __init__(self, seat: int, policy: Policy) -> None:
        self.seat = seat
        self.policy = policy
        self.accepted = 0
        self.rejected = 0

    def _consistent(self, hand: Hand, who: int, action: Action) -> bool:
        return (who == self.seat or hand.phase is Phase.PLAY
                or self.policy(observe_any(hand, who)) is action)

    def accept(self, world: World) -> bool:
        if self.rejected <= MAX_REJECTIONS * (self.accepted + 1):
            try:
                world.to_hand(self._consistent)
            except WorldRejected:
                self.rejected += 1
                return False
        self.accepted += 1
        return True
