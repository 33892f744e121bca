"""Recall: the candidates of every tier fused, thresholded and packed into a budget (memory.recall.engine)."""

from memory.recall.model import Omitted, RecallItem, RecallResult

__all__ = ["Omitted", "RecallItem", "RecallResult"]
