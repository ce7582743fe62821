"""Where submitted bots are kept: content-addressed files next to the ladder's store,
and a row per hosted version in the store.

The files (bundles, builds) are kept as :mod:`harness.hosting.files` says, under
``<store folder>/uploads/``; :meth:`Uploads.sweep`, run when the ladder starts, removes
what a killed ladder left.

The store's ``ladder_hosted`` table holds, per hosted version: the bundle's sha256, its
manifest and its build state (``building``, ``ready`` or ``build failed``, with a
one-line reason).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from harness.hosting.bundle import Manifest, UnpackLimits
from harness.hosting.files import (
    BUILD_FAILED,
    BUILDING,
    DEFAULT_DISK_RESERVE,
    DEFAULT_MAX_BYTES,
    READY,
    BundleFiles,
    Hosted,
    Receiving,
    Stored,
)
from harness.storage.ladder import HostedRow, LadderStore

__all__ = ["BUILDING", "BUILD_FAILED", "DEFAULT_DISK_RESERVE", "DEFAULT_MAX_BYTES", "READY",
           "Hosted", "Receiving", "Stored", "Uploads"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Uploads(BundleFiles):
    """The hosted bots' files and rows of one ladder."""

    def __init__(self, store: LadderStore, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 limits: UnpackLimits | None = None,
                 disk_reserve: int = DEFAULT_DISK_RESERVE) -> None:
        super().__init__(store.path.parent / "uploads", max_bytes=max_bytes, limits=limits,
                         disk_reserve=disk_reserve)
        self.store = store

    def recorder(self, stored: Stored) -> Callable[[str], None]:
        """What records a new version ``name`` as hosted with ``stored``, inside the
        registry's transaction that registers it."""
        state = BUILDING if stored.manifest.build else READY
        row = HostedRow("", stored.sha256, stored.root, stored.manifest.runtime,
                        json.dumps(stored.manifest.command), json.dumps(stored.manifest.build),
                        state, "")

        def record(name: str) -> None:
            self.store.add_hosted(name, row, _now())

        return record

    # ------------------------------------------------------------------ reading

    @staticmethod
    def _hosted(row: HostedRow) -> Hosted:
        manifest = Manifest(row.runtime, tuple(json.loads(row.command_json)),
                            tuple(json.loads(row.build_json)))
        return Hosted(name=row.name, sha256=row.sha256, root=row.root, manifest=manifest,
                      state=row.state, detail=row.detail)

    def get(self, name: str) -> Hosted | None:
        """The hosted version ``name``, or None (not hosted, or no such bot)."""
        found = self.store.hosted(name)
        return self._hosted(found[0]) if found else None

    def all(self) -> list[Hosted]:
        """Every hosted version, in registration order."""
        return [self._hosted(r) for r in self.store.hosted()]

    def states(self) -> dict[str, str]:
        """Hosted version name -> its build state."""
        return self.store.hosted_states()

    def set_state(self, name: str, state: str, detail: str = "") -> None:
        self.store.set_hosted_state(name, state, detail, _now())

    # ------------------------------------------------------------------ start-up

    def sweep(self) -> list[Path]:
        """Remove what a killed ladder left: uploads and builds in ``tmp/``, bundles no
        version refers to. Call it only while no upload runs (the ladder's start).
        Returns what it removed."""
        return self.sweep_except(h.sha256 for h in self.all())
