"""What a check before the deployment found: a message, and whether Azure would refuse the
deployment over it (blocking) or it is only worth saying (components/preflight/preflight.py)."""

from __future__ import annotations

from dataclasses import dataclass

# What a warning says where a preview warns of what stops a deployment: the render counts them (tools/render.py STOPS).
STOPS = "a deployment stops here"


@dataclass(frozen=True)
class Problem:
    message: str
    #: Blocking: Azure would refuse the deployment. Otherwise a warning in every run.
    blocking: bool = True
    #: Whatever preflight.mode says: two device plugins on one node, which no setting may
    #: let through (a preview says it, a deployment stops: preflight.run).
    always: bool = False
