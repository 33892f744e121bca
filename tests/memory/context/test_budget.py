"""The budget formula: available = floor((window - output_reserve) * (1 - safety_margin)); bad sizes refused."""

from __future__ import annotations

import pytest

from memory.context import budget
from memory.context.budget import reserve_for
from memory.errors import ValidationError


@pytest.mark.parametrize(("window", "reserve", "margin", "available"), [
    (128_000, 4096, 0.10, 111_513),   # (128000 - 4096) * 0.9 = 111513.6
    (32_768, 4096, 0.10, 25_804),     # 28672 * 0.9 = 25804.8
    (8192, 4096, 0.10, 3686),         # 4096 * 0.9 = 3686.4
    (8192, 0, 0.0, 8192),
    (1000, 999, 0.5, 0),
])
def test_the_formula(window: int, reserve: int, margin: float, available: int) -> None:
    found = budget(window, reserve, margin)
    assert found.available == available
    assert (found.window, found.output_reserve, found.margin) == (window, reserve, margin)


def test_defaults_keep_4096_for_the_reply_and_a_tenth_for_a_miscount() -> None:
    found = budget(32_768)
    assert found.output_reserve == 4096 and found.margin == 0.10 and found.available == 25_804


@pytest.mark.parametrize(("args", "expected"), [
    ((8192.0,), "window must be a whole number"),
    ((True,), "window must be a whole number"),
    ((0,), "window must be a whole number of tokens of at least 1"),
    (("8k",), "window must be a whole number"),
    ((8192, -1), "output_reserve must be a whole number"),
    ((8192, 8192), "leaves nothing of the window"),
    ((8192, 100, 0.9), "safety_margin must be a share from 0 to 0.5"),
    ((8192, 100, "0.1"), "safety_margin must be a share"),
])
def test_bad_sizes_are_refused_in_a_sentence(args: tuple[object, ...], expected: str) -> None:
    with pytest.raises(ValidationError, match=expected):
        budget(*args)


@pytest.mark.parametrize(("window", "reserve"), [(1024, 256), (4096, 1024), (8192, 2048), (16_384, 4096),
                                                 (128_000, 4096)])
def test_a_small_window_keeps_a_quarter_of_itself_for_the_reply(window: int, reserve: int) -> None:
    assert reserve_for(window) == reserve
    assert budget(window, reserve_for(window)).available > 0  # a 4k model's first call is not refused
