"""What a hostile bot does in its box, for ``bench/sandbox.py`` part 4: it fills every
limit at once and keeps them full. Threads spin on every CPU it can see, children are
forked until the box's process cap refuses more (each spinning too), and memory is
allocated and written until the box's limit stops it; then it spins until killed."""

from __future__ import annotations

import os
import threading


def spin() -> None:
    while True:
        pass


def main() -> None:
    for _ in range(os.cpu_count() or 2):
        threading.Thread(target=spin, daemon=True).start()
    children = 0
    while children < 1000:
        try:
            pid = os.fork()
        except OSError:
            break  # the process cap
        if pid == 0:
            spin()
        children += 1
    print(f"hostile: {children} children", flush=True)
    hoard = []
    try:
        while True:
            block = bytearray(16 << 20)
            block[::4096] = b"x" * len(block[::4096])
            hoard.append(block)
    except MemoryError:
        pass
    spin()


if __name__ == "__main__":
    main()
