"""An API server limited to authorized IP ranges answers nobody else, so a preview says where
`pulumi` must run, as it does for a private cluster: one line, with the ranges, in a cluster
the stack joins and in one it creates."""

from __future__ import annotations

import json
import re

import pytest
from conftest import run_cached

from tools.azure_mocks import existing_cluster
from tools.render import SNAPSHOTS
from tools.stack_files import ROOT, stacks

T4 = "Standard_NC4as_T4_v3"
TEAM = {"resourceGroupName": "team-rg", "name": "team-aks"}
LINE = "limits its API server to authorized IP ranges"


def limited(*ranges: str) -> dict:
    return existing_cluster(apiServerAccessProfile={"authorizedIPRanges": list(ranges)})


def range_lines(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "authorized IP ranges" in w or "authorizedIpRanges" in w]


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_an_existing_cluster_with_authorized_ranges_says_where_pulumi_must_run(preview):
    run = run_cached(
        "dev", preview=preview, cluster=limited("203.0.113.0/24", "198.51.100.7/32"), existingCluster=TEAM, gpuPool={"vmSize": T4}
    )[0]
    (line,) = range_lines(run.warnings)
    assert line.startswith(
        "aks-gpu:existingCluster team-rg/team-aks limits its API server to authorized IP ranges (203.0.113.0/24, 198.51.100.7/32): "
        "`pulumi preview` and `pulumi up` must run from an address in them"
    )
    assert "GitHub-hosted runners' addresses are not in them unless added" in line
    assert line.endswith("(docs/deploying.md, authorized IP ranges)")
    assert run.resources, "it stops nothing: the Azure steps work from anywhere"


def test_an_existing_cluster_open_to_any_address_says_nothing_of_ranges():
    run = run_cached("dev", cluster=existing_cluster(), existingCluster=TEAM, gpuPool={"vmSize": T4})[0]
    assert range_lines(run.warnings) == []


def test_many_ranges_are_shortened_to_the_first_five_and_a_count():
    ranges = [f"203.0.113.{i}/32" for i in range(8)]
    run = run_cached("dev", cluster=limited(*ranges), existingCluster=TEAM, gpuPool={"vmSize": T4})[0]
    (line,) = range_lines(run.warnings)
    assert "(203.0.113.0/32, 203.0.113.1/32, 203.0.113.2/32, 203.0.113.3/32, 203.0.113.4/32 and 3 more)" in line


def test_the_placeholder_that_admits_only_the_cluster_itself_is_named():
    run = run_cached("dev", cluster=limited("0.0.0.0/32"), existingCluster=TEAM, gpuPool={"vmSize": T4})[0]
    (line,) = range_lines(run.warnings)
    assert "(0.0.0.0/32 (the cluster's own outbound address))" in line


def test_a_cluster_this_program_creates_with_authorized_ranges_says_the_same():
    run = run_cached("dev", gpuPool={"vmSize": T4}, access={"authorizedIpRanges": ["203.0.113.0/24"]})[0]
    (line,) = range_lines(run.warnings)
    assert line.startswith(
        "aks-gpu:access.authorizedIpRanges: the API server answers only 203.0.113.0/24 (and the cluster's own addresses, "
        "which AKS adds): `pulumi up`, `preview` and `destroy` must run from an address in them"
    )
    assert "GitHub-hosted runners' addresses are not in them unless added" in line
    assert range_lines(run_cached("dev", gpuPool={"vmSize": T4})[0].warnings) == []


def urn_glob_matches(glob: str, urn: str) -> bool:
    """The engine's URN glob: `**` matches anything, `*` anything but `:` (pulumi/pulumi
    pkg/resource/deploy/deployment.go, UrnTargets.getMatcher)."""
    segments = ["[^:]*".join(re.escape(part) for part in segment.split("*")) for segment in glob.split("**")]
    return re.fullmatch(".*".join(segments), urn) is not None


@pytest.mark.parametrize("stack", stacks())
def test_the_outside_runners_refresh_leaves_out_every_kubernetes_object_and_no_azure_resource(stack):
    """docs/lifecycle.md's `pulumi refresh --exclude` for a runner outside the authorized ranges
    skips what needs the API server, and still refreshes the cluster and its GPU pools."""
    docs = (ROOT / "docs" / "lifecycle.md").read_text()
    glob = re.search(r"pulumi refresh --exclude '([^']+)'", docs).group(1)
    resources = json.loads((SNAPSHOTS / stack / "resources.json").read_text())
    kubernetes = {r["urn"] for r in resources if r["type"].startswith("kubernetes:")}
    azure = {r["urn"] for r in resources if r["type"].startswith("azure-native:")}
    assert kubernetes and azure
    assert all(urn_glob_matches(glob, urn) for urn in kubernetes)
    assert not any(urn_glob_matches(glob, urn) for urn in azure)
