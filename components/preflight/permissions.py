"""Whether the signed-in identity may create the stack's budget (aks-gpu:cost.budget) at the
subscription's scope, and what a `pulumi destroy` by it could not delete, read from ARM's
effective permissions (components/preflight/permissions_live.py) before anything is created. A
missing budget write is a preflight check; a missing delete blocks nothing. The rules and sources
(the operations list, role-definitions.md, azure-rest-api-specs authorization 2022-04-01):
docs/design/preflight.md, "The permissions read, and its sources"."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.errors import cut
from components.seam.reader import BadAnswer

BUDGET_WRITE = "Microsoft.Consumption/budgets/write"
# The members `allows` reads of each permission (azure-rest-api-specs authorization 2022-04-01
# Permission: `actions` and `notActions`, arrays of strings).
PATTERNS = ("actions", "notActions")


def _matches(pattern: str, action: str) -> bool:
    """`*` matches any run of characters, case aside: the pieces between the stars found in order,
    each at its leftmost place, which is linear (a regex of many `.*` backtracks)."""
    first, *middle, last = pattern.lower().split("*") if "*" in pattern else (pattern.lower(), None)
    action = action.lower()
    if last is None:
        return action == first
    if not action.startswith(first) or len(action) < len(first) + len(last) or not action.endswith(last):
        return False
    at, end = len(first), len(action) - len(last)
    for piece in middle:
        found = action.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def shape_problem(permissions: Any) -> str | None:
    """How an answer is not ARM's list of permissions, each `actions` and `notActions` a list of
    strings, or None: a string would be read letter by letter, `"*"` granting all."""
    if not isinstance(permissions, list):
        return f"the answer is {type(permissions).__name__}, not a list of permissions"
    for index, permission in enumerate(permissions):
        if not isinstance(permission, Mapping):
            return f"value[{index}] is {type(permission).__name__}, not a permission (an object)"
        for member in PATTERNS:
            patterns = permission.get(member)
            if patterns is not None and not (isinstance(patterns, list) and all(isinstance(p, str) for p in patterns)):
                return f"value[{index}].{member} is {cut(json.dumps(patterns, default=str))}, not a list of strings"
    return None


def allows(permissions: Iterable[Mapping[str, Any]], action: str) -> bool:
    """Does any permission grant `action`: an `actions` pattern matches it and no `notActions`
    pattern of the same permission does? An answer of another shape raises BadAnswer."""
    if problem := shape_problem(permissions):
        raise BadAnswer(f"Azure's list of permissions: {problem}")
    return any(
        any(_matches(p, action) for p in permission.get("actions") or [])
        and not any(_matches(p, action) for p in permission.get("notActions") or [])
        for permission in permissions
    )


def budget_problem(permissions: Sequence[Mapping[str, Any]], subscription_id: str) -> str | None:
    """What preflight says when the identity cannot create the budget, or None."""
    if allows(permissions, BUDGET_WRITE):
        return None
    return (
        f"cost.budget: the signed-in identity lacks {BUDGET_WRITE} at subscription {subscription_id}, where the "
        "budget is created (its permissions there, as Azure lists them); created before the GPU pools, it would fail with "
        "403 after the cluster: ask for Cost Management Contributor on the subscription, or remove aks-gpu:cost.budget "
        "(docs/deploying.md)"
    )


# What a destroy deletes, by the action Azure checks ("Microsoft.Consumption/budgets/delete",
# "Microsoft.Authorization/roleAssignments/delete", ...: Azure's resource provider operations
# list) and the smallest built-in role that has it (Azure's built-in roles: Contributor's
# notActions take Microsoft.Authorization/*/Delete away).
BUDGET_DELETE = "Microsoft.Consumption/budgets/delete"
GRANT_DELETE = "Microsoft.Authorization/roleAssignments/delete"
POOL_DELETE = "Microsoft.ContainerService/managedClusters/agentPools/delete"
CLUSTER_DELETE = "Microsoft.ContainerService/managedClusters/delete"
GROUP_DELETE = "Microsoft.Resources/subscriptions/resourceGroups/delete"
GRANT_ROLES = "Owner, User Access Administrator or Role Based Access Control Administrator"


@dataclass(frozen=True)
class Need:
    action: str
    what: str  # what a destroy deletes with it
    role: str  # the smallest built-in role that has it


def destroy_problem(permissions: Sequence[Mapping[str, Any]], scope: str, needs: Sequence[Need]) -> str | None:
    """What preflight says when the identity could not delete something of the stack, or None."""
    missing = [n for n in needs if not allows(permissions, n.action)]
    if not missing:
        return None
    listed = "; ".join(f"{n.action} ({n.what}: {n.role})" for n in missing)
    return (
        f"destroy: the signed-in identity lacks {listed} at {scope} (its permissions there, as Azure lists them); a "
        "`pulumi destroy` by it would stop there and leave that, and what waits for it, in Azure and in the state until an "
        "identity that has them runs `pulumi destroy` again: ask for the role, or destroy with an identity that has it "
        "(docs/deploying.md)"
    )
