"""Preflight: a preview warns, a deployment stops before any resource, for everything Azure
would refuse. Facts come from saved az CLI output (tests/fixtures/preflight/), or from a
local fake of Azure Resource Manager for the live path."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from support.plan import plan_warnings, planned, planned_by
from support.preflight import FIXTURES, T4, preview, problems

from components.errors import ConfigError, PreflightError
from components.preflight import capacity
from components.seam import azure_facts
from components.stack import parse
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program

A100 = "Standard_NC24ads_A100_v4"
SUBSCRIPTION = "33333333-3333-3333-3333-333333333333"


def goes_on(**overrides):
    """The plan a deployment declares from, which it reaches only where preflight does not stop
    it: its GPU pools' Args are what it declares (the plan, tests/support/plan.py)."""
    plan = planned("dev", preview=False, **overrides)
    assert plan.gpu_pools, "the deployment goes on to its pools"
    return plan


def deploy(**overrides):
    """A deployment; returns what was registered before it stopped, and the error."""
    monitor = RecordingMonitor(AzureMocks())
    with pytest.raises(PreflightError) as error:
        run_program("dev", overrides=overrides, monitor=monitor, preview=False)
    created = [r for r in monitor.registrations if not r.type.startswith("pulumi:providers:")]
    return created, str(error.value)


# --------------------------------------------------------------------------- retired sizes


def test_a_retired_size_warns_in_a_preview_with_the_command_that_picks_a_current_one():
    [warning] = [w for w in plan_warnings(preview()) if "retired" in w]
    assert warning.startswith("aks-gpu:gpuPool.vmSize Standard_NC6 (NVIDIA Tesla K80) was retired by Azure on 2023-09-06")
    assert "`pulumi config set --path aks-gpu:gpuPool.vmSize Standard_NC4as_T4_v3 -s dev`" in warning
    assert warning.endswith("(a deployment stops here)")


def test_pulumi_up_on_the_dev_stack_stops_before_anything_is_created():
    created, error = deploy()
    assert created == [], "nothing registered"
    lines = error.splitlines()
    assert lines[0].startswith("preflight: Azure would refuse this deployment (1 problem(s); nothing was created")
    assert lines[1].startswith("- aks-gpu:gpuPool.vmSize Standard_NC6 ") and "pulumi config set --path aks-gpu:gpuPool.vmSize" in lines[1]


@pytest.mark.parametrize(
    "size, replacement", [("Standard_NC6s_v2", "Standard_NC24ads_A100_v4"), ("Standard_NC6s_v3", "Standard_NC40ads_H100_v5")]
)
def test_every_retired_size_names_microsofts_replacement(size, replacement):
    [warning] = [w for w in plan_warnings(preview(gpuPool={"vmSize": size})) if "retired" in w]
    assert f"vmSize {replacement} -s dev" in warning


# --------------------------------------------------------------------------- offers


def test_a_size_not_offered_to_the_subscription_stops_a_deployment(facts):
    cfg = {"gpuPool": {"vmSize": "Standard_NC6s_v3"}, "preflight": facts(), "mnistJob": {"enabled": False}}
    assert any(
        "Standard_NC6s_v3 is not offered to this subscription in eastus (NotAvailableForSubscription)" in w
        for w in problems(preview(**cfg))
    )


def test_an_offered_current_size_with_quota_passes_silently(facts):
    cfg = {"gpuPool": {"vmSize": A100}, "preflight": facts()}
    assert problems(preview(**cfg)) == []
    goes_on(**cfg)


def test_an_n_series_size_azure_does_not_list_in_the_region_is_blocking(facts):
    cfg = {"gpuPool": {"vmSize": "Standard_NC40ads_H100_v5"}, "preflight": facts(drop=("Standard_NC40ads_H100_v5",))}
    created, error = deploy(**cfg)
    assert created == [] and "Standard_NC40ads_H100_v5: Azure lists no such size in eastus" in error


