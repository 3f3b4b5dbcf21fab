"""The path says what a module is (docs/layout.md): one package per concern under components/,
each holding its settings, its decisions and the components that declare its resources, on the
shared ground (the catalog, the settings' value types, the seam, the errors). Which module may
import which is import-linter's ([tool.importlinter] in pyproject.toml, `make lint`); which
module declares and which calls out is this module's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.house import per_stack
from support.sources import nodes, parsed, text

ROOT = Path(__file__).resolve().parent.parent
# The modules that declare Pulumi resources: each concern's components, by the class each defines.
# A module that declares none of its own but builds what several components share says why.
DECLARING = {
    "components/cluster/cluster.py": ["GpuCluster"],
    "components/cluster/existing_cluster.py": ["ExistingCluster"],
    "components/pools/gpu_pool.py": ["GpuPool"],
    "components/pools/managed_gpu_pool.py": ["ManagedGpuPoolProvider", "ManagedGpuPool"],
    "components/pools/capacity_expander.py": ["CapacityExpander"],
    "components/gpu_stack/device_plugin.py": ["NvidiaDevicePlugin"],
    "components/gpu_stack/gpu_operator.py": ["GpuOperator"],
    "components/gpu_stack/dcgm_exporter.py": ["DcgmExporter"],
    "components/gpu_stack/network_policy.py": [],  # the NetworkPolicy the Kubernetes components share
    "components/proof/mnist_job.py": ["MnistJob"],
    "components/proof/proof_watch.py": ["ProofWatchProvider", "ProofWatch"],
    "components/cost/budget.py": ["CostBudget"],
    "components/cluster/access_wait.py": ["AccessWaitProvider", "AccessWait"],
    "components/environment/gpu_environment.py": ["GpuEnvironment"],
    "components/environment/gpu_pools.py": ["GpuPools"],
    "components/environment/gpu_stack.py": ["GpuStack"],
    "components/environment/gpu_proof.py": ["GpuProof"],
}


RESOURCE_BASES = {"ComponentResource", "CustomResource", "Resource", "ResourceProvider"}


def classes_deriving(tree: ast.AST) -> list[str]:
    """The classes a module defines on Pulumi's resource bases (pulumi.ComponentResource, a
    dynamic Resource or ResourceProvider, ...)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases}
            if bases & RESOURCE_BASES:
                found.append(node.name)
    return found


def provider_constructors(tree: ast.AST) -> list[str]:
    """Calls of a provider SDK's resource classes (`containerservice.AgentPool(...)`,
    `k8s.core.v1.Namespace(...)`): a capitalised name reached through a module imported from
    pulumi_azure_native or pulumi_kubernetes that is not an `...Args` type."""
    providers = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("pulumi_azure_native", "pulumi_kubernetes"):
            providers |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            providers |= {
                a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] in ("pulumi_azure_native", "pulumi_kubernetes")
            }
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            root = node.func
            while isinstance(root, ast.Attribute):
                root = root.value
            name = node.func.attr
            if isinstance(root, ast.Name) and root.id in providers and name[:1].isupper() and not name.endswith("Args"):
                calls.append(name)
    return calls


def declares(path: Path) -> list[str] | None:
    """The resource classes a module defines, or None where it declares nothing at all."""
    tree = parsed(path)
    classes = classes_deriving(tree)
    return classes if classes or provider_constructors(tree) else None


def test_only_the_components_declare_resources():
    """Each module that declares is one of the components named above, with the classes named
    there; every other module (settings, decisions, the seam, the catalog) declares nothing."""
    found = {str(p.relative_to(ROOT)): declares(p) for p in (ROOT / "components").rglob("*.py")}
    assert {path: classes for path, classes in found.items() if classes is not None} == DECLARING


def imported_modules(path: Path) -> set[str]:
    """The modules of components a module imports, as paths (`from components.x import y` names
    components/x/y.py where that is a module, else components/x.py)."""
    found = set()
    for node in nodes(path):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("components"):
            base = node.module.replace(".", "/")
            for alias in node.names:
                module = ROOT / base / f"{alias.name}.py"
                found.add(str(module.relative_to(ROOT)) if module.exists() else f"{base}.py")
    return found


