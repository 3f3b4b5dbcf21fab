"""An in-place update of an autoscaled GPU pool never moves it: the count an update sends is
the count the pool runs, not the count the state last saw.

AKS takes a PUT's count as a manual scale, which it refuses while the cluster autoscaler runs
the pool ("Cannot manually scale AgentPool ... with cluster autoscaler enabled":
hashicorp/terraform-provider-azurerm#4543; azure-aks-docs cluster-autoscaler-overview.md:
"Manual scaling is disabled when you use the cluster autoscaler"). The managed pool's
provider reads the pool right before its PUT (against tests/fake_aks.py here). The typed
pool cannot: `ignoreChanges: [count]` puts the stored count back into the inputs
(pulumi/pulumi step_generator.go `processIgnoreChanges`) and azure-native's Update PUTs them
all (provider.go `Update` -> `defaultUpdate`: `PrepareAzureRESTBody`, `CreateOrUpdate`), so
the workflows refresh the state first (docs/lifecycle.md).
"""

from __future__ import annotations

import yaml
from conftest import MANAGED_CLUSTER, MANAGED_GROUP
from support.managed_pool import PROVIDER, T4, inputs

from components.pools import managed_gpu_pool as mgp
from components.pools.settings import GpuPoolConfig
from tools.stack_files import ROOT

KEY = (MANAGED_GROUP, MANAGED_CLUSTER, "gpu")
AUTOSCALED = GpuPoolConfig(vm_size=T4, management="aks-managed", min_count=0, max_count=3, node_count=0)
WIDER = GpuPoolConfig(vm_size=T4, management="aks-managed", min_count=0, max_count=5, node_count=0)


def test_an_update_puts_the_count_the_pool_runs_now_not_the_count_in_the_state(aks):
    """No refresh between the create and the update: the state still says 0."""
    outs = PROVIDER.create(inputs(AUTOSCALED)).outs
    aks.pools[KEY]["properties"]["count"] = 2  # the autoscaler, since
    assert outs["properties"]["count"] == 0
    PROVIDER.update(mgp.pool_id(outs), outs, inputs(WIDER))
    get, put = aks.pool_calls()[-2:]
    assert (get.method, put.method) == ("GET", "PUT"), "the pool is read right before the PUT"
    assert put.body["properties"]["count"] == 2 and put.body["properties"]["maxCount"] == 5
    assert aks.pools[KEY]["properties"]["count"] == 2, "the pool was not scaled"


def test_a_fixed_size_pool_is_not_read_and_gets_the_declared_count(aks):
    fixed = GpuPoolConfig(vm_size=T4, management="aks-managed", node_count=1)
    outs = PROVIDER.create(inputs(fixed)).outs
    before = len(aks.pool_calls())
    PROVIDER.update(mgp.pool_id(outs), outs, inputs(GpuPoolConfig(vm_size=T4, management="aks-managed", node_count=2)))
    (put,) = aks.pool_calls()[before:]
    assert put.method == "PUT" and put.body["properties"]["count"] == 2


def test_the_body_takes_the_live_count_then_the_states_then_the_declared():
    olds, news = {"properties": {"count": 1}}, {"properties": {"count": 0, "enableAutoScaling": True}}
    assert mgp.update_body(olds, news, {"properties": {"count": 4}})["properties"]["count"] == 4
    assert mgp.update_body(olds, news, None)["properties"]["count"] == 1, "the pool could not be read: the state's"
    assert mgp.update_body({}, news, None)["properties"]["count"] == 0
    fixed = {"properties": {"count": 3}}
    assert mgp.update_body(olds, fixed, {"properties": {"count": 4}})["properties"]["count"] == 3, "no autoscaler: as declared"


def test_the_deploy_refreshes_the_state_before_its_up_and_the_pr_preview_does_too():
    """So the typed pool's stored count, which its update PUTs, is the count it runs."""

    def pulumi_steps(workflow: str) -> list[dict]:
        jobs = yaml.safe_load((ROOT / ".github" / "workflows" / workflow).read_text())["jobs"]
        return [s for job in jobs.values() for s in job.get("steps", []) if str(s.get("uses", "")).startswith("pulumi/actions@")]

    (up,) = pulumi_steps("deploy.yml")
    (preview,) = pulumi_steps("pr.yml")
    assert (up["with"]["command"], up["with"]["refresh"]) == ("up", True)
    assert (preview["with"]["command"], preview["with"]["refresh"]) == ("preview", True)
