"""The Hypothesis settings of the generated-input tests (AKS_GPU_EXAMPLES for a long run)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

LONG_RUN = int(os.environ.get("AKS_GPU_EXAMPLES", "0"))

SETTINGS = settings(
    max_examples=LONG_RUN or 20,
    derandomize=not LONG_RUN,  # make test: a fixed seed, the same examples every run
    database=None,
    deadline=None,  # nothing here may depend on wall-clock time (a busy CI machine)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
