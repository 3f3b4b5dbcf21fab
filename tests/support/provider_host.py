"""The managed pool's provider in Pulumi's provider host (a process), against the fake AKS over TLS."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fake_aks
import grpc
from conftest import ROOT, run_cached
from google.protobuf import struct_pb2
from pulumi.runtime import proto
from pulumi.runtime.proto import provider_pb2_grpc

from components.pools import managed_gpu_pool as mgp
from tools.azure_mocks import MOCK_CLIENT

MANAGED = "pulumi-python:dynamic/aksgpu:ManagedGpuPool"

T4 = "Standard_NC4as_T4_v3"

POOL = {"vmSize": T4, "management": "aks-managed", "nodeCount": 2, "spot": True}

GROUP, CLUSTER = "aks-gpu-dev-rg", "aks-gpu-dev"

URN = "urn:pulumi:dev::aks-gpu::aks-gpu:azure:GpuPool$pulumi-python:dynamic/aksgpu:ManagedGpuPool::gpu-pool-gpu-managed"

FAKE_AZ = """#!/bin/sh
# A stand-in for `az account get-access-token --output json --resource ...`.
printf '%s' '{"accessToken": "fake-token", "expiresOn": "2099-01-01 00:00:00.000000", "expires_on": 4070908800, "subscription": "33333333-3333-3333-3333-333333333333", "tenant": "44444444-4444-4444-4444-444444444444", "tokenType": "Bearer"}'
"""


class HostError(Exception):
    """What the host answered instead of a result (its traceback)."""


class Host:
    """The engine's side of the provider protocol, one call per method."""

    def __init__(self, process: subprocess.Popen, stub: Any) -> None:
        self.process, self.stub = process, stub

    def call(self, method: str, request: Any) -> Any:
        """One call of `method`; HostError with what the host answered where it failed."""
        try:
            return getattr(self.stub, method)(request, timeout=120)
        except grpc.RpcError as error:
            raise HostError(error.details()) from None

    def check(self, news: struct_pb2.Struct, olds: struct_pb2.Struct | None = None) -> struct_pb2.Struct:
        response = self.call("Check", proto.CheckRequest(urn=URN, olds=olds or struct_pb2.Struct(), news=news))
        assert not response.failures
        return response.inputs

    def diff(self, olds: struct_pb2.Struct, news: struct_pb2.Struct) -> Any:
        return self.call("Diff", proto.DiffRequest(id=pool_id(), urn=URN, olds=olds, news=news))

    def create(self, props: struct_pb2.Struct) -> struct_pb2.Struct:
        response = self.call("Create", proto.CreateRequest(urn=URN, properties=props, timeout=1))
        assert response.id == pool_id()
        return response.properties

    def read(self, props: struct_pb2.Struct) -> Any:
        return self.call("Read", proto.ReadRequest(id=pool_id(), urn=URN, properties=props))

    def update(self, olds: struct_pb2.Struct, news: struct_pb2.Struct) -> struct_pb2.Struct:
        return self.call("Update", proto.UpdateRequest(id=pool_id(), urn=URN, olds=olds, news=news, timeout=1)).properties

    def delete(self, props: struct_pb2.Struct) -> None:
        self.call("Delete", proto.DeleteRequest(id=pool_id(), urn=URN, properties=props, timeout=1))


def pool_id() -> str:
    return (
        f"/subscriptions/{MOCK_CLIENT['subscriptionId']}/resourceGroups/{GROUP}/providers/"
        f"Microsoft.ContainerService/managedClusters/{CLUSTER}/agentPools/gpu"
    )


def start_host(environment: dict[str, str], engine: str | None = None, cwd: Path = ROOT) -> Iterator[Host]:
    """The host, started as the CLI starts it: `python -u -m pulumi.dynamic` in the project
    directory (`cwd`: this program's, unless a test is another's), with the engine's address as its first argument where `engine` names one (the
    CLI always passes it: pulumi/pulumi@1b594989 pkg/resource/plugin/provider_plugin.go newPlugin,
    `[]string{host.ServerAddr()}`, which sdk/python/dist/pulumi-resource-pulumi-python hands on
    as `$@`); it prints its port, and the engine Configures it first."""
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.dynamic", *([engine] if engine is not None else [])],
        cwd=cwd,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        port = int(process.stdout.readline())
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        stub = provider_pb2_grpc.ResourceProviderStub(channel)
        stub.Configure(proto.ConfigureRequest(args=struct_pb2.Struct(), acceptSecrets=True, acceptResources=True), timeout=60)
        yield Host(process, stub)
        channel.close()
    finally:
        process.kill()
        process.wait()


def host_environment(arm: fake_aks.FakeAks, bin_dir: Path, **changes: str) -> dict[str, str]:
    az = bin_dir / "az"
    az.write_text(FAKE_AZ)
    az.chmod(0o755)
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    environment.update(
        PATH=f"{bin_dir}{os.pathsep}{environment.get('PATH', '')}",
        AZURE_TOKEN_CREDENTIALS="AzureCliCredential",
        REQUESTS_CA_BUNDLE=str(arm.ca_file),
        PULUMI_PROJECT="aks-gpu",
        **changes,
    )
    return environment


def serve_arm() -> Iterator[fake_aks.FakeAks]:
    """The fake AKS over TLS with the provider host's cluster in it, operations taking 50 ms."""
    for fake in fake_aks.serve(tls=True):
        fake.clusters.add((GROUP, CLUSTER))
        fake.operation_seconds = 0.05
        yield fake


def program_inputs(arm: fake_aks.FakeAks, preview: bool = False, uid: str | None = "uid-1", **pool: Any) -> struct_pb2.Struct:
    """The managed pool's inputs as the program registered them, pointed at the fake ARM
    (and, for a deployment, on a cluster whose resourceUID is `uid`)."""
    run = run_cached("dev", preview=preview, gpuPool={**POOL, **pool})[0]
    [registration] = run.of_type(MANAGED)
    news = struct_pb2.Struct()
    news.CopyFrom(registration.wire)
    news[mgp.ENDPOINT] = arm.url
    if not preview and uid is not None:
        news[mgp.CLUSTER_UID] = uid
    return news