def test_what_reads_and_decides_imports_no_component():
    """Read, decide, declare, inside each concern: settings, decisions and the seam import no
    module that declares resources; components import each other where one is made of another,
    the plan hands each its Args, and the stack's outputs are made of several."""
    # The plan hands each component its Args, the components' own dataclasses (docs/design/component-args.md);
    # the environment's declaring function constructs them, for the program and the package alike.
    # The package's provider serves the components it lists; what the package refuses reads the plan's Args, as declare.py does.
    above = {
        "components/plan.py",
        "components/outputs.py",
        "components/environment/declare.py",
        "components/environment/provider.py",
        "components/environment/dynamic_host.py",
    }
    deciding = [p for p in (ROOT / "components").rglob("*.py") if str(p.relative_to(ROOT)) not in {*DECLARING, *above}]
    importing = {f"{p.relative_to(ROOT)} imports {m}" for p in deciding for m in imported_modules(p) if m in DECLARING}
    assert sorted(importing) == []


def test_the_rules_above_see_a_resource_where_there_is_one():
    """The two detectors find what they look for: a component class and a typed resource."""
    cluster = parsed(ROOT / "components/cluster/cluster.py")
    assert "GpuCluster" in classes_deriving(cluster)
    assert {"ResourceGroup", "ManagedCluster"} <= set(provider_constructors(cluster))


def test_every_test_module_the_project_names_is_there():
    """Test modules are named after what they test, and a rename or a merge leaves no name
    behind: each test_*.py that the docs, the Makefile, CI, mutation/, the program's comments
    or another test names exists (tests/, or proof/tests/)."""
    import re

    sources = [
        *(ROOT / "docs").glob("*.md"),
        ROOT / "README.md",
        ROOT / "Makefile",
        ROOT / ".ci" / "run",
        *(ROOT / "mutation").glob("*.toml"),
        *(ROOT / ".github" / "workflows").glob("*.yml"),
        ROOT / "__main__.py",
        *(ROOT / "components").rglob("*.py"),
        *(ROOT / "tools").glob("*.py"),
        *(p for p in (ROOT / "tests").glob("*.py") if p.name != Path(__file__).name),
        *(ROOT / "tests" / "support").glob("*.py"),
    ]
    named = {(p, m) for p in sources if p.is_file() for m in re.findall(r"\btest_[a-z0-9_]+\.py\b", text(p))}
    there = {p.name for p in [*(ROOT / "tests").glob("test_*.py"), *(ROOT / "proof" / "tests").glob("test_*.py")]}
    assert sorted(f"{p.relative_to(ROOT)} names {m}" for p, m in named if m not in there) == []


PROGRAM = [ROOT / "__main__.py", *(ROOT / "components").rglob("*.py")]


def test_no_module_of_the_program_asks_whether_it_runs_under_the_mock_engine():
    """The program meets Azure and the cluster through the reader it is handed
    (components/seam/reader.py); what runs for real is what runs under test."""
    asking = [
        str(p.relative_to(ROOT))
        for p in PROGRAM
        if any(word in text(p) for word in ("MockMonitor", "pulumi.runtime.mocks", "runtime import mocks", "under_mock"))
    ]
    assert asking == []


def test_only_the_live_reader_builds_an_azure_credential_in_the_program():
    """One DefaultAzureCredential for a run; the managed pool's provider and the proof's watch,
    in Pulumi's provider host (another process), build their own."""
    building = sorted(str(p.relative_to(ROOT)) for p in PROGRAM if "DefaultAzureCredential()" in text(p))
    assert building == [
        "components/live_reader.py",
        "components/pools/agent_pool_calls.py",
        "components/proof/watch_live.py",
    ]


# The stacks the project ships as examples. The tests run them from their own copies
# (tests/fixtures/stacks/, tests/conftest.py) and reach the project's stack files, whatever
# they are called, only through the per-stack parametrisation over stacks(): a team that
# replaces the samples keeps every test's meaning (README, "Making it yours").
SAMPLES = ("dev", "prod", "team")
SAMPLE_FILE = r"\bPulumi\.(?:dev|prod|team)\.yaml\b|\bsnapshots/(?:dev|prod|team)\b|\bcheckov-aks-(?:dev|prod|team)\.yaml\b"
RUNS_A_STACK = {"run_cached", "run_program", "stack_config", "main"}


