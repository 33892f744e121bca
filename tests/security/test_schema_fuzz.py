"""Schemathesis over the app's whole OpenAPI schema: no input it can generate gets a 5xx or an undocumented answer.

Every operation the app serves is fuzzed twice: with inputs that follow its schema and with inputs that break it.
The operations are read from the live schema, so a new route is fuzzed without touching this file. (Schemathesis'
own pytest plugin is not used: its lazy fixture loader does not run under pytest 9.)
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode, checks

from api.app import create_app
from memory.service import Memory

# Examples per operation and mode: 22 operations x 2 modes x 10 = ~400 real requests (some embed text), ~20 s.
EXAMPLES = 10
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]


@pytest.mark.slow
def test_no_generated_request_gets_a_5xx_or_an_undocumented_answer(module_memory: Memory, seed: int) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(module_memory.config, module_memory))
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
                case.call_and_validate(checks=CHECKS)

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
