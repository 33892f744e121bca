"""Once: a value made by the first caller, kept; a failed make keeps nothing."""

from __future__ import annotations

import threading

import pytest

from memory.once import Once


def test_the_value_is_made_once_whichever_threads_ask() -> None:
    made: list[int] = []
    once = Once(lambda: made.append(1) or len(made))
    threads = [threading.Thread(target=once.get) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert once.made and once.get() == 1 and made == [1]


def test_a_make_that_fails_is_tried_again() -> None:
    tries: list[int] = []

    def make() -> str:
        tries.append(1)
        if len(tries) == 1:
            raise OSError("the file is not there yet")
        return "ranks"

    once = Once(make)
    with pytest.raises(OSError, match="not there yet"):
        once.get()
    assert not once.made
    assert once.get() == "ranks" and len(tries) == 2
