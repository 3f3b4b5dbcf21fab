"""The package's GpuProof: the proof on a cluster named by its resource ID, built as another team's
program builds it (under the mock engine, and over gRPC as the engine drives Construct). It
declares the program's proof for the same existing-cluster settings (one code path:
components/environment/declare.py), signs its Kubernetes objects in with the consumer's provider
or kubeconfig where given, and refuses a bad input in one line naming it, before anything is
registered."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import grpc
import pulumi
import pulumi_kubernetes as k8s
import pytest
from conftest import ROOT, run_cached
from pulumi.runtime.proto import engine_pb2
from support.existing_pools import GPUNP, cluster
from support.package_host import construct_as_the_engine, graph, inputs_of, refused_input
from support.package_settings import run_as_a_consumer, without_watches
from support.registrations import registrations_begun
from test_package_construct import SECRET

from components.cluster.cluster_facts import cluster_id
from components.environment.component import InputRefused
from components.environment.gpu_environment import GpuEnvironment
from components.environment.gpu_proof import TYPE, GpuProof
from components.environment.kinds import GPU_PROOF
from components.errors import ConfigError, PreflightError
from components.problem import STOPS
from components.seam.reader import AzureReader
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import ProgramRun, RecordingMonitor, Registration, Secret, merged_config

# The examples' guide cluster: ml-prod, made by hand, its pool gpunp used as it is; the program
# declares the cluster's provider and the proof there, nothing else.
ML_PROD = ROOT / "examples" / "guide-cluster" / "Pulumi.ml-prod.yaml"
# The subscription the saved cluster's ID names (examples/guide-cluster/cluster.json), the mocks' own.
SUBSCRIPTION = "33333333-3333-3333-3333-333333333333"
# The team stack's cluster with two pools of the owner's, used as they are, that no device plugin
# serves yet: the program adds one (the GPU stack), which the proof alone does not.
T4B = {**GPUNP, "name": "gpunp2", "vmSize": "Standard_NC8as_T4_v3"}
TWO_POOLS = {"gpuPools": {"gpunp": {"existing": "use"}, "gpunp2": {"existing": "use"}}}
SAMPLES: dict[str, dict[str, Any]] = {
    "ml-prod": {"stack": "ml-prod", "stack_file": ML_PROD, "cluster": None, "overrides": {}},
    "team-two-pools": {"stack": "team", "stack_file": None, "cluster": cluster(GPUNP, T4B), "overrides": TWO_POOLS},
}
RUNS = {"preview": True, "deployment": False}
KUBERNETES_PROVIDER = "pulumi:providers:kubernetes"
CONSUMERS_KUBECONFIG = "apiVersion: v1\nkind: Config\n# the consumer's own\n"


def settings(sample: str) -> dict[str, str]:
    given = SAMPLES[sample]
    return merged_config(given["stack"], overrides=given["overrides"], stack_file=given["stack_file"])


def proof_inputs(sample: str, **more: Any) -> dict[str, Any]:
    """The sample's settings as a consumer passes them to GpuProof: the cluster by resource ID, its
    pools by name, and the stack file's keys GpuProof takes under their names."""
    given = inputs_of(settings(sample))
    existing = given["existingCluster"]
    assert all(pool == {"existing": "use"} for pool in given["gpuPools"].values())  # the cluster's own, as they are
    named = {
        "clusterId": cluster_id(SUBSCRIPTION, existing["resourceGroupName"], existing["name"]),
        "gpuPoolNames": list(given["gpuPools"]),
    }
    return {**named, **{k: v for k, v in given.items() if k in (GPU_PROOF.keys or ())}, **more}


def program(sample: str, preview: bool) -> ProgramRun:
    given = SAMPLES[sample]
    return run_cached(given["stack"], preview=preview, cluster=given["cluster"], stack_file=given["stack_file"], **given["overrides"])[0]


def proof_run(
    sample: str, preview: bool = True, inputs: Mapping[str, Any] | None = None, opts: Any = None, kubernetes: Any = None
) -> tuple[ProgramRun, list[GpuProof]]:
    """A program that declares one GpuProof with the sample's settings (or `inputs`), its stack
    config holding no `aks-gpu:` key; Azure answers as it does for the program's run of the sample
    (the cluster's objects: `kubernetes` where given). `opts`: a function of nothing that returns
    the component's options (a consumer's provider)."""
    monitor = RecordingMonitor(AzureMocks(reader=OfflineReader(cluster=SAMPLES[sample]["cluster"], kubernetes=kubernetes)))
    built: list[GpuProof] = []
    given = proof_inputs(sample) if inputs is None else dict(inputs)

    def build(reader: AzureReader) -> None:
        built.append(GpuProof("proof", given, opts() if opts else None, reader=reader))  # type: ignore[arg-type]

    return run_as_a_consumer(build, SAMPLES[sample]["stack"], settings(sample), monitor, preview), built


