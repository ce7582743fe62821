"""bench/timeline.py, the wall-time parts of ``bench/referee.py --timeline``: the parts of
a known timeline, their means adding up to the wall time, and the wrappers put back."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parent.parent / "bench"))  # last: shadows nothing

from timeline import PARTS, Timeline

from harness.referee.match import GameRunner
from harness.referee.session import Session


def known() -> Timeline:
    """One game of two decisions (seconds): the second writes its events, then the
    request; writes outside any decision (the game's start and end) count in no part."""
    t = Timeline()
    t.asks = [(1.0, 3.0), (4.0, 6.0)]
    t.decides = [(1.2, 2.8), (4.1, 5.9)]
    t.sends = [(0.5, 0.6), (1.2, 1.5), (4.1, 4.2), (4.2, 4.6), (7.0, 7.5)]
    t.replies = [2.6, 5.5]
    t.games = [(0, 2)]
    t.wall_s = 12.0
    return t


def test_the_parts_of_a_known_timeline_add_up_to_its_wall_time() -> None:
    parts = known().parts()
    means = {part: figures.mean_us / 1e6 for part, figures in parts.items()}
    assert means == pytest.approx({
        "request": 0.15, "write": 0.4, "to reply": 1.0, "hand-off": 0.3, "checks": 0.15,
        "between": 0.5, "per game": 3.5, "total": 6.0})
    assert sum(means[part] for part in PARTS) == pytest.approx(means["total"])
    assert parts["write"].median_us == pytest.approx(0.4e6)
    assert parts["per game"].median_us is None


def test_a_decision_without_its_reply_gives_no_timeline() -> None:
    t = known()
    t.replies = t.replies[:1]
    with pytest.raises(ValueError, match="incomplete"):
        t.parts()


def test_the_wrapped_methods_are_put_back() -> None:
    originals = (GameRunner.play, GameRunner._ask, Session.decide, Session.send,
                 Session.on_reply)
    with Timeline().installed():
        assert GameRunner._ask is not originals[1]
        assert Session.on_reply is not originals[4]
    assert (GameRunner.play, GameRunner._ask, Session.decide, Session.send,
            Session.on_reply) == originals
