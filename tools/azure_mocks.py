"""What stands in for Azure under the mock engine, in two parts that share one fake Azure:

  * `OfflineReader`, the reader the program is handed (components/seam/reader.py): an
    existing cluster and its user credential, the client's subscription, the preview
    feature's registration, and any answer a test gives (SKUs and quota, permissions, the
    pools' GPU management, prices), or a refusal; what it is not given it does not read
    (`NotRead`: the offline render makes no calls to Azure);
  * `AzureMocks`, the mock engine's answers: resources' state echoing their inputs with the
    names azure-native computes, and the invokes the declared resources make (the created
    cluster's credential, the client's subscription).

An existing cluster is one a test describes, one a stack's saved `az aks show` describes (the
offline render says what it read), or an assumed one (it says so)."""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import grpc
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings

from components.cluster import cluster_facts
from components.cluster.cluster_facts import id_parts
from components.config.values import NAMESPACE
from components.errors import ClusterAccessError, ConfigError
from components.gpu_stack import cluster_objects
from components.gpu_stack.cluster_objects import SAVE_COMMAND, SAVE_WITH_CONFIG_MAPS
from components.live_reader import GET_MANAGED_CLUSTER, READ_STACK_OUTPUTS, READ_STACK_RESOURCES
from components.ownership import saved_state
from components.pools import pool_modes
from components.seam.azure_facts import Facts
from components.seam.reader import InvokeFailed, NoOutputs, NotDeployed, NotRead, RunningPool
from components.stack import StackConfig, parse
from tools.stack_files import ROOT, project_name

# The fake credential; tests check that it never shows up outside a secret.
MOCK_USER_TOKEN = "mock-user-token-0123456789abcdef"
USER_CREDENTIALS_TOKEN = "azure-native:containerservice:listManagedClusterUserCredentials"
CLIENT_CONFIG_TOKEN = "azure-native:authorization:getClientConfig"
FEATURE_REGISTRATION_TOKEN = "azure-native:features:getSubscriptionFeatureRegistration"
MANAGED_CLUSTER_TOKEN = GET_MANAGED_CLUSTER  # the live reader's invoke
STACK_OUTPUTS_TOKEN, STACK_RESOURCES_TOKEN = READ_STACK_OUTPUTS, READ_STACK_RESOURCES  # the live reader's state reads
# Who "runs pulumi up" under mocks.
MOCK_CLIENT = {
    "clientId": "11111111-1111-1111-1111-111111111111",
    "objectId": "22222222-2222-2222-2222-222222222222",
    "subscriptionId": "33333333-3333-3333-3333-333333333333",
    "tenantId": "44444444-4444-4444-4444-444444444444",
}
# The AKS Entra server application that kubelogin asks tokens for (Azure/kubelogin docs).
AKS_ENTRA_SERVER_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"


def _fake_kubeconfig(cluster: str, exec_format: bool = False) -> str:
    """A user kubeconfig shaped like AKS's: a token for a local-accounts cluster, or the
    kubelogin exec plugin in device-code mode that an Entra ID cluster returns."""
    if exec_format:
        user = (
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: kubelogin\n"
            "      args: [get-token, --environment, AzurePublicCloud, --server-id, "
            f"{AKS_ENTRA_SERVER_ID}, --client-id, 80faf920-1908-4b52-b5ef-a8e7bedfc67a, "
            f"--tenant-id, {MOCK_CLIENT['tenantId']}, --login, devicecode]\n"
        )
    else:
        user = f"    token: {MOCK_USER_TOKEN}\n"
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: {cluster}\n  cluster:\n    server: https://{cluster}.hcp.mock.azmk8s.io:443\n"
        f"contexts:\n- name: {cluster}\n  context:\n    cluster: {cluster}\n    user: clusterUser_{cluster}\n"
        f"current-context: {cluster}\n"
        f"users:\n- name: clusterUser_{cluster}\n  user:\n{user}"
    )


