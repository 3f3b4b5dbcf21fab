"""What a real `pulumi up`, `pulumi refresh`, a second `up` and `pulumi destroy` would do:
the resource options that decide it, each with the upstream source it relies on.

The mock engine runs one program once; these tests check the options and inputs that the
providers act on in the moments it cannot show.
"""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

from components.config import parse
from components.errors import ConfigError, PreflightError
from components.mnist_job import JOB_NAME
from conftest import run_cached
from tools.mock_engine import AzureMocks, FEATURE_REGISTRATION_TOKEN, RecordingMonitor, run_program

AKS = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
ROLE = "azure-native:authorization:RoleAssignment"
COMMAND = "command:local:Command"
K8S_PROVIDER = "pulumi:providers:kubernetes"
JOB = "kubernetes:batch/v1:Job"

T4 = "Standard_NC4as_T4_v3"
MANAGED = {"vmSize": T4, "dedicatedVhd": True}
ENTRA = {"mode": "entra"}
OBJECT_ID = "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"


def dev(preview: bool = True, feature_state: str = "Registered", **overrides):
    return run_cached("dev", preview=preview, feature_state=feature_state, **overrides)


# --------------------------------------------------------------------------- 1. dedicatedVhd


def cli_flags(words: list[str]) -> dict[str, str]:
    """`--flag value` pairs of a command line (a flag followed by another flag has no value)."""
    return {w: words[i + 1] for i, w in enumerate(words[:-1]) if w.startswith("--") and not words[i + 1].startswith("--")}


def test_the_managed_gpu_pool_is_added_and_deleted_by_the_documented_az_command():
    """learn/quick-kubernetes-deploy-gpu-cli.md: `az aks nodepool add ... --enable-managed-gpu=true`.
    Not resources.Resource (azure-native crud.go CanCreate at 2024-03-01, #4109; refresh drift),
    not resources.Deployment (its delete leaves the pool)."""
    run, _ = dev(gpuPool=MANAGED)
    assert run.of_type(POOL) == [] and run.of_type("azure-native:resources:Resource") == []
    pool = run.one(COMMAND)
    inner_delete = pool.inputs["delete"].split("{ ", 1)[1].split("; }", 1)[0]  # see unless_not_found
    create, delete = shlex.split(pool.inputs["create"]), shlex.split(inner_delete)
    assert create[:4] == ["az", "aks", "nodepool", "add"] and "--enable-managed-gpu=true" in create
    assert delete[:4] == ["az", "aks", "nodepool", "delete"]
    for words in (create, delete):
        flags = cli_flags(words)
        assert (flags["--resource-group"], flags["--cluster-name"], flags["--name"]) == ("aks-gpu-dev-rg", "aks-gpu-dev", "gpu")
        assert flags["--subscription"] == "33333333-3333-3333-3333-333333333333", "azure-native's subscription"
    flags = cli_flags(create)
    assert (flags["--node-vm-size"], flags["--node-count"], flags["--node-taints"]) == (T4, "1", "sku=gpu:NoSchedule")


def test_any_change_to_the_managed_pool_replaces_it_deleting_the_old_one_first():
    """pulumi-command Command docs: without `update`, an input change runs `create` again,
    which `az aks nodepool add` refuses for an existing pool; the name is fixed, so delete first."""
    pool = dev(gpuPool=MANAGED)[0].one(COMMAND)
    assert "*" in pool.options["replaceOnChanges"]
    assert pool.options["deleteBeforeReplace"] is True


def test_the_managed_pool_carries_autoscaling_spot_and_a_version_pin_to_the_cli():
    """aks-managed-gpu-nodes.md adds the pool with --enable-cluster-autoscaler --min-count
    --max-count; spot-node-pool.md gives the Spot flags."""
    run, _ = dev(kubernetesVersion="1.34", gpuPool={**MANAGED, "minCount": 0, "maxCount": 2, "spot": True})
    create = shlex.split(run.one(COMMAND).inputs["create"])
    joined = " ".join(create)
    assert "--enable-cluster-autoscaler --min-count 0 --max-count 2" in joined
    assert "--priority Spot --eviction-policy Delete --spot-max-price -1" in joined
    assert "--kubernetes-version 1.34" in joined


def fake_az(tmp_path, stderr: str, status: int) -> dict:
    """A stand-in `az` on PATH that records its arguments and answers as Azure would."""
    script = tmp_path / "az"
    script.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path}/called\necho '{stderr}' >&2\nexit {status}\n")
    script.chmod(0o755)
    return {"PATH": f"{tmp_path}:/usr/bin:/bin"}


