"""The live reader (components/seam/reader.py): what `pulumi preview` and `pulumi up` read of
Azure and the cluster. The cluster, its user credential, the client's subscription and a
feature's registration are azure-native invokes, signed in as azure-native is; the other reads
use the Azure SDK with one DefaultAzureCredential for the run (the AKS-managed pool's provider,
in another process, builds its own). A failed invoke raises InvokeFailed, an SDK's error is
raised as it is (reader.py `read_errors`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from components.cluster import kubernetes_read
from components.cost import retail_prices
from components.errors import error_line, one_line
from components.pools import agent_pools
from components.preflight import permissions_live as permissions
from components.seam import compute, invoke_deadline
from components.seam.azure_facts import Facts
from components.seam.deadline import gather
from components.seam.reader import BadAnswer, InvokeFailed, NoOutputs, NotRead, RunningPool, read_errors

GET_MANAGED_CLUSTER = "azure-native:containerservice:getManagedCluster"
# The engine's builtins answer these in a preview and an up alike, and register nothing
# (docs/design/lifecycle.md, "A pool that lost the stack's tag", has the sources).
READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"
READ_STACK_RESOURCES = "pulumi:pulumi:readStackResourceOutputs"
# The backend reads one checkpoint file, or exports one deployment from the Pulumi Cloud.
STATE_READ_SECONDS = 60.0
# The scope azure-mgmt-containerservice asks tokens for (ARM's audience).
ARM_SCOPE = "https://management.azure.com/.default"


# A diy backend in the legacy layout parses a reference as a bare stack name, so it refuses the
# qualified name's "/", or with PULUMI_DISABLE_VALIDATION finds no such stack (pulumi/pulumi@1b594989
# diy/store.go legacyReferenceStore.ParseReference, backend.go GetStackOutputs).
LEGACY_REFUSALS = ("a stack name may only contain alphanumeric, hyphens, underscores, or periods: invalid character '/'", "unknown stack")


def legacy_layout_refusal(said: str, name: str) -> bool:
    """Whether readStackOutputs refused the qualified `name` as only a legacy diy layout does."""
    return said.find(LEGACY_REFUSALS[0]) >= 0 or said.find(f'{LEGACY_REFUSALS[1]} "{name}"') >= 0


class LiveReader:
    """Azure and the cluster, live. `arm_endpoint` is for the tests' local fake of ARM."""

    def __init__(
        self,
        arm_endpoint: str | None = None,
        invoke_seconds: float = invoke_deadline.INVOKE_SECONDS,
        state_seconds: float = STATE_READ_SECONDS,
    ) -> None:
        self.arm_endpoint = arm_endpoint
        self.invoke_seconds = invoke_seconds
        self.state_seconds = state_seconds

    @functools.cached_property
    def credential(self) -> Any:
        from azure.core.exceptions import ClientAuthenticationError
        from azure.identity import DefaultAzureCredential

        try:
            return DefaultAzureCredential()
        except ValueError as error:  # AZURE_TOKEN_CREDENTIALS set to no credential (azure-identity 1.27.0 _internal/utils.py)
            raise ClientAuthenticationError(message=f"DefaultAzureCredential: {error}") from None

    def cluster(self, resource_group: str, name: str) -> Mapping[str, Any]:
        # A plain invoke answers before the program goes on: a failure stops the run before anything is registered.
        import pulumi

        def get() -> Mapping[str, Any]:
            return pulumi.runtime.invoke(GET_MANAGED_CLUSTER, {"resourceGroupName": resource_group, "resourceName": name}).value or {}

        return invoke_deadline.within(get, "azure-native's getManagedCluster", self.invoke_seconds)

    def user_kubeconfig(self, resource_group: str, name: str) -> str:
        # The `exec` format "only take[s] effect when requesting clusterUser credential of AAD
        # clusters" (the az CLI's `aks get-credentials --format` help).
        from pulumi_azure_native import containerservice

        def credentials() -> str:
            result = containerservice.list_managed_cluster_user_credentials(
                resource_group_name=resource_group, resource_name=name, format="exec"
            )
            if not result.kubeconfigs:
                raise BadAnswer("listClusterUserCredential answered no kubeconfig")
            return result.kubeconfigs[0].value

        return invoke_deadline.within(credentials, "azure-native's listClusterUserCredential", self.invoke_seconds)

    def client_subscription(self) -> str:
        from pulumi_azure_native import authorization

        return invoke_deadline.typed(lambda: authorization.get_client_config().subscription_id)

    def feature_state(self, namespace: str, feature: str) -> str | None:
        # Read, never created: ARM answers 200 with a state for any feature (pulumi-azure-native #1722).
        from pulumi_azure_native import features

        result = invoke_deadline.typed(
            lambda: features.get_subscription_feature_registration(provider_namespace=namespace, feature_name=feature)
        )
        return result.properties.state if result.properties else None

    def sign_in_problem(self) -> str | None:
        try:
            gather([lambda: self.credential.get_token(ARM_SCOPE)], compute.LIVE_TIMEOUT_SECONDS)
        except read_errors() as error:  # no token: the failure is the answer
            return error_line(error)
        return None

    def facts(self, subscription: str, location: str, node_group: str) -> Facts:
        return compute.facts(subscription, location, node_group, credential=self.credential, base_url=self.arm_endpoint)

    def permissions(self, subscription: str) -> list[dict[str, Any]]:
        return permissions.read(subscription, credential=self.credential, base_url=self.arm_endpoint)

    def group_permissions(self, subscription: str, resource_group: str) -> list[dict[str, Any]]:
        return permissions.read(subscription, credential=self.credential, base_url=self.arm_endpoint, resource_group=resource_group)

    def pool_modes(self, subscription: str, resource_group: str, cluster: str, names: Sequence[str]) -> dict[str, RunningPool]:
        return agent_pools.read(agent_pools.client_for(subscription, self.credential), resource_group, cluster, names)

    def prices(self, region: str, sizes: Sequence[str], currency: str) -> list[dict[str, Any]]:
        return retail_prices.read(region, sizes, currency)

    def kubernetes_objects(self, kubeconfig: str) -> Mapping[str, Any]:
        return kubernetes_read.read(kubeconfig)

    def config_map(self, kubeconfig: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return kubernetes_read.config_map(kubeconfig, namespace, name)

    def stack_resources(self) -> Mapping[str, Mapping[str, Any]]:
        """URN -> {"type", "outputs"} of the stack's last snapshot, read only once the stack's own
        outputs say a deployment completed: readStackResourceOutputs ranges over the snapshot
        with no nil check, and a diy stack that never deployed has a nil one, which would panic
        the CLI (pulumi/pulumi@1b594989 backend.go GetStackResourceOutputs, diy/state.go).
        No answer, an error or no outputs yet is NotRead."""
        import pulumi

        # The qualified name the Pulumi Cloud requires and a diy backend's project layout parses.
        name = f"{pulumi.get_organization()}/{pulumi.get_project()}/{pulumi.get_stack()}"

        def ask(token: str, args: dict[str, str]) -> Mapping[str, Any]:  # within a deadline named after the invoke
            return invoke_deadline.within(lambda: pulumi.runtime.invoke(token, args).value or {}, token.split(":")[-1], self.state_seconds)

        try:
            try:
                own = ask(READ_STACK_OUTPUTS, {"name": name})
            except InvokeFailed as error:
                if not legacy_layout_refusal(str(error), name):
                    raise
                name = pulumi.get_stack()  # the legacy layout names a stack by its name alone
                own = ask(READ_STACK_OUTPUTS, {"name": name})
            if not own.get("outputs"):
                raise NoOutputs("the stack has no outputs yet: no deployment of it has completed")
            held = ask(READ_STACK_RESOURCES, {"stackName": name})
        except NotRead:
            raise
        except read_errors() as error:  # "not known", said in one line
            raise NotRead(f"the stack's state could not be read: {one_line(error, 200) or type(error).__name__}") from None
        # builtins.go readStackResourceOutputs answers {"name", "outputs": {URN: {"type", "outputs"}}}.
        resources = held.get("outputs")
        if not isinstance(resources, Mapping):
            raise NotRead("the stack's state was answered without its resources")
        return dict(resources)
