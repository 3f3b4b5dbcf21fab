"""Every config rule, with good and bad values. A bad value is one line naming the key."""

from __future__ import annotations

import pulumi
import pytest
import yaml
from support.config import parsed, raw, refused

from components import stack as config
from components.errors import ConfigError
from components.stack import parse
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor, run_program
from tools.stack_files import PROJECT_FILE, project_config

# --------------------------------------------------------------------------- defaults


def test_no_config_at_all_gives_the_guide_in_eastus():
    cfg = parse({}, "aks-gpu", "dev")
    assert cfg.location == "eastus"
    assert cfg.gpu_pools[0].vm_size == "Standard_NC6"
    assert cfg.gpu_pools[0].node_count == 1
    assert cfg.gpu_pools[0].name == "gpu"
    assert cfg.device_plugin.namespace == "gpu-resources"
    assert cfg.device_plugin.image == "nvcr.io/nvidia/k8s-device-plugin:v0.18.0"
    # The proof is the shipped script in PyTorch's CUDA 12.8 image, pinned by digest (not the
    # guide's TensorFlow 1.4 image: components/catalog/proof_images.py says why).
    job = cfg.mnist_job
    assert job.image.startswith("pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime@sha256:")
    assert (job.enabled, job.runs_script, job.max_steps, job.max_seconds, job.min_accuracy, job.egress) == (True, True, 500, 120, 0.9, True)
    assert cfg.kubernetes_version is None
    assert cfg.protect is False


def test_default_names_derive_from_project_and_stack_so_stacks_never_collide():
    dev = parse({}, "aks-gpu", "dev")
    prod = parse({}, "aks-gpu", "prod")
    assert (dev.resource_group_name, dev.cluster_name) == ("aks-gpu-dev-rg", "aks-gpu-dev")
    assert {dev.resource_group_name, dev.cluster_name}.isdisjoint({prod.resource_group_name, prod.cluster_name})


def test_a_stack_name_with_a_dot_still_gives_a_valid_cluster_name():
    cfg = parse({}, "aks-gpu", "team.eu")
    assert cfg.cluster_name == "aks-gpu-team-eu"


def test_an_overlong_stack_name_is_refused_with_a_hint_to_set_the_name():
    with pytest.raises(ConfigError, match=r"aks-gpu:clusterName.*set it explicitly"):
        parse({}, "aks-gpu", "x" * 70)


def test_a_partial_object_merges_with_the_defaults():
    cfg = parsed(gpuPool={"nodeCount": 2}, mnistJob={"maxSteps": 100})
    assert cfg.gpu_pools[0].node_count == 2
    assert cfg.gpu_pools[0].vm_size == "Standard_NC6"
    assert cfg.gpu_pools[0].name == "gpu"
    assert cfg.mnist_job.max_steps == 100
    assert cfg.mnist_job.enabled is True


def test_empty_strings_mean_unset_as_declared_in_the_project_file():
    cfg = parsed(resourceGroupName="", clusterName="", kubernetesVersion="")
    assert cfg.cluster_name == "aks-gpu-dev"
    assert cfg.kubernetes_version is None


def test_project_file_declares_the_scalar_keys_with_the_defaults_the_code_uses():
    declared = yaml.safe_load(PROJECT_FILE.read_text())["config"]
    for key in ("resourceGroupName", "clusterName", "kubernetesVersion", "protect"):
        assert {"type", "description", "default"} <= set(declared[key]), key
    # What the CLI would hand the program with no stack config parses to the code's defaults.
    assert parse(project_config(), "aks-gpu", "dev") == parse({}, "aks-gpu", "dev")
    assert declared["azure-native:location"] == {"value": config.DEFAULT_LOCATION}


# --------------------------------------------------------------------------- unknown keys


def test_an_unknown_top_level_key_is_refused_with_a_suggestion():
    message = refused(r"unknown config aks-gpu:gpupool \(did you mean gpuPool\?\)", gpupool={"vmSize": "Standard_NC6"})
    assert "allowed: aks-gpu:resourceGroupName" in message


def test_a_typo_inside_an_object_is_refused_not_ignored():
    refused(
        r"unknown config aks-gpu:gpuPool.vmsize \(did you mean vmSize\?\); allowed: vmSize, nodeCount, .*, name$",
        gpuPool={"vmsize": "Standard_NC6"},
    )


def test_keys_of_other_namespaces_belong_to_their_providers():
    cfg = parse(raw(**{"azure-native__subscriptionId": "0000", "kubernetes__context": "x"}), "aks-gpu", "dev")
    assert cfg.location == "eastus"


@pytest.mark.parametrize("key", ["gpuPool", "systemPool", "devicePlugin", "mnistJob"])
def test_an_object_key_must_be_an_object(key):
    refused(rf"invalid config aks-gpu:{key} = .*expected an object", **{key: "Standard_NC6"})