def zoned(files: dict[str, str], size: str, zones: list[str]) -> dict[str, str]:
    """The saved SKUs with `size` offered to this subscription in `zones` of eastus, none restricted."""
    path = Path(files["skusFile"])
    skus = json.loads(path.read_text())
    for sku in skus:
        if sku["name"] == size:
            sku["locationInfo"], sku["restrictions"] = [{"location": "eastus", "zones": zones, "zoneDetails": []}], []
    path.write_text(json.dumps(skus))
    return files


def test_a_pool_in_zones_azure_offers_its_size_passes_silently(facts):
    cfg = {"gpuPool": {"vmSize": A100, "zones": ["1", "3"]}, "preflight": zoned(facts(), A100, ["1", "2", "3"])}
    assert problems(preview(**cfg)) == []


def test_a_zone_without_the_size_stops_a_deployment_naming_the_zones_azure_offers(facts):
    cfg = {"gpuPool": {"vmSize": A100, "zones": ["2", "3"]}, "preflight": zoned(facts(), A100, ["1", "2"])}
    created, error = deploy(**cfg)
    assert created == []
    [line] = [each for each in error.splitlines() if "zones" in each]
    assert line.startswith(f"- aks-gpu:gpuPool.zones: Azure offers {A100} to this subscription in zone(s) 1, 2 of eastus, not zone(s) 3 (")
    assert line.endswith("pick from those zones, or another size or region")


def test_a_zone_restricted_to_the_subscription_is_not_offered(facts):
    # The saved list restricts the A100 size's zone 3 in eastus (a restriction of type Zone).
    [warning] = [w for w in problems(preview(gpuPool={"vmSize": A100, "zones": ["3"]}, preflight=facts())) if ".zones" in w]
    assert "in zone(s) 1, 2 of eastus, not zone(s) 3" in warning and warning.endswith("(a deployment stops here)")


# --------------------------------------------------------------------------- quota


def test_a_gpu_family_without_quota_stops_a_deployment_with_numbers_and_a_way_out(facts):
    cfg = {"gpuPool": {"vmSize": T4}, "preflight": facts()}
    created, error = deploy(**cfg)
    assert created == []
    [line] = [each for each in error.splitlines() if "NCASv3_T4" in each]
    assert "aks-gpu:gpuPool.vmSize Standard_NC4as_T4_v3 (1 x 4 vCPUs) needs 4 vCPUs" in line
    assert "'Standard NCASv3_T4 Family vCPUs' (standardNCASv3_T4Family) in eastus: 0 in use, limit 0" in line
    assert "Quotas page (Compute, eastus" in line
    assert f"or use {A100} (NVIDIA A100 PCIe 80GB, offered in eastus with free quota)" in line
    assert f"`pulumi config set --path aks-gpu:gpuPool.vmSize {A100} -s dev`" in line


def test_the_same_shortage_is_a_warning_in_a_preview(facts):
    warnings = problems(preview(gpuPool={"vmSize": T4}, preflight=facts()))
    assert any("standardNCASv3_T4Family" in w and w.endswith("(a deployment stops here)") for w in warnings)


def test_the_regional_total_counts_every_pool(facts):
    cfg = {
        "gpuPool": {"vmSize": A100},
        "systemPool": {"vmSize": "Standard_D4s_v5", "nodeCount": 3},
        "preflight": facts(usage={"cores": (80, 100)}),
    }
    created, error = deploy(**cfg)
    assert "need 36 vCPUs of 'Total Regional vCPUs' (cores) in eastus: 80 in use, limit 100" in error
    assert "aks-gpu:gpuPool.vmSize" in error and "aks-gpu:systemPool.vmSize Standard_D4s_v5 (3 x 4 vCPUs)" in error


def test_a_spot_pool_draws_on_the_spot_quota_instead_of_its_family(facts):
    """azure-aks-docs spot-node-pool.md: Spot VMs count against the regional Spot quota."""
    short = {"gpuPool": {"vmSize": T4, "spot": True}, "preflight": facts()}
    created, error = deploy(**short)
    assert "'Total Regional Low-priority vCPUs' (lowPriorityCores)" in error
    assert "standardNCASv3_T4Family" not in error, "not the family quota"
    enough = {"gpuPool": {"vmSize": T4, "spot": True}, "preflight": facts(usage={"lowPriorityCores": (0, 8)})}
    assert problems(preview(**enough)) == []


