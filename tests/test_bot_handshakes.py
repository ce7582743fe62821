"""The handshake every sample bot in another language must get right, against the real
referee over real gRPC: a bad token is refused and the bot exits 2 saying why; a good
token (from the environment) gives a Hello with the bot's default name and version; the
bot exits 0 when the referee shuts down. One test, one row per language."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from test_cpp_bot import (
    bot_env,
    cpp_bot,  # noqa: F401  (a fixture: the executable, built once)
)
from test_node_bot import NODE_BOT, require_node

from harness.referee.server import RefereeServer

WAIT_S = 60.0


async def start(argv: Sequence[str], *args: str,
                env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *argv, *args, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def handshake_and_exit_codes(argv: Sequence[str], hello: tuple[str, str]) -> None:
    server = RefereeServer()
    await server.start()
    env = bot_env()
    try:
        proc = await start(argv, "--address", server.address, "--token", "nope", env=env)
        _, err = await asyncio.wait_for(proc.communicate(), WAIT_S)
        assert proc.returncode == 2, err.decode()
        assert b"REFUSAL_REASON_BAD_TOKEN" in err

        slot = server.registry.add("sample", 0)
        proc = await start(argv, env={**env, "EUCHRE_REFEREE_ADDRESS": server.address,
                                      "EUCHRE_BOT_TOKEN": slot.token})
        session = await slot.wait_connected(WAIT_S)
        assert (session.bot_name, session.bot_version) == hello
    finally:
        await server.stop(grace=1.0)
    _, err = await asyncio.wait_for(proc.communicate(), WAIT_S)
    assert proc.returncode == 0, err.decode()


@pytest.mark.parametrize("language", ["cpp", "node"])
def test_a_sample_bot_is_refused_a_bad_token_says_hello_and_exits_cleanly(
        language: str, request: pytest.FixtureRequest) -> None:
    if language == "cpp":
        argv: tuple[str, ...] = (str(request.getfixturevalue("cpp_bot")),)
    else:
        argv = (require_node(), str(NODE_BOT))
    asyncio.run(handshake_and_exit_codes(argv, (f"{language}-random", "1.0.0")))
