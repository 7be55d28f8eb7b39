"""The API fuzzer (tests/fuzzing.py) on every operation outside the memory routes: health,
metrics, the gateway (`/v1/*`), session, keys, providers and settings. The memory routes are
fuzzed by tests/test_fuzz_memory_api.py, against a server of its own."""

from __future__ import annotations

import pytest
from fuzzing import OTHER_OPERATIONS, FuzzTarget, fuzz_operation, fuzz_target_fixture

fuzz_target = fuzz_target_fixture("fuzz")


@pytest.mark.parametrize("label", OTHER_OPERATIONS)
@pytest.mark.slow(seconds=30)
def test_every_operation_survives_the_fuzzer(label: str, fuzz_target: FuzzTarget) -> None:
    fuzz_operation(label, fuzz_target)
