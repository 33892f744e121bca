"""The token budget of one model call: what the window leaves for the input once the reply and a margin are kept.

    available = floor((window - output_reserve) * (1 - safety_margin))

The messages assembled for a call never cost more than `available` (counted by memory.context.messages). When the
caller does not say what to keep for the reply, the reserve is a quarter of the window, at most the configured
reserve: a 4,096-token model then keeps 1,024 for its reply instead of its whole window (`reserve_for`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memory.errors import ValidationError

__all__ = ["DEFAULT_OUTPUT_RESERVE", "DEFAULT_SAFETY_MARGIN", "MAX_SAFETY_MARGIN", "RESERVE_SHARE", "Budget", "budget",
           "reserve_for"]

DEFAULT_OUTPUT_RESERVE = 4096
RESERVE_SHARE = 0.25  # of a small window, kept for the reply when the caller does not say
DEFAULT_SAFETY_MARGIN = 0.10
MAX_SAFETY_MARGIN = 0.5  # beyond this half the window would be kept back for a miscount


@dataclass(frozen=True)
class Budget:
    """The window, what is kept for the reply and for a miscount, and what the input may use."""

    window: int
    output_reserve: int
    margin: float
    available: int


def budget(window: object, output_reserve: object = DEFAULT_OUTPUT_RESERVE,
           safety_margin: object = DEFAULT_SAFETY_MARGIN) -> Budget:
    """The budget for a model whose context window is `window` tokens; bad sizes raise ValidationError."""
    window_tokens = _tokens(window, "window", minimum=1)
    reserve = _tokens(output_reserve, "output_reserve", minimum=0)
    if isinstance(safety_margin, bool) or not isinstance(safety_margin, int | float) \
            or not 0 <= safety_margin <= MAX_SAFETY_MARGIN:
        raise ValidationError(f"safety_margin must be a share from 0 to {MAX_SAFETY_MARGIN} of the window left "
                              f"unused (default {DEFAULT_SAFETY_MARGIN}), got {str(safety_margin)[:40]!r}")
    if reserve >= window_tokens:
        raise ValidationError(f"output_reserve ({reserve} tokens) leaves nothing of the window ({window_tokens} "
                              "tokens) for the input; lower output_reserve or send the model's real window")
    available = math.floor((window_tokens - reserve) * (1 - float(safety_margin)))
    return Budget(window_tokens, reserve, float(safety_margin), available)


def reserve_for(window: object, most: int = DEFAULT_OUTPUT_RESERVE) -> object:
    """The reply's reserve when the request gives none: a quarter of the window, at most `most` (a window that is
    not a whole number is passed through for `budget` to refuse in its own words)."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        return most
    return min(most, int(window * RESERVE_SHARE))


def _tokens(value: object, name: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValidationError(f"{name} must be a whole number of tokens of at least {minimum}, got {str(value)[:40]!r}")
    return value
