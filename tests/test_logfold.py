"""harness.web.logfold: a warning or error repeated many times is written once, then as one
line per interval with its count; the output stays small however many records come."""

from __future__ import annotations

import logging
import time

from harness.web import logfold
from harness.web.logfold import FoldingHandler


class Lines(logging.Handler):
    """Keeps what it is asked to write, formatted (tracebacks included)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def folded(interval: float = 60.0, max_kinds: int = 50) -> tuple[logging.Logger, Lines,
                                                                  FoldingHandler, Clock]:
    clock = Clock()
    lines = Lines()
    handler = FoldingHandler(lines, interval=interval, max_kinds=max_kinds, clock=clock)
    logger = logging.getLogger(f"test.logfold.{id(handler)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    return logger, lines, handler, clock


def accept_failed(logger: logging.Logger, socket_no: int) -> None:
    """An error like asyncio's when accept() fails: the first line is always the same,
    the details after it are not, and a traceback comes with it."""
    try:
        raise OSError(24, "Too many open files")
    except OSError:
        logger.error("socket.accept() out of system resource\nsocket: <socket fd=%d>",
                     socket_no, exc_info=True)


def test_a_repeated_error_is_written_once_then_counted_per_interval() -> None:
    logger, out, handler, clock = folded()
    for n in range(2_000):
        accept_failed(logger, n)
    assert len(out.lines) == 1
    assert "out of system resource" in out.lines[0] and "Traceback" in out.lines[0]

    clock.now += 61  # the interval is over: the next record brings the count
    accept_failed(logger, 1)
    assert out.lines[1] == ("1999 more like this in the last 61 s: socket.accept() out of "
                            "system resource")
    assert len(out.lines) == 2  # still repeating: counted, not written again

    for n in range(500):
        accept_failed(logger, n)
    handler.close()  # the counts not written yet are written at exit
    assert out.lines[2] == ("501 more like this in the last 0 s: socket.accept() out of "
                            "system resource")
    assert sum(map(len, out.lines)) < 2000


def test_kinds_are_told_apart_by_logger_level_first_line_and_exception() -> None:
    logger, out, handler, clock = folded()
    other = logging.getLogger(logger.name + ".other")
    for _ in range(3):
        logger.warning("the store is slow")
        logger.error("the store is slow")
        other.warning("the store is slow")
        logger.warning("a bot left: %s", "alice")
        logger.warning("a bot left: %s", "bob")
    assert len(out.lines) == 5
    clock.now += 60
    handler.close()
    assert len(out.lines) == 10
    assert all(line.startswith("2 more like this in the last 60 s: ") for line in out.lines[5:])


def test_messages_that_differ_only_in_numbers_and_ids_are_one_kind() -> None:
    logger, out, handler, clock = folded()
    for port in range(40000, 40500):
        logger.warning("session s%d-%08x rejected from ipv4:10.0.%d.%d:%d: bad token",
                       port, port * 7919, port % 250, port % 7, port)
    assert out.lines == ["session s40000-12e15fc0 rejected from ipv4:10.0.0.2:40000: bad "
                         "token"]
    clock.now += 60
    handler.close()
    assert out.lines[1] == ("499 more like this in the last 60 s: session s40000-12e15fc0 "
                            "rejected from ipv4:10.0.0.2:40000: bad token")


def test_records_below_warning_pass_untouched() -> None:
    logger, out, handler, _ = folded()
    for _ in range(20):
        logger.info("game played")
    assert out.lines == ["game played"] * 20
    handler.close()
    assert len(out.lines) == 20


def test_many_kinds_beyond_the_cap_are_counted_together() -> None:
    logger, out, handler, clock = folded(max_kinds=5)
    for n in range(1000):  # names without digits: each its own kind
        logger.warning("connection to %s failed", "".join("ghijklmnop"[int(d)] for d in str(n)))
    assert len(out.lines) == 5
    clock.now += 60
    handler.close()
    assert out.lines[5:] == ["995 more like this in the last 60 s: warnings and errors of "
                             "other kinds"]


def test_a_kind_quiet_for_an_interval_is_written_in_full_again() -> None:
    logger, out, handler, clock = folded()
    logger.warning("the disk is nearly full")
    clock.now += 61
    logger.warning("the disk is nearly full")  # nothing folded meanwhile: written again
    assert out.lines == ["the disk is nearly full"] * 2
    handler.close()
    assert len(out.lines) == 2


def test_the_count_is_written_when_the_interval_ends_without_another_record() -> None:
    # The handler's clock says when the interval ends, so that a stall of the machine
    # between the records cannot end it early; the timer that writes the count is real.
    logger, lines, handler, clock = folded(interval=0.2)
    try:
        for _ in range(4):
            logger.error("the referee lost a bot")
        assert lines.lines == ["the referee lost a bot"]
        clock.now += 0.2  # the interval ends, and no record comes
        deadline = time.monotonic() + 30
        while len(lines.lines) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lines.lines[0] == "the referee lost a bot"
        assert lines.lines[1].startswith("3 more like this in the last ")
    finally:
        logger.removeHandler(handler)
        handler.close()


def test_install_wraps_the_root_handlers_once() -> None:
    root = logging.getLogger()
    saved = root.handlers[:]
    try:
        root.handlers = [Lines()]
        logfold.install()
        logfold.install()
        assert len(root.handlers) == 1
        assert isinstance(root.handlers[0], FoldingHandler)
        assert isinstance(root.handlers[0].target, Lines)
    finally:
        root.handlers = saved
