"""The worker plugin that closes a worker's arenas (and so its bots) when it stops."""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from harness.cluster.worker import close_arena


class ArenaPlugin(WorkerPlugin):
    """Registered by each client on every worker. Idempotent: a second tournament on the
    same cluster keeps the registered plugin (replacing it would tear it down, closing
    the first tournament's arenas)."""

    name = "euchre-arena"
    idempotent = True

    def teardown(self, worker: Any) -> None:
        close_arena()
