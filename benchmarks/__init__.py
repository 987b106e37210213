"""The benchmark suite behind ``make bench``; see benchmarks/run.py."""