@pytest.mark.parametrize(
    "answer, status, passes",
    [
        ("", 0, True),
        ("ERROR: (ResourceNotFound) The Resource 'Microsoft.ContainerService/managedClusters/aks-gpu-dev' was not found.", 1, True),
        ("ERROR: (ResourceGroupNotFound) Resource group 'aks-gpu-dev-rg' could not be found.", 3, True),
        ("ERROR: AADSTS700024: Client assertion is not within its valid time range.", 1, False),
        ("ERROR: (AuthorizationFailed) The client does not have authorization to perform action.", 1, False),
    ],
)
def test_deleting_the_managed_pool_tolerates_only_a_pool_that_is_already_gone(tmp_path, answer, status, passes):
    """A destroy after the cluster was deleted outside Pulumi completes; a sign-in or permission
    failure fails the step, because the pool may still be running."""
    delete = dev(gpuPool=MANAGED)[0].one(COMMAND).inputs["delete"]
    result = subprocess.run(["/bin/sh", "-c", delete], env=fake_az(tmp_path, answer, status), capture_output=True, text=True)
    assert (result.returncode == 0) is passes, result
    assert (tmp_path / "called").read_text().startswith("aks nodepool delete --subscription")


def test_a_cluster_created_anew_gets_the_managed_pool_again():
    """The command has no read: a new cluster identity is what tells it the pool is gone."""
    pool = dev(gpuPool=MANAGED)[0].one(COMMAND)
    assert "triggers" in pool.inputs
    assert any("ManagedCluster" in d for d in pool.dependencies)


def test_the_job_waits_for_the_managed_pool():
    run, _ = dev(gpuPool=MANAGED)
    assert run.one(COMMAND).urn in run.one(JOB).dependencies


def test_a_destroy_deletes_the_managed_pool_before_the_cluster():
    """Pulumi deletes dependents first: the command depends on the cluster."""
    run, _ = dev(gpuPool=MANAGED)
    assert run.one(AKS).urn in run.one(COMMAND).dependencies


def test_the_feature_registration_is_read_never_created():
    """pulumi-azure-native #1722 (open): creating a SubscriptionFeatureRegistration always
    fails with "cannot create already existing resource"."""
    run, monitor = dev(gpuPool=MANAGED)
    assert run.of_type("azure-native:features:SubscriptionFeatureRegistration") == []
    assert FEATURE_REGISTRATION_TOKEN in monitor.mocks.calls


def test_the_feature_is_not_read_when_no_managed_pool_is_asked_for():
    _, monitor = dev()
    assert FEATURE_REGISTRATION_TOKEN not in monitor.mocks.calls


@pytest.mark.parametrize("state", ["NotRegistered", "Registering", "Unregistered"])
def test_a_preview_warns_with_the_two_commands_when_the_feature_is_not_registered(state):
    run, _ = dev(preview=True, feature_state=state, gpuPool=MANAGED)
    [warning] = [w for w in run.warnings if "ManagedGPUExperiencePreview" in w and "register" in w]
    assert f"which is {state}" in warning
    assert "az feature register --namespace Microsoft.ContainerService --name ManagedGPUExperiencePreview" in warning
    assert "az provider register --namespace Microsoft.ContainerService" in warning
    assert run.one(COMMAND), "a preview still shows the whole plan"


def test_a_deployment_stops_before_any_resource_when_the_feature_is_not_registered():
    monitor = RecordingMonitor(AzureMocks(feature_state="NotRegistered"))
    with pytest.raises(PreflightError, match=r"\n- aks-gpu:gpuPool.dedicatedVhd = true \(AKS-managed GPU nodes\) needs .* NotRegistered"):
        run_program("dev", overrides={"gpuPool": MANAGED}, monitor=monitor, preview=False)
    assert [r for r in monitor.registrations if not r.type.startswith("pulumi:providers:")] == []


def test_a_registered_feature_passes_silently():
    run, _ = dev(preview=True, gpuPool=MANAGED)
    assert not [w for w in run.warnings if "az feature register" in w]


# --------------------------------------------------------------------------- 2. refresh


def test_a_refresh_with_a_logged_out_kubelogin_cannot_wipe_the_kubernetes_objects():
    """pulumi-kubernetes provider.go: with deleteUnreachable, Read answers any
    Configure-time client error with an empty result, dropping the object from state."""
    run, _ = dev()
    assert "deleteUnreachable" not in run.one(K8S_PROVIDER).inputs


# --------------------------------------------------------------------------- 3. the Job


def test_an_awaited_job_keeps_the_guides_name():
    run, _ = dev()
    assert run.one(JOB).inputs["metadata"]["name"] == JOB_NAME


