"""What ``run`` and ``sprt`` share: their flags (read from the configuration schema), the
configuration they load, the check of a stored tournament, and the run itself with its
progress line."""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from harness.cli.common import (
    add_listen_flags,
    check_listen,
    games,
    on_signals,
    raise_open_file_limit,
    split_assignment,
    writable_folder,
    write_address_file,
)
from harness.cli.progress import Progress
from harness.competition.options import OPTIONS, REQUIRED
from harness.errors import HarnessError
from harness.storage.results import ResultsStore
from harness.tournament.config import (
    RawConfig,
    TournamentConfig,
    apply_overrides,
    build_config,
    read_config,
)
from harness.tournament.outputs import tournament_report
from harness.tournament.runner import RunState, TournamentRunner, store_path


def add_tournament_flags(p: argparse.ArgumentParser, command: str) -> None:
    """The flags of ``run`` and ``sprt``. A configuration flag left out keeps the file's
    value (its default is "not given"); one that is given wins over ``--set``."""
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a configuration key, e.g. --set rules.form=cutthroat "
                        "(repeatable; the value is TOML or plain text)")
    add_option_flags(p, command)
    p.add_argument("--fresh", action="store_true",
                   help="delete the stored games of this tournament id and start again")
    add_listen_flags(p, port=0, remote=True)
    p.add_argument("--address-file", type=Path, metavar="PATH",
                   help="write the referee's address as JSON to PATH once it listens, for "
                        "scripts that start remote bots")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--markdown", action="store_true",
                   help="print the full report as Markdown (by default: the standings and "
                        "a few figures; the full report is in report.md and report.html)")


def add_option_flags(p: argparse.ArgumentParser, command: str) -> None:
    """A flag for each configuration key that has one in ``command``; read them back
    with :func:`overrides`."""
    for opt in OPTIONS:
        if command in opt.flag_in:
            shown = "" if opt.default is REQUIRED else f"; default {opt.docs_default()}"
            p.add_argument(opt.flag, dest=_dest(opt.key), default=None,
                           metavar=opt.leaf.upper(),
                           help=f"{opt.help} (the file's {opt.key}{shown})")


def _dest(key: str) -> str:
    return "opt_" + key.replace(".", "__")


def overrides(args: argparse.Namespace) -> dict[str, str]:
    """``--set`` items, then the configuration flags that were given."""
    out = dict(split_assignment(item, "--set") for item in getattr(args, "set", []))
    for opt in OPTIONS:
        value = getattr(args, _dest(opt.key), None)
        if value is not None:
            out[opt.key] = value
    return out


def load(args: argparse.Namespace,
         adjust: Callable[[RawConfig, dict[str, str]], None] | None = None) -> TournamentConfig:
    """The configuration of ``args.config`` (none: the sample bots) with the overrides;
    ``adjust`` may change the document once the overrides are in."""
    raw = read_config(args.config)
    given = overrides(args)
    apply_overrides(raw.data, given)
    if adjust is not None:
        adjust(raw, given)
    return build_config(raw)


def check_stored(config: TournamentConfig, fresh: bool) -> None:
    """Before a run: with ``fresh``, delete the stored tournament of this id; otherwise
    refuse, naming the fixes, a stored tournament whose settings differ (other than by
    ``games``, which the runner extends or refuses itself)."""
    path = store_path(config.output)
    if not path.is_file() or path.stat().st_size == 0:
        return
    with ResultsStore(path) as store:
        if config.id not in store.tournament_ids():
            return
        if fresh:
            deleted = store.delete_tournament(config.id)
            print(f"--fresh: deleted tournament {config.id!r} ({deleted} stored games)",
                  file=sys.stderr)
            return
        stored = store.tournament_config(config.id)
    new = json.loads(json.dumps(config.to_dict()))
    changed = sorted(k for k in stored.keys() | new.keys() if stored.get(k) != new.get(k))
    if changed and changed != ["games"]:
        raise HarnessError(
            f"tournament {config.id!r} is already stored in {path} with other settings "
            f"(differs in: {', '.join(changed)}). To start a new tournament beside it, "
            f"give it another id (--id NEW-ID); to delete its stored games and start "
            f"again, add --fresh; to resume it, run it with its original settings")


