"""The service's Prometheus metrics, one registry per app (prometheus_client does the exposition format)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

__all__ = ["Metrics"]


class Metrics:
    """Requests, latency histograms, tokens returned per tier and items omitted by reason."""

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

    def render(self) -> bytes:
        """The Prometheus text exposition of everything recorded."""
        return generate_latest(self.registry)
