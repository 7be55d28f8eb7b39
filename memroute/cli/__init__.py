"""The `memroute` command line."""

from memroute.cli.main import main

__all__ = ["main"]
