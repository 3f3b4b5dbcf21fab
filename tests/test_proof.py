"""The proof as the program ships it: the script the Jobs mount, the command line they give it,
what a preview says of each pool's GPU, and the catalog behind that.

The script itself trains only where PyTorch is installed: `make proof-local` runs it and its
own tests (proof/tests/). Here, without PyTorch, it is read as a program: its flags are the
ones the Job passes, and what it prints is one line."""

from __future__ import annotations

import ast
import json

import pytest
from conftest import run_cached
from support.both_modes import declares_the_same_in_both_modes
from support.plan import lines

from components.catalog import gpu_sizes, gpus, proof_images
from components.errors import ConfigError
from components.gpu_stack.settings import DEFAULT_MNIST_IMAGE, GUIDE_MNIST_IMAGE
from components.proof.mnist_job import SCRIPT, ProofScript, script_arguments
from components.stack import parse

JOB = "kubernetes:batch/v1:Job"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"


def script_flags() -> dict[str, dict]:
    """Each `--flag` the script's argparse takes, with its keyword arguments (choices, type)."""
    flags = {}
    for node in ast.walk(ast.parse(SCRIPT.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            keywords = {k.arg: ast.unparse(k.value) for k in node.keywords}
            flags[node.args[0].value] = keywords
    return flags


# --------------------------------------------------------------------------- the script


def test_the_shipped_script_is_python_the_image_can_compile():
    compile(SCRIPT.read_text(), str(SCRIPT), "exec")


@pytest.mark.parametrize("egress", [True, False])
def test_every_flag_the_job_passes_is_one_the_script_takes_with_a_value_it_allows(egress):
    flags = script_flags()
    arguments = script_arguments(ProofScript(120, 0.9), 500, egress)
    for flag, value in zip(arguments[::2], arguments[1::2], strict=True):
        assert flag in flags, flag
        if "choices" in flags[flag]:
            assert value in ast.literal_eval(flags[flag]["choices"]), (flag, value)
    assert arguments[arguments.index("--data") + 1] == ("mnist" if egress else "synthetic")


def test_the_scripts_own_defaults_are_the_configs():
    flags = script_flags()
    job = parse({}, "aks-gpu", "dev").mnist_job
    assert (flags["--max-steps"]["default"], flags["--max-seconds"]["default"], flags["--min-accuracy"]["default"]) == (
        str(job.max_steps),
        str(job.max_seconds),
        str(job.min_accuracy),
    )


def test_the_script_needs_nothing_but_pytorch_and_the_standard_library():
    import sys

    imported = set()
    for node in ast.walk(ast.parse(SCRIPT.read_text())):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
    assert imported - set(sys.stdlib_module_names) == {"torch"}


def test_every_way_the_script_ends_is_one_line_it_prints():
    source = SCRIPT.read_text()
    assert 'finish(f"PROOF FAILED: {failed}")' in source and 'return f"PROOF OK gpu=' in source
    # That line is printed and kept as the container's termination message (finish), the
    # watchdog's too: `pulumi up` prints the message (tests/test_proof_failure_message.py).
    assert 'finish(f"PROOF FAILED: {reason}")' in source and "TERMINATION_LOG.write_bytes(" in source
    # Each failure is a ProofFailed, said in one line (no newline inside a message).
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            assert ast.unparse(node.exc).startswith("ProofFailed("), ast.unparse(node)


# --------------------------------------------------------------------------- what the Job mounts


def test_the_job_mounts_the_script_byte_for_byte_from_an_immutable_config_map_named_by_its_hash():
    run, _ = run_cached("dev")
    config_map = run.one(CONFIG_MAP).inputs
    assert config_map["data"] == {"train_mnist.py": SCRIPT.read_text()}
    assert config_map["immutable"] is True
    assert config_map["metadata"]["name"] == ProofScript(120, 0.9).config_map_name
    job = run.one(JOB)
    assert run.one(CONFIG_MAP).urn in job.dependencies
    assert job.inputs["spec"]["template"]["spec"]["volumes"][1]["configMap"]["name"] == config_map["metadata"]["name"]


# Egress unset is egress on (mnistJob.egress defaults to true): the prod stack as it is, whose
# preview other tests read too. With egress off, the deployment is run, whose plan is its
# preview's (support/modes.py), and its script's ConfigMap is egress on's preview's.
@pytest.mark.parametrize("egress", [True, False])
def test_a_deployment_registers_the_script_before_each_pools_job_as_a_preview_shows_it(egress):
    """The prod stack deploys (its T4 size passes preflight): the same ConfigMap and Jobs as
    its preview, each Job after the script and its own pool."""
    job = {} if egress else {"mnistJob": {"egress": False}}
    if not egress:
        declares_the_same_in_both_modes("prod", **job)
    runs = [run_cached("prod", preview=True)[0], run_cached("prod", preview=False, **job)[0]]
    for run in runs[0 if egress else 1 :]:
        job = run.one(JOB)
        assert run.one(CONFIG_MAP).urn in job.dependencies
        args = job.inputs["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[args.index("--data") + 1] == ("mnist" if egress else "synthetic")
    preview, deployment = (run.one(CONFIG_MAP).inputs for run in runs)
    assert preview == deployment


def test_a_changed_script_is_a_new_config_map_and_so_a_new_pod_template_which_replaces_the_job():
    """A Job's pod template cannot change in place: pulumi-kubernetes replaces the Job
    (provider/pkg/provider/diff.go, `.spec.template` of batch/v1 Job), and it trains again."""
    today, changed = ProofScript(120, 0.9), ProofScript(120, 0.9, source=SCRIPT.read_text() + "\n# changed\n")
    assert today.config_map_name != changed.config_map_name
    assert today.config_map_name.startswith("mnist-proof-") and len(today.config_map_name) == len("mnist-proof-") + 8


def test_the_guides_image_runs_as_the_guide_runs_it_with_no_script(program):
    run = program(mnistJob={"image": GUIDE_MNIST_IMAGE, "maxSteps": 40})
    container = run.one(JOB).inputs["spec"]["template"]["spec"]["containers"][0]
    assert "command" not in container and container["args"] == ["--max_steps", "40"]
    assert run.of_type(CONFIG_MAP) == []


# Another image, told what to prove: one run for both tests below.
OTHER_IMAGE = {"image": "myregistry.azurecr.io/pytorch:2.9", "maxSteps": 800, "maxSeconds": 90, "minAccuracy": 0.97}


def test_another_image_runs_the_script_unless_told_to_run_its_own_entrypoint(program):
    script = program(mnistJob=OTHER_IMAGE).one(JOB)
    assert script.inputs["spec"]["template"]["spec"]["containers"][0]["command"] == ["python", "/opt/aks-gpu/train_mnist.py"]
    own = program(mnistJob={"image": "myregistry.azurecr.io/mnist:gpu", "run": "image"}).one(JOB)
    assert own.inputs["spec"]["template"]["spec"]["containers"][0]["args"] == ["--max_steps", "500"]


def test_what_the_job_is_told_to_prove_comes_from_the_config(program):
    args = program(mnistJob=OTHER_IMAGE).one(JOB).inputs["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args == ["--max-steps", "800", "--max-seconds", "90", "--min-accuracy", "0.97", "--data", "mnist", "--data-dir", "/tmp/mnist"]


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "job, refused",
    [
        (
            {"image": GUIDE_MNIST_IMAGE, "run": "script"},
            "aks-gpu:mnistJob.run = 'script': the guide's image has TensorFlow 1.4 and no PyTorch",
        ),
        (
            {"image": GUIDE_MNIST_IMAGE, "minAccuracy": 0.5},
            "aks-gpu:mnistJob.minAccuracy = 0.5: only the shipped script takes --min-accuracy",
        ),
        ({"run": "image", "maxSeconds": 60}, "aks-gpu:mnistJob.maxSeconds = 60: only the shipped script takes --max-seconds"),
        (
            {"image": f"{GUIDE_MNIST_IMAGE}@sha256:{'a' * 64}", "egress": False},
            "aks-gpu:mnistJob.egress = false: the guide's image downloads MNIST",
        ),
        ({"minAccuracy": 0}, "aks-gpu:mnistJob.minAccuracy = 0: expected a fraction above 0 and at most 1"),
        ({"minAccuracy": 1.01}, "aks-gpu:mnistJob.minAccuracy = 1.01: expected a fraction above 0 and at most 1"),
        ({"maxSeconds": 9}, "aks-gpu:mnistJob.maxSeconds = 9: expected a whole number from 10 to 3600"),
        ({"run": "both"}, "aks-gpu:mnistJob.run = 'both': expected one of script, image"),
    ],
)
def test_a_proof_that_cannot_do_what_is_asked_is_refused_in_one_line(job, refused):
    with pytest.raises(ConfigError, match="^invalid config ") as error:
        parse({"aks-gpu:mnistJob": json.dumps(job)}, "aks-gpu", "dev")
    assert str(error.value).startswith(f"invalid config {refused}") and "\n" not in str(error.value)


# --------------------------------------------------------------------------- what a preview says


def preview_of(size: str, **job):
    return lines(gpuPool={"vmSize": size}, **({"mnistJob": job} if job else {}))


def test_a_preview_names_each_pools_gpu_compute_capability_and_driver_and_says_the_proof_runs():
    said = preview_of("Standard_NC4as_T4_v3")
    assert (
        "proof: aks-gpu:gpuPool Standard_NC4as_T4_v3: 1 x NVIDIA Tesla T4 16GB (compute capability 7.5), AKS installs the "
        "CUDA driver 580.159.04; PyTorch 2.9.1 on CUDA 12.8 runs on it"
    ) in said.infos
    assert not [w for w in said.warnings if "cannot be expected to run there" in w]


def test_the_guides_image_on_a_turing_or_later_gpu_is_warned_with_why():
    said = preview_of("Standard_NV36ads_A10_v5", image=GUIDE_MNIST_IMAGE)
    [warning] = [w for w in said.warnings if "mnistJob.image " in w]
    assert warning.startswith(
        "aks-gpu:gpuPool.vmSize Standard_NV36ads_A10_v5 (NVIDIA A10 24GB, compute capability 8.6) with aks-gpu:mnistJob.image "
        "mcr.microsoft.com/azuredocs/samples-tf-mnist-demo:gpu: TensorFlow 1.4 on CUDA 8 (2017) cannot be expected to run there: "
        "its CUDA knows compute capabilities up to 6.2"
    )
    assert "nvidia-docker#1106" in warning and warning.endswith("remove mnistJob.image for the PyTorch proof")


def test_a_run_says_once_as_information_not_a_warning_that_the_job_is_the_guides_successor():
    said = lines()
    [line] = [i for i in said.infos if "the successor of the guide's image" in i]
    assert line.startswith("proof: the Job runs the shipped proof/train_mnist.py in PyTorch")
    assert "(TensorFlow 1.4 on CUDA 8 (2017)), which cannot be expected to run on any GPU AKS still creates" in line
    assert line.endswith(f"set aks-gpu:mnistJob.image to {GUIDE_MNIST_IMAGE} for the guide's")
    assert not [w for w in said.warnings if w.startswith("aks-gpu:mnistJob.image") or "successor" in w]
    for chosen in (GUIDE_MNIST_IMAGE, "registry.example/team/mnist:1"):
        assert not [i for i in lines(mnistJob={"image": chosen}).infos if "the successor of the guide's image" in i]
    assert not [i for i in lines(mnistJob={"enabled": False}).infos if "the successor of the guide's image" in i]


def test_several_pools_hear_of_the_guides_image_once():
    pools = {"a": {"vmSize": "Standard_NC4as_T4_v3"}, "b": {"vmSize": "Standard_NC8as_T4_v3"}}
    said = lines(gpuPool=None, gpuPools=pools)
    assert len([i for i in said.infos if "the successor of the guide's image" in i]) == 1


def test_the_guides_image_on_the_guides_k80_is_not_warned_about_its_cuda():
    said = preview_of("Standard_NC6", image=GUIDE_MNIST_IMAGE)
    assert not [w for w in said.warnings if "cannot be expected to run there" in w]
    assert [w for w in said.warnings if "retired by Azure" in w], "the size itself is retired: that is warned"


def test_the_pytorch_proof_on_a_gpu_older_than_its_kernels_is_warned():
    said = preview_of("Standard_NC6")
    [warning] = [w for w in said.warnings if "mnistJob.image pytorch" in w]
    assert "none of which runs on compute capability 3.7" in warning and warning.endswith("pick a GPU of compute capability 7.0 or later")


def test_an_image_the_program_does_not_know_is_said_to_be_its_own_affair():
    said = preview_of("Standard_NC4as_T4_v3", image="myregistry.azurecr.io/pytorch:2.9")
    assert any(
        "myregistry.azurecr.io/pytorch:2.9 (the shipped script in its python), an image this program does not know" in i for i in said.infos
    )


def test_gpu_operator_pools_name_the_operators_driver():
    said = lines(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "management": "gpu-operator"})
    assert any("(compute capability 7.5), the GPU Operator's driver;" in i for i in said.infos)


def test_mig_slices_are_named_in_the_pools_line():
    said = lines(gpuPool={"vmSize": "Standard_NC24ads_A100_v4", "migProfile": "MIG1g", "gen2": True})
    assert any("1 x NVIDIA A100 PCIe 80GB in 7 MIG slices (MIG1g) (compute capability 8.0)" in i for i in said.infos)


def test_without_the_job_nothing_is_said_of_the_proof():
    said = lines(gpuPool={"vmSize": "Standard_NC4as_T4_v3"}, mnistJob={"enabled": False})
    assert not [i for i in said.infos if i.startswith("proof:")]


# --------------------------------------------------------------------------- the catalog


@pytest.mark.parametrize(
    "size, capability, driver",
    [
        ("Standard_NC4as_T4_v3", (7, 5), "580.159.04"),
        ("Standard_NV36ads_A10_v5", (8, 6), "570.211.01"),
        ("Standard_NC24ads_A100_v4", (8, 0), "580.159.04"),
        ("Standard_NC40ads_H100_v5", (9, 0), "580.159.04"),
        ("Standard_ND96isr_H200_v5", (9, 0), "580.159.04"),
        ("Standard_NC144ds_xl_RTXPRO6000BSE_v6", (12, 0), "595.58.03"),
        ("Standard_ND128isr_NDR_GB200_v6", (10, 0), "580.159.04"),
        ("Standard_ND128isr_GB300_v6", (10, 3), "580.159.04"),
    ],
)
def test_the_proof_image_runs_on_every_gpu_azure_sells_today_on_the_driver_aks_installs(size, capability, driver):
    found = gpu_sizes.CATALOG[size]
    assert found.gpu.capability == capability and found.driver.version == driver
    assert proof_images.PYTORCH.runs_on(capability)
    assert found.driver.branch >= proof_images.PYTORCH.driver_branch
    assert not proof_images.GUIDE.runs_on(capability)


def test_every_current_nvidia_size_runs_the_proof_image():
    for size in gpu_sizes.CATALOG.values():
        if size.retired is None and size.gpu.nvidia:
            assert proof_images.PYTORCH.runs_on(size.gpu.capability), size.name


def test_a_cubin_runs_on_a_later_minor_version_of_its_major_only():
    """NVIDIA's binary compatibility: X.y runs on X.z for z >= y."""
    image = proof_images.PYTORCH
    assert image.runs_on((8, 9)) and image.runs_on((10, 3)) and image.runs_on((12, 1))
    assert not image.runs_on((6, 1)) and not image.runs_on((11, 0)) and not image.runs_on((13, 0))


def test_the_default_image_is_pinned_by_digest_and_known_by_its_repository():
    assert DEFAULT_MNIST_IMAGE == proof_images.PYTORCH.reference and "@sha256:" in DEFAULT_MNIST_IMAGE
    assert proof_images.known(f"{GUIDE_MNIST_IMAGE}@sha256:{'b' * 64}") is proof_images.GUIDE
    assert proof_images.known("pytorch/pytorch:2.10.0-cuda12.8-cudnn9-runtime") is proof_images.PYTORCH
    assert proof_images.known("myregistry.azurecr.io:5000/pytorch/pytorch:2.9") is None
    assert proof_images.repository("localhost:5000/mnist:gpu") == "localhost:5000/mnist"


@pytest.mark.parametrize("size", ["Standard_ND96isr_MI300X_v5", "Standard_NV24ads_V710_v5", "Standard_NV32as_v4"])
def test_a_size_whose_gpu_is_not_nvidia_is_refused_saying_so(size):
    with pytest.raises(
        ConfigError,
        match=rf"aks-gpu:gpuPool.vmSize = '{size}': .* an AMD GPU, which neither the NVIDIA device plugin nor the CUDA proof can use",
    ):
        parse({"aks-gpu:gpuPool": json.dumps({"vmSize": size, "gen2": True})}, "aks-gpu", "dev")


def test_a_partial_gpu_size_is_flagged_for_what_it_gives():
    [warning] = [
        w for w in parse({"aks-gpu:gpuPool": json.dumps({"vmSize": "Standard_NV6ads_A10_v5"})}, "aks-gpu", "dev").warnings if "vmSize" in w
    ]
    assert warning.startswith("aks-gpu:gpuPool.vmSize Standard_NV6ads_A10_v5 has 1/6 of one NVIDIA A10 24GB: one nvidia.com/gpu per node")
    assert "GRID driver 570.211.01" in warning and "no MIG" in warning


@pytest.mark.parametrize("size", ["Standard_NC144ds_xl_RTXPRO6000BSE_v6", "Standard_ND128isr_NDR_GB200_v6", "Standard_NCC40ads_H100_v5"])
def test_a_size_aks_does_not_document_is_deployed_as_given_with_why(size):
    warnings = parse({"aks-gpu:gpuPool": json.dumps({"vmSize": size, "gen2": True})}, "aks-gpu", "dev").warnings
    assert [w for w in warnings if w.startswith(f"aks-gpu:gpuPool.vmSize {size}: ") and w.endswith("; deploying it as given")]


def test_nvv3_and_nvv4_are_retired_on_2026_09_30_with_current_successors():
    for name in ("Standard_NV12s_v3", "Standard_NV48s_v3", "Standard_NV4as_v4"):
        size = gpu_sizes.retirement(name)
        assert size is not None and str(size.retired) == "2026-09-30"
        assert gpu_sizes.CATALOG[size.replacement].retired is None


def test_multi_instance_gpu_is_on_whole_a100_h100_and_h200_gpus_only():
    mig = {s.gpu.model for s in gpu_sizes.CATALOG.values() if s.mig}
    assert mig == {gpus.GPUS[g].model for g in ("A100_PCIE", "A100_SXM", "H100_NVL", "H100_SXM", "H200")}


def test_a_retired_sizes_suggestions_are_whole_nvidia_gpus_aks_documents():
    for alternative in gpu_sizes.alternatives("Standard_NC6"):
        assert alternative.gpu.nvidia and alternative.share == 1 and alternative.not_on_aks is None and alternative.retired is None
    assert gpu_sizes.alternatives("Standard_NC6")[0].gpu is gpus.GPUS["T4"], "the oldest architecture that is still sold comes first"


def test_the_docs_say_the_images_size_and_disk_from_the_catalog():
    """One figure in one place (components/catalog/proof_images.py): docs/proof.md quotes it."""
    from components.catalog import proof_images

    image = proof_images.PYTORCH
    page = " ".join((SCRIPT.parents[1] / "docs" / "proof.md").read_text().split())
    assert image.disk_gb == image.download_gb + image.unpacked_gb
    assert (
        f"About {image.download_gb} GB to download, {image.unpacked_gb} GB unpacked, and so about {image.disk_gb} GB of the node's OS disk"
        in page
    )