def existing_cluster(
    name: str = "team-aks", resource_group: str = "team-rg", location: str = "westeurope", **changes: Any
) -> dict[str, Any]:
    """What getManagedCluster answers for a healthy existing cluster, in azure-native's
    spelling: running, Succeeded, Azure CNI Overlay with Cilium, local accounts, a System pool
    of three nodes and no VNet of its own. `changes` replace top-level members
    (`provisioningState="Updating"`, `agentPoolProfiles=[...]`). What the offline render
    assumes of a cluster it cannot read (ASSUMED says so)."""
    cluster = {
        "id": f"/subscriptions/{MOCK_CLIENT['subscriptionId']}/resourceGroups/{resource_group}"
        f"/providers/Microsoft.ContainerService/managedClusters/{name}",
        "name": name,
        "location": location,
        "resourceUID": "0123456789abcdef01234567",
        "provisioningState": "Succeeded",
        "powerState": {"code": "Running"},
        "kubernetesVersion": "1.34",
        "currentKubernetesVersion": "1.34.2",
        "nodeResourceGroup": f"MC_{resource_group}_{name}_{location}",
        "enableRBAC": True,
        "networkProfile": {
            "networkPlugin": "azure",
            "networkPluginMode": "overlay",
            "networkDataplane": "cilium",
            "networkPolicy": "cilium",
        },
        "agentPoolProfiles": [
            {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "maxPods": 250, "osType": "Linux"},
        ],
    }
    cluster.update(changes)
    return cluster


class EngineInvokeError(grpc.RpcError):
    """A provider's failed invoke, as the engine hands it to the SDK: a gRPC error whose
    details say "invocation of <token> returned an error: <the provider's error>" (pulumi/pulumi
    pkg/resource/deploy/source_eval.go, ResourceMonitor.Invoke). The SDK raises it from the
    invoke as an Exception (runtime/invoke.py `do_invoke`, settings.py
    `grpc_error_to_exception`), which the program can catch; any other exception out of a
    mock would escape as an unhandled RPC error instead, which no real run shows."""

    def __init__(self, token: str, error: str) -> None:
        super().__init__(error)
        self._details = f"invocation of {token} returned an error: {error}"

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return self._details


# The reads the live reader makes as invokes (components/live_reader.py), and those the
# cluster answers; the others are the Azure SDK's.
INVOKED = frozenset({"cluster", "user_kubeconfig", "client_subscription", "feature_state", "stack_resources"})
OF_THE_CLUSTER = frozenset({"kubernetes_objects", "config_map"})


def refusal(read: str, said: str) -> Exception:
    """A refused read, raised as the live reader raises it: a failed invoke, the cluster's
    refusal, or azure-core's HttpResponseError, whose text is ARM's "(<code>) <message>"."""
    from azure.core.exceptions import HttpResponseError

    if read in INVOKED:
        return InvokeFailed(said)
    return ClusterAccessError(said) if read in OF_THE_CLUSTER else HttpResponseError(message=said)


def saved_cluster(cfg: StackConfig) -> dict[str, Any] | None:
    """The existing cluster as the parsed config's preflight.clusterFile saved it (`az aks show
    --output json`), read relative to the project (where the CLI runs the program) and checked
    against the cluster the stack names as the program checks it: one that is not such a
    description is one line naming the key (components/cluster/cluster_facts.py `read_saved`)."""
    if not cfg.preflight.cluster_file:
        return None
    existing = cfg.existing_cluster
    named = cluster_facts.Named(
        existing.name if existing else None, existing.resource_group_name if existing else None, cfg.subscription_id
    )
    return cluster_facts.read_saved(f"{NAMESPACE}:preflight.clusterFile", ROOT / cfg.preflight.cluster_file, named)


def saved_kubernetes(cfg: StackConfig) -> dict[str, Any] | None:
    """What the existing cluster runs in Kubernetes as the parsed config's
    preflight.kubernetesFile saved it (cluster_objects.SAVE_COMMAND); one line naming the key
    when it is not such a list (components/gpu_stack/cluster_objects.py `read_saved`)."""
    if not cfg.preflight.kubernetes_file:
        return None
    return cluster_objects.read_saved(f"{NAMESPACE}:preflight.kubernetesFile", ROOT / cfg.preflight.kubernetes_file)


