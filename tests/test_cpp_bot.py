"""The C++ sample bot (sample_bots/cpp/) against the real referee.

The bot is built once per test run with CMake, into the pytest cache (the stubs are
generated from proto/ at build time), in the build box of hosted bots where boxes run
(tests/test_hosted_play.py plays that executable in boxes). It then plays complete games
next to the Python bots in every form, over real gRPC, as real processes, and over TLS
with a certificate the test makes itself; a C++ bot outlives a standing ladder's restart
and stops quietly on a signal. It needs cmake, a C++ compiler, protoc, grpc_cpp_plugin and
the gRPC C++ library (Debian: ``cmake g++ libgrpc++-dev protobuf-compiler-grpc``). Without
them these tests skip, except in CI (``CI`` set), where they fail, so that CI cannot pass
without building and playing the C++ bot.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from build_support import (
    INSTALL_HINT,
    BuildFailed,
    MissingPrerequisite,
    build_cpp,
    cpp_build_root,
)
from ports import unused_port
from sandbox_support import play_over_unix
from serve_support import Ladder, Started, end
from tls_support import make_certificates
from waiting import wait_for, wait_until

from harness.protocol import rpb
from harness.protocol.tls import server_tls
from harness.referee import server as server_module
from harness.referee.arena import Arena
from harness.referee.outcome import GameResult, Termination
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.referee.server import RefereeServer
from harness.rules import DeckKind, Form, RulesConfig

REPO_ROOT = Path(__file__).resolve().parent.parent


def missing_prerequisite(reason: str) -> None:
    """Skip outside CI; fail in CI, where the C++ bot must be built and played."""
    message = f"{reason}; install the C++ toolchain and gRPC: {INSTALL_HINT}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def cpp_bot(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built bot executable, built once per test run (into the pytest cache when
    there is one, where CMake rebuilds only what changed, and where the build started
    in the background at collection has usually finished by the time a test asks: see
    tests/build_support.py). Where boxes run, it is built as a hosted bot is: in the
    build box of hosted bots (no network, capped memory and CPU), so this one build is
    also the test that the C++ toolchain works there."""
    root = cpp_build_root(request.config) or tmp_path_factory.mktemp("cpp-bot")
    try:
        return build_cpp(root)
    except MissingPrerequisite as e:
        missing_prerequisite(str(e))
    except BuildFailed as e:
        pytest.fail(str(e))
    raise AssertionError("unreachable")


def seeded(argv: tuple[str, ...], seed: int) -> BotCommand:
    return BotCommand(argv, cwd=str(REPO_ROOT), env={"EUCHRE_BOT_SEED": str(seed)})


async def play_game(bots: dict[str, tuple[str, ...]], config: RulesConfig, seats: list[str],
                    seed: int, log_dir: Path) -> GameResult:
    async with Arena(log_dir=log_dir) as arena:
        for name, argv in bots.items():
            arena.add(Entrant(name, seeded(argv, seed)), seats.count(name))
        return await arena.play(f"cpp-{config.form.value}-{config.deck.value}", config,
                                seed=seed, seats=seats)


# Every form, each with another deck; the C++ bot sits next to both Python sample bots.
GAMES = [
    pytest.param(Form.FOUR_HANDED, DeckKind.D24, ["cpp", "random", "cpp", "heuristic"],
                 id="four-handed-deck24"),
    pytest.param(Form.TWO_HANDED, DeckKind.D32, ["heuristic", "cpp"], id="two-handed-deck32"),
    pytest.param(Form.CUTTHROAT, DeckKind.D25, ["random", "cpp", "heuristic"],
                 id="cutthroat-deck25"),
]