def test_a_pool_that_scales_from_zero_still_needs_one_node_for_the_job(facts):
    cfg = {"gpuPool": {"vmSize": T4, "minCount": 0, "maxCount": 2}, "preflight": facts()}
    created, error = deploy(**cfg)
    assert "(1 x 4 vCPUs) needs 4 vCPUs" in error
    without_job = {**cfg, "mnistJob": {"enabled": False}}
    warnings = problems(preview(**without_job))
    assert [w for w in warnings if "may grow to 8 vCPUs" in w], "maxCount short: a warning only"
    goes_on(**without_job)  # does not stop


def test_room_for_the_start_but_not_for_max_count_is_a_warning(facts):
    cfg = {"gpuPool": {"vmSize": T4, "minCount": 1, "maxCount": 3}, "preflight": facts(usage={"standardNCASv3_T4Family": (0, 8)})}
    [warning] = [w for w in problems(preview(**cfg)) if "standardNCASv3_T4Family" in w]
    assert "may grow to 12 vCPUs" in warning and "the autoscaler would stall" in warning
    assert not warning.endswith("(a deployment stops here)")
    goes_on(**cfg)


def test_a_deployed_pool_counts_only_what_the_change_adds():
    """Azure's usage already counts the nodes a deployed stack runs."""
    cfg = parse({"aks-gpu:gpuPool": json.dumps({"vmSize": T4, "nodeCount": 3})}, "aks-gpu", "dev")
    facts = azure_facts.Facts("test", {}, {}, existing_pools={"gpu": (T4, 2), "system": ("Standard_D2s_v5", 1)})
    gpu, system = capacity.pool_needs(capacity.Demand(cfg.pools, True, cfg.system_pool), facts)
    assert (gpu.nodes, system.nodes) == (1, 0)
    other_size = azure_facts.Facts("test", {}, {}, existing_pools={"gpu": ("Standard_NC8as_T4_v3", 2)})
    assert capacity.pool_needs(capacity.Demand(cfg.pools, True, cfg.system_pool), other_size)[0].nodes == 3, "a new size is a new pool"


# --------------------------------------------------------------------------- the catalog against Azure


def test_azure_disagreeing_with_the_catalog_on_gpus_warns(facts):
    cfg = {"gpuPool": {"vmSize": A100}, "preflight": facts(change={A100: {"GPUs": "2"}})}
    [warning] = [w for w in problems(preview(**cfg)) if "GPU(s) per VM" in w]
    assert "Azure says 2 GPU(s) per VM, this program's catalog 1" in warning
    goes_on(**cfg)  # a warning, not a stop


def test_azure_decides_the_gen2_rule(facts):
    """The catalog says the T4 sizes boot Gen2; where Azure lists V1 only, Azure is right."""
    base = {"preflight": facts(change={T4: {"HyperVGenerations": "V1"}}, usage={"standardNCASv3_T4Family": (0, 8)})}
    [warning] = [w for w in problems(preview(gpuPool={"vmSize": T4}, **base)) if "Hyper-V" in w]
    assert "Azure lists Hyper-V generations V1, this program's catalog Gen2; Azure's list decides" in warning
    created, error = deploy(gpuPool={"vmSize": T4, "gen2": True}, **base)
    assert created == [] and "aks-gpu:gpuPool.gen2 = true but Azure offers Standard_NC4as_T4_v3 as V1 only in eastus" in error


BLOCKING = {
    "retired size": ({}, {}, "Standard_NC6 (NVIDIA Tesla K80) was retired"),
    "not offered": ({"gpuPool": {"vmSize": "Standard_NC6s_v3"}}, {}, "is not offered to this subscription"),
    "not listed": (
        {"gpuPool": {"vmSize": "Standard_NC40ads_H100_v5"}},
        {"drop": ("Standard_NC40ads_H100_v5",)},
        "Azure lists no such size",
    ),
    "family quota": ({"gpuPool": {"vmSize": T4}}, {}, "(standardNCASv3_T4Family)"),
    "regional quota": ({"gpuPool": {"vmSize": A100}}, {"usage": {"cores": (99, 100)}}, "(cores)"),
    "spot quota": ({"gpuPool": {"vmSize": T4, "spot": True}}, {}, "(lowPriorityCores)"),
    "job from zero": ({"gpuPool": {"vmSize": T4, "minCount": 0, "maxCount": 1}}, {}, "(1 x 4 vCPUs) needs 4"),
    "gen2 per Azure": (
        {"gpuPool": {"vmSize": A100, "gen2": True}},
        {"change": {A100: {"HyperVGenerations": "V1"}}},
        "gen2 = true but Azure",
    ),
}


