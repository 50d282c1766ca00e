"""Measurements in one checked harness: ``rag bench list | run NAME | check | data NAME``.

:mod:`rag.bench.harness` (timing, percentiles, memory, free ports, stamped JSON results),
:mod:`rag.bench.registry` (the measurements and their typed options), :mod:`rag.bench.check`
(``benchmarks/expected.yaml`` judged OK / FAIL / SKIP per line), one module per measurement, and
:mod:`rag.bench.datasets` (data recipes). See docs/benchmarks.md.
"""
from rag.bench.check import EXPECTED, Expectation, Tolerance, Verdict, check, judge, load_expected, metric_value
from rag.bench.errors import (BenchError, BenchOptionError, ExpectedFileError, MeasurementError, MissingDataError,
                              UnknownMeasurementError)
from rag.bench.harness import free_port, latency_summary, machine, peak_rss_mb, percentiles, stamp, write_result
from rag.bench.registry import Measurement, Outcome, measurements, recipes, run_measurement

__all__ = [
    "BenchError", "BenchOptionError", "EXPECTED", "Expectation", "ExpectedFileError", "Measurement",
    "MeasurementError", "MissingDataError", "Outcome", "Tolerance", "UnknownMeasurementError", "Verdict", "check",
    "free_port", "judge", "latency_summary", "load_expected", "machine", "measurements", "metric_value",
    "peak_rss_mb", "percentiles", "recipes", "run_measurement", "stamp", "write_result",
]
