"""The service's Prometheus metrics, one registry per app (prometheus_client does the exposition format)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

__all__ = ["Metrics"]

_PREFIXES_KEPT = 10_000  # tasks whose last prefix hash is remembered (the least recently seen is forgotten)


class Metrics:
    """What the service has answered since it started:

    - memory_requests: requests answered, by route, method and status;
    - memory_request_duration_seconds: the time to answer them, by route;
    - memory_recall_tokens: tokens of the snippets recall returned, by tier;
    - memory_recall_omitted_items: recall candidates left out, by reason;
    - memory_context_tokens: tokens of the turns /v1/context assembled, by category (system, tools, ...);
    - memory_context_actions: changes /v1/context made to turns (pruned, offloaded, ...), by kind;
    - memory_context_prefix_changes: turns whose cache-stable prefix differed from the previous turn of the same
      task (namespace and task id) this process answered, i.e. turns a provider's prompt cache could not reuse.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "memory_requests", "Requests answered, by route, method and status.",
            ["route", "method", "status"], registry=self.registry,
        )
        self.latency = Histogram(
            "memory_request_duration_seconds", "Time to answer a request, by route.", ["route"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
            registry=self.registry,
        )
        self.tokens = Counter(
            "memory_recall_tokens", "Tokens of snippets returned by recall, by tier.", ["tier"],
            registry=self.registry,
        )
        self.omitted = Counter(
            "memory_recall_omitted_items", "Recall candidates left out, by reason.", ["reason"],
            registry=self.registry,
        )
        self.context_tokens = Counter(
            "memory_context_tokens", "Tokens of assembled context turns, by category.", ["category"],
            registry=self.registry,
        )
        self.context_actions = Counter(
            "memory_context_actions", "Changes made to context turns, by kind.", ["kind"], registry=self.registry,
        )
        self.prefix_changes = Counter(
            "memory_context_prefix_changes",
            "Context turns whose cache-stable prefix differed from their task's previous turn.",
            registry=self.registry,
        )
        self._prefixes: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = threading.Lock()

    def prefix_seen(self, namespace: str, task_id: str, prefix_hash: str) -> None:
        """Count a prefix change when this task's previous turn had another prefix (its first turn counts none)."""
        with self._lock:
            previous = self._prefixes.pop((namespace, task_id), None)
            self._prefixes[(namespace, task_id)] = prefix_hash
            if len(self._prefixes) > _PREFIXES_KEPT:
                self._prefixes.popitem(last=False)
        if previous is not None and previous != prefix_hash:
            self.prefix_changes.inc()

    def render(self) -> bytes:
        """The Prometheus text exposition of everything recorded."""
        return generate_latest(self.registry)