def test_an_unawaited_job_is_renamed_with_its_spec_so_a_replacement_is_created_first():
    """pulumi-kubernetes provider.go Diff: delete-before-replace only when the name stays;
    overrides.go DeletedCondition: skipAwait skips the wait for the old Job's deletion (#3154)."""
    names = {}
    for label, job in {"a": {}, "b": {"maxSteps": 100}, "c": {"image": "example.azurecr.io/mnist:2"}, "a again": {}}.items():
        run, _ = dev(mnistJob={"waitForCompletion": False, **job})
        names[label] = run.one(JOB).inputs["metadata"]["name"]
        assert run.outputs["jobLogsCommand"].value.endswith(f"job/{names[label]}"), "logs name the Job that exists"
    assert names["a"] == names["a again"], "the same spec keeps its name: no replacement"
    assert len({names["a"], names["b"], names["c"]}) == 3
    assert all(n.startswith(f"{JOB_NAME}-") and len(n) == len(JOB_NAME) + 9 for n in names.values())


# --------------------------------------------------------------------------- 4. role assignment


def test_the_deployer_grant_is_replaced_delete_first():
    """azure-native autonames a role assignment with a new GUID and so replaces it
    create-first (provider.go Diff, __createBeforeDelete); ARM refuses a second assignment of
    the same role to the same principal at the same scope (RoleAssignmentExists)."""
    role = dev(access={**ENTRA, "deployerObjectId": OBJECT_ID})[0].one(ROLE)
    assert role.options["deleteBeforeReplace"] is True


def test_a_pinned_deployer_object_id_is_granted_whoever_runs_the_program():
    run, _ = dev(access={**ENTRA, "deployerObjectId": OBJECT_ID})
    assert run.one(ROLE).inputs["principalId"] == OBJECT_ID
    assert not [w for w in run.warnings if "deployerObjectId" in w]


def test_without_a_pinned_deployer_the_grant_follows_the_caller_and_the_preview_says_so():
    run, _ = dev(preview=True, access=ENTRA)
    assert run.one(ROLE).inputs["principalId"] == "22222222-2222-2222-2222-222222222222", "getClientConfig"
    assert [w for w in run.warnings if "access.deployerObjectId is not set" in w]


@pytest.mark.parametrize(
    "access, message",
    [
        ({"deployerObjectId": OBJECT_ID}, r"access.deployerObjectId = .*only applies to Entra ID"),
        ({**ENTRA, "deployerObjectId": "me"}, r"access.deployerObjectId = 'me': expected an Entra ID object ID"),
        (
            {**ENTRA, "deployerType": "none", "adminGroupObjectIds": [OBJECT_ID], "deployerObjectId": OBJECT_ID},
            r"access.deployerObjectId = .*nothing is granted with .*deployerType = 'none'",
        ),
    ],
)
def test_a_deployer_object_id_that_cannot_apply_is_refused(access, message):
    with pytest.raises(ConfigError, match=message):
        parse({"aks-gpu:access": json.dumps(access)}, "aks-gpu", "dev")


# --------------------------------------------------------------------------- 5. refresh diffs


def test_the_cluster_leaves_its_pool_list_to_azure_after_a_refresh():
    """A refresh reads every pool into agentPoolProfiles (azure-native Read; #1532, #579,
    #4264), and the SDK docs: the API does not allow updating it through the cluster."""
    run, _ = dev()
    assert "agentPoolProfiles" in run.one(AKS).options["ignoreChanges"]


@pytest.mark.parametrize(
    "channel, moves_version",
    [("none", False), ("node-image", False), ("patch", True), ("stable", True), ("rapid", True)],
)
def test_an_upgrade_channel_owns_the_kubernetes_version_of_cluster_and_pool(channel, moves_version):
    """auto-upgrade-cluster.md: patch, stable and rapid change the version by themselves."""
    run, _ = dev(kubernetesVersion="1.33", upgrade={"channel": channel})
    assert ("kubernetesVersion" in run.one(AKS).options["ignoreChanges"]) is moves_version
    assert ("orchestratorVersion" in run.one(POOL).options["ignoreChanges"]) is moves_version


def test_a_version_pin_without_a_channel_reaches_the_gpu_pool_and_stays_applied():
    run, _ = dev(kubernetesVersion="1.33")
    assert run.one(AKS).inputs["kubernetesVersion"] == "1.33"
    assert run.one(POOL).inputs["orchestratorVersion"] == "1.33"
    assert run.one(POOL).options["ignoreChanges"] == []


def test_an_autoscaled_pool_on_a_channel_ignores_both_count_and_version():
    run, _ = dev(upgrade={"channel": "patch"}, gpuPool={"vmSize": T4, "minCount": 0, "maxCount": 2})
    assert run.one(POOL).options["ignoreChanges"] == ["count", "orchestratorVersion"]
