"""Text to lexical terms, in one place for indexing and querying: jieba for Chinese, lower-cased Porter stems for
English, stop words dropped; also the share of CJK characters that tells fusion which language a query is in."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable
from typing import Any

from memory.text.porter import porter_stem

__all__ = ["cjk_share", "has_cjk", "prepare", "query_terms", "terms"]

_CJK_CLASS = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_CJK = re.compile(f"[{_CJK_CLASS}]")
# A CJK run with the punctuation and spaces inside it, so jieba sees whole phrases.
_CJK_RUN = re.compile(f"[{_CJK_CLASS}][{_CJK_CLASS}\\s\u3000-\u303f\uff00-\uffef]*")
# jieba reads a run block by block, a block being a stretch of the ideographs its dictionary covers; its HMM pass
# over the unknown characters of a block costs the square of the block's length. Prose breaks a block every few
# dozen characters, so a run is given to jieba in parts that end where it breaks anyway (the terms are the same),
# and only a block longer than this (hostile input, a table without punctuation) is cut where it stands.
_BLOCK_CHARS = 256
_PARTS = re.compile(f"[\u4e00-\u9fd5]{{1,{_BLOCK_CHARS}}}|[^\u4e00-\u9fd5]+")
# Word pieces as SQLite's unicode61 tokenizer sees them (letters and digits), so a term is never split again.
_WORD = re.compile(r"[^\W_]+")

_ENGLISH_STOP = frozenset(
    [
        "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
        "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did",
        "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have",
        "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into",
        "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "of", "off",
        "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she",
        "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
        "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was",
        "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
        "you", "your", "yours", "yourself", "yourselves", "s", "t"
    ]
)
# Function words and question words: they carry no topic, and questions are full of them.
_CHINESE_STOP = frozenset(
    [
        "的", "了", "是", "在", "和", "与", "及", "或", "也", "都", "而",
        "并", "被", "把", "对", "从", "以", "于", "之", "其", "这", "那",
        "这个", "那个", "这些", "那些", "一个", "什么", "哪", "哪个", "哪些", "哪里",
        "哪儿", "谁", "吗", "呢", "吧", "啊", "呀", "么", "多少", "几", "怎么",
        "怎样", "如何", "为什么", "为何", "是否", "有", "由", "为", "就", "还",
        "又", "着", "过", "得", "地", "所", "将", "会", "能", "可以", "我",
        "你", "他", "她", "它", "我们", "你们", "他们", "她们", "它们", "请问",
        "一下", "时候"
    ]
)

_init_lock = threading.Lock()
_jieba_ready = False


def _jieba() -> Any:
    """jieba, initialised once (loading its dictionary is slow)."""
    global _jieba_ready
    import jieba  # type: ignore[import-untyped]

    if not _jieba_ready:
        with _init_lock:
            if not _jieba_ready:
                jieba.setLogLevel(60)
                jieba.initialize()
                _jieba_ready = True
    return jieba


def prepare() -> None:
    """Load jieba's dictionary now (it is slow to load), so that the first Chinese text does not wait for it."""
    _jieba()


def has_cjk(text: str) -> bool:
    """True when `text` holds at least one CJK ideograph."""
    return _CJK.search(text) is not None


def cjk_share(text: str) -> float:
    """Share of CJK ideographs among the letters and ideographs of `text` (0 for text without any)."""
    letters = sum(1 for ch in text if ch.isalpha())
    if not letters:
        return 0.0
    return len(_CJK.findall(text)) / letters


def _pieces(text: str) -> Iterable[str]:
    # Only CJK runs go through jieba (slow); the rest is split by the same rule as SQLite's tokenizer.
    position = 0
    for run in _CJK_RUN.finditer(text):
        yield from _WORD.findall(text, position, run.start())
        for part in _parts(run.group()):
            for token in _jieba().cut_for_search(part):
                yield from _WORD.findall(token)
        position = run.end()
    yield from _WORD.findall(text, position)


def _parts(run: str) -> Iterable[str]:
    """`run` in parts of about _BLOCK_CHARS that end where jieba ends a block (see _BLOCK_CHARS)."""
    if len(run) <= _BLOCK_CHARS:
        yield run
        return
    start = end = 0
    for piece in _PARTS.finditer(run):
        if piece.end() - start > _BLOCK_CHARS and end > start:
            yield run[start:end]
            start = end
        end = piece.end()
    yield run[start:end]


# English vocabularies are Zipfian: a cache answers most stems without running the algorithm again.
_stem = functools.lru_cache(maxsize=200_000)(porter_stem)


def terms(text: str) -> list[str]:
    """Every indexable term of `text`, in order, repeats kept (term frequency matters to BM25)."""
    out: list[str] = []
    for piece in _pieces(text):
        word = piece.lower()
        if word in _ENGLISH_STOP or word in _CHINESE_STOP:
            continue
        out.append(_stem(word))
    return out


def query_terms(text: str) -> tuple[str, ...]:
    """The distinct terms of a query, in first-seen order."""
    return tuple(dict.fromkeys(terms(text)))