def the_proof(registrations: list[Registration]) -> list[Registration]:
    """What the program declares of the proof as the package declares it: the cluster (and its
    provider) and the MnistJob with all under it but the Jobs' watches (support/package_settings.py);
    a dependency on anything else (the GPU stack the proof waits for) left out."""
    proof = without_watches(registrations)
    kept = [r for r in proof if any(f"{t}::" in r.urn or f"{t}$" in r.urn for t in PROOF_TYPES)]
    urns = {r.urn for r in kept}
    return [Registration(**{**vars(r), "dependencies": [d for d in r.dependencies if d in urns]}) for r in kept]


PROOF_TYPES = ("aks-gpu:azure:ExistingCluster", "aks-gpu:kubernetes:MnistJob")


def kubernetes_objects(registrations: list[Registration]) -> list[Registration]:
    return [r for r in registrations if r.type.startswith("kubernetes:")]


def resolved(value: Any) -> Any:
    """An output's value, the Outputs inside a map or list too."""
    return pulumi.runtime.sync_await._sync_await(pulumi.Output.from_input(value).future())


# --------------------------------------------------------------------------- under the mock engine


@pytest.mark.parametrize(("sample", "run"), [(s, r) for s in SAMPLES for r in RUNS], ids=[f"{s}-{r}" for s in SAMPLES for r in RUNS])
def test_a_gpu_proof_declares_the_programs_proof_for_the_same_existing_cluster_settings(sample, run):
    """Same types, names, providers, dependencies, inputs and options as the program's proof, one
    parent more: on ml-prod the program declares nothing else; on the team cluster it adds a device
    plugin, which the proof alone neither declares nor waits for."""
    preview = RUNS[run]
    built, _ = proof_run(sample, preview)
    expected = the_proof(program(sample, preview).resources)
    assert [r.type for r in built.resources if r.parent == built.one(TYPE).urn] == [
        "aks-gpu:azure:ExistingCluster",
        "aks-gpu:kubernetes:MnistJob",
    ]
    assert graph(built.resources, TYPE) == graph(expected)


def test_a_gpu_proof_runs_one_job_per_pool_and_declares_none_of_the_gpu_stack():
    built, _ = proof_run("team-two-pools")
    assert [r.name for r in built.of_type("kubernetes:batch/v1:Job")] == ["mnist-job-gpunp", "mnist-job-gpunp2"]
    assert program("team-two-pools", True).of_type("kubernetes:apps/v1:DaemonSet")  # the program's device plugin
    assert built.of_type("kubernetes:apps/v1:DaemonSet") == []


def test_a_gpu_proofs_outputs_name_its_first_job_and_each_pools_proof_as_the_program_does():
    run, [proof] = proof_run("ml-prod", preview=False)  # a preview knows no servedBy: the Jobs have not run
    program_run = program("ml-prod", False)
    job = run.one("kubernetes:batch/v1:Job")
    assert resolved(proof.mnist_job_name) == job.inputs["metadata"]["name"] == "mnist-proof-gpunp"
    assert resolved(proof.mnist_job_namespace) == "gpu-workloads"
    assert resolved(proof.job_logs_command) == "kubectl logs --namespace gpu-workloads job/mnist-proof-gpunp"
    assert resolved(proof.mnist_job_urn) == job.urn
    assert getattr(proof, "job_result_command", None) is None  # the watch's, which the package declares not
    pools = resolved(proof.gpu_pools)
    assert set(pools) == {"gpunp"} and pools["gpunp"]["job"]["name"] == "mnist-proof-gpunp"
    assert {k: v for k, v in pools["gpunp"].items() if k != "job"} == {
        k: v for k, v in program_run.outputs["gpuPools"].value["gpunp"].items() if k != "job"
    }


def test_the_first_job_of_several_pools_is_the_first_pools():
    _, [proof] = proof_run("team-two-pools", preview=False)
    pools = resolved(proof.gpu_pools)
    assert resolved(proof.mnist_job_name) == pools["gpunp"]["job"]["name"] != pools["gpunp2"]["job"]["name"]


