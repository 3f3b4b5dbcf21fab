"""What a real `pulumi up`, `pulumi refresh`, a second `up` and `pulumi destroy` would do:
the resource options that decide it, each with the upstream source it relies on.

The mock engine runs one program once; these tests check the options and inputs that the
providers act on in the moments it cannot show.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cached
from support.plan import planned

from components.cluster.cluster import GpuClusterArgs
from components.errors import ConfigError
from components.pools import pool_fields as pool_mutability
from components.pools.gpu_pool import GpuPoolArgs
from components.proof.mnist_job import JOB_NAME, PROOF_JOB_NAME
from components.stack import parse


def outside_fixed(ignored: list[str]) -> list[str]:
    """The ignored properties other than the fixed ones a refresh may fill in
    (test_refresh_drift.py pins those)."""
    return [name for name in ignored if name not in pool_mutability.fixed()]


AKS = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
ROLE = "azure-native:authorization:RoleAssignment"
K8S_PROVIDER = "pulumi:providers:kubernetes"
JOB = "kubernetes:batch/v1:Job"

T4 = "Standard_NC4as_T4_v3"
MANAGED = {"vmSize": T4, "dedicatedVhd": True}
ENTRA = {"mode": "entra"}
OBJECT_ID = "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"


def dev(preview: bool = True, feature_state: str = "Registered", **overrides):
    return run_cached("dev", preview=preview, feature_state=feature_state, **overrides)


# --------------------------------------------------------------------------- 1. the GPU pools, either kind


MANAGED_POOL = "pulumi-python:dynamic/aksgpu:ManagedGpuPool"
A100 = "Standard_NC24ads_A100_v4"

# The pools the tests of this section read, side by side in two runs (the GPU Operator's pools
# in one of their own: it serves every GPU node of a cluster): a pool's options and inputs are
# its own (components/pools/gpu_pool.py builds each from its own settings), so each test reads
# its pools as a run of that pool alone would declare them.
POOLS = {
    "t4": {"vmSize": T4},
    "spot": {"vmSize": T4, "spot": True},
    "price": {"vmSize": T4, "spot": True, "spotMaxPrice": 0.5},
    "pods": {"vmSize": T4, "maxPods": 110},
    "every": {"vmSize": T4, "spot": True, "spotMaxPrice": 0.5, "minCount": 0, "maxCount": 2, "migProfile": None},
    "m": MANAGED,
    "mspot": {**MANAGED, "spot": True},
    "mprice": {**MANAGED, "spot": True, "spotMaxPrice": 0.5},
    "mpods": {**MANAGED, "maxPods": 110},
}
OPERATOR_POOLS = {
    "op": {"vmSize": T4, "management": "gpu-operator"},
    "mig": {"vmSize": A100, "migProfile": "MIG1g", "management": "gpu-operator"},
}


def pool(name: str):
    """The typed or AKS-managed pool `name` of the run of POOLS or of OPERATOR_POOLS."""
    run = dev(gpuPool=None, gpuPools=OPERATOR_POOLS if name in OPERATOR_POOLS else POOLS)[0]
    (found,) = [r for r in run.of_type(POOL) + run.of_type(MANAGED_POOL) if r.inputs["agentPoolName"] == name]
    return found


def test_both_kinds_of_pool_get_the_same_time_limits_each_where_its_provider_reads_them():
    """azure-native honours customTimeouts; the dynamic provider host never reads them
    (pulumi/dynamic/__main__.py), so the managed pool takes its limits as an input and has
    no customTimeouts that would look as if they worked."""
    typed, managed = pool("t4"), pool("m")
    assert typed.type == POOL and managed.type == MANAGED_POOL
    assert typed.options["customTimeouts"] == {"create": "60m", "update": "60m", "delete": "45m"}
    assert managed.options["customTimeouts"] == {}
    assert managed.inputs["timeoutMinutes"] == {"create": 60, "update": 60, "delete": 45}


def test_the_typed_pool_is_replaced_delete_first_on_a_gpu_setting():
    """replaceOnChanges alone replaces create-first (pulumi/pulumi step_generator.go), and
    azure-native asks for delete-first only for replacements its own diff reports
    (provider.go Diff); AKS refuses a second pool of one name."""
    for name in ("t4", "op"):  # the device plugin's, the GPU Operator's
        typed = pool(name)
        assert typed.type == POOL and typed.options["deleteBeforeReplace"] is True
        assert {"gpuProfile", "gpuInstanceProfile"} <= set(typed.options["replaceOnChanges"])


@pytest.mark.parametrize(
    "typed, managed, changed",
    [
        ("spot", "mspot", ("scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice")),
        ("price", "mprice", ("spotMaxPrice",)),
        ("pods", "mpods", ("maxPods",)),
    ],
    ids=["spot toggled", "a Spot price set", "max pods"],
)
def test_what_aks_cannot_change_in_place_replaces_either_kind_of_pool_deleting_first(typed, managed, changed):
    """ "You can't change ScaleSetPriority or SpotMaxPrice after creation" (spot-node-pool.md),
    nor max pods (create-node-pools.md), nor the subnets: a change previews as a replacement,
    delete-first, in the typed pool (replaceOnChanges) and in the managed one (its diff),
    never as an `~ update` that AKS then refuses. The managed pool's change is from pool m
    (MANAGED) to the other's properties, where it stands: the pools' names stay apart."""
    from components.pools.managed_gpu_pool import LOCATION_KEYS, diff_pool

    declared = pool(typed)
    assert declared.type == POOL
    assert set(changed) <= set(declared.options["replaceOnChanges"]) and declared.options["deleteBeforeReplace"] is True
    before, after = pool("m").inputs, pool(managed).inputs
    diff = diff_pool(before, {**after, **{key: before[key] for key in LOCATION_KEYS}})
    assert {f"properties.{p}" for p in changed} <= set(diff.replaces) and diff.delete_before_replace


def test_every_pool_property_the_program_sets_is_known_as_changeable_in_place_or_not():
    """A property the program starts to set must be placed in the table both pools read
    (components/pools/pool_fields.py), or its change could preview as an update AKS refuses."""
    from components.pools import pool_fields as pool_mutability

    for name in ("every", "mig"):
        typed = pool(name)
        assert typed.type == POOL
        fixed = set(typed.options["replaceOnChanges"])
        declared = set(typed.inputs) - {"resourceGroupName", "resourceName", "agentPoolName"}
        assert declared <= set(pool_mutability.AGENT_POOL), declared - set(pool_mutability.AGENT_POOL)
        assert fixed == set(pool_mutability.fixed()) and not fixed & set(pool_mutability.in_place())
    managed = pool("mspot").inputs["properties"]
    assert set(managed) <= set(pool_mutability.AGENT_POOL), set(managed) - set(pool_mutability.AGENT_POOL)


def test_the_lifecycle_page_has_a_row_for_every_pool_property_that_agrees_with_the_table():
    from pathlib import Path

    from components.pools import pool_fields as pool_mutability

    page = (Path(__file__).resolve().parent.parent / "docs" / "lifecycle.md").read_text()
    for name, how in pool_mutability.AGENT_POOL.items():
        row = next((line for line in page.splitlines() if line.startswith(f"| `{name}` |")), None)
        assert row is not None, f"docs/lifecycle.md has no row for {name}"
        assert ("in place" in row.split("|")[2]) == how.in_place, row


def test_the_fake_aks_refuses_in_place_what_the_table_says_aks_fixes():
    import fake_aks

    from components.pools import pool_fields as pool_mutability

    assert set(fake_aks.FIXED) == set(pool_mutability.fixed())


# --------------------------------------------------------------------------- 2. refresh


def test_a_refresh_with_a_logged_out_kubelogin_cannot_wipe_the_kubernetes_objects():
    """pulumi-kubernetes provider.go: with deleteUnreachable, Read answers any
    Configure-time client error with an empty result, dropping the object from state."""
    run, _ = dev()
    assert "deleteUnreachable" not in run.one(K8S_PROVIDER).inputs


# --------------------------------------------------------------------------- 3. the Job


def test_an_awaited_job_keeps_a_fixed_name_the_proofs_or_with_the_guides_image_the_guides():
    assert dev()[0].one(JOB).inputs["metadata"]["name"] == PROOF_JOB_NAME
    guide = dev(mnistJob={"image": "mcr.microsoft.com/azuredocs/samples-tf-mnist-demo:gpu"})[0]
    assert guide.one(JOB).inputs["metadata"]["name"] == JOB_NAME


def test_a_failed_awaited_job_is_replaced_by_the_next_up_and_an_unawaited_one_is_not():
    """pulumi-kubernetes provider.go Diff: with pulumi.com/replaceUnready, a Job the checker
    does not find ready (Failed: BackoffLimitExceeded) is replaced; without it the next up
    only awaits the same Failed Job again (step_generator.go, init errors). An un-awaited Job
    may still be running at the next up, so it must not carry it."""
    awaited = dev()[0].one(JOB).inputs["metadata"]["annotations"]
    unawaited = dev(mnistJob={"waitForCompletion": False})[0].one(JOB).inputs["metadata"]["annotations"]
    assert awaited.get("pulumi.com/replaceUnready") == "true" and "pulumi.com/skipAwait" not in awaited
    assert unawaited.get("pulumi.com/skipAwait") == "true" and "pulumi.com/replaceUnready" not in unawaited


def test_a_smoke_test_job_gives_up_after_two_retries_and_names_its_urn_for_a_manual_rerun():
    """Kubernetes' default backoffLimit is 6, about ten minutes of back-off (job.md)."""
    run, _ = dev()
    assert run.one(JOB).inputs["spec"]["backoffLimit"] == 2
    assert run.outputs["mnistJobUrn"].value == run.one(JOB).urn


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
    assert all(n.startswith(f"{PROOF_JOB_NAME}-") and len(n) == len(PROOF_JOB_NAME) + 9 for n in names.values())


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
    """auto-upgrade-cluster.md: patch, stable and rapid change the version by themselves. Each
    channel's ignoreChanges as the cluster and the typed pool compute them from the plan's Args
    (components/cluster/cluster.py, components/pools/gpu_pool.py), by plain calls; the two
    tests below show the declared options of a channel that moves the version and of none."""
    from components.cluster.cluster import cluster_ignore_changes
    from components.pools.pool_settings import agent_pool_settings, typed_pool_ignores

    plan = planned("dev", kubernetesVersion="1.33", upgrade={"channel": channel})
    (args,) = plan.gpu_pools
    assert isinstance(plan.cluster, GpuClusterArgs) and isinstance(args, GpuPoolArgs)
    assert ("kubernetesVersion" in cluster_ignore_changes(plan.cluster.upgrade)) is moves_version
    settings = agent_pool_settings(args.pool, args.network, args.tags, args.live, args.node_labels)
    assert ("orchestratorVersion" in typed_pool_ignores(args.pool, args.version_moves, settings, args.running)) is moves_version


def test_a_version_pin_without_a_channel_reaches_the_gpu_pool_and_stays_applied():
    run, _ = dev(kubernetesVersion="1.33")
    assert run.one(AKS).inputs["kubernetesVersion"] == "1.33"
    assert run.one(POOL).inputs["orchestratorVersion"] == "1.33"
    assert outside_fixed(run.one(POOL).options["ignoreChanges"]) == []
    assert "kubernetesVersion" not in run.one(AKS).options["ignoreChanges"], "the default channel, none, moves nothing"


def test_an_autoscaled_pool_on_a_channel_ignores_both_count_and_version():
    run, _ = dev(upgrade={"channel": "patch"}, gpuPool={"vmSize": T4, "minCount": 0, "maxCount": 2})
    assert outside_fixed(run.one(POOL).options["ignoreChanges"]) == ["count", "orchestratorVersion"]
    assert "kubernetesVersion" in run.one(AKS).options["ignoreChanges"]
