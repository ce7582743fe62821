"""The ladder's policies as its configuration file sets them: the matchmaker's knobs
(:class:`Policy`), when a bot that faults is benched (:class:`QuarantinePolicy`) and how
often a lost cluster is tried again (:data:`RETRY_SECONDS`). Each checks its own values
(a :class:`~harness.errors.ConfigError` naming the field). They live below both the
tournament's configuration schema (:mod:`harness.tournament.options`), which reads their
defaults, and the ladder (:mod:`harness.ladder`), which plays by them.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import ConfigError

__all__ = ["RETRY_SECONDS", "Policy", "QuarantinePolicy"]

RETRY_SECONDS = 60.0
"""How often, by default, a ladder tries again a cluster it lost."""


@dataclass(frozen=True, slots=True)
class Policy:
    """The matchmaker's knobs (see :mod:`harness.ladder.matchmaking`)."""

    provisional_sets: int = 4
    closeness_elo: float = 200.0
    repeat_weight: float = 1.0
    repeat_cap: float = 2.0

    def __post_init__(self) -> None:
        if self.provisional_sets < 0:
            raise ConfigError("provisional_sets", "must be >= 0")
        for option in ("closeness_elo", "repeat_cap"):
            if not getattr(self, option) > 0:
                raise ConfigError(option, "must be > 0")
        if not self.repeat_weight >= 0:
            raise ConfigError("repeat_weight", "must be >= 0")


@dataclass(frozen=True, slots=True)
class QuarantinePolicy:
    """``faults`` faulted games among the last ``window`` bench a bot; the n-th bench
    lasts ``base_seconds * growth ** (n - 1)``, at most ``max_seconds``."""

    faults: int = 3
    window: int = 10
    base_seconds: float = 300.0
    growth: float = 2.0
    max_seconds: float = 86400.0

    def __post_init__(self) -> None:
        if not 1 <= self.faults <= self.window:
            raise ConfigError("faults", f"must be from 1 to window ({self.window}); "
                                        f"got {self.faults}")
        if not self.base_seconds > 0:
            raise ConfigError("base_seconds", "must be > 0")
        if not self.growth >= 1:
            raise ConfigError("growth", "must be >= 1")
        if not self.max_seconds >= self.base_seconds:
            raise ConfigError("max_seconds", "must be >= base_seconds")

    def duration(self, repeat: int) -> float:
        """How long the ``repeat``-th bench (1 for the first) lasts, in seconds."""
        return min(self.max_seconds, self.base_seconds * self.growth ** (repeat - 1))
