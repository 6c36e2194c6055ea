"""Benchmarks: a synthetic corpus generator (:mod:`bench.generate`) and the scaling benchmark
(:mod:`bench.run`). See ``bench/README.md``."""
