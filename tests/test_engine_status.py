"""What the proof's watch says while it waits reaches the engine as the watch resource's status
(components/seam/engine_status.py): a fake pulumirpc.Engine on 127.0.0.1 keeps each
LogRequest, as the CLI's engine would receive it from the provider host."""

from __future__ import annotations

import sys

import pytest
from fake_engine import FakeEngine, serve, served
from pulumi.runtime.proto import engine_pb2

from components.seam.engine_status import reporter

URN = "urn:pulumi:dev::aks-gpu::aksgpu:index:MnistJob$pulumi-python:dynamic/aksgpu:ProofWatch::mnist-watch"


@pytest.fixture
def engine():
    yield from served()


def test_a_status_reaches_the_engine_as_an_ephemeral_info_on_the_watch_resource(engine):
    fake, address = engine

    reporter(URN, address)("waiting for a node in pool gpu (3 minutes so far)")

    [request] = fake.logged
    assert request.severity == engine_pb2.INFO and request.ephemeral is True
    assert request.urn == URN and request.message == "waiting for a node in pool gpu (3 minutes so far)"
    assert request.streamId == 0


def test_the_engines_address_is_the_provider_hosts_first_argument(engine, monkeypatch):
    fake, address = engine
    monkeypatch.setattr(sys, "argv", ["pulumi/dynamic/__main__.py", address])

    reporter(URN)("pulling the image on node aks-gpu-0")

    assert [r.message for r in fake.logged] == ["pulling the image on node aks-gpu-0"]


def test_a_status_the_engine_refuses_is_dropped_and_the_next_one_still_sent():
    fake = FakeEngine(fail=True)
    server, address = serve(fake)
    try:
        send = reporter(URN, address)
        send("one")
        send("two")
    finally:
        server.stop(0)

    assert [r.message for r in fake.logged] == ["one", "two"]


def test_a_status_with_no_engine_to_reach_is_dropped(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["pulumi/dynamic/__main__.py"])
    reporter(URN)("nobody hears this")  # no address: nothing to send to, and no error

    reporter(URN, "127.0.0.1:9")("nor this")  # nothing listens there: gRPC fails fast, the line is dropped