def without_the_guides_device_plugin() -> dict[str, Any]:
    """ml-prod's cluster objects (examples/guide-cluster/kubernetes.json) less the guide's DaemonSet."""
    listed = json.loads((ROOT / "examples" / "guide-cluster" / "kubernetes.json").read_text())
    return {**listed, "items": [i for i in listed["items"] if i["metadata"]["name"] != "nvidia-device-plugin-daemonset"]}


UNSERVED = "proof: aks-gpu:gpuPools.gpunp is used as it is, and no device plugin of the cluster's lands on gpunp for certain"


def test_a_used_pool_no_device_plugin_serves_stops_the_proofs_deployment_and_its_preview_warns():
    """The program would put its device plugin there (the GPU stack); the proof alone installs none,
    and its Job would wait Pending for a GPU until its deadline."""
    run, _ = proof_run("ml-prod", kubernetes=without_the_guides_device_plugin())
    [warning] = [w for w in run.warnings if w.startswith(UNSERVED)]
    assert STOPS in warning and "GpuStack" in warning
    with pytest.raises(PreflightError, match=UNSERVED) as stopped:
        proof_run("ml-prod", preview=False, kubernetes=without_the_guides_device_plugin())
    # Preflight's stop: its header, then one line per problem (components/preflight/preflight.py).
    [line] = [line for line in str(stopped.value).splitlines() if UNSERVED in line]
    assert line.startswith(f"- {UNSERVED}") and line.endswith("or have the cluster's owner install one")


CONSUMERS_OPTIONS = {
    "providers map": lambda p: pulumi.ResourceOptions(providers={"kubernetes": p}),
    "providers list": lambda p: pulumi.ResourceOptions(providers=[p]),
    "provider": lambda p: pulumi.ResourceOptions(provider=p),
}


@pytest.mark.parametrize("how", CONSUMERS_OPTIONS)
def test_with_a_consumers_kubernetes_provider_every_kubernetes_child_uses_it_and_none_of_its_own_is_declared(how):
    def opts() -> pulumi.ResourceOptions:
        return CONSUMERS_OPTIONS[how](k8s.Provider("consumers-k8s", kubeconfig=CONSUMERS_KUBECONFIG))

    run, _ = proof_run("ml-prod", opts=opts)
    [consumers] = run.of_type(KUBERNETES_PROVIDER)
    assert consumers.name == "consumers-k8s"
    objects = kubernetes_objects(run.resources)
    assert len(objects) == 4 and {r.provider for r in objects} == {consumers.urn}  # namespace, policy, script, Job


def test_a_consumers_kubernetes_provider_given_to_the_whole_environment_is_said_not_to_be_used():
    """GpuEnvironment signs its objects in with the cluster's credential (a cluster it may create)."""
    merged = settings("ml-prod")

    def build(reader: AzureReader) -> None:
        opts = pulumi.ResourceOptions(providers=[k8s.Provider("consumers-k8s", kubeconfig=CONSUMERS_KUBECONFIG)])
        GpuEnvironment("env", inputs_of(merged), opts, reader=reader)  # type: ignore[arg-type]

    run = run_as_a_consumer(build, "ml-prod", merged, RecordingMonitor(AzureMocks()))
    assert [w for w in run.warnings if "providers" in w] == [
        "GpuEnvironment env: the Kubernetes provider passed in the `providers` resource option is not used: its Kubernetes "
        "objects sign in with the cluster's user kubeconfig, which Azure answers the deployer (GpuStack and GpuProof take one)"
    ]
    assert {r.provider.rsplit("::", 1)[-1] for r in kubernetes_objects(run.resources)} == {"existing-cluster-k8s"}


def test_a_consumers_kubeconfig_signs_the_clusters_provider_in_and_is_kept_secret():
    for kubeconfig in (CONSUMERS_KUBECONFIG, pulumi.Output.secret(CONSUMERS_KUBECONFIG)):
        run, _ = proof_run("ml-prod", inputs=proof_inputs("ml-prod", kubeconfig=kubeconfig))
        [provider] = run.of_type(KUBERNETES_PROVIDER)
        assert provider.name == "existing-cluster-k8s"
        sent = provider.inputs["kubeconfig"]
        assert isinstance(sent, Secret) and sent.value == CONSUMERS_KUBECONFIG
        assert {r.provider for r in kubernetes_objects(run.resources)} == {provider.urn}