# --------------------------------------------------------------------------- scalars


@pytest.mark.parametrize("location", ["westeurope", "eastus2", "swedencentral"])
def test_region_names_are_accepted(location):
    assert parsed(**{"azure-native__location": location}).location == location


@pytest.mark.parametrize("location", ["East US", "EASTUS", "east-us", "2eastus"])
def test_display_names_of_regions_are_refused(location):
    refused(r"invalid config azure-native:location = .*lowercase", **{"azure-native__location": location})


@pytest.mark.parametrize("name", ["rg", "my_rg.prod", "(a)-b", "x" * 90])
def test_resource_group_names_azure_accepts(name):
    assert parsed(resourceGroupName=name).resource_group_name == name


@pytest.mark.parametrize("name", ["ends.", "has space", "x" * 91, "slash/"])
def test_resource_group_names_azure_refuses(name):
    refused(r"invalid config aks-gpu:resourceGroupName = .*1-90", resourceGroupName=name)


@pytest.mark.parametrize("name", ["aks", "my_cluster-1", "A" * 63])
def test_cluster_names_azure_accepts(name):
    assert parsed(clusterName=name).cluster_name == name


@pytest.mark.parametrize("name", ["-aks", "aks-", "a.b", "x" * 64])
def test_cluster_names_azure_refuses(name):
    refused(r"invalid config aks-gpu:clusterName = .*1-63", clusterName=name)


@pytest.mark.parametrize("version", ["1.33", "1.34.1", "1.30"])
def test_kubernetes_versions(version):
    assert parsed(kubernetesVersion=version).kubernetes_version == version


@pytest.mark.parametrize("version", ["1.3", "v1.33", "1.33.x", "latest", "2.01"])
def test_bad_kubernetes_versions(version):
    refused(r"invalid config aks-gpu:kubernetesVersion = .*'1.NN' or '1.NN.P'", kubernetesVersion=version)


def test_protect_is_a_boolean():
    assert parsed(protect="true").protect is True
    assert parsed(protect="false").protect is False
    refused(r"invalid config aks-gpu:protect = 'yes': expected true or false", protect="yes")


# --------------------------------------------------------------------------- pools


def test_system_pool_settings():
    cfg = parsed(systemPool={"vmSize": "Standard_D4s_v5", "nodeCount": 3})
    assert cfg.system_pool == config.SystemPoolConfig("Standard_D4s_v5", 3)


def test_a_system_pool_needs_a_node():
    refused(r"invalid config aks-gpu:systemPool.nodeCount = 0: expected a whole number from 1 to 1000", systemPool={"nodeCount": 0})


@pytest.mark.parametrize("size", ["D2s_v5", "xstandard_d2s_v5", "Standard D2s", ""])
def test_vm_sizes_must_be_azure_size_names(size):
    refused(r"invalid config aks-gpu:systemPool.vmSize = .*Azure VM size", systemPool={"vmSize": size})


@pytest.mark.parametrize("name", ["gpu", "gpunp", "a1", "abcdefghijkl"])
def test_gpu_pool_names_aks_accepts(name):
    assert parsed(gpuPool={"name": name}).gpu_pools[0].name == name


@pytest.mark.parametrize("name", ["GPU", "1gpu", "gpu-pool", "abcdefghijklm", ""])
def test_gpu_pool_names_aks_refuses(name):
    refused(r"invalid config aks-gpu:gpuPool.name = .*1-12 lowercase letters and digits", gpuPool={"name": name})


def test_the_gpu_pool_cannot_take_the_system_pools_name():
    refused(r"aks-gpu:gpuPool.name = 'system': 'system' is the System pool's name", gpuPool={"name": "system"})


@pytest.mark.parametrize("count", [-1, 1001, 1.5, "2", True])
def test_gpu_node_count_is_a_whole_number_from_0_to_1000(count):
    refused(r"invalid config aks-gpu:gpuPool.nodeCount = .*expected a whole number from 0 to 1000", gpuPool={"nodeCount": count})


def test_zero_fixed_gpu_nodes_with_the_job_enabled_is_refused():
    message = refused(r"aks-gpu:gpuPool.nodeCount = 0 with aks-gpu:mnistJob.enabled = true", gpuPool={"nodeCount": 0})
    assert "minCount/maxCount" in message


def test_zero_fixed_gpu_nodes_without_the_job_is_allowed():
    assert parsed(gpuPool={"nodeCount": 0}, mnistJob={"enabled": False}).gpu_pools[0].node_count == 0


@pytest.mark.parametrize("flag", ["gen2", "dedicatedVhd", "spot"])
def test_variant_switches_are_booleans(flag):
    refused(rf"invalid config aks-gpu:gpuPool.{flag} = 'yes': expected true or false", gpuPool={flag: "yes"})


# --------------------------------------------------------------------------- kubernetes