@pytest.mark.parametrize("rule", BLOCKING)
def test_every_blocking_rule_warns_in_a_preview_and_stops_a_deployment(rule, facts):
    overrides, fact_changes, text = BLOCKING[rule]
    cfg = {**overrides, "preflight": facts(**fact_changes)}
    [warning] = [w for w in plan_warnings(preview(**cfg)) if text in w]
    assert warning.endswith("(a deployment stops here)")
    created, error = deploy(**cfg)
    assert created == [], "nothing registered"
    assert any(text in line for line in error.splitlines()[1:])


# --------------------------------------------------------------------------- modes and sources


# The modes decide whether a deployment stops and what it says first: by the plan.


def test_warn_mode_lets_a_deployment_go_on_with_the_warnings():
    plan = goes_on(preflight={"mode": "warn"})
    [warning] = [w for w in plan_warnings(plan) if "retired" in w]
    assert not warning.endswith("(a deployment stops here)")


def test_off_mode_checks_nothing():
    plan = goes_on(preflight={"mode": "off"})
    assert not [w for w in plan_warnings(plan) if w.startswith("preflight") or "retired" in w]


@pytest.mark.parametrize("preview", [True, False])
def test_off_mode_says_in_one_line_that_the_saved_skus_and_usage_are_not_read(preview):
    files = {"skusFile": str(FIXTURES / "eastus-skus.json"), "usageFile": str(FIXTURES / "eastus-usage.json")}
    plan = planned("dev", preview=preview, preflight={"mode": "off", **files})
    assert [w for w in plan_warnings(plan) if "not read" in w] == [
        "aks-gpu:preflight.skusFile and usageFile are not read: aks-gpu:preflight.mode = off skips the VM size and quota checks "
        "they are for; set mode to warn or enforce to check them, or remove them"
    ]


@pytest.mark.parametrize(
    "value, message",
    [
        (
            {"skusFile": "nope.json", "usageFile": "nope.json"},
            r"^invalid config aks-gpu:preflight.skusFile = 'nope.json': expected an existing file",
        ),
        ({"skusFile": str(FIXTURES / "eastus-skus.json")}, r"^invalid config aks-gpu:preflight: skusFile is set without usageFile"),
        ({"mode": "strict"}, r"^invalid config aks-gpu:preflight.mode = 'strict': expected one of enforce, warn, off$"),
    ],
)
def test_bad_preflight_settings_are_config_errors(value, message):
    with pytest.raises(ConfigError, match=message):
        parse({"aks-gpu:preflight": json.dumps(value)}, "aks-gpu", "dev")


def test_the_mock_engine_opens_no_socket_and_says_capacity_was_not_checked(monkeypatch):
    opened = []
    real_connect = socket.socket.connect

    def connect(self, address):
        opened.append(address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: opened.append(a) or (_ for _ in ()).throw(OSError("no")))
    run = run_program("dev", overrides={"gpuPool": {"vmSize": T4}}, preview=False)
    assert opened == []
    assert any(
        w.startswith("preflight: VM size offers and vCPU quota were not checked: the offline render makes no calls") for w in run.warnings
    )


def test_facts_that_cannot_be_had_warn_and_never_block():
    azure = OfflineReader(refuse={"facts": "DefaultAzureCredential failed to retrieve a token"})
    plan = planned_by(azure, "dev", False, gpuPool={"vmSize": T4})
    assert plan.gpu_pools, "not blocked: the deployment goes on to its pools"
    assert any("not checked: HttpResponseError: DefaultAzureCredential failed" in w for w in plan_warnings(plan))
