"""A lock or transaction held by another thread for as long as a test needs it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager


@contextmanager
def held_on_another_thread(hold: Callable[[], AbstractContextManager[object]]) -> Iterator[None]:
    """`hold()` entered on another thread before the block runs, and left after it."""
    taken, done = threading.Event(), threading.Event()

    def keep() -> None:
        with hold():
            taken.set()
            done.wait(10)

    holder = threading.Thread(target=keep)
    holder.start()
    assert taken.wait(10)
    try:
        yield
    finally:
        done.set()
        holder.join(10)
