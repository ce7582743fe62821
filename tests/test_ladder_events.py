"""The ladder's event feed: every watcher gets every event from its subscription on; a
watcher that does not read loses its oldest events, not the ladder's time; closing
ends every watch."""

from __future__ import annotations

import asyncio

from waiting import wait_until

from harness.ladder import events as ev
from harness.protocol import ladder as lp


def _connected(name: str) -> lp.WatchLadderResponse:
    return lp.WatchLadderResponse(bot_connected=lp.BotConnected(name=name))


async def _collect(feed: ev.LadderEvents, into: list[str]) -> None:
    async for event in feed.watch():
        into.append(event.bot_connected.name)


def test_watchers_get_events_from_their_subscription_until_close() -> None:
    async def main() -> tuple[list[str], list[str]]:
        feed = ev.LadderEvents()
        feed.publish(_connected("before"))  # nobody watches yet
        first: list[str] = []
        second: list[str] = []
        tasks = [asyncio.ensure_future(_collect(feed, out)) for out in (first, second)]
        await wait_until(lambda: feed.watchers >= 2, "both watchers", interval=0)
        feed.publish(_connected("a"))
        feed.publish(_connected("b"))
        feed.close()
        await asyncio.wait_for(asyncio.gather(*tasks), 10)
        assert feed.watchers == 0
        return first, second

    assert asyncio.run(main()) == (["a", "b"], ["a", "b"])


def test_a_watcher_that_falls_behind_loses_its_oldest_events() -> None:
    async def main() -> list[str]:
        feed = ev.LadderEvents()
        seen: list[str] = []
        stream = feed.watch()
        first = asyncio.ensure_future(anext(stream))
        await wait_until(lambda: feed.watchers >= 1, "the watcher", interval=0)
        for i in range(ev.QUEUE_SIZE + 5):
            feed.publish(_connected(str(i)))
        seen.append((await first).bot_connected.name)
        feed.close()
        async for event in stream:
            seen.append(event.bot_connected.name)
        return seen

    seen = asyncio.run(main())
    newest = ev.QUEUE_SIZE + 4
    assert seen[-1] == str(newest)  # the newest events are kept, in order
    assert seen == [str(i) for i in range(int(seen[0]), newest + 1)]
    assert int(seen[0]) > 0 and len(seen) <= ev.QUEUE_SIZE  # the oldest were dropped