def saved_stack_state(cfg: StackConfig, stack: str) -> saved_state.SavedState | None:
    """The stack's state as the parsed config's preflight.stateFile saved it (`pulumi stack
    export`); one line naming the key when it is not this stack's export (saved_state.py)."""
    if not cfg.preflight.state_file:
        return None
    return saved_state.read_saved(f"{NAMESPACE}:preflight.stateFile", ROOT / cfg.preflight.state_file, project_name(), stack)


# What the offline render says when it answers for a cluster it has no description of.
ASSUMED = (
    "offline: cluster {group}/{name} was not read; assumed: in {location}, Succeeded and running, Kubernetes 1.34.2, "
    "Azure CNI Overlay with Cilium, no VNet of its own, local accounts, a System pool of 3 x Standard_D4s_v5 "
    "(set aks-gpu:preflight.clusterFile to a saved `az aks show --output json` to render your cluster)"
)

# What the render assumes of the GPU pools in Azure, which it does not read: a preview reads
# them, and a pool that runs may then be planned otherwise (components/pools/pool_modes.py).
UNREAD_POOLS = (
    "offline: the GPU pools were not read in Azure; the plan shown is that of pools that do not run yet (`pulumi preview` "
    "reads them: a pool that runs with a fixed setting the config leaves unset is replaced, and a switch to or from "
    "aks-managed is refused)"
)


def read_note(group: str, described: Mapping[str, Any], source: str) -> str:
    """What the offline render says of a cluster it answers for from a saved description."""
    from components.cluster import cluster_facts
    from components.pools import pool_network

    found = cluster_facts.parse(described, group, source=source)
    return f"offline: cluster {group}/{found.name} read from {source}: {pool_network.summary(found)}"


