"""The worker plugin that closes a worker's arenas (and so its bots) when it stops."""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from harness.cluster.worker import close_arena


class ArenaPlugin(WorkerPlugin):
    """Registered by the client on every worker."""

    name = "euchre-arena"

    def teardown(self, worker: Any) -> None:
        close_arena()