def run_tournament(config: TournamentConfig, *, quiet: bool = False,
                   host: str = "127.0.0.1", port: int = 0,
                   address_file: Path | None = None,
                   in_process: bool = False) -> tuple[RunState, int | None]:
    """Run to completion with a progress line on stderr. Ctrl-C or SIGTERM stops at once:
    finished games are kept, the games in progress are played again on resume, and one
    line says so. Returns the state and the signal that stopped the run, if one did.
    ``in_process`` plays the bots in this process, without the referee (see
    docs/research.md)."""
    check_listen(host, port)
    writable_folder(config.output, "output")
    progress = Progress(config.make_format().total(), enabled=not quiet)
    caught: list[int] = []

    def report(state: RunState) -> None:
        progress.show(state)

    def listening(address: str) -> None:
        print(f"referee on {address}", file=sys.stderr)
        if address_file is not None:
            write_address_file(address_file, address)

    async def main() -> RunState:
        runner = TournamentRunner(config, on_progress=report, host=host, port=port,
                                  on_listen=listening, in_process=in_process,
                                  on_notice=progress.note)
        task = asyncio.ensure_future(runner.run())
        with on_signals(lambda signum: _interrupt(runner, task, caught, signum)):
            try:
                return await task
            except asyncio.CancelledError:
                if not caught:
                    raise
                return runner.state

    print(f"tournament {config.id!r}: {config.format}, {config.rules.form.value}, "
          f"deck {config.rules.deck.value}, bots {', '.join(b.name for b in config.bots)}; "
          f"results in {config.output}/{_cluster_note(config)}"
          f"{'; in process (no referee, no clock)' if in_process else ''}", file=sys.stderr)
    raise_open_file_limit()  # its port takes connections by a share of the limit
    try:
        state = asyncio.run(main())
    finally:  # the line ends before any error is printed
        progress.close()
    if caught:
        path = store_path(config.output)
        with ResultsStore(path) as store:
            kept = store.count_games(config.id)
        print(f"interrupted: {games(kept)} of {config.id!r} stored in {path}; run the same "
              f"command to resume", file=sys.stderr)
    elif not state.finished:
        print("stopped before the end: run the same command again to resume", file=sys.stderr)
    return state, caught[0] if caught else None


def _interrupt(runner: TournamentRunner, task: asyncio.Future[RunState], caught: list[int],
               signum: int) -> None:
    """The first signal interrupts the run's games; one that comes while the run is still
    starting (or a second one) cancels the run outright."""
    if not caught:
        caught.append(signum)
        runner.interrupt()
        if runner.playing:
            return
    task.cancel()


def _cluster_note(config: TournamentConfig) -> str:
    if config.scheduler:
        return f"; games on the Dask cluster at {config.scheduler}"
    if config.workers:
        return f"; games on a local Dask cluster of {config.workers} workers"
    return ""


def play(config: TournamentConfig, args: argparse.Namespace) -> int:
    """Check the store, run the tournament, print its report; 0 if it finished."""
    check_stored(config, args.fresh)
    state, signum = run_tournament(config, quiet=args.quiet, host=args.host, port=args.port,
                                   address_file=args.address_file,
                                   in_process=getattr(args, "in_process", False))
    print(tournament_report(config, markdown=args.markdown, brief=not args.markdown))
    if signum is not None:
        return 128 + signum
    if not args.markdown:
        print(where_next(config, args))
    return 0 if state.finished else 1


def where_next(config: TournamentConfig, args: argparse.Namespace) -> str:
    """The lines after a run's brief report: where the full report is, and the command
    that plays your own bot against the same field (``run`` only)."""
    out = Path(config.output)
    lines = [f"Full report (head to head, statistics, faults): {out / 'report.md'}",
             f"Charts and a replay of every game: {out / 'report.html'}"]
    if getattr(args, "command", "") == "run":
        source = [] if config.source is None else [shlex.quote(str(args.config))]
        command = shlex.join(["euchre-harness", "run"]) + "".join(f" {s}" for s in source)
        lines.append(f"Add your own bot to this field: {command} "
                     f"--bot mybot='python3 my_bot.py'")
    return "\n".join(lines)
