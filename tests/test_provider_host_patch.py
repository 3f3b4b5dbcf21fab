"""The one change the program makes inside Pulumi's SDK (components/seam/provider_host_patch.py):
the dynamic provider host taught to send a `pulumi.RunError` as its message alone, anything else
with its traceback; the SDK releases it is read for, held to pyproject.toml's bound on pulumi;
and where it cannot hold (another SDK, a host of another shape), a warning at preview and one
line on the host's stderr. What then reaches the CLI from the real host:
tests/test_managed_pool_errors.py."""

from __future__ import annotations

import io
import sys
import traceback
import types
from pathlib import Path

import pulumi
import pytest
from conftest import ROOT

from components.pools import managed_gpu_pool as mgp
from components.seam import provider_host_patch

# --------------------------------------------------------------------------- the host's formatter


def a_host() -> types.ModuleType:
    """A module shaped as the SDK's host is when the CLI runs it (`-m pulumi.dynamic`)."""
    host = types.ModuleType("__main__")
    host.__spec__ = types.SimpleNamespace(name=provider_host_patch.HOST_MODULE)  # type: ignore[assignment]
    host._abort_with_traceback = lambda fn: fn  # type: ignore[attr-defined]
    host.traceback = traceback  # type: ignore[attr-defined]
    return host


def formatted(host: types.ModuleType, error: Exception) -> str:
    try:
        raise error
    except Exception:  # noqa: BLE001 - any error, as the host's wrapper catches it
        return host.traceback.format_exc()  # type: ignore[attr-defined]


def test_the_host_sends_a_run_error_as_its_message_and_anything_else_as_its_traceback():
    host = a_host()
    assert provider_host_patch.send_one_line(host) and provider_host_patch.send_one_line(host), "once, and again harmlessly"
    assert formatted(host, pulumi.RunError("one line")) == "one line"
    assert formatted(host, KeyError("x")).startswith("Traceback (most recent call last):")
    assert host.traceback.format_list is traceback.format_list  # type: ignore[attr-defined]


def test_outside_the_host_nothing_changes():
    """In the program (or a test) `__main__` is not the SDK's host: nothing is touched."""
    before = getattr(sys.modules.get("__main__"), "traceback", None)
    assert provider_host_patch.send_one_line() is False
    assert getattr(sys.modules.get("__main__"), "traceback", None) is before
    other = a_host()
    other.traceback = types.SimpleNamespace(format_exc=lambda: "another host's")  # type: ignore[attr-defined]
    assert provider_host_patch.send_one_line(other) is False, "a host of another shape is left as it is"


# --------------------------------------------------------------------------- the SDKs the patch holds for


def pyproject() -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pytest's own dependency on Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def pulumi_requirement(path: Path) -> str:
    [line] = [line for line in path.read_text().splitlines() if line.startswith("pulumi") and line.split("=")[0].rstrip("<>!~") == "pulumi"]
    return line


def test_the_sdk_range_is_the_one_pyproject_bounds_pulumi_to_and_the_lock_pins_inside_it():
    """A newer SDK comes only with its host read again: pyproject.toml's bound, which a
    Dependabot PR raises, fails here until SDK_RANGE is raised with it."""
    from packaging.requirements import Requirement

    (low_major, low_minor), (high_major, high_minor) = provider_host_patch.SDK_RANGE
    [declared] = [d for d in pyproject()["project"]["dependencies"] if Requirement(d).name == "pulumi"]
    bounds = {str(s) for s in Requirement(declared).specifier}
    assert bounds == {f">={low_major}.{low_minor}", f"<{high_major}.{high_minor + 1}"}
    locked = pulumi_requirement(ROOT / "requirements.txt").split("==")[1].split()[0]
    assert provider_host_patch.in_range(locked), locked
    assert provider_host_patch.in_range(provider_host_patch.installed_host()[0])


def installed_source() -> str:
    source = provider_host_patch.installed_host()[1]
    assert source is not None
    return source


@pytest.mark.parametrize("version", ["3.260.0", "3.272.0", "3.272.4"])
def test_the_range_s_ends_with_the_host_s_shape_warn_nothing(version):
    assert provider_host_patch.host_warning(version, installed_source()) is None


@pytest.mark.parametrize("version", ["3.259.0", "3.273.0", "4.0.0", "unknown"])
def test_an_sdk_outside_the_range_is_one_warning_naming_it_and_the_range(version):
    said = provider_host_patch.host_warning(version, installed_source())
    assert said is not None and "\n" not in said
    assert said.startswith(f"pulumi SDK {version} is outside ") and "(pulumi 3.260 to 3.272)" in said


@pytest.mark.parametrize(
    "change",
    [
        ("def _abort_with_traceback(", "def _abort(", 1),  # the wrapper renamed
        ("traceback.format_exc()", "format_exception_text()", -1),  # the text made another way
        ("import traceback\n", "import traceback as tb\n", 1),  # the name the patch replaces gone
    ],
)
def test_a_host_of_another_shape_is_one_warning_naming_the_version_and_the_range(change):
    old, new, count = change
    source = installed_source()
    assert old in source
    said = provider_host_patch.host_warning("3.272.0", source.replace(old, new, count))
    assert said is not None and "\n" not in said
    assert said.startswith("pulumi SDK 3.272.0 has a dynamic provider host of another shape than ") and "(pulumi 3.260 to 3.272)" in said
    assert provider_host_patch.host_warning("3.272.0", None) == said, "no host module at all"


@pytest.mark.parametrize("preview", [True, False])
def test_a_run_whose_sdk_the_patch_does_not_hold_for_warns_once_for_the_managed_pool(monkeypatch, preview):
    from tools.azure_mocks import AzureMocks
    from tools.mock_engine import RecordingMonitor, run_program

    source = installed_source()
    monkeypatch.setattr(provider_host_patch, "installed_host", lambda: ("3.273.0", source))
    monitor = RecordingMonitor(AzureMocks(feature_state="Registered"))
    run = run_program(
        "dev", overrides={"gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "dedicatedVhd": True}}, monitor=monitor, preview=preview
    )
    said = [w for w in run.warnings if "one-line errors" in w]
    assert len(said) == 1 and "pulumi SDK 3.273.0 is outside" in said[0]


def test_the_sdk_this_suite_runs_adds_no_warning(program):
    assert not [w for w in program(gpuPool={"vmSize": "Standard_NC4as_T4_v3", "dedicatedVhd": True}).warnings if "one-line errors" in w]


def test_a_host_the_patch_cannot_change_says_so_on_its_stderr_and_keeps_its_errors(capsys):
    """configure, outside the SDK's host or in one of another shape: one line on stderr (the
    CLI shows a dynamic provider's stderr), and the host's own text for every error."""
    mgp.ManagedGpuPoolProvider().configure(None)  # type: ignore[arg-type]
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and said.startswith("aks-gpu: the AKS-managed pool's provider runs in a host it cannot teach")
    assert f"pulumi SDK {provider_host_patch.installed_host()[0]}, checked for pulumi 3.260 to 3.272" in said
    other = a_host()
    del other._abort_with_traceback  # type: ignore[attr-defined]
    assert provider_host_patch.tell_if_unpatched(io.StringIO()) is False and provider_host_patch.send_one_line(other) is False
    assert formatted(other, pulumi.RunError("Azure answered 403")).rstrip().endswith("pulumi.errors.RunError: Azure answered 403")
