"""Benchmarks, run on demand (`make bench`); never part of the test suite."""
