"""A Dask cluster on this machine whose workers stay out of the terminal's way.

Dask's ``LocalCluster`` starts its worker processes as children of this one, in the same
process group, so a Ctrl-C in the terminal reaches every worker at the same moment as
this process: each dies with its own traceback while the run is trying to stop in
order. :class:`LocalWorkers` runs the scheduler in this process and starts the workers
with the ``dask worker`` command in a session of their own (``start_new_session``): a
signal from the terminal reaches only this process, which decides, and then stops the
workers itself. Their output goes to a log file, not to the terminal.

If this process is killed outright, the workers close by themselves once they have
lost the scheduler for ``DEATH_TIMEOUT`` seconds.

Whoever reaches a Dask scheduler or worker can run code in it: both listen on loopback
only and speak TLS with a certificate made for the cluster when it starts, which the
workers read from files only this user may read.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

import harness
from harness.errors import ClusterError

__all__ = ["DEATH_TIMEOUT", "LOOPBACK", "START_TIMEOUT", "STOP_TIMEOUT", "LocalWorkers"]

DEATH_TIMEOUT = 30
"""Seconds a worker waits for a scheduler it lost before it closes itself."""

START_TIMEOUT = 180.0
"""Seconds the workers may take to start: on a loaded machine, a few Python processes
importing Dask can take tens of seconds; a worker command that dies is noticed at
once."""

LOOPBACK = "127.0.0.1"
"""Where the scheduler and the workers listen: this machine only (whoever reaches the
scheduler or a worker can run code in it; they also speak TLS with a certificate made
for the cluster, which other users of the machine do not have)."""

STOP_TIMEOUT = 5.0
"""Seconds the workers get to close in order (their arenas and bots included) before
they are killed."""


class LocalWorkers:
    """A scheduler in this process and ``count`` single-threaded worker processes in a
    session of their own, whose output goes to ``log``. Start with :meth:`start`, which
    returns the scheduler's address; :meth:`close` stops both."""

    def __init__(self, count: int, log: Path) -> None:
        self.count = count
        self.log = log
        self.scheduler: Any = None
        self.security: Any = None  # what a client presents: distributed.Security
        self.process: asyncio.subprocess.Process | None = None
        self._keys: Path | None = None

    async def start(self) -> str:
        """Start the scheduler and the workers; the scheduler's address (``tls://``:
        connect with :attr:`security`)."""
        import distributed
        from distributed.security import Security

        # A certificate made for this cluster alone: the scheduler and the workers take
        # only connections that present it, so no other user of the machine can send
        # them code to run. The workers read it from files only root may read.
        self.security = Security.temporary()
        self._keys = Path(tempfile.mkdtemp(prefix="euchre-dask-"))
        files = []
        for name, pem in (("ca.pem", self.security.tls_ca_file),
                          ("cert.pem", self.security.tls_worker_cert),
                          ("key.pem", self.security.tls_worker_key)):
            path = self._keys / name
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as f:
                f.write(pem)
            files.append(path)
        # Any free port for the scheduler's own HTTP routes, on loopback: no dashboard.
        self.scheduler = await distributed.Scheduler(host=LOOPBACK, port=0, protocol="tls",
                                                     security=self.security,
                                                     dashboard=False,
                                                     dashboard_address=f"{LOOPBACK}:0")
        address = str(self.scheduler.address)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self.process = await _spawn(address, self.count, out, *files)
        return address

    async def until_up(self, client: Any) -> None:
        """Wait until every worker has joined ``client``'s scheduler. Raises
        :class:`ClusterError` if the worker command exits first, or after
        ``START_TIMEOUT``."""
        assert self.process is not None
        joined = asyncio.ensure_future(client.wait_for_workers(self.count))
        died = asyncio.ensure_future(self.process.wait())
        try:
            done, _ = await asyncio.wait((joined, died), timeout=START_TIMEOUT,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            joined.cancel()
            died.cancel()
        if joined in done:
            joined.result()
            return
        why = (f"exited with status {self.process.returncode}" if died in done
               else f"did not start within {START_TIMEOUT:.0f} s")
        raise ClusterError(f"the local Dask workers {why}; their log: {self.log}")

    async def close(self) -> None:
        """Stop the workers, then the scheduler. The workers get SIGTERM: each closes its
        arenas (and so its bots) and leaves the scheduler; the processes left then (a
        worker process lingers about 2 s after it closed, and one that would not close
        within ``STOP_TIMEOUT``) are killed."""
        process, self.process = self.process, None
        scheduler, self.scheduler = self.scheduler, None
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            await _until_closed(process, scheduler, STOP_TIMEOUT)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # the workers' session
            await process.wait()
        if scheduler is not None:
            with contextlib.suppress(Exception):
                await scheduler.close()
        keys, self._keys = self._keys, None
        if keys is not None:
            shutil.rmtree(keys, ignore_errors=True)


async def _until_closed(process: asyncio.subprocess.Process, scheduler: Any,
                        timeout: float) -> None:
    """Wait until ``process`` exits or no worker is left on ``scheduler``, at most
    ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while process.returncode is None and loop.time() < deadline:
        if scheduler is not None and not scheduler.workers:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(process.wait()), 0.05)


async def _spawn(address: str, count: int, out: IO[bytes], ca: Path, cert: Path,
                 key: Path) -> asyncio.subprocess.Process:
    """``dask worker`` for ``count`` worker processes, in a new session, with this
    checkout of the harness importable (the workers unpickle its tasks), speaking TLS
    with the cluster's certificate (``ca``, ``cert``, ``key``: files)."""
    env = harness.importable_env()
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "distributed.cli.dask_worker", address,
        "--tls-ca-file", str(ca), "--tls-cert", str(cert), "--tls-key", str(key),
        "--nworkers", str(count), "--nthreads", "1", "--no-dashboard",
        # On loopback only, the worker, its nanny and their HTTP routes alike (Dask's
        # default is every interface): whoever reaches a worker can run code in it.
        "--host", LOOPBACK, "--dashboard-address", f"{LOOPBACK}:0",
        "--death-timeout", str(DEATH_TIMEOUT),
        stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out, env=env,
        start_new_session=True)
