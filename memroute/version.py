"""memroute's version, read from the installed package's metadata: pyproject.toml is the
one place it is written."""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version


@cache
def package_version() -> str:
    """The installed memroute's version; `0+unknown` when run from a tree never installed."""
    try:
        return version("memroute")
    except PackageNotFoundError:
        return "0+unknown"
