"""Shared fixtures: every test runs the real program (or one component) under mocks."""

from __future__ import annotations

import functools
import gc
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi_azure_native.containerservice  # noqa: F401
import pytest
from hypothesis.internal.entropy import deterministic_PRNG

# Imported for gc.freeze() below, before any test runs the program.
from tools import stack_files
from tools.azure_mocks import AzureMocks
from tools.mock_engine import ProgramRun, RecordingMonitor, run_program

ROOT = Path(__file__).resolve().parent.parent

# The helpers the test modules share (tests/support/) assert as tests do: pytest rewrites
# their asserts too, so a failure in one says what was compared.
pytest.register_assert_rewrite("support")

# The tests' own stacks: copies of the shipped dev, prod and team (tests/fixtures/stacks/).
# A stack's name means its file there, so what a test says of "the dev stack" holds in a
# fork that deletes or rewrites the project's stack files (README, "Making it yours"). The
# project's own Pulumi.<stack>.yaml, whatever their names, are stacks() and project_run().
FIXTURE_STACKS = ROOT / "tests" / "fixtures" / "stacks"
stack_files.STACK_FOLDER = FIXTURE_STACKS
# The same for a child process the test starts (`python -c PRELUDE...`): it looks names up there too.
FIXTURE_STACKS_PRELUDE = (
    f"from tools import stack_files; stack_files.STACK_FOLDER = stack_files.ROOT / {str(FIXTURE_STACKS.relative_to(ROOT))!r}\n"
)

# Every test runs the program under mocks, often several times: each run makes some hundred
# thousand objects, and the garbage collector's full collections also walk every object the
# imports made (azure-native's modules are millions). Frozen, those are left alone; and with
# a larger first threshold the collector runs less often during a run. Measured on the
# 2-core machine: the suite on two workers from 20.5 s to 15.5-17.5 s (docs/design/house.md, "How long `make test` takes").
#
# Hypothesis registers the random it seeds on first use, and first looks for what refers to it
# (hypothesis/internal/entropy.py `register_random`: `gc.get_referrers`, which never sees a frozen
# object: CPython gcmodule.c `gc_get_referrers` walks the three generations, not the permanent
# one). Registered after a freeze, it warns that its random "could be garbage collected"; so it
# is registered here, before anything is frozen.
with deterministic_PRNG():
    pass
gc.freeze()
gc.set_threshold(20_000, 50, 50)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """After each test, its garbage is collected and what it leaves alive (the cached runs, a
    module's fixtures) is frozen too: the collector then walks only what the next test makes,
    not every run the worker cached before it. Measured on the 2-core machine (gc.callbacks):
    the two workers' collections from 8.2 s of CPU to 3.4 s a suite. What is frozen is still
    freed when its last reference goes; only a cycle among frozen objects stays."""
    yield
    gc.collect()
    gc.freeze()


@functools.cache
def _run(stack: str, config: str, overrides: str, preview: bool, feature_state: str, cluster: str) -> tuple[ProgramRun, RecordingMonitor]:
    monitor = RecordingMonitor(AzureMocks(feature_state=feature_state, cluster=json.loads(cluster)))
    return run_program(stack, config=json.loads(config), overrides=json.loads(overrides), monitor=monitor, preview=preview), monitor


def run_cached(
    stack: str = "dev",
    preview: bool = True,
    feature_state: str = "Registered",
    cluster: dict[str, Any] | None = None,
    stack_file: Path | None = None,
    **overrides: Any,
) -> tuple[ProgramRun, RecordingMonitor]:
    """One run of the program per distinct input in a test session: a run is about 0.2 s of
    Pulumi's own machinery, and many tests read the same run. Treat the result as read-only.

    A preview by default, as `pulumi preview` and `make render` run it: a deployment of the
    dev stack stops at preflight (its GPU size is retired). Tests of a deployment say so.
    `cluster` is what Azure answers for an existing cluster (tools.azure_mocks.existing_cluster);
    unset, any cluster a stack names exists, as the offline render assumes.
    The stack's config is its file in tests/fixtures/stacks/, or `stack_file`; runs are
    shared by what the file says, so a project stack that is still the shipped sample
    costs no second run."""
    config = json.dumps(stack_files.stack_config(stack, stack_file), sort_keys=True)
    return _run(stack, config, json.dumps(overrides, sort_keys=True), preview, feature_state, json.dumps(cluster))


