"""Share a token budget by weight, letting what one part does not need flow to the others (tiers, categories)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

__all__ = ["allocate"]

Key = TypeVar("Key", bound=str)


def allocate(total: int, weights: Mapping[Key, float], demands: Mapping[Key, int]) -> dict[Key, int]:
    """Tokens for each key: its weighted part of `total`, capped by its demand, with surplus given to the rest.

    Keys whose weights are all zero share equally what is left; grants are whole tokens rounded down.
    """
    grants = {key: 0 for key in demands}
    wanting = sorted(key for key, demand in demands.items() if demand > 0)
    left = max(total, 0)
    while wanting and left > 0:
        weight_sum = sum(max(weights.get(key, 0.0), 0.0) for key in wanting)
        offers = {
            key: left * (max(weights.get(key, 0.0), 0.0) / weight_sum if weight_sum > 0 else 1 / len(wanting))
            for key in wanting
        }
        satisfied = [key for key in wanting if demands[key] <= offers[key]]
        if not satisfied:
            grants.update({key: int(offers[key]) for key in wanting})
            break
        for key in satisfied:
            grants[key] = demands[key]
            left -= demands[key]
        wanting = [key for key in wanting if key not in satisfied]
    return grants
