"""Deal seeds: every deal of a competition derives from its seed and the deal set's
number, so a tournament and the ladder deal alike and a stored game can be dealt again.

Deal set (round) ``k`` has the seed :func:`deal_seed` ``(seed, k)``: in a tournament the
same in every pairing (every pairing plays the same deals in round ``k``, which makes
results across pairings directly comparable), and for every table of a duplicate group;
without duplicate deals, every game of a pairing still has its own seed. A tournament
with strangers' bots (remote, boxed or hosted) deals each pairing of round ``k`` its own
set instead, ``(seed, k * pairings + p)``: a bot that plays several pairings of a round
would otherwise meet deals it has seen, and know the cards it saw in them.
"""

from __future__ import annotations

import hashlib

__all__ = ["SEED_LIMIT", "deal_seed"]

SEED_LIMIT = 2**62
"""Every deal seed is below this (so it fits a signed 64-bit column with room to spare)."""


def deal_seed(competition_seed: int, index: int) -> int:
    """The deal seed of deal set ``index``: the top 62 bits of
    ``sha256("euchre-harness/deals/<competition_seed>/<index>")``."""
    text = f"euchre-harness/deals/{competition_seed}/{index}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 2
