"""Helpers for search bots.

* :mod:`harness.search.worlds`: hidden worlds consistent with an observation, drawn
  uniformly (:class:`WorldSampler`), each a full deal the engine can continue from
  (:meth:`World.to_hand`);
* :mod:`harness.search.rollout`: a lean play phase for rollouts (:class:`PlayRollout`);
* :mod:`harness.search.pimc` and :mod:`harness.search.bidding`: determinized search for
  card play and for the decisions before it, as ``sample_bots/search_bot.py`` uses them.
"""

from harness.search.bidding import search_bid
from harness.search.constraints import InconsistentObservation
from harness.search.pimc import Budget, SearchResult, search_play
from harness.search.rollout import PlayRollout
from harness.search.worlds import World, WorldRejected, WorldSampler, sample_world

__all__ = ["Budget", "InconsistentObservation", "PlayRollout", "SearchResult", "World",
           "WorldRejected", "WorldSampler", "sample_world", "search_bid", "search_play"]