def test_a_kubeconfig_beside_a_consumers_provider_is_refused_in_one_line_naming_kubeconfig(monkeypatch):
    begun = registrations_begun(monkeypatch)

    def opts() -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(providers=[k8s.Provider("consumers-k8s", kubeconfig=CONSUMERS_KUBECONFIG)])

    with pytest.raises(ConfigError) as refused:
        proof_run("ml-prod", inputs=proof_inputs("ml-prod", kubeconfig=CONSUMERS_KUBECONFIG), opts=opts)
    message = str(refused.value)
    assert (
        message.startswith("GpuProof proof: input kubeconfig: a kubeconfig is given, and a Kubernetes provider is passed")
        and "\n" not in message
    )
    assert [t for t in begun if t != "pulumi:pulumi:Stack"] == [KUBERNETES_PROVIDER]  # the consumer's alone


@pytest.mark.parametrize(
    ("inputs", "key", "says"),
    [
        ({"mnistJob": {"maxSteps": -1}}, "mnistJob.maxSteps", "invalid config aks-gpu:mnistJob.maxSteps = -1: expected "),
        ({"clusterId": "ml-prod"}, "clusterId", "invalid config clusterId = 'ml-prod': expected an AKS cluster's resource ID"),
        (
            {"gpuPools": {"t4": {"vmSize": "Standard_NC4as_T4_v3"}}},
            "gpuPools",
            "gpuPools is not an input of GpuProof; its inputs: clusterId, gpuPoolNames, kubeconfig, mnistJob",
        ),
        ({"gpuPoolNames": ["gpunp", "gpunp"]}, "gpuPoolNames", "invalid config gpuPoolNames = "),
    ],
)
def test_a_bad_input_is_refused_in_one_line_naming_the_input_before_anything_is_registered(inputs, key, says, monkeypatch):
    begun = registrations_begun(monkeypatch)
    with pytest.raises(ConfigError) as refused:
        proof_run("ml-prod", inputs={**proof_inputs("ml-prod"), **inputs})
    message = str(refused.value)
    assert message.startswith(f"GpuProof proof: input {key}: {says}"), message
    assert "\n" not in message
    assert [t for t in begun if t != "pulumi:pulumi:Stack"] == []


def test_a_budget_the_proof_would_not_declare_is_refused_in_one_line_naming_it(monkeypatch):
    begun = registrations_begun(monkeypatch)
    budget = {"amount": 100, "contactEmails": ["ml@example.com"]}
    with pytest.raises(ConfigError) as refused:
        proof_run("ml-prod", inputs=proof_inputs("ml-prod", cost={"budget": budget}))
    message = str(refused.value)
    assert (
        message.startswith("GpuProof proof: input cost.budget: aks-gpu:cost.budget: this run declares no GPU pool") and "\n" not in message
    )
    assert [t for t in begun if t != "pulumi:pulumi:Stack"] == []


def test_a_pool_the_cluster_does_not_have_is_refused_in_one_line_naming_gpu_pool_names(monkeypatch):
    begun = registrations_begun(monkeypatch)
    with pytest.raises(InputRefused) as refused:
        proof_run("ml-prod", inputs=proof_inputs("ml-prod", gpuPoolNames=["gpunp", "t4"]))
    message = str(refused.value)
    assert message.startswith("GpuProof proof: input gpuPoolNames: aks-gpu:gpuPools.t4.existing = use: the cluster has no pool named 't4'")
    assert "\n" not in message
    assert [t for t in begun if t != "pulumi:pulumi:Stack"] == []


# --------------------------------------------------------------------------- over gRPC, as the engine drives Construct


@pytest.mark.parametrize("run", RUNS)
def test_construct_of_a_gpu_proof_registers_the_programs_proof_and_says_its_warnings(run):
    preview = RUNS[run]
    constructed = construct_as_the_engine("ml-prod", preview, settings("ml-prod"), component=TYPE, given=proof_inputs("ml-prod"))
    assert not isinstance(constructed.answer, grpc.RpcError), constructed.answer.details()
    assert graph(constructed.registrations, TYPE) == graph(the_proof(program("ml-prod", preview).resources))
    assert constructed.log.said(engine_pb2.WARNING) == program("ml-prod", preview).warnings
    job = "urn:pulumi:ml-prod::aks-gpu::aks-gpu:index:GpuProof$aks-gpu:kubernetes:MnistJob$kubernetes:batch/v1:Job::mnist-job-gpunp"
    state = constructed.answer.state.fields
    assert state["mnistJobUrn"].string_value == job and state["mnistJobName"].string_value == "mnist-proof-gpunp"


