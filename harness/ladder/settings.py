"""What a ladder run needs (:class:`LadderSettings`): the ladder's file and flags, read
by the command line, become these settings; :class:`~harness.ladder.runtime.LadderRuntime`
runs with them and the operator's calls read them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.competition.policies import RETRY_SECONDS
from harness.errors import ConfigError
from harness.ladder.hosting import BuildPolicy
from harness.ladder.matchmaking import Matchmaker, Policy
from harness.ladder.quarantine import QuarantinePolicy
from harness.ladder.uploads import DEFAULT_DISK_RESERVE, DEFAULT_MAX_BYTES
from harness.protocol.tls import ServerTLS
from harness.referee.outcome import FaultPolicy, TimeControl
from harness.referee.pool import Entrant
from harness.rules.config import RulesConfig

__all__ = ["LadderSettings"]


@dataclass(frozen=True)
class LadderSettings:
    """Everything a ladder run needs. ``house`` are local bots (pool entrants with a
    command) and the seats each may hold at once; ``concurrency`` is how many deal
    sets run at once."""

    store: Path
    log_dir: Path
    rules: RulesConfig = field(default_factory=RulesConfig)
    time_control: TimeControl = field(default_factory=TimeControl)
    fault_policy: FaultPolicy = field(default_factory=FaultPolicy)
    partnerships: str = "same"
    duplicate: bool = True
    seed: int = 1
    concurrency: int = 2
    ladder_id: str = "ladder"
    house: tuple[tuple[Entrant, int], ...] = ()
    # False: every set seats a registered (or hosted) bot; house bots never play each
    # other alone, so a ladder nobody has dialed into plays nothing.
    house_vs_house: bool = True
    matchmaking: Policy = field(default_factory=Policy)
    quarantine: QuarantinePolicy = field(default_factory=QuarantinePolicy)
    host: str = "127.0.0.1"
    port: int = 0
    tls: ServerTLS | None = None
    startup_timeout: float = 10.0
    poll_seconds: float = 1.0
    refresh_seconds: float = 1.0
    refresh_games: int = 100
    operator_token: str | None = None  # None: operator calls from this machine only
    scheduler: str | None = None  # house-only sets on this Dask scheduler's workers
    workers: int = 0  # ... or on a local cluster of this many worker processes
    cluster_retry_seconds: float = RETRY_SECONDS  # a lost scheduler is tried again this often
    upload_max_bytes: int = DEFAULT_MAX_BYTES  # the largest bundle SubmitBot accepts
    upload_reserve_bytes: int = DEFAULT_DISK_RESERVE  # the free disk an upload must leave
    submissions_per_day: int = 10  # versions a bot's own token may submit in 24 hours
    build: BuildPolicy = field(default_factory=BuildPolicy)  # hosted bots' builds and boxes

    @property
    def seats_per_bot(self) -> int:
        """Seats each bot holds in one game: 2 with same-bot partnerships, else 1."""
        return Matchmaker(self.rules.form, partnerships=self.partnerships).seats_per_bot

    def concurrency_for(self, requested: int | None) -> int:
        """The concurrency of a bot registered asking for ``requested`` (None or 0: the
        seats of one game). ConfigError if that is too few for one game: such a bot
        would connect and never play."""
        seats = self.seats_per_bot
        concurrency = requested or seats
        if concurrency < seats:
            raise ConfigError("concurrency", f"a bot holds {seats} seats in a game of this "
                                             f"ladder (it partners itself), so it needs a "
                                             f"concurrency of at least {seats}; got "
                                             f"{concurrency}")
        return concurrency
