"""What the tests need from the machine, beyond Python packages."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(message: str) -> NoReturn:
    """A tool or server the test needs is missing: the test fails in CI (`CI=true`, where
    .ci/run installs it) and is skipped elsewhere, saying what to install."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)