@pytest.mark.parametrize(("form", "deck", "seats"), GAMES)
def test_cpp_bot_plays_full_games_without_faults(form: Form, deck: DeckKind, seats: list[str],
                                                 cpp_bot: Path, tmp_path: Path) -> None:
    python = (sys.executable, "-m")
    bots = {"cpp": (str(cpp_bot),), "random": (*python, "sample_bots.random_bot"),
            "heuristic": (*python, "sample_bots.heuristic_bot")}
    config = RulesConfig(form=form, deck=deck, target=10)
    result = asyncio.run(play_game({n: bots[n] for n in set(seats)}, config, seats, 21,
                                   tmp_path))

    logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
                     for p in sorted(tmp_path.glob("*.log")))
    assert result.termination is Termination.NORMAL, f"{result.detail}\n{logs}"
    assert result.faults == (), f"{result.faults}\n{logs}"
    assert result.winner is not None
    assert result.scores[result.winner] >= config.target
    cpp_seats = {s for s, name in enumerate(seats) if name == "cpp"}
    acted = {seat for hand in result.record["hands"] for seat, _ in hand["actions"]}
    assert cpp_seats <= acted


def test_cpp_bot_seed_makes_games_reproducible(cpp_bot: Path, tmp_path: Path) -> None:
    # EUCHRE_BOT_SEED fixes the C++ bot's choices (and the Python random bot's): the same
    # deal seed and bot seeds give the same game, action for action.
    bots = {"cpp": (str(cpp_bot),), "random": (sys.executable, "-m", "sample_bots.random_bot")}
    config = RulesConfig(form=Form.FOUR_HANDED, deck=DeckKind.D25, target=5)
    seats = ["cpp", "random", "cpp", "random"]
    first, second = (asyncio.run(play_game(bots, config, seats, 5, tmp_path / run))
                     for run in ("a", "b"))
    assert first.termination is second.termination is Termination.NORMAL
    assert first.record["hands"] == second.record["hands"]


