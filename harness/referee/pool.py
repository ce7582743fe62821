"""Entrants and their seat instances: start local bots, wait for remote ones, restart
crashed ones, and lend each instance to one game at a time.

The pool tells those who watch it (:meth:`BotPool.watch`) which entrant's instances may
have changed (added, lent, given back, a stream opened or closed on one of its seats),
so that a caller with many entrants (a standing ladder) looks again at those alone
instead of at every instance each time."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.errors import BotStartupError, ConfigError
from harness.protocol import convert
from harness.referee.botlog import log_tail
from harness.referee.boxed import BoxedBotProcess
from harness.referee.process import BotCommand, BotProcess
from harness.referee.server import RefereeServer
from harness.referee.session import Slot
from harness.rules.config import RulesConfig
from harness.sandbox.box import check_available

log = logging.getLogger("euchre.pool")


def check_entrant(name: object, command: object | None, tokens: Sequence[str]) -> None:
    """The checks every bot passes, wherever it is declared: a printable name without
    surrounding spaces, and either a non-empty command (local) or tokens (remote).
    Raises ConfigError naming ``name``, ``command`` or ``tokens``."""
    if not isinstance(name, str) or not name.strip() or name != name.strip() \
            or not name.isprintable():
        raise ConfigError("name", f"a bot name is a non-empty printable string without "
                                  f"surrounding spaces; got {name!r}")
    if command is not None and not command:
        raise ConfigError("command", f"{name}: the command line is empty")
    if command is not None and tokens:
        raise ConfigError("tokens", f"{name}: give either command (a local bot) or tokens "
                                    f"(a remote bot), not both")
    if command is None and not tokens:
        raise ConfigError("command", f"{name}: a bot needs a command (local) or tokens "
                                     f"(remote)")


@dataclasses.dataclass(frozen=True, slots=True)
class Entrant:
    """A bot taking part: local (``command``) or remote (connects with ``tokens``)."""

    name: str
    command: BotCommand | None = None
    tokens: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_entrant(self.name, self.command, self.tokens)

    @property
    def remote(self) -> bool:
        return self.command is None

    @property
    def boxed(self) -> bool:
        """A local bot run in a box (harness.sandbox)."""
        return self.command is not None and self.command.sandbox is not None


class Instance:
    """One seat instance: a slot, and for a local bot its process."""

    def __init__(self, entrant: Entrant, slot: Slot) -> None:
        self.entrant = entrant
        self.slot = slot
        self.process: BotProcess | None = None
        self.busy = False


class BotPool:
    """Hands out connected instances of each entrant."""

    def __init__(self, server: RefereeServer, log_dir: Path, *,
                 startup_timeout: float = 20.0) -> None:
        self.server = server
        self.log_dir = log_dir
        self.startup_timeout = startup_timeout
        self.entrants: dict[str, Entrant] = {}
        self._instances: dict[str, list[Instance]] = {}
        self._freed = asyncio.Condition()
        self._watchers: list[Callable[[str], None]] = []
        server.registry.watch(self._stream_changed)

    def watch(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(name)`` whenever an instance of entrant ``name`` may have
        changed: the entrant was added, an instance was lent to a game or given back, or
        a stream opened or closed on one of its seats (``busy``, ``slot.live`` and
        ``slot.ready``). An instance whose ``busy`` a caller sets itself is its own to
        note."""
        self._watchers.append(callback)

    def changed(self, name: str) -> None:
        for callback in self._watchers:
            callback(name)

    def _stream_changed(self, slot: Slot) -> None:
        if slot.name in self._instances:
            self.changed(slot.name)

    def add(self, entrant: Entrant, instances: int, rules: RulesConfig | None = None) -> None:
        """Register ``instances`` seat instances of ``entrant``. With ``rules``, a bot
        whose Hello capabilities exclude that form or deck is refused."""
        if entrant.name in self.entrants:
            raise ConfigError(entrant.name, "two entrants have the same name")
        if entrant.remote and len(entrant.tokens) < instances:
            raise ConfigError(entrant.name, f"a remote bot here needs {instances} tokens "
                                            f"(one per seat instance); got "
                                            f"{len(entrant.tokens)}")
        if entrant.boxed:
            check_available()  # a boxed bot never runs unboxed: refuse here, in one line
        self.entrants[entrant.name] = entrant
        requires = None
        if rules is not None:
            p = convert.rules_to_pb(rules)
            requires = (int(p.form), int(p.deck))
        lst = []
        try:
            for i in range(instances):
                token = entrant.tokens[i] if entrant.remote else None
                slot = self.server.registry.add(entrant.name, i, token, remote=entrant.remote,
                                                requires=requires)
                lst.append(Instance(entrant, slot))
        except ValueError as e:
            for inst in lst:
                self.server.registry.remove(inst.slot)
            raise ConfigError(entrant.name, str(e)) from None
        self._instances[entrant.name] = lst
        self.changed(entrant.name)

    def instances(self, name: str) -> list[Instance]:
        return self._instances[name]

    async def acquire(self, names: Sequence[str]) -> list[Instance]:
        """Free instances for every name in ``names`` (a name may repeat), all marked
        busy together: a game never holds some seats while it waits for others, so two
        games cannot block each other."""
        async with self._freed:
            while True:
                picked: list[Instance] = []
                for name in names:
                    free = next((i for i in self._instances[name]
                                 if not i.busy and i not in picked), None)
                    if free is None:
                        break
                    picked.append(free)
                else:
                    for inst in picked:
                        inst.busy = True
                    for name in dict.fromkeys(names):
                        self.changed(name)
                    return picked
                await self._freed.wait()

    async def release(self, inst: Instance) -> None:
        async with self._freed:
            inst.busy = False
            inst.slot.game_id = ""
            self._freed.notify_all()
        self.changed(inst.entrant.name)

    async def ready(self, inst: Instance) -> None:
        """Make sure the instance has a live stream: (re)start a local bot whose process
        is gone or whose stream closed; wait for a remote one. Raises BotStartupError."""
        slot = inst.slot
        if slot.ready and (inst.process is None or inst.process.alive):
            return
        if inst.entrant.remote:
            try:
                await slot.wait_connected(self.startup_timeout)
            except TimeoutError:
                why = f"remote bot did not connect within {self.startup_timeout:g}s"
                raise BotStartupError(f"{slot.name}: {why}", reason=why) from None
            return
        if inst.process is not None:
            await inst.process.stop()
            if slot.session is not None:
                slot.session.close("restarting the bot")
        command = inst.entrant.command
        assert command is not None
        proc = (BotProcess(inst.entrant.name, inst.slot.instance, command,
                           self.server.local_address, slot.token, self.log_dir)
                if command.sandbox is None else
                BoxedBotProcess(inst.entrant.name, inst.slot.instance, command, slot.token,
                                self.log_dir, await self.server.box_socket_dir()))
        inst.process = proc
        await proc.start()
        waiter = asyncio.ensure_future(slot.wait_connected(self.startup_timeout))
        exited = asyncio.ensure_future(proc.wait())
        try:
            done, _ = await asyncio.wait((waiter, exited), return_when=asyncio.FIRST_COMPLETED)
        finally:
            exited.cancel()
        if waiter in done and waiter.exception() is None:
            proc.rest()
            return
        waiter.cancel()
        await proc.stop()
        why = (f"exited with code {proc.returncode} before the handshake"
               if exited in done else f"no handshake within {self.startup_timeout:g}s")
        tail = log_tail(proc.log_path)
        raise BotStartupError(f"{slot.name}: {why}; {tail}", reason=why, log_tail=tail)

    async def close(self) -> None:
        procs = [i.process for lst in self._instances.values() for i in lst if i.process]
        await asyncio.gather(*(p.stop() for p in procs), return_exceptions=True)
        for lst in self._instances.values():
            for inst in lst:
                if inst.slot.session is not None:
                    inst.slot.session.close("pool closed")
                self.server.registry.remove(inst.slot)

