"""Bounding BM25's cost: only the rarest query terms are matched once their index rows add up."""

from __future__ import annotations

from memory.experience.lexical import affordable


def test_rarest_terms_are_kept_until_their_rows_reach_the_cap() -> None:
    frequencies = {"the": 90_000, "loader": 40, "csv": 300, "batch": 8_000}
    assert affordable(("the", "csv", "loader", "batch"), frequencies, 10_000) == ("csv", "loader", "batch")
    assert affordable(("the", "csv", "loader", "batch"), frequencies, 1_000) == ("csv", "loader")


def test_the_rarest_term_is_always_matched_and_zero_means_no_cap() -> None:
    frequencies = {"的": 50_000, "饺子": 30_000}
    assert affordable(("的", "饺子"), frequencies, 10) == ("饺子",)
    assert affordable(("的", "饺子"), frequencies, 0) == ("的", "饺子")


def test_terms_the_index_lacks_cost_nothing_and_stay() -> None:
    assert affordable(("zyxwv", "common"), {"zyxwv": 0, "common": 5_000}, 100) == ("zyxwv",)
    assert affordable(("zyxwv", "rare"), {"rare": 3}, 100) == ("zyxwv", "rare")
