"""The other half of the operations that tests/test_fuzz_api.py fuzzes (its docstring says
what each case must do), in a file of its own so the two halves run in parallel workers."""

from __future__ import annotations

import pytest
from test_fuzz_api import OPERATIONS, FuzzTarget, fuzz_target, run_fuzzer  # noqa: F401  (a fixture)


@pytest.mark.parametrize("label", OPERATIONS[1::2])
@pytest.mark.slow
def test_operations_survive_the_fuzzer(label: str, fuzz_target: FuzzTarget) -> None:  # noqa: F811
    run_fuzzer(label, fuzz_target)
