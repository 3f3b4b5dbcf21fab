"""The suite freezes for the garbage collector what each test leaves alive (tests/conftest.py);
what it may not do is change what a library the tests use sees."""

from __future__ import annotations

import gc
import random

import hypothesis.core
import pytest
from hypothesis.errors import HypothesisWarning
from hypothesis.internal.entropy import RANDOMS_TO_MANAGE, register_random


def test_hypothesis_seeds_its_own_random_registered_before_the_suite_froze_anything():
    """Hypothesis registers the random it seeds on first use and warns when nothing it can see
    refers to it; a frozen referrer is one it cannot see. The suite registers it first, so no
    Hypothesis test, whichever runs first in a worker, says "could be garbage collected"."""
    holder = [random.Random()]
    gc.freeze()
    with pytest.warns(HypothesisWarning, match="could be garbage collected"):
        register_random(holder[0])  # held, but only by a frozen list: the warning the suite avoids
    # hypothesis 6.100 keeps it on its core module, later releases on a thread-local there
    seeded = getattr(hypothesis.core, "threadlocal", hypothesis.core)._hypothesis_global_random
    assert seeded is not None and any(managed is seeded for managed in RANDOMS_TO_MANAGE.values())
