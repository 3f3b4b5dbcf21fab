"""What the stack may cost (`cost`): a limit per hour that stops a deployment, and a monthly
consumption budget with e-mail alerts."""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import AfterValidator, Field
from pydantic.dataclasses import dataclass

from components.config.values import MODEL, Allowed, unique

# Budget notifications: "contactEmails ... maximum of 50" (consumption budgets spec).
MAX_BUDGET_EMAILS = 50

# An e-mail address, as Azure's budget notifications take it: one '@', no spaces, a dot in
# the domain (a plausibility check: the mailbox is Azure's to reach).
# RFC 5321: a local part of at most 64 octets, a path of at most 256 (so an address of 254).
Email = Annotated[
    str,
    Field(pattern=r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$", max_length=254),
    Allowed("an e-mail address such as 'gpu-team@example.com' (at most 64 characters before the '@', 254 in all)"),
]
PositiveAmount = Annotated[float, Field(gt=0, allow_inf_nan=False), Allowed("a number greater than 0")]


@dataclass(frozen=True, config=MODEL)
class BudgetConfig:
    """A monthly Azure consumption budget over what the stack runs (docs/cost.md)."""

    amount: PositiveAmount
    """The monthly budget, in the billing currency."""
    contact_emails: Annotated[
        tuple[Email, ...],
        Field(min_length=1, max_length=MAX_BUDGET_EMAILS, json_schema_extra={"uniqueItems": True}),
        AfterValidator(unique),
        Allowed(f"a list of 1 to {MAX_BUDGET_EMAILS} e-mail addresses"),
    ]
    """Who is told at 80% and 100% of actual cost and at 100% of forecast cost."""


@dataclass(frozen=True, config=MODEL)
class CostConfig:
    """What the stack may cost (docs/cost.md)."""

    max_hourly: Optional[PositiveAmount] = None
    """The most the stack may cost per hour at its pools' largest sizes, in the price list's currency; a deployment above it stops."""
    budget: Optional[BudgetConfig] = None
    """A monthly consumption budget over what the stack runs (its resource groups, or on an existing cluster its pools' tag), with e-mail alerts."""