@pytest.mark.parametrize("namespace", ["gpu-resources", "nvidia", "a"])
def test_device_plugin_namespaces(namespace):
    assert parsed(devicePlugin={"namespace": namespace}).device_plugin.namespace == namespace


@pytest.mark.parametrize("namespace", ["GPU", "gpu_resources", "-gpu", "x" * 64])
def test_device_plugin_namespace_must_be_a_dns_label(namespace):
    refused(r"invalid config aks-gpu:devicePlugin.namespace = .*DNS label", devicePlugin={"namespace": namespace})


@pytest.mark.parametrize("namespace", ["default", "kube-system"])
def test_device_plugin_namespace_cannot_be_one_the_cluster_owns(namespace):
    refused(r"creates and deletes its namespace", devicePlugin={"namespace": namespace})


def test_the_guides_original_device_plugin_image_is_one_value_away():
    image = "mcr.microsoft.com/oss/nvidia/k8s-device-plugin:1.11"
    assert parsed(devicePlugin={"image": image}).device_plugin.image == image


@pytest.mark.parametrize("image", ["", "has space:1", "https://nvcr.io/x:1", 7])
def test_images_must_be_image_references(image):
    refused(r"invalid config aks-gpu:mnistJob.image = .*container image reference", mnistJob={"image": image})


@pytest.mark.parametrize("steps", [0, -5, "500", 2.5])
def test_max_steps_is_at_least_one(steps):
    refused(r"invalid config aks-gpu:mnistJob.maxSteps = .*whole number from 1", mnistJob={"maxSteps": steps})


def test_mnist_job_switches():
    job = parsed(mnistJob={"enabled": False, "waitForCompletion": False}).mnist_job
    assert (job.enabled, job.wait_for_completion) == (False, False)


# --------------------------------------------------------------------------- nothing half-way


@pytest.mark.parametrize(
    "overrides",
    [
        {"gpuPool": {"name": "GPU-Pool"}},
        {"access": {"deployerObjectId": "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"}},
        {"access": {"mode": "entra", "deployerType": "none", "deployerObjectId": "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"}},
        {"gpuPool": {"dedicatedVhd": True, "vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 2}},
        {"gpuPools": {"t4": {"vmSize": "Standard_NC4as_T4_v3"}}},  # beside the stack's gpuPool
        {"gpuPool": None, "gpuPools": {"t4": {}, "op": {"management": "gpu-operator"}}},
        {"gpuPool": None, "gpuPools": {"Bad": {}}},
        {"existingCluster": {"name": "team-aks"}},
        {"existingCluster": {"name": "team-aks", "resourceGroupName": "team-rg"}, "clusterTier": "Standard"},
    ],
)
@pytest.mark.parametrize("preview", [True, False])
def test_a_config_error_stops_the_program_before_any_resource_is_registered(overrides, preview):
    monitor = RecordingMonitor(AzureMocks())
    with pytest.raises(ConfigError) as error:
        run_program("dev", overrides=overrides, monitor=monitor, preview=preview)
    assert isinstance(error.value, pulumi.RunError), "RunError: the CLI shows no stack trace"
    assert monitor.registrations == []


def test_an_unknown_member_of_an_object_inside_an_object_is_one_line():
    """pydantic reports it as an unexpected keyword argument of the inner dataclass."""
    refused(
        r"^unknown config aks-gpu:cost\.budget\.amout \(did you mean amount\?\); allowed: amount, contactEmails$",
        cost={"budget": {"amount": 5, "amout": 5, "contactEmails": ["a@example.com"]}},
    )


@pytest.mark.parametrize("size", ["Standard_NC4as_t4_v3", "standard_nc4as_t4_v3", "Standard_nc4AS_T4_V3"])
def test_a_catalog_size_in_other_letters_is_refused_with_the_spelling_azure_lists(size):
    """ARM takes a size in any case, but the catalog, the SKU list and the price list match
    names exactly: the stack is told the spelling instead of deploying the size unchecked."""
    refused(
        rf"^invalid config aks-gpu:gpuPool\.vmSize = '{size}': write it as Azure lists it, 'Standard_NC4as_T4_v3' \(",
        gpuPool={"vmSize": size},
    )


def test_a_near_miss_of_a_catalog_size_is_deployed_as_given_with_a_suggestion():
    [warning] = [w for w in parsed(gpuPool={"vmSize": "Standard_NC4as_T4_v4"}).warnings if "catalog" in w]
    assert warning.startswith(
        "aks-gpu:gpuPool.vmSize Standard_NC4as_T4_v4 is not in this program's GPU size catalog (did you mean Standard_NC4as_T4_v3?); deploying it as given"
    )
    [far] = [w for w in parsed(gpuPool={"vmSize": "Standard_NX99_v9"}).warnings if "catalog" in w]
    assert "did you mean" not in far, "no suggestion where nothing is close"
