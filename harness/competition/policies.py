"""The ladder's policies as its configuration file sets them: the matchmaker's knobs
(:class:`Policy`), when a bot that faults is benched (:class:`QuarantinePolicy`) and how
often a lost cluster is tried again (:data:`RETRY_SECONDS`). Each field has the name of
its ``[ladder]`` key. The configuration schema checks each value's range; the policies
check what ties two fields together (a :class:`~harness.errors.ConfigError` naming the
field). The configuration schema (:mod:`harness.competition.options`) reads their
defaults; the ladder (:mod:`harness.ladder`) plays by them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from harness.errors import ConfigError

__all__ = ["RETRY_SECONDS", "Policy", "QuarantinePolicy", "ladder_policies"]

RETRY_SECONDS = 60.0
"""How often, by default, a ladder tries again a cluster it lost."""


@dataclass(frozen=True, slots=True)
class Policy:
    """The matchmaker's knobs (see :mod:`harness.ladder.matchmaking`)."""

    provisional_sets: int = 4
    closeness_elo: float = 200.0
    repeat_weight: float = 1.0
    repeat_cap: float = 2.0



@dataclass(frozen=True, slots=True)
class QuarantinePolicy:
    """``bench_faults`` faulted games among the last ``bench_window`` bench a bot; the
    n-th bench lasts ``bench_seconds * bench_growth ** (n - 1)``, at most
    ``bench_max_seconds``."""

    bench_faults: int = 3
    bench_window: int = 10
    bench_seconds: float = 300.0
    bench_growth: float = 2.0
    bench_max_seconds: float = 86400.0

    def __post_init__(self) -> None:
        if not 1 <= self.bench_faults <= self.bench_window:
            raise ConfigError("bench_faults", f"must be from 1 to bench_window "
                                              f"({self.bench_window}); got {self.bench_faults}")
        if not self.bench_seconds > 0:
            raise ConfigError("bench_seconds", "must be > 0")
        if not self.bench_growth >= 1:
            raise ConfigError("bench_growth", "must be >= 1")
        if not self.bench_max_seconds >= self.bench_seconds:
            raise ConfigError("bench_max_seconds", "must be >= bench_seconds")

    def duration(self, repeat: int) -> float:
        """How long the ``repeat``-th bench (1 for the first) lasts, in seconds."""
        return min(self.bench_max_seconds,
                   self.bench_seconds * self.bench_growth ** (repeat - 1))


def ladder_policies(ladder: Mapping[str, Any]) -> tuple[Policy, QuarantinePolicy]:
    """The two policies from a configuration's ``[ladder]`` values (keys that are not
    theirs are left alone). ConfigError names the field, which is the key."""
    def pick(cls: type) -> dict[str, Any]:
        return {f.name: ladder[f.name] for f in fields(cls) if f.name in ladder}
    return Policy(**pick(Policy)), QuarantinePolicy(**pick(QuarantinePolicy))
