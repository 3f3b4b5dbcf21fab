"""The one seam between the program and the outside world: every read it makes of Azure and of
the cluster, before it registers anything (and the access wait before the Kubernetes
objects), goes through one `AzureReader` it is handed.

Three readers stand behind it: the live one (components/live_reader.py: azure-native's
invokes and the Azure SDK with one credential), the offline render's and the tests' (tools/
azure_mocks.py `OfflineReader`: saved descriptions, or whatever a test answers). No module
asks which one it has ("ports and adapters": the program is handed its client). A reader
answers in Azure's own shapes (the REST bodies), so one parser reads every source; a read
that fails raises, and its caller says what that means; a read the reader does not make
(the offline render asks no live price) raises `NotRead`, whose reason the caller prints.
What a read can raise is `read_errors()`; a caller catches those alone, so a bug of the
program's own (a KeyError in a parser) surfaces as one, not as "Azure was not read".
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from components.seam.azure_facts import Facts


@dataclass(frozen=True)
class RunningPool:
    """A GPU pool as it runs in Azure: its GPU management, and the properties AKS fixes at
    creation that it has set away from AKS's default (REST names). A declaration that leaves
    one of those unset asks to switch it off, which replaces the pool; any other fixed
    property the declaration leaves unset is left to Azure (components/pools/pool_fields.py,
    `left_to_azure`, says why; components/pools/pool_modes.py reads it)."""

    mode: str
    switched_on: frozenset[str] = frozenset()

    @classmethod
    def of_mode(cls, mode: str) -> RunningPool:
        """What a mode alone says: an operator's pool (driver None) and an AKS-managed one
        (nvidia.managementMode) have their gpuProfile set."""
        return cls(mode, frozenset({"gpuProfile"}) if mode != "device-plugin" else frozenset())


class NotRead(Exception):
    """This reader does not make this read (offline: no call to Azure); the text says why
    and how to give the program the answer another way."""


class NotDeployed(NotRead):
    """The stack's state holds nothing yet: no deployment of it has completed."""


class InvokeFailed(Exception):
    """A failed invoke (azure-native's, the engine's builtins'). pulumi.runtime.invoke raises a
    bare `Exception("invoke of <token> failed: ...")` for the provider's error and for the
    engine's gRPC error alike (pulumi 3.272.0 sdk/python/lib/pulumi/runtime/invoke.py `_invoke`,
    settings.py `grpc_error_to_exception`); the live reader raises this in its place, so that
    no caller has to catch Exception."""


class BadAnswer(ValueError):
    """An answer of Azure or of the cluster that is not what its API documents (no JSON, no
    list where the API has one): the live reads raise it where they parse an answer."""


@functools.cache
def read_errors() -> tuple[type[BaseException], ...]:
    """What a read through the reader raises when Azure or the cluster cannot be read:
    azure-core's errors (azure.core.exceptions: AzureError, azure-identity's sign-in errors
    among them, and DeserializationError, an answer the SDK's models cannot hold), a socket's
    (`OSError`: urllib's URLError and HTTPError, TimeoutError), a failed invoke, an answer no
    API documents, the cluster's refusal, and `NotRead`. Imported when first asked: azure-core
    takes 0.1 s to import, and most runs fail no read."""
    from azure.core.exceptions import AzureError, DeserializationError

    from components.errors import ClusterAccessError

    return (AzureError, DeserializationError, OSError, TimeoutError, InvokeFailed, BadAnswer, ClusterAccessError, NotRead)


class AzureReader(Protocol):
    """What the program reads of Azure and of the cluster."""

    def cluster(self, resource_group: str, name: str) -> Mapping[str, Any]:
        """An existing cluster, as getManagedCluster answers (azure-native's spelling), within
        a deadline (TimeoutError past it)."""
        ...

    def user_kubeconfig(self, resource_group: str, name: str) -> str:
        """An existing cluster's user kubeconfig, base64 as listClusterUserCredential
        (format exec) answers, within a deadline (TimeoutError past it)."""
        ...

    def client_subscription(self) -> str:
        """The subscription the signed-in client uses (getClientConfig)."""
        ...

    def feature_state(self, namespace: str, feature: str) -> str | None:
        """A subscription feature's registration state (`az feature show`)."""
        ...

    def sign_in_problem(self) -> str | None:
        """Why the Azure SDK's credential cannot get an ARM token here, or None. The
        AKS-managed pool's provider signs in with it (components/pools/agent_pool_calls.py)."""
        ...

    def facts(self, subscription: str, location: str, node_group: str) -> Facts:
        """VM sizes offered, vCPU quotas, and the scale sets of the node resource group."""
        ...

    def permissions(self, subscription: str) -> list[dict[str, Any]]:
        """The signed-in identity's permissions at the subscription's scope."""
        ...

    def group_permissions(self, subscription: str, resource_group: str) -> list[dict[str, Any]]:
        """The signed-in identity's permissions at a resource group's scope (raises when the
        group does not exist)."""
        ...

    def pool_modes(self, subscription: str, resource_group: str, cluster: str, names: Sequence[str]) -> dict[str, RunningPool]:
        """Each named pool that exists, as it runs: its GPU management and the fixed settings it
        has away from AKS's default (components/pools/pool_modes.py)."""
        ...

    def prices(self, region: str, sizes: Sequence[str], currency: str) -> list[dict[str, Any]]:
        """The Retail Prices API's items for these sizes in the region, in `currency`."""
        ...

    def kubernetes_objects(self, kubeconfig: str) -> Mapping[str, Any]:
        """An existing cluster's namespaces and DaemonSets, what `kubectl get namespaces,daemonsets
        --all-namespaces --show-managed-fields --output json` prints (a v1 List), read with the
        kubeconfig (YAML, as the Kubernetes provider gets it) within one deadline
        (components/cluster/kubernetes_read.py)."""
        ...

    def config_map(self, kubeconfig: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        """One ConfigMap of the cluster, as `kubectl get configmap --namespace <namespace> <name>
        --output json` prints it; None where the API server answers that it has none (NotFound).
        Read with the kubeconfig within one deadline (components/cluster/kubernetes_read.py)."""
        ...

    def stack_resources(self) -> Mapping[str, Mapping[str, Any]]:
        """What this stack's last snapshot holds: URN -> {"type", "outputs"} for each resource
        not pending delete (the engine's builtin invoke pulumi:pulumi:readStackResourceOutputs,
        pulumi/pulumi@1b594989 pkg/backend/backend.go GetStackResourceOutputs), asked only once
        the stack's own outputs say a deployment completed (live/reader.py says why). NotRead
        where it is not known (offline, no deployment yet, an error, past its deadline)."""
        ...