async def start_bot(exe: Path, *args: str, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        str(exe), *args, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def refused_while_shutting_down_then_welcomed(exe: Path, refused: list[int]) -> str:
    """A referee that is stopping refuses the bot with SHUTTING_DOWN (``refused`` fills up
    with the reasons); a new referee on the same port then welcomes the same bot process and
    stops with a plain Shutdown. Returns the bot's stderr, once it has exited 0."""
    first = RefereeServer(port=unused_port())  # the second binds it too: tests/ports.py
    await first.start()
    release = asyncio.Event()
    first.on_shutdown(release.wait)  # keeps the referee shutting down until it is set
    stopping = asyncio.ensure_future(first.stop(grace=1.0))
    proc = None
    try:
        await wait_until(lambda: first.shutting_down, "the first referee to start stopping")
        proc = await start_bot(exe, "--address", first.address, "--token", "cpp-token",
                               env=bot_env())
        await wait_until(lambda: len(refused) >= 2 or proc.returncode is not None,
                         "the bot to be refused, and to retry")
        assert proc.returncode is None, (await exit_and_stderr(proc))[1]
        release.set()
        await asyncio.wait_for(stopping, 60)
        second = RefereeServer(port=first.port)
        slot = second.registry.add("cpp", 0, "cpp-token")
        await second.start()
        try:
            await slot.wait_connected(60)
        finally:
            await second.stop(grace=1.0)
        code, err = await exit_and_stderr(proc)
    finally:
        release.set()
        await asyncio.wait_for(stopping, 60)
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert code == 0, err
    return err


def test_cpp_bot_retries_a_shutting_down_refusal_and_plays_the_next_referee(
        cpp_bot: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refused: list[int] = []
    send_refusal = server_module._refuse

    async def counting(context: Any, reason: int, detail: str, code: Any) -> None:
        refused.append(reason)
        await send_refusal(context, reason, detail, code)

    monkeypatch.setattr(server_module, "_refuse", counting)
    err = asyncio.run(refused_while_shutting_down_then_welcomed(cpp_bot, refused))
    assert set(refused) == {rpb.REFUSAL_REASON_SHUTTING_DOWN}
    assert "refused" not in err, err


def test_cpp_bot_rejects_a_missing_address(cpp_bot: Path) -> None:
    done = subprocess.run([str(cpp_bot)], env=bot_env(), capture_output=True, text=True,
                          timeout=20, check=False)
    assert done.returncode == 2
    assert "no referee address" in done.stderr


def bot_env(**extra: str) -> dict[str, str]:
    """This process's environment without its EUCHRE_ variables, plus ``extra``."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("EUCHRE_")}, **extra}


async def exit_and_stderr(proc: asyncio.subprocess.Process) -> tuple[int, str]:
    _, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, err.decode()


async def play_over_tls(exe: Path, folder: Path) -> tuple[GameResult, list[tuple[int, str]]]:
    """A two-handed game on a referee serving TLS, the C++ bot dialing it by host name with
    the CA in EUCHRE_TLS_CA; next to it, two C++ bots that dial without the CA and with
    another CA. Returns the result and each bot's exit status and stderr."""
    ca, cert, key = make_certificates(folder)
    (folder / "other").mkdir()
    other_ca, _, _ = make_certificates(folder / "other")
    async with Arena(log_dir=folder, tls=server_tls(cert, key)) as arena:
        arena.add(Entrant("cpp", tokens=("cpp-tls-token",)), 1)
        arena.add(Entrant("heuristic", seeded((sys.executable, "-m",
                                               "sample_bots.heuristic_bot"), 3)), 1)
        where = ("--address", f"localhost:{arena.server.port}")
        bots = [await start_bot(exe, *where, "--token", "cpp-tls-token",
                                env=bot_env(EUCHRE_TLS_CA=str(ca))),
                # Their token is wrong too: were they let in, they would exit 2, refused.
                await start_bot(exe, *where, "--token", "nope", env=bot_env(
                    EUCHRE_GIVE_UP_AFTER="2")),
                await start_bot(exe, *where, "--token", "nope", "--tls-ca", str(other_ca),
                                "--give-up-after", "2", env=bot_env())]
        ended = asyncio.gather(*(exit_and_stderr(bot) for bot in bots))  # drains stderr
        config = RulesConfig(form=Form.TWO_HANDED, deck=DeckKind.D24, target=5)
        result = await arena.play("cpp-tls", config, seed=8, seats=["cpp", "heuristic"])
    return result, await ended


def test_cpp_bot_plays_over_tls_with_the_ca_and_fails_cleanly_without_it(
        cpp_bot: Path, tmp_path: Path) -> None:
    result, ((secure, secure_err), (plain, plain_err), (wrong, wrong_err)) = asyncio.run(
        play_over_tls(cpp_bot, tmp_path))
    assert result.termination is Termination.NORMAL, result.detail
    assert result.faults == ()
    assert {seat for hand in result.record["hands"] for seat, _ in hand["actions"]} == {0, 1}
    assert secure == 0, secure_err
    # Without the CA, or trusting another one, the TLS handshake never succeeds: the bot
    # retries for --give-up-after (or EUCHRE_GIVE_UP_AFTER) seconds, 2 here, then gives up
    # with exit status 1 and says why.
    assert plain == 1, plain_err
    assert "cpp-random: connection failed" in plain_err
    assert "if the referee serves TLS, pass --tls-ca or set EUCHRE_TLS_CA" in plain_err
    assert wrong == 1, wrong_err
    assert "cpp-random: connection failed" in wrong_err
    assert "pass --tls-ca" not in wrong_err


def test_cpp_bot_rejects_a_ca_file_it_cannot_read(cpp_bot: Path, tmp_path: Path) -> None:
    (tmp_path / "not-pem.txt").write_text("not a certificate\n")
    address = ("--address", "127.0.0.1:1")
    cases = [((*address, "--tls-ca", str(tmp_path / "missing.pem")), bot_env(),
              "missing.pem: No such file or directory"),
             (address, bot_env(EUCHRE_TLS_CA=str(tmp_path)), "Is a directory"),
             (address, bot_env(EUCHRE_TLS_CA=str(tmp_path / "not-pem.txt")),
              "not-pem.txt holds no PEM certificate")]
    for args, env, reason in cases:
        done = subprocess.run([str(cpp_bot), *args], env=env, capture_output=True, text=True,
                              timeout=20, check=False)
        assert done.returncode == 2, done.stderr
        assert "cannot read the CA file (--tls-ca or EUCHRE_TLS_CA)" in done.stderr
        assert reason in done.stderr


def started_cpp_bots(exe: Path, folder: Path, address: str, token: str,
                     count: int = 2) -> list[Started]:
    """``count`` C++ bots dialing ``address`` with ``token``, as real processes."""
    return [Started([str(exe), "--address", address, "--token", token,
                     "--give-up-after", "600"],  # as long as a restart takes on a busy machine
                    folder, f"cpp{i}", env=bot_env()) for i in range(count)]


def assert_running(bots: list[Started]) -> None:
    for bot in bots:
        assert bot.proc.poll() is None, f"a bot exited ({bot.proc.returncode}): {bot.stderr}"


@pytest.mark.long
def test_cpp_bot_reconnects_and_plays_again_after_a_ladder_is_stopped_and_restarted(
        cpp_bot: Path, tmp_path: Path) -> None:
    # SIGTERM makes the ladder send Shutdown with `restarting`; the same bot processes
    # reconnect to the ladder started again on the same port and store, and play again.
    first = Ladder(tmp_path, name="cpp-restart-ladder", port=unused_port(),  # tests/ports.py
                   house_only_with_visitors=True)
    second = None
    bots: list[Started] = []
    try:
        bots = started_cpp_bots(cpp_bot, tmp_path, first.address, first.register("cpp-visitor"))
        first.wait_for(lambda: first.sets_played("cpp-visitor") >= 1, "the C++ bot's first set")
        assert first.stop(signal.SIGTERM) == 0, first.stderr
        before = first.sets_played("cpp-visitor")
        assert_running(bots)

        second = Ladder(tmp_path, name="cpp-restart-ladder", port=first.port,
                        house_only_with_visitors=True)
        wait_for(lambda: second.sets_played("cpp-visitor") > before
                 or any(b.proc.poll() is not None for b in bots),
                 "the C++ bot to play again", proc=second.proc, log=second.log)
        assert_running(bots)
        assert second.stop(signal.SIGTERM) == 0, second.stderr
    finally:
        end([first, second, *bots])
    for bot in bots:
        assert "cpp-random: the referee is restarting: " in bot.stderr, bot.stderr
        assert "; reconnecting" in bot.stderr


def test_cpp_bot_sent_sigint_or_sigterm_exits_quietly_with_128_plus_the_signal(
        cpp_bot: Path, tmp_path: Path) -> None:
    ladder = Ladder(tmp_path, name="cpp-signal-ladder", house_only_with_visitors=True)
    bots: list[Started] = []
    try:
        bots = started_cpp_bots(cpp_bot, tmp_path, ladder.address,
                                ladder.register("cpp-visitor"))
        ladder.wait_for(lambda: ladder.sets_played("cpp-visitor") >= 1,
                        "the C++ bot's first set")
        assert_running(bots)
        sent = [signal.SIGINT, signal.SIGTERM]
        statuses = [bot.stop(sig) for bot, sig in zip(bots, sent, strict=True)]
    finally:
        end([ladder, *bots])
    assert statuses == [128 + sig for sig in sent], [b.stderr for b in bots]
    assert [bot.stderr for bot in bots] == ["", ""]


def test_cpp_bot_dials_a_unix_socket(cpp_bot: Path, tmp_path: Path) -> None:
    result, peers = asyncio.run(play_over_unix(tmp_path, (str(cpp_bot),)))
    assert result.termination is Termination.NORMAL and result.faults == ()
    assert peers[0].startswith("unix:") and peers[1].startswith("ipv")
