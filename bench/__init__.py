"""Benchmarks for memroute (not part of the test run; results in docs/benchmarks.md).

Run one with `python -m bench.<name> [--quick] [sizes…]`, or all of them at a
moderate size with `python -m bench.run_all` (`make bench`).
"""
