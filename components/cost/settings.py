"""What the stack may cost (`cost`): the currency of its figures, a limit per hour, and a monthly budget."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, Field
from pydantic.dataclasses import dataclass

from components.config.messages import fail
from components.config.values import MODEL, NAMESPACE, Allowed, one_of, unique

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
# An ISO 4217 code, as the Retail Prices API takes it (`currencyCode`) and answers it
# (`currencyCode` of each item): "USD" unless asked (learn.microsoft.com "Azure Retail Prices
# overview": "The currency that Microsoft uses to price all Azure services is USD").
Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$"), Allowed("a three-letter ISO 4217 currency code in capitals, such as USD or EUR")]
PositiveAmount = Annotated[float, Field(gt=0, allow_inf_nan=False), Allowed("a number greater than 0")]


@dataclass(frozen=True, config=MODEL)
class BudgetConfig:
    """A monthly Azure consumption budget over what the stack runs (docs/preflight.md)."""

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
    """What the stack may cost (docs/preflight.md)."""

    currency: Currency = "USD"
    """The currency of every cost figure, of maxHourly and of budget.amount: live prices are asked in it, a saved list must be in it; a budget counts in the billing account's currency, so set it to that."""
    max_hourly: PositiveAmount | None = None
    """The most the stack may cost per hour at its pools' largest sizes (every pool at maxCount or nodeCount, Spot at its ceiling), in `currency`; a deployment above it stops before anything is created, and so does one whose prices cannot all be had (see withoutPrices); a preview warns (docs/preflight.md)."""
    without_prices: one_of("stop", "deploy") = "stop"  # type: ignore[valid-type]
    """With maxHourly: what a deployment does when a pool's price cannot be had (no route to the Retail Prices API, a size the list lacks): stop, or deploy without the limit checked."""
    budget: BudgetConfig | None = None
    """A monthly consumption budget over where the GPU nodes are billed (the cluster's and its node resource group, or on an existing cluster its pools' tag), with e-mail alerts; the preview compares it with the stack's least and most per month (docs/preflight.md#the-budget-aks-gpucostbudget)."""


def check(cost: CostConfig, values: Mapping[str, Any]) -> None:
    """withoutPrices says what maxHourly does without prices: given alone it would do nothing."""
    given = values.get("cost")
    if isinstance(given, Mapping) and "withoutPrices" in given and cost.max_hourly is None:
        raise fail(
            f"{NAMESPACE}:cost.withoutPrices",
            given["withoutPrices"],
            f"only with {NAMESPACE}:cost.maxHourly: it says what a deployment does when the limit cannot be checked; remove it",
        )