def sample_reaches(path: Path) -> list[str]:
    """Where a test module names a sample's file, snapshot or settings at the root, lists the
    stacks to parametrize over, or runs a per-stack test's stack by name (the tests' copy)."""
    import re

    found = []
    samples = {repr(s) for s in SAMPLES}
    for node in nodes(path):
        where = f"{path.name}:{getattr(node, 'lineno', '?')}"
        # The cheap tests first: `ast.unparse` of every node of every test module is most of the time.
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.search(SAMPLE_FILE, node.value):
            found.append(f"{where} names {re.search(SAMPLE_FILE, node.value)[0]}")
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.right, ast.Constant)
            and ast.unparse(node.right) in samples
            and re.search("ROOT|SNAPSHOTS", ast.unparse(node.left))
        ):
            found.append(f"{where} joins {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and len(node.args) == 2 and ast.unparse(node.func).endswith("parametrize"):
            over = ast.unparse(node.args[1])
            if ast.unparse(node.args[0]) == "'stack'" and over != "stacks()" and set(SAMPLES) & set(re.findall(r"'(\w+)'", over)):
                found.append(f"{where} parametrizes over {over}, not stacks()")
        elif isinstance(node, ast.FunctionDef) and per_stack(node):
            for call in (c for c in ast.walk(node) if isinstance(c, ast.Call) and ast.unparse(c.func).split(".")[-1] in RUNS_A_STACK):
                named = "stack" in {n.id for a in call.args[:1] for n in ast.walk(a) if isinstance(n, ast.Name)}
                if named and len(call.args) < 2 and not {k.arg for k in call.keywords} & {"stack_file", "config"}:
                    found.append(f"{where} {node.name} runs the tests' copy of the stack: project_run(stack)")
    return sorted(found, key=lambda line: int(line.split(":")[1].split()[0]))


def test_no_test_reaches_the_projects_sample_stacks_by_name():
    # Not this module (the rule's examples), nor the one that checks the samples as examples
    # while they are there and what a fork without them is told (tests/test_samples.py).
    others = sorted(p for p in (ROOT / "tests").glob("*.py") if p.name not in (Path(__file__).name, "test_samples.py"))
    others += sorted((ROOT / "tests" / "support").glob("*.py"))
    assert [f for p in others for f in sample_reaches(p)] == []


def test_the_rule_above_finds_what_it_looks_for(tmp_path):
    module = tmp_path / "test_x.py"
    module.write_text(
        "@pytest.mark.parametrize('stack', stacks())\ndef test_a(stack):\n    run_cached(stack)\n    project_run(stack)\n"
        "@pytest.mark.parametrize('stack', ['dev', 'ml'])\ndef test_b(stack): pass\n"
        "def test_c():\n    (ROOT / 'Pulumi.prod.yaml').read_text()\n    render.SNAPSHOTS / 'team'\n    run_cached('dev')\n"
    )
    assert sample_reaches(module) == [
        "test_x.py:2 test_a runs the tests' copy of the stack: project_run(stack)",
        "test_x.py:5 parametrizes over ['dev', 'ml'], not stacks()",
        "test_x.py:8 names Pulumi.prod.yaml",
        "test_x.py:9 joins render.SNAPSHOTS / 'team'",
    ]


# What makes a call out of the process: a socket, a subprocess, an Azure SDK client or its
# pipeline, an invoke the program waits on. Not azure-native's `*_output` invokes of a declared
# resource's outputs (cluster.py's credentials): edges of the graph the engine resolves, as a
# resource's outputs (docs/layout.md).
CALLS_OUT = (
    "urllib.request",
    "http.client",
    "socket",
    "subprocess",
    "azure.mgmt",
    "azure.identity",
    "azure.core.pipeline",
    "azure.core.rest",
    "kubernetes",
)
# Exactly the modules that call out of the process, each with why it does so where it is: the
# live reader the program is handed, what only it calls (each in its concern, beside what
# decides on the answer), and what runs in Pulumi's provider host (another process).
CALLING_OUT = {
    "components/live_reader.py": "the live reader: azure-native's invokes and the Azure SDK, one credential for the run",
    "components/seam/aks_client.py": "the AKS management client the pools' reads, the managed pool's provider and the watch build",
    "components/seam/compute.py": "SKUs, quota and scale sets, live, for preflight and the capacity groups",
    "components/cluster/cluster_access.py": "whether the deployer may create Kubernetes objects yet, asked of the API server",
    "components/cluster/kubernetes_read.py": "what an existing cluster runs, read from its API server",
    "components/pools/agent_pools.py": "each GPU pool as it runs, the agentPools GET",
    "components/pools/agent_pool_calls.py": "the managed pool's dynamic provider's agentPools calls, in Pulumi's provider host",
    "components/proof/watch_live.py": "the proof's watch, in Pulumi's provider host: the Job, its pods, their events",
    "components/cost/retail_prices.py": "the Retail Prices API, which has no maintained SDK",
    "components/preflight/permissions_live.py": "the signed-in identity's permissions, ARM's permissions list",
}


def calls_out(path: Path) -> list[str]:
    """Where a module imports what calls out of the process, or makes an invoke."""
    found = []
    for node in nodes(path):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if isinstance(node, ast.Attribute) and node.attr == "invoke":
            names.append("pulumi.runtime.invoke")
        # The Azure SDK's data models (`from azure.mgmt.containerservice import models`) and
        # azure-mgmt-core's resource ID parser (`azure.mgmt.core.tools`) make no call.
        models = isinstance(node, ast.ImportFrom) and ([a.name for a in node.names] == ["models"] or node.module == "azure.mgmt.core.tools")
        found += [f"{node.lineno} {n}" for n in names if n == "pulumi.runtime.invoke" or (n.startswith(CALLS_OUT) and not models)]
    return found


def test_only_the_modules_named_call_out_of_the_process():
    """None but the modules named, and each named one does."""
    calling = {str(path.relative_to(ROOT)) for path in PROGRAM if calls_out(path)}
    assert sorted(calling) == sorted(CALLING_OUT)


def test_the_rule_above_sees_a_call_out_where_there_is_one(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import socket\nfrom azure.identity import DefaultAzureCredential\nx = pulumi.runtime.invoke('t', {})\n")
    assert calls_out(module) == ["1 socket", "2 azure.identity", "3 pulumi.runtime.invoke"]
    assert calls_out(ROOT / "components" / "cost" / "budget.py") == []


# Each check takes what it reads (a pool's settings, the pools, mnistJob, ...), not the whole
# config: the plan holds StackConfig and hands the pieces out, and components/config/ builds
# it (docs/design/component-args.md). The functions that still take it, each with why.
TAKES_THE_CONFIG = {
    "components/preflight/preflight.py:run": "the checks' entry point: it hands each check of Azure its piece, as the plan does",
}
# Where StackConfig is at home: the module that builds it, and the plan that hands it out.
CONFIG_HOMES = ("components/stack.py", "components/plan.py")


def takes_the_config(path: Path) -> list[str]:
    """Each function of a module with a parameter annotated StackConfig."""
    found = []
    for node in nodes(path):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]
            annotations = [ast.unparse(a.annotation) for a in args if a is not None and a.annotation is not None]
            if any("StackConfig" in text for text in annotations):
                found.append(node.name)
    return found


def test_each_check_takes_what_it_reads_not_the_whole_config():
    """Outside the plan and components/config/, no function takes StackConfig but those listed,
    and each listed one still does (a list that outlives its reason fails too)."""
    modules = [str(path.relative_to(ROOT)) for path in PROGRAM]
    taking = [f"{m}:{f}" for m in modules if not m.startswith(CONFIG_HOMES) for f in takes_the_config(ROOT / m)]
    assert sorted(taking) == sorted(TAKES_THE_CONFIG)


def test_the_rule_above_sees_a_parameter_annotated_stack_config(tmp_path):
    (tmp_path / "m.py").write_text(
        "def a(cfg: StackConfig): ...\ndef b(pools: Pools, c: 'config.StackConfig | None' = None): ...\n"
        "def c(job: MnistJobConfig): ...\nclass R:\n    def d(self, *, cfg: StackConfig): ...\n"
    )
    assert sorted(takes_the_config(tmp_path / "m.py")) == ["a", "b", "d"]


# The plan hands out one typed Args per component (docs/design/component-args.md): __main__.py
# reads those and the messages, never a config field, and nothing rewrites the user's config.
PLAN_ARGS = {"cluster", "budget", "gpu_pools", "device_plugin", "dcgm_exporter", "gpu_operator", "expander", "proof", "outputs"}


@pytest.mark.parametrize("path", ["__main__.py", "components/environment/declare.py"])
def test_the_program_reads_no_config_field_only_the_plans_args(path):
    """The program and the package's GpuEnvironment declare through the same function."""
    tree = parsed(ROOT / path)
    read = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "plan"}
    assert read <= PLAN_ARGS, sorted(read - PLAN_ARGS)
    assert not [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in ("cfg", "decided")]


def test_no_module_rewrites_the_users_config_or_which_pools_it_names():
    """The resolved pools are a value of their own (Pools.without, components/plan.py)."""
    rewriting = [
        f"{path.relative_to(ROOT)}:{n.lineno}"
        for path in PROGRAM
        for n in nodes(path)
        if isinstance(n, ast.Call)
        and ast.unparse(n.func).endswith("replace")
        and n.args
        and (ast.unparse(n.args[0]) == "cfg" or ast.unparse(n.args[0]).endswith("pools"))
    ]
    assert rewriting == []