class OfflineReader:
    """Azure as the offline render and the tests see it (components/seam/reader.AzureReader).

    `feature_state` is what Azure answers for a subscription feature registration (`az
    feature show`): "Registered" unless a test says otherwise. `cluster` is what
    getManagedCluster answers for an existing cluster (`existing_cluster()`), if any; None:
    any cluster asked for exists, as ASSUMED. `facts`, `permissions` (the subscription's),
    `group_permissions` (the stack's resource group's), `pool_modes` and
    `prices` are Azure's answers to those reads, and `kubernetes` the cluster's namespaces
    and DaemonSets, and any ConfigMaps (or the stack's preflight.kubernetesFile); None: not read (NotRead). `refuse` maps a
    read's name (a method of this class) to the error text Azure answers it with; `sign_in`
    is why the Azure SDK cannot sign in (None: it can)."""

    def __init__(
        self,
        feature_state: str = "Registered",
        cluster: Mapping[str, Any] | None = None,
        location: str | None = None,
        *,
        facts: Facts | None = None,
        permissions: list[dict[str, Any]] | None = None,
        group_permissions: list[dict[str, Any]] | None = None,
        pool_modes: Mapping[str, str | RunningPool] | None = None,
        prices: list[dict[str, Any]] | None = None,
        refuse: Mapping[str, str] | None = None,
        sign_in: str | None = None,
        kubernetes: Mapping[str, Any] | Callable[[str], Mapping[str, Any]] | None = None,
        stack: Mapping[str, Mapping[str, Any]] | None = None,
        stack_outputs: Mapping[str, Any] | None = None,
    ) -> None:
        self.feature_state_answer = feature_state
        self.described_cluster = dict(cluster) if cluster is not None else None
        #: Where an assumed cluster is (None: in the stack's azure-native:location).
        self.location = location
        self.facts_answer, self.permissions_answer, self.prices_answer = facts, permissions, prices
        self.group_permissions_answer = group_permissions
        self.pool_modes_answer = dict(pool_modes) if pool_modes is not None else None
        self.refused = dict(refuse or {})
        self.sign_in = sign_in
        #: What the cluster runs in Kubernetes (a `kubectl get namespaces,daemonsets -A --show-managed-fields -o json`
        #: list, or a function of the kubeconfig that answers or raises); None: not read.
        self.kubernetes_answer = kubernetes
        #: The stack's state (URN -> {"type", "outputs"}; None: its first run) and its own outputs,
        #: as readStackOutputs answers them: some once a deployment completed, none before.
        self.stack_answer = dict(stack) if stack is not None else None
        self.stack_outputs = dict(stack_outputs) if stack_outputs is not None else ({"clusterName": "aks"} if stack else {})
        #: A diy backend in the legacy layout: it parses a stack reference as a bare stack name.
        self.legacy_layout = False
        #: Reads that do not answer until their event is set (a test's backend that hangs).
        self.stall: dict[str, threading.Event] = {}
        #: The stack's preflight.kubernetesFile, when `kubernetes` is what it saved.
        self.kubernetes_file: str | None = None
        #: The URNs of the state the program was answered (none: it read no state).
        #: The reads the program made, by name, in order.
        self.reads: list[str] = []
        #: What the answers assumed (the offline render prints it).
        self.notes: list[str] = []
        #: The existing clusters getManagedCluster answered for.
        self.read: set[str] = set()
        #: The stack's preflight.stateFile, when `stack` is what it saved.
        self.state_file: str | None = None
        #: Where the render was told of that file, when not by the stack's config (`--state-file`).
        self.state_given: str = ""
        #: The mark of a rehearsed state (saved_state.SavedState.rehearsal); None: a real export.
        self.rehearsal: str | None = None
        #: The entries of the state the program was answered, by URN (the day after's diff).
        self.held_state: dict[str, Mapping[str, Any]] = {}
        #: The stack's preflight.clusterFile, when `cluster` is what it saved.
        self.cluster_file: str | None = None
        #: The subscription the client is signed in to: the saved cluster's, when its ID names one.
        self.subscription = MOCK_CLIENT["subscriptionId"]

    def offline(self, config: Mapping[str, str], stack: str) -> None:
        """What the stack's config tells the offline render, as the program parses it
        (components/config, the only code that knows its keys): the cluster a stack saved
        (preflight.clusterFile), what it runs in Kubernetes (preflight.kubernetesFile), and
        the stack's state (preflight.stateFile), and the region to assume a cluster in. A config the program refuses gives nothing here:
        the program's own parse says what is wrong, in its run."""
        try:
            cfg = parse(config, project_name(), stack, ROOT)
        except ConfigError:
            return
        if self.described_cluster is None and (cluster := saved_cluster(cfg)) is not None:
            self.described_cluster, self.cluster_file = cluster, cfg.preflight.cluster_file
            # The budget's scope and the pools' subscriptionId then name the team's
            # subscription, not the mock's.
            self.subscription = id_parts(self.described_cluster.get("id"))[0] or self.subscription
        if self.kubernetes_answer is None and (objects := saved_kubernetes(cfg)) is not None:
            self.kubernetes_answer, self.kubernetes_file = objects, cfg.preflight.kubernetes_file
        if self.stack_answer is None and (state := saved_stack_state(cfg, stack)) is not None:
            self.stack_answer, self.stack_outputs = dict(state.resources), dict(state.outputs)
            self.state_file, self.rehearsal = cfg.preflight.state_file, state.rehearsal
        self.location = self.location or cfg.location

    def _asked(self, read: str) -> None:
        self.reads.append(read)
        if read in self.refused:
            raise refusal(read, self.refused[read])

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def cluster(self, resource_group: str, name: str) -> Mapping[str, Any]:
        self._asked("cluster")
        if self.described_cluster is not None:
            if name != self.described_cluster["name"]:  # azure-native's error quotes ARM's (ResourceNotFound, 404)
                raise InvokeFailed(f"ResourceNotFound: The Resource 'Microsoft.ContainerService/managedClusters/{name}' was not found")
            if self.cluster_file is not None:
                self._note(read_note(resource_group, self.described_cluster, self.cluster_file))
            found = dict(self.described_cluster)
        else:
            self._note(ASSUMED.format(group=resource_group, name=name, location=self.location))
            found = existing_cluster(name, resource_group, self.location or "eastus")
        self.read.add(name)
        return found

    def user_kubeconfig(self, resource_group: str, name: str) -> str:
        # "exec" takes effect only for an Entra ID cluster (the az CLI's --format help).
        self._asked("user_kubeconfig")
        return self.kubeconfig_of(name, exec_format=True)

    def kubeconfig_of(self, name: str, exec_format: bool) -> str:
        """The user credential AKS gives for cluster `name`, base64: exec format asked for,
        for a cluster with Entra ID (one this stack creates is; an existing one as described)."""
        entra = name not in self.read or bool((self.described_cluster or {}).get("aadProfile"))
        kubeconfig = _fake_kubeconfig(name, exec_format=exec_format and entra)
        return base64.b64encode(kubeconfig.encode()).decode()

    def client_subscription(self) -> str:
        self._asked("client_subscription")
        return self.subscription

    def feature_state(self, namespace: str, feature: str) -> str | None:
        # ARM answers 200 with a state for any feature, registered or not (azure-native #1722).
        self._asked("feature_state")
        return self.feature_state_answer

    def sign_in_problem(self) -> str | None:
        self._asked("sign_in_problem")
        return self.sign_in

    def facts(self, subscription: str, location: str, node_group: str) -> Facts:
        self._asked("facts")
        return self._given(self.facts_answer, "the offline render makes no calls to Azure")

    def permissions(self, subscription: str) -> list[dict[str, Any]]:
        self._asked("permissions")
        return self._given(self.permissions_answer, "the offline render makes no calls to Azure")

    def group_permissions(self, subscription: str, resource_group: str) -> list[dict[str, Any]]:
        self._asked("group_permissions")
        return self._given(self.group_permissions_answer, "the offline render makes no calls to Azure")

    def pool_modes(self, subscription: str, resource_group: str, cluster: str, names: Sequence[str]) -> dict[str, RunningPool]:
        self._asked("pool_modes")
        if self.pool_modes_answer is None and self.cluster_file is not None:  # the saved `az aks show` describes them
            return self.described_pools(names)
        if self.pool_modes_answer is None:
            self._note(UNREAD_POOLS)
        running = self._given(self.pool_modes_answer, "the offline render makes no calls to Azure")
        # A test may answer a mode alone ("gpu-operator"), or the pool as it runs.
        return {name: RunningPool.of_mode(r) if isinstance(r, str) else r for name, r in running.items() if name in names}

    def described_pools(self, names: Sequence[str]) -> dict[str, RunningPool]:
        """The named pools as the saved cluster lists them: an agentPoolProfiles entry has every
        property of the agentPools GET's (tests/azure-specs/2025-09-01: ManagedClusterAgentPoolProfile
        holds all of ManagedClusterAgentPoolProfileProperties), so it says what the live read would; a
        pool it does not list does not run there (the live read's 404)."""
        profiles = (self.described_cluster or {}).get("agentPoolProfiles")
        listed = {p.get("name"): p for p in profiles if isinstance(p, Mapping)} if isinstance(profiles, list) else {}
        return {name: pool_modes.running_of(listed[name]) for name in names if name in listed}

    def prices(self, region: str, sizes: Sequence[str], currency: str) -> list[dict[str, Any]]:
        self._asked("prices")
        return self._given(self.prices_answer, "the offline render makes no calls to the Retail Prices API")

    def kubernetes_objects(self, kubeconfig: str) -> Mapping[str, Any]:
        self._asked("kubernetes_objects")
        answer = self._given(
            self.kubernetes_answer,
            f"the offline render makes no calls to the cluster (set aks-gpu:preflight.kubernetesFile to a saved `{SAVE_COMMAND}` to check it)",
        )
        if self.kubernetes_file is not None:
            self._note(f"offline: what the cluster runs in Kubernetes read from {self.kubernetes_file}")
        return answer(kubeconfig) if callable(answer) else answer

    def config_map(self, kubeconfig: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        # From the same list: a saved `kubectl get` with the namespace's ConfigMaps, or a test's.
        self._asked("config_map")
        save = f"set aks-gpu:preflight.kubernetesFile to a saved `{SAVE_WITH_CONFIG_MAPS}` to check it"
        answer = self._given(self.kubernetes_answer, f"the offline render makes no calls to the cluster ({save})")
        listed = answer(kubeconfig) if callable(answer) else answer
        where = self.kubernetes_file or "the list"
        try:
            found = cluster_objects.listed_config_map(listed, namespace, name)
        except cluster_objects.NotListed as why:
            raise NotRead(f"{where}: {why} ({save})") from None
        if self.kubernetes_file is not None:
            self._note(f"offline: what the cluster runs in Kubernetes read from {self.kubernetes_file}")
        return found

    def stack_resources(self) -> Mapping[str, Mapping[str, Any]]:
        # None handed in: the stack's first run (live/reader.py); a test that refuses it, a failed read.
        self._asked("stack_resources")
        if self.stack_answer is None:
            raise NotDeployed("the offline render has no stack state")
        if self.state_file is None and not self.stack_outputs:  # as the live read: a test's state whose stack exports nothing
            raise NoOutputs("the stack has no outputs yet: no deployment of it has completed")
        if self.state_file is not None:
            # As the live read: the snapshot counts once the stack's own outputs say a deployment completed (live/reader.py).
            if not self.stack_outputs:
                self._note(self.state_note(f": no deployment of it has completed ({self.never_deployed()}), so this is a first `up`"))
                raise NotDeployed(f"the stack's state in {self.state_file} has no outputs yet: no deployment of it had completed")
            self._note(self.state_note(f" ({len(self.stack_answer)} resources)"))
        self.held_state = dict(self.stack_answer)
        return self.stack_answer

    def state_note(self, tail: str) -> str:
        """The offline line of the state file read: a rehearsal says what it is, and when it was written."""
        given = f", given with --state-file{',' if tail.startswith(':') else ''}" if self.state_given else ""
        if self.rehearsal is None:
            return f"offline: the stack's state read from {self.state_file}{given}{tail}"
        on = re.search(r"\bon (\d{4}-\d{2}-\d{2})\b", self.rehearsal)  # linear: fixed widths, no nesting
        when = f" on {on.group(1)}" if on else ""
        return f"offline: the state a first `up` would leave, rehearsed by the render{when}, read from {self.state_file}{given}{tail}"

    def never_deployed(self) -> str:
        left = [u for u in self.stack_answer or () if u.split("::")[2:3] != ["pulumi:pulumi:Stack"]]
        return "no resources" if not self.stack_answer else "only the root Stack, with no outputs" if not left else "no stack outputs"

    @staticmethod
    def _given(answer: Any, why: str) -> Any:
        if answer is None:
            raise NotRead(why)
        return answer


class AzureMocks(pulumi_mocks.Mocks):
    """Echoes inputs back as state, with the computed names azure-native would return, and
    answers the declared resources' invokes from the same fake Azure as `reader`.

    `feature_state`, `cluster` and `location` make the `OfflineReader` when none is given."""

    def __init__(
        self,
        feature_state: str = "Registered",
        cluster: Mapping[str, Any] | None = None,
        location: str | None = None,
        reader: OfflineReader | None = None,
    ) -> None:
        self.reader = reader or OfflineReader(feature_state, cluster, location)
        #: The invokes the declared resources made, by token.
        self.calls: list[str] = []
        #: The stack names the state was read for, and the reads, in order.
        self.stack_names: list[str] = []
        self.state_reads: list[str] = []

    @property
    def notes(self) -> list[str]:
        return self.reader.notes

    def offline(self, config: Mapping[str, str], stack: str) -> None:
        self.reader.offline(config, stack)

    def new_resource(self, args: pulumi_mocks.MockResourceArgs) -> tuple[str | None, dict]:
        state = dict(args.inputs)
        # What AKS computes for a cluster it creates, known once it exists (so not in a
        # preview): its node resource group, by AKS's default name (azure-aks-docs faq.md).
        if args.typ == "azure-native:containerservice:ManagedCluster" and not settings.is_dry_run():
            group, name, where = state.get("resourceGroupName"), state.get("resourceName"), state.get("location")
            state.setdefault("nodeResourceGroup", f"MC_{group}_{name}_{where}")
        # azure-native exposes the ARM name as the `name` output.
        for name_input in ("resourceName", "resourceGroupName", "agentPoolName"):
            if args.typ.startswith("azure-native:") and name_input in state:
                state["name"] = state[name_input]
                break
        return f"{args.name}-id", state

    def call(self, args: pulumi_mocks.MockCallArgs) -> tuple[dict, list[tuple[str, str]] | None]:
        self.calls.append(args.token)
        return self.answer(args), []  # no check failures

    def answer(self, args: pulumi_mocks.MockCallArgs) -> dict:
        if args.token == USER_CREDENTIALS_TOKEN:
            if USER_CREDENTIALS_TOKEN in self.reader.refused:  # a test refuses the created cluster's credential
                raise EngineInvokeError(args.token, self.reader.refused[USER_CREDENTIALS_TOKEN])
            kubeconfig = self.reader.kubeconfig_of(args.args["resourceName"], exec_format=args.args.get("format") == "exec")
            return {"kubeconfigs": [{"name": "clusterUser", "value": kubeconfig}]}
        if args.token == CLIENT_CONFIG_TOKEN:
            return {**MOCK_CLIENT, "subscriptionId": self.reader.subscription}
        if args.token == FEATURE_REGISTRATION_TOKEN:
            # ARM answers 200 with a state for any feature, registered or not (azure-native #1722).
            return {"name": args.args["featureName"], "properties": {"state": self.reader.feature_state_answer}}
        if args.token == MANAGED_CLUSTER_TOKEN:
            try:
                return dict(self.reader.cluster(args.args["resourceGroupName"], args.args["resourceName"]))
            except InvokeFailed as error:
                raise EngineInvokeError(args.token, str(error)) from None
        if args.token in (STACK_OUTPUTS_TOKEN, STACK_RESOURCES_TOKEN):
            return self.stack_state(args.token, args.args)
        raise NotImplementedError(f"no mock for invoke {args.token}")

    def stack_state(self, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """The engine's builtin reads of the stack's state, in its shapes (pulumi/pulumi@1b594989 builtins.go
        readStackReference, readStackResourceOutputs). readStackResourceOutputs on a stack that never
        deployed would panic the CLI (pkg/backend/backend.go GetStackResourceOutputs): it fails the test."""
        self.state_reads.append(token)
        if (stalled := self.reader.stall.get(token)) is not None:
            stalled.wait()  # a backend that does not answer until the test lets it
        if token in self.reader.refused:
            raise EngineInvokeError(token, self.reader.refused[token])
        name = str(args.get("name", args.get("stackName")))
        if self.reader.legacy_layout and "/" in name:
            # pulumi/pulumi@1b594989 diy/store.go legacyReferenceStore.ParseReference -> tokens.ParseStackName.
            at = name.index("/")
            said = f"a stack name may only contain alphanumeric, hyphens, underscores, or periods: invalid character '/' at position {at}"
            raise EngineInvokeError(token, said)
        if token == STACK_OUTPUTS_TOKEN:
            self.stack_names.append(args["name"])
            return {"name": args["name"], "outputs": dict(self.reader.stack_outputs), "secretOutputNames": []}
        self.stack_names.append(args["stackName"])
        if self.reader.stack_answer is None:
            raise AssertionError("readStackResourceOutputs on a stack that never deployed panics the CLI")
        return {"name": args["stackName"], "outputs": dict(self.reader.stack_answer)}
