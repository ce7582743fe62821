"""A ladder's deals cannot be worked out from what a bot sees: every deal seed derives
from a secret key kept in the ladder's store, not from the public ``seed`` and the set's
number (which a game's id shows)."""

from __future__ import annotations

from pathlib import Path

from harness.competition.deals import deal_seed
from harness.ladder.matchmaking import Candidate
from harness.ladder.runtime import LadderRuntime
from harness.ladder.settings import LadderSettings
from harness.storage.ladder import LadderStore

PAIR = [Candidate("a", free_seats=2), Candidate("b", free_seats=2)]


def first_seed(store: Path, seed: int = 1) -> int:
    runtime = LadderRuntime(LadderSettings(store=store, log_dir=store.parent / "logs",
                                           seed=seed))
    try:
        (deal_set,) = runtime.matchmaker.next_sets(PAIR, 1)
        assert deal_set.key == "ladder/000000000"  # the number a bot sees in the game id
        return deal_set.seed
    finally:
        runtime.close()


def test_deal_seeds_derive_from_a_secret_key_kept_in_the_store(tmp_path: Path) -> None:
    one, other = tmp_path / "one.sqlite", tmp_path / "other.sqlite"
    seed = first_seed(one)
    assert seed != deal_seed(1, 0)  # the public seed and the set's number are not enough
    assert first_seed(other) != seed  # another ladder, same file: other deals
    assert first_seed(one) == seed  # a restart keeps the key, so the same deals
    assert first_seed(one, seed=2) != seed  # the file's seed still changes them
    with LadderStore(one) as store:
        key = store.deal_key()
    assert len(key) == 64 and int(key, 16) > 0
