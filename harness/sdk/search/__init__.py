"""Helpers for search bots.

* :mod:`harness.sdk.search.worlds`: hidden worlds consistent with an observation, drawn
  uniformly (:class:`WorldSampler`), each a full deal the engine can continue from
  (:meth:`World.to_hand`);
* :mod:`harness.sdk.search.rollout`: a lean play phase for rollouts (:class:`PlayRollout`);
* :mod:`harness.sdk.search.pimc` and :mod:`harness.sdk.search.bidding`: determinized search
  for card play and for the decisions before it, as ``sample_bots/search_bot.py`` uses
  them.
"""

from harness.errors import InconsistentObservation
from harness.sdk.search.bidding import search_bid
from harness.sdk.search.pimc import Budget, SearchResult, search_play
from harness.sdk.search.rollout import PlayRollout
from harness.sdk.search.worlds import World, WorldRejected, WorldSampler, sample_world

__all__ = ["Budget", "InconsistentObservation", "PlayRollout", "SearchResult", "World",
           "WorldRejected", "WorldSampler", "sample_world", "search_bid", "search_play"]