def project_run(stack: str) -> ProgramRun:
    """A stack of the project, as `pulumi preview -s <stack>` shows it: its own
    Pulumi.<stack>.yaml at the root, not the tests' copy (the per-stack checks)."""
    return run_cached(stack, stack_file=ROOT / f"Pulumi.{stack}.yaml")[0]


@pytest.fixture(scope="module")
def dev() -> ProgramRun:
    """The dev stack as `pulumi preview -s dev` shows it (the tests' copy, tests/fixtures/stacks/)."""
    return run_cached("dev")[0]


@pytest.fixture
def program() -> Callable[..., ProgramRun]:
    """Runs the dev stack's config with overrides: program(gpuPool={...}, protect=True)."""

    def run(stack: str = "dev", **overrides: Any) -> ProgramRun:
        return run_cached(stack, **overrides)[0]

    return run


# The dev stack's cluster, where the managed pool's provider tests put their pools.
MANAGED_GROUP, MANAGED_CLUSTER = "aks-gpu-dev-rg", "aks-gpu-dev"


@pytest.fixture(scope="module")
def price_file(tmp_path_factory) -> str:
    """The fake price list (tests/fake_prices.py), saved: a stack's preflight.pricesFile."""
    import fake_prices

    path = tmp_path_factory.mktemp("prices") / "prices.json"
    path.write_text(fake_prices.saved())
    return str(path)


@pytest.fixture
def aks(monkeypatch):
    """A local fake of the agentPools REST calls with the dev cluster in it, which the managed
    pool's provider reaches instead of Azure (tests/fake_aks.py)."""
    import fake_aks

    from components.pools import agent_pool_calls

    for fake in fake_aks.serve():
        fake.clusters.add((MANAGED_GROUP, MANAGED_CLUSTER))
        monkeypatch.setattr(agent_pool_calls, "client_factory", fake_aks.client_factory_for(fake.url))
        yield fake


@pytest.fixture
def azure():
    """The fake agentPools API with the dev cluster in it, and a client that reaches it, which
    a test hands the program's reader (the pools' GPU management, tests/fake_aks.py)."""
    import fake_aks

    from components.pools import agent_pools

    for fake in fake_aks.serve():
        fake.clusters.add((MANAGED_GROUP, MANAGED_CLUSTER))
        fake.client = fake_aks.client_factory_for(fake.url)("sub", agent_pools.API_VERSION)
        yield fake


@pytest.fixture
def arm():
    """A local fake of Azure Resource Manager (tests/fake_arm.py); its URL."""
    import fake_arm

    yield from fake_arm.serve()


def git_blob(data: bytes) -> str:
    """A file's git blob name, as `git hash-object` prints it: what pins a committed copy of
    an upstream file to the blob its repository holds (tests/azure-specs/, tests/guide/)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# Azure's saved answers to the preflight's questions (SKUs, usage) in eastus.
PREFLIGHT_FIXTURES = ROOT / "tests" / "fixtures" / "preflight"


@pytest.fixture
def facts(tmp_path):
    """Copies of the saved SKU and usage files (tests/fixtures/preflight/), editable per
    test: facts(usage={...}, drop=(...), change={...}) -> the preflight config naming them."""

    def make(usage: dict[str, tuple[int, int]] | None = None, drop: tuple[str, ...] = (), change: dict[str, Any] | None = None):
        skus = [s for s in json.loads((PREFLIGHT_FIXTURES / "eastus-skus.json").read_text()) if s["name"] not in drop]
        for sku in skus:
            for field, value in ((change or {}).get(sku["name"]) or {}).items():
                sku["capabilities"] = [c for c in sku["capabilities"] if c["name"] != field] + [{"name": field, "value": value}]
        usages = json.loads((PREFLIGHT_FIXTURES / "eastus-usage.json").read_text())
        for u in usages:
            if u["name"]["value"] in (usage or {}):
                u["currentValue"], u["limit"] = usage[u["name"]["value"]]
        (tmp_path / "skus.json").write_text(json.dumps(skus))
        (tmp_path / "usage.json").write_text(json.dumps(usages))
        return {"skusFile": str(tmp_path / "skus.json"), "usageFile": str(tmp_path / "usage.json")}

    return make
