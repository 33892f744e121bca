"""Sharing a budget between tiers, with unused shares flowing on."""

from __future__ import annotations

import pytest

from memory.share import allocate

SHARES = {"fact": 0.3, "task": 0.3, "experience": 0.4}


@pytest.mark.parametrize(
    ("demands", "expected"),
    [
        ({"fact": 1000, "task": 1000, "experience": 1000}, {"fact": 300, "task": 300, "experience": 400}),
        ({"fact": 0, "task": 1000, "experience": 1000}, {"fact": 0, "task": 428, "experience": 571}),
        ({"fact": 50, "task": 100, "experience": 5000}, {"fact": 50, "task": 100, "experience": 850}),
        ({"fact": 10, "task": 20, "experience": 30}, {"fact": 10, "task": 20, "experience": 30}),
        ({"fact": 0, "task": 0, "experience": 0}, {"fact": 0, "task": 0, "experience": 0}),
    ],
)
def test_unused_share_flows_to_the_others(demands: dict[str, int], expected: dict[str, int]) -> None:
    assert allocate(1000, SHARES, demands) == expected


def test_zero_weights_share_equally_and_nothing_to_share_gives_nothing() -> None:
    assert allocate(100, {"task": 0.0, "experience": 0.0}, {"task": 500, "experience": 500}) == {
        "task": 50, "experience": 50,
    }
    assert allocate(0, SHARES, {"fact": 5, "task": 5, "experience": 5}) == {"fact": 0, "task": 0, "experience": 0}
