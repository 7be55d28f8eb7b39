"""The API fuzzer (tests/fuzzing.py) on the memory routes (`/api/memory...`), against a
server of its own, beside tests/test_fuzz_api.py on a parallel worker."""

from __future__ import annotations

import pytest
from fuzzing import MEMORY_OPERATIONS, FuzzTarget, fuzz_operation, fuzz_target_fixture

fuzz_target = fuzz_target_fixture("fuzz-memory")


@pytest.mark.parametrize("label", MEMORY_OPERATIONS)
@pytest.mark.slow(seconds=30)
def test_every_memory_operation_survives_the_fuzzer(label: str, fuzz_target: FuzzTarget) -> None:
    fuzz_operation(label, fuzz_target)
