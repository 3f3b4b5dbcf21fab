"""The one seam between the program and the outside world: every read it makes of Azure and of
the cluster goes through one `AzureReader` it is handed ("ports and adapters"): the live one
(components/live_reader.py) or the offline render's and the tests' (tools/azure_mocks.py). A
reader answers in Azure's own shapes (the REST bodies), so one parser reads every source; a read
that fails raises, and its caller says what that means; a read the reader does not make raises
`NotRead`. A caller catches `read_errors()` alone, so a bug of the program's own (a KeyError in a
parser) surfaces as one, not as "Azure was not read"."""

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
    creation that it has set away from AKS's default (REST names; pool_fields.left_to_azure)."""

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


class NoOutputs(NotDeployed):
    """The stack has no outputs, so its snapshot is not asked for (components/live_reader.py
    `stack_resources`): the program's stack has never deployed; another team's, which declares
    the package's component, may have deployed and export nothing, which cannot be told apart."""


class InvokeFailed(Exception):
    """A failed invoke. pulumi.runtime.invoke raises a bare `Exception("invoke of <token> failed:
    ...")` for the provider's error and the engine's alike (pulumi 3.272.0 runtime/invoke.py
    `_invoke`, settings.py `grpc_error_to_exception`); the live reader raises this in its place."""


class BadAnswer(ValueError):
    """An answer of Azure or of the cluster that is not what its API documents."""


@functools.cache
def read_errors() -> tuple[type[BaseException], ...]:
    """What a read raises when Azure or the cluster cannot be read: azure-core's errors (sign-in
    errors among them, and DeserializationError), a socket's, a failed invoke, an answer no API
    documents, the cluster's refusal, and `NotRead`. Imported when first asked: azure-core takes
    0.1 s to import, and most runs fail no read."""
    from azure.core.exceptions import AzureError, DeserializationError

    from components.errors import ClusterAccessError

    return (AzureError, DeserializationError, OSError, TimeoutError, InvokeFailed, BadAnswer, ClusterAccessError, NotRead)


class AzureReader(Protocol):
    """What the program reads of Azure and of the cluster; a read with a deadline raises TimeoutError past it."""

    def cluster(self, resource_group: str, name: str) -> Mapping[str, Any]:
        """An existing cluster, as getManagedCluster answers (azure-native's spelling), within a deadline."""
        ...

    def user_kubeconfig(self, resource_group: str, name: str) -> str:
        """An existing cluster's user kubeconfig, base64 as listClusterUserCredential (format exec) answers, within a deadline."""
        ...

    def client_subscription(self) -> str:
        """The subscription the signed-in client uses (getClientConfig)."""
        ...

    def feature_state(self, namespace: str, feature: str) -> str | None:
        """A subscription feature's registration state (`az feature show`)."""
        ...

    def sign_in_problem(self) -> str | None:
        """Why the Azure SDK's credential, which the AKS-managed pool's provider signs in with, cannot get an ARM token here."""
        ...

    def facts(self, subscription: str, location: str, node_group: str) -> Facts:
        """VM sizes offered, vCPU quotas, and the scale sets of the node resource group."""
        ...

    def permissions(self, subscription: str) -> list[dict[str, Any]]:
        """The signed-in identity's permissions at the subscription's scope."""
        ...

    def group_permissions(self, subscription: str, resource_group: str) -> list[dict[str, Any]]:
        """The signed-in identity's permissions at a resource group's scope (raises when it does not exist)."""
        ...

    def pool_modes(self, subscription: str, resource_group: str, cluster: str, names: Sequence[str]) -> dict[str, RunningPool]:
        """Each named pool that exists, as it runs (components/pools/pool_modes.py)."""
        ...

    def prices(self, region: str, sizes: Sequence[str], currency: str) -> list[dict[str, Any]]:
        """The Retail Prices API's items for these sizes in the region, in `currency`."""
        ...

    def kubernetes_objects(self, kubeconfig: str) -> Mapping[str, Any]:
        """What `kubectl get namespaces,daemonsets --all-namespaces --show-managed-fields --output json`
        prints (a v1 List), read with the kubeconfig within one deadline (components/cluster/kubernetes_read.py)."""
        ...

    def config_map(self, kubeconfig: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        """One ConfigMap, as `kubectl get configmap --output json` prints it; None where the API server
        has none (NotFound). Read within one deadline (components/cluster/kubernetes_read.py)."""
        ...

    def stack_resources(self) -> Mapping[str, Mapping[str, Any]]:
        """What this stack's last snapshot holds: URN -> {"type", "outputs"} for each resource not
        pending delete (the engine's builtin invoke pulumi:pulumi:readStackResourceOutputs,
        pulumi/pulumi@1b594989 pkg/backend/backend.go GetStackResourceOutputs), asked only once the
        stack's outputs say a deployment completed. NotRead where it is not known."""
        ...
