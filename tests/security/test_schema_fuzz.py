"""Schemathesis over the app's whole OpenAPI schema: no input it can generate gets a 5xx or an undocumented answer.

Every operation the app serves is fuzzed twice: with inputs that follow its schema and with inputs that break it.
The operations are read from the live schema, so a new route is fuzzed without touching this file. (Schemathesis'
own pytest plugin is not used: its lazy fixture loader does not run under pytest 9.)
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode, checks

from api.app import create_app
from memory.service import Memory

_JSON = {"content-type": "application/json"}
# Examples per operation and mode: 22 operations x 2 modes x 10 = ~400 real requests (some embed text), ~20 s.
EXAMPLES = 10
LOCAL_HOST = {"Host": "127.0.0.1:8000"}  # schemathesis' ASGI client says "testserver", which api/guard.py refuses
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]


@pytest.mark.slow
def test_no_generated_request_gets_a_5xx_or_an_undocumented_answer(module_memory: Memory, seed: int) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(module_memory.config, module_memory),
                                           headers=LOCAL_HOST)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20, [op.label for op in operations]
    failures = []
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            # The run's seed, not derandomize: the same cases every run, another set under another seed.
            @hypothesis_seed(seed)
            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
            def fuzz(case: schemathesis.Case) -> None:
                case.call_and_validate(headers=LOCAL_HOST, checks=CHECKS)

            try:
                fuzz()
            except Unsatisfiable:  # nothing breaks the schema of GET /healthz: there is no input to send
                continue
            # Every operation is tried and the failures reported together: schemathesis raises a FailureGroup
            # (a BaseExceptionGroup) for failed checks, and the app's own exception when it crashed outright.
            except (Exception, BaseExceptionGroup) as exc:
                found = getattr(exc, "exceptions", [exc])
                notes = getattr(exc, "__notes__", [])  # Hypothesis' falsifying example
                failures.append(f"{operation.label} ({mode.value}): " + "\n".join(
                    [f"{type(e).__name__}: {e}" for e in found] + notes))
    assert not failures, f"seed {seed}:\n\n" + "\n\n".join(failures)


def _wrapped(depth: int, leaf: str, as_list: bool) -> bytes:
    """JSON text of `leaf` inside `depth` lists or objects, written by hand: Python's json cannot write every leaf."""
    opening, closing = ("[", "]") if as_list else ('{"k": ', "}")
    return (opening * depth + leaf + closing * depth).encode()


# A metadata value: any JSON leaf (integers past Python's 4,300 digits, NUL and escapes included) at any depth up
# to past what pydantic writes back out (255), in lists or objects.
_LEAF = st.one_of(
    st.sampled_from(["null", "true", "-0.0", "1e308", "7" * 4300, "-" + "7" * 4301, '"\\u0000"', '"\\ud800"']),
    st.integers().map(str), st.text(max_size=20).map(json.dumps),
)
_METADATA = st.builds(_wrapped, st.integers(min_value=0, max_value=300), _LEAF, st.booleans())


def test_no_metadata_a_request_can_store_breaks_a_read(module_client: TestClient, seed: int) -> None:
    """Whatever metadata a turn or a document is sent with, it is refused with a 4xx or stored; and then the
    namespace still lists and recalls."""
    ns = {"namespace": "fuzz-metadata"}

    @hypothesis_seed(seed)
    @given(value=_METADATA, as_document=st.booleans())
    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def store(value: bytes, as_document: bool) -> None:
        body = b'{"value": ' + value + b"}"
        if as_document:
            sent = b'{"namespace": "fuzz-metadata", "text": "fuzzed document", "metadata": ' + body + b"}"
            answer = module_client.post("/v1/documents", content=sent, headers=_JSON)
        else:
            sent = b'{"namespace": "fuzz-metadata", "messages": [{"text": "fuzzed turn", "metadata": ' + body + b"}]}"
            answer = module_client.post("/v1/memories", content=sent, headers=_JSON)
        assert answer.status_code < 500 and set(answer.json()) >= ({"doc_id"} if as_document else {"ids"}) \
            if answer.status_code == 200 else answer.status_code in (413, 422), answer.text[:300]
        assert module_client.get("/v1/documents", params=ns).status_code == 200
        assert module_client.post("/v1/recall", json={**ns, "query": "fuzzed"}).status_code == 200

    try:
        store()
    finally:
        module_client.delete("/v1/namespaces/fuzz-metadata")
