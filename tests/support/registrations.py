"""What a program began to register before a refusal ended its run."""

from __future__ import annotations

from typing import Any

import pulumi


def registrations_begun(monkeypatch: Any) -> list[str]:
    """The type of each resource whose registration begins from now on, in order. Every registration
    starts in Resource.__init__; the mock monitor hears of one only once the SDK's task sends it,
    after a refusal has ended the run."""
    begun: list[str] = []
    register = pulumi.Resource.__init__
    monkeypatch.setattr(pulumi.Resource, "__init__", lambda self, t, name, *a, **k: (begun.append(t), register(self, t, name, *a, **k))[1])
    return begun