CONSUMERS_PROVIDER = "urn:pulumi:ml-prod::aks-gpu::pulumi:providers:kubernetes::consumers-k8s"


@pytest.mark.parametrize("run", RUNS)
def test_construct_with_a_consumers_provider_in_providers_signs_every_kubernetes_child_in_with_it(run):
    """The engine hands the consumer's providers option to Construct by package, "<urn>::<id>"
    (source_eval.go providerRefs); the host rebuilds the provider from the engine's state by its URN."""
    constructed = construct_as_the_engine(
        "ml-prod",
        RUNS[run],
        settings("ml-prod"),
        component=TYPE,
        given=proof_inputs("ml-prod"),
        providers={"kubernetes": f"{CONSUMERS_PROVIDER}::0f4a6b1e"},
    )
    assert not isinstance(constructed.answer, grpc.RpcError), constructed.answer.details()
    assert [r for r in constructed.registrations if r.type == KUBERNETES_PROVIDER] == []
    objects = kubernetes_objects(constructed.registrations)
    assert len(objects) == 4 and {r.provider for r in objects} == {CONSUMERS_PROVIDER}


def test_construct_refuses_a_kubeconfig_beside_a_consumers_provider_as_pulumi_refuses_a_bad_input():
    constructed = construct_as_the_engine(
        "ml-prod",
        True,
        settings("ml-prod"),
        component=TYPE,
        given=proof_inputs("ml-prod", kubeconfig=CONSUMERS_KUBECONFIG),
        providers={"kubernetes": f"{CONSUMERS_PROVIDER}::0f4a6b1e"},
    )
    path, reason = refused_input(constructed.answer, constructed.registrations)
    assert path == "kubeconfig" and reason.startswith("a kubeconfig is given, and a Kubernetes provider is passed")


@pytest.mark.parametrize("run", RUNS)
def test_construct_refuses_a_pool_the_cluster_does_not_have_as_pulumi_names_a_bad_input(run):
    given = proof_inputs("ml-prod", gpuPoolNames=["gpunp", "t4"])
    constructed = construct_as_the_engine("ml-prod", RUNS[run], settings("ml-prod"), component=TYPE, given=given)
    path, reason = refused_input(constructed.answer, constructed.registrations)
    assert path == "gpuPoolNames" and reason.startswith("aks-gpu:gpuPools.t4")


def test_construct_takes_a_secret_kubeconfig_which_no_plain_input_may_be_and_signs_the_clusters_provider_in_with_it():
    """The engine hands a secret input to the component as an Output (provider/server.py
    `_select_value`); every other input is refused so (test_package_construct.py)."""
    kubeconfig = {**SECRET, "value": CONSUMERS_KUBECONFIG}
    constructed = construct_as_the_engine(
        "ml-prod", True, settings("ml-prod"), component=TYPE, given=proof_inputs("ml-prod", kubeconfig=kubeconfig)
    )
    assert not isinstance(constructed.answer, grpc.RpcError), constructed.answer.details()
    [provider] = [r for r in constructed.registrations if r.type == KUBERNETES_PROVIDER]
    sent = provider.inputs["kubeconfig"]
    assert isinstance(sent, Secret) and sent.value == CONSUMERS_KUBECONFIG
    assert {r.provider for r in kubernetes_objects(constructed.registrations)} == {provider.urn}


# --------------------------------------------------------------------------- its schema


def test_the_schema_requires_the_cluster_and_its_pools_takes_a_kubeconfig_that_is_no_plain_value_and_describes_every_output():
    """As the host answers GetSchema (the snapshot tests/test_package_schema.py holds to it)."""
    schema = json.loads((ROOT / "tests" / "snapshots" / "package-schema.json").read_text())
    proof = schema["resources"][TYPE]
    inputs = proof["inputProperties"]
    assert proof["isComponent"] is True and proof["requiredInputs"] == ["clusterId", "gpuPoolNames"]
    assert sorted(inputs) == sorted([*GPU_PROOF.own, *(GPU_PROOF.keys or ())])
    # The kubeconfig only signs the objects in; every other input decides what is declared.
    assert [name for name, spec in inputs.items() if spec.get("plain") is not True] == ["kubeconfig"]
    assert inputs["kubeconfig"]["type"] == "string"
    assert set(proof["properties"]) == {
        "gpuPools",
        "mnistJobName",
        "mnistJobNamespace",
        "jobLogsCommand",
        "mnistJobUrn",
    }
    assert [name for name, spec in {**inputs, **proof["properties"]}.items() if not spec.get("description")] == []
