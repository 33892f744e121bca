"""Term analysis shared by every tier: jieba for Chinese, lower-cased stop-worded Porter stems for English."""

from memory.text.analyze import cjk_share, has_cjk, prepare, query_terms, terms

__all__ = ["cjk_share", "has_cjk", "prepare", "query_terms", "terms"]
