"""pytest plugin (`pytest_plugins = ["support.hosts"]` in a test module): one Pulumi provider host
per provider a session drives, shared by the modules that drive it, with the fakes it reaches.

A host costs a Python that imports the SDK and unpickles the provider (some seconds of CPU); the
tests of one provider need one, started as the CLI starts it (support/provider_host.py). Each
host serves one provider's tests only: the managed pool's, or the proof watch's. Both providers
patch the host they run in to send their errors as one line (components/seam/provider_host_patch.py),
so a host shared by two providers could show one provider's line where the other forgot to patch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import fake_aks
import fake_engine
import pytest

from support.provider_host import Host, host_environment, serve_arm, start_host


@pytest.fixture(scope="session")
def managed_pool_arm() -> Iterator[fake_aks.FakeAks]:
    """The fake AKS over TLS with the managed pool's cluster in it (support/provider_host.py serve_arm)."""
    yield from serve_arm()


@pytest.fixture(scope="session")
def managed_pool_bin(tmp_path_factory) -> Path:
    """The folder of the managed pool's host's stand-in `az` (support/provider_host.py FAKE_AZ)."""
    return tmp_path_factory.mktemp("managed-pool-bin")


@pytest.fixture(scope="session")
def managed_pool_host(managed_pool_arm, managed_pool_bin) -> Iterator[Host]:
    """The host the managed pool's tests drive, signed in through the stand-in `az`, trusting the fake AKS."""
    yield from start_host(host_environment(managed_pool_arm, managed_pool_bin))


@pytest.fixture(scope="session")
def proof_watch_engine() -> Iterator[tuple[fake_engine.FakeEngine, str]]:
    """The engine the proof watch's host sends its status lines to, and its address."""
    yield from fake_engine.served()


@pytest.fixture(scope="session")
def proof_watch_arm() -> Iterator[fake_aks.FakeAks]:
    """The fake ARM the proof watch's host fetches its cluster's kubeconfig from."""
    yield from fake_aks.serve(tls=True)


@pytest.fixture(scope="session")
def proof_watch_host(proof_watch_arm, proof_watch_engine, tmp_path_factory) -> Iterator[Host]:
    """The host the proof watch's tests drive, with the engine's address as the CLI gives it."""
    yield from start_host(host_environment(proof_watch_arm, tmp_path_factory.mktemp("proof-watch-bin")), engine=proof_watch_engine[1])
