"""A refresh that fills in a property AKS fixes at creation, which the program leaves unset,
never makes the next `up` replace the typed GPU pool.

What happens without the guard, at the sources: azure-native's `Read` copies into the stored
inputs whatever Azure reports differently from the last write (pulumi-azure-native
provider/pkg/provider/provider.go `Read`: the old and new outputs' input projections are
diffed and `applyDiff` puts the difference into the old inputs), whether the program set it
or not. Its `Diff` compares stored inputs with the program's, and a key the program leaves out
is a deletion (diff.go `objectDiff`: `deletes[k] = old`; news are unmarshalled with
SkipNulls, so declaring null changes nothing). The engine turns any change under a
`replaceOnChanges` path into a replacement (pulumi/pulumi step_generator.go
`applyReplaceOnChanges`; `DiffResult.Replace` looks at every DetailedDiff entry), and the
typed pool replaces on every fixed property, deleting first. `engine_replaces` below plays
those three steps on top-level keys; the program's answer is `ignoreChanges` on the fixed
properties it leaves unset (the engine puts the stored value back: `processIgnoreChanges`),
unless the pool that runs has one set, which the config then switches off: a replacement,
as before (components/pools/pool_fields.py `left_to_azure`).
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import MANAGED_CLUSTER, MANAGED_GROUP
from support.plan import plan_warnings, planned_by
from support.pool_switch import AgentPoolsReader, run, served_azure

from components.errors import PreflightError
from components.pools import pool_fields as pool_mutability
from components.pools import pool_modes

POOL = "azure-native:containerservice:AgentPool"
T4 = "Standard_NC4as_T4_v3"
A100 = "Standard_NC24ads_A100_v4"
FIXED = pool_mutability.fixed()
SPOT = {"scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice"}


def engine_replaces(stored: dict[str, Any], declared: dict[str, Any], ignore: list[str], replace_on: list[str]) -> list[str]:
    """The top-level keys whose change replaces the resource: ignored keys take the stored
    value (or stay absent), absent and null are alike, and a change of a replaceOnChanges key
    replaces."""
    news = {k: v for k, v in declared.items() if v is not None and k not in ignore}
    news.update({k: stored[k] for k in ignore if k in stored})
    changed = {k for k in set(stored) | set(news) if stored.get(k) != news.get(k)}
    return sorted(changed & set(replace_on))


def running_pool(azure, name: str = "gpu", **properties: Any) -> None:
    path = f"/subscriptions/sub/resourceGroups/{MANAGED_GROUP}/providers/Microsoft.ContainerService/managedClusters/{MANAGED_CLUSTER}/agentPools/{name}"
    azure.pools[(MANAGED_GROUP, MANAGED_CLUSTER, name)] = {
        "id": path,
        "name": name,
        "properties": {"vmSize": T4, "count": 1, **properties},
    }


# The pools the switch tests read, each as it runs in Azure and as the config now declares it,
# side by side in one preview: a pool's ignoreChanges is its own (its settings and its running
# pool: components/pools/pool_settings.py typed_pool_ignores), as a run of it alone declares it.
SWITCHES = {
    "driveroff": ({"gpuProfile": {"driver": "None"}}, {}),
    "spotoff": ({"scaleSetPriority": "Spot", "scaleSetEvictionPolicy": "Delete", "spotMaxPrice": -1}, {}),
    "migoff": ({"gpuInstanceProfile": "MIG1g"}, {"vmSize": A100}),
    "spoton": ({"gpuProfile": {"driver": "Install"}}, {"spot": True}),
}


@pytest.fixture(scope="module")
def switched():
    """The typed pool of each of SWITCHES, as the preview declares it."""
    for azure in served_azure():
        for name, (runs, _) in SWITCHES.items():
            running_pool(azure, name, **runs)
        result, _ = run(True, azure, gpuPool=None, gpuPools={name: {"vmSize": T4, **now} for name, (_, now) in SWITCHES.items()})
        yield {r.inputs["agentPoolName"]: r for r in result.of_type(POOL)}


def test_left_to_azure_is_every_fixed_property_left_unset_except_what_the_running_pool_has_set():
    declared = {"vmSize": T4, "osType": "Linux", "type": "VirtualMachineScaleSets", "maxPods": 250, "gpuProfile": None}
    assert pool_mutability.left_to_azure(declared) == [p for p in FIXED if p not in declared or declared[p] is None]
    assert "gpuProfile" not in pool_mutability.left_to_azure(declared, {"gpuProfile"}), "a switch off replaces"
    assert not set(pool_mutability.left_to_azure({p: "x" for p in FIXED})), "nothing declared is ignored"


@pytest.mark.parametrize(
    "reported, switched_on",
    [
        (
            {"gpuProfile": {"driver": "Install"}, "scaleSetPriority": "Regular", "vnetSubnetID": "/subscriptions/s/aks-vnet/aks-subnet"},
            set(),
        ),
        ({"gpuProfile": {"driver": "None"}}, {"gpuProfile"}),
        ({"gpuInstanceProfile": "MIG1g"}, {"gpuInstanceProfile"}),
        ({"scaleSetPriority": "Spot", "scaleSetEvictionPolicy": "Delete", "spotMaxPrice": -1}, SPOT),
    ],
)
def test_the_running_pool_says_what_it_has_set_away_from_akss_default(reported, switched_on):
    """AKS's defaults (driver Install, priority Regular) and a subnet it generated are nothing a
    declaration could switch off."""
    assert pool_modes.running_of({"properties": reported}).switched_on == switched_on


def test_a_refresh_that_fills_in_a_fixed_default_replaces_nothing(azure):
    """The dev stack's device-plugin pool, running as it was created; a refresh then reports
    a gpuProfile and a priority the program never set. The `up` after it, a deployment: a
    preview reads the same pool alike (preflight.pool_switches asks the mode only of a read
    that failed, which the tests below take in both)."""
    running_pool(azure, gpuProfile={"driver": "Install"})
    result, _ = run(False, azure, gpuPool={"vmSize": T4})
    pool = result.one(POOL)
    ignored, replace_on = pool.options["ignoreChanges"], pool.options["replaceOnChanges"]
    assert {"gpuProfile", "gpuInstanceProfile", "vnetSubnetID", "podSubnetID"} | SPOT <= set(ignored)
    assert not {"vmSize", "osType", "type", "maxPods"} & set(ignored), "what it declares stays compared"
    assert set(FIXED) <= set(replace_on) and pool.options["deleteBeforeReplace"] is True
    stored = {**pool.inputs, "gpuProfile": {"driver": "Install"}, "scaleSetPriority": "Regular"}
    assert engine_replaces(stored, pool.inputs, ["count"], replace_on) == ["gpuProfile", "scaleSetPriority"], "unguarded"
    assert engine_replaces(stored, pool.inputs, ignored, replace_on) == []


@pytest.mark.parametrize(
    "name, replaced",
    [("driveroff", ["gpuProfile"]), ("spotoff", sorted(SPOT)), ("migoff", ["gpuInstanceProfile"])],
)
def test_a_config_that_switches_a_fixed_setting_off_still_replaces_the_pool(switched, name, replaced):
    """gpu-operator to device-plugin, Spot to regular, MIG to whole GPUs: the pool runs with
    it set, so it is compared, and its deletion replaces the pool, deleting first."""
    runs, _ = SWITCHES[name]
    pool = switched[name]
    assert not set(replaced) & set(pool.options["ignoreChanges"])
    assert (
        engine_replaces({**pool.inputs, **runs}, pool.inputs, pool.options["ignoreChanges"], pool.options["replaceOnChanges"]) == replaced
    )


def test_a_config_that_switches_a_fixed_setting_on_replaces_the_pool(switched):
    pool = switched["spoton"]
    assert not SPOT & set(pool.options["ignoreChanges"])
    assert engine_replaces(
        {k: v for k, v in pool.inputs.items() if k not in SPOT},
        pool.inputs,
        pool.options["ignoreChanges"],
        pool.options["replaceOnChanges"],
    ) == sorted(SPOT)


def test_a_preview_whose_read_fails_says_the_plan_is_not_known_naming_the_pool_and_what_could_differ(azure):
    """The operator's pool now configured for the device plugin, its management unread: the
    preview cannot know that the `up` would replace it (driver None switched off), so it says so."""
    running_pool(azure, gpuProfile={"driver": "None"})
    azure.refuse["GET"] = (403, "AuthorizationFailed")
    [said] = [
        w for w in plan_warnings(planned_by(AgentPoolsReader(azure), "dev", True, gpuPool={"vmSize": T4})) if "plan is not known" in w
    ]
    assert said.startswith("preflight: the plan is not known for GPU pool(s) gpu: the GPU pools' management in Azure was not read (")
    assert "AuthorizationFailed" in said and "\n" not in said
    assert (
        "pool gpu is replaced, deleting it first, if it runs with a GPU driver or management of its own (gpuProfile), a MIG "
        "profile (gpuInstanceProfile) or Spot (scaleSetPriority), which aks-gpu:gpuPool leaves unset, and refused if it runs aks-managed"
    ) in said
    assert "; a deployment stops here while the read fails" in said


def test_a_preview_names_only_what_a_pools_config_leaves_unset():
    from components.pools.settings import GpuPoolConfig

    operator_spot = GpuPoolConfig(vm_size=A100, management="gpu-operator", spot=True, mig_profile="MIG1g")
    assert pool_modes.could_differ(operator_spot, "aks-gpu:gpuPool") == "pool gpu is refused if it runs aks-managed"
    managed = GpuPoolConfig(vm_size=T4, management="aks-managed")
    assert (
        pool_modes.could_differ(managed, "aks-gpu:gpuPool")
        == "pool gpu is refused if it runs as a typed pool (device-plugin or gpu-operator)"
    )


def test_a_deployment_whose_read_fails_stops_in_one_line_before_anything_is_registered(azure):
    """Not the preview's plan with every fixed property ignored: that `up` would keep the
    operator's driver None on a pool the device plugin now serves (no usable driver). The stop
    is the plan's, for each refusal; the program's run, on the last, shows nothing registered before it."""
    running_pool(azure, gpuProfile={"driver": "None"})
    for refusal in [(500, "InternalServerError"), (403, "AuthorizationFailed")]:
        azure.refuse["GET"] = refusal
        with pytest.raises(PreflightError) as raised:
            planned_by(AgentPoolsReader(azure), "dev", False, gpuPool={"vmSize": T4}, preflight={"mode": "off"})
        said = str(raised.value)
        assert said.startswith("preflight: the GPU pools' management in Azure could not be read (")
        assert "it decides whether GPU pool(s) gpu are replaced or refused, so nothing was deployed" in said
        assert "whatever aks-gpu:preflight.mode says" in said and "\n" not in said
    error, monitor = run(False, azure, gpuPool={"vmSize": T4}, preflight={"mode": "off"})
    assert str(error) == said
    assert monitor.registrations == [], "nothing registered"


def test_a_stack_that_declares_no_pool_of_its_own_needs_no_read():
    """Every pool used as it is: nothing the stack registers rests on the read."""
    from components.pools.settings import GpuPoolConfig, Pools
    from components.preflight import preflight

    class Unreadable:
        def pool_modes(self, *args: Any) -> Any:
            raise TimeoutError("no answer")

        def client_subscription(self) -> str:
            return "sub"

    used = Pools((GpuPoolConfig(vm_size=T4, existing="use"),), {"gpu": "aks-gpu:gpuPool"}, {})
    assert preflight.pool_switches(used, ("rg", "aks"), Unreadable(), False, lambda: "sub") == ([], {})  # type: ignore[arg-type]
