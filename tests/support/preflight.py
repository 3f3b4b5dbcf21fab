"""The preflight's saved answers (tests/fixtures/preflight/) and a preview's problems."""

from __future__ import annotations

from pathlib import Path

from components.plan import Plan
from support.plan import plan_warnings, planned

FIXTURES = Path(__file__).parent.parent / "fixtures" / "preflight"

T4 = "Standard_NC4as_T4_v3"


def preview(**overrides) -> Plan:
    """The dev stack's preview with `overrides`, as far as its checks: the plan it declares
    from (support/plan.py), whose messages are what the preview prints before it declares."""
    return planned("dev", preview=True, **overrides)


def problems(plan: Plan) -> list[str]:
    """What preflight found, less what it could not read offline (the SKUs when no file is
    given, the permissions: tests/test_failed_destroy.py has those)."""
    unread = ("preflight: VM size offers", "preflight: the permissions a `pulumi destroy`")
    return [w for w in plan_warnings(plan) if not w.startswith(unread)]
