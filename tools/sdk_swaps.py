"""The mock engine's one change inside Pulumi's SDK, for the length of a run: the URN of each
alias of each resource, which the SDK computes as an Output in `Resource.__init__`
(`collapse_alias_to_urn`, into `self._aliases`), is not computed. Only `all_aliases` reads that
list, for a monitor without alias specs (pulumi/runtime/resource.py `prepare_aliases`); the
CLI's engine has them (pulumi/pulumi 1b594989 pkg/resource/deploy/source_eval.go
`SupportsFeature`: "aliasSpecs" true) and so has the mock monitor, so what a run sends is the
same. An azure-native resource carries some sixty type aliases, and their Outputs were half a
run's time (pulumi/pulumi#10010). Why, and what it saves: docs/layout.md, "The mock engine".

tests/test_sdk_swaps.py pins it: the SDK function still has the shape and the one caller the
swap assumes, nothing else reads the list, and a run sends the engine the same bytes with the
swap as without. It reads the installed SDK, so `make test` checks it at the top of
pyproject.toml's range on pulumi and `make lowest` at the bottom; unlike the provider host's
patch (components/resources/provider_host_patch.py) it runs only in this repository's own
virtualenvs, never in a user's `pulumi up`, so it needs no range of its own."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pulumi.resource
from pulumi.runtime import settings
from pulumi.runtime.proto import resource_pb2


def alias_urn_not_computed(alias: Any, name: str, type_: str, parent: Any) -> None:
    """Stands in for `pulumi.resource.collapse_alias_to_urn` during a run."""
    return None


@contextlib.contextmanager
def alias_urns_left_to_the_engine() -> Iterator[None]:
    """The swap, for one run under a monitor with alias specs; undone after it."""
    if not settings.monitor_supports_feature(resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS):
        yield  # a monitor without alias specs reads the list: leave the SDK as it is
        return
    original = pulumi.resource.collapse_alias_to_urn
    pulumi.resource.collapse_alias_to_urn = alias_urn_not_computed  # type: ignore[assignment]
    try:
        yield
    finally:
        pulumi.resource.collapse_alias_to_urn = original
