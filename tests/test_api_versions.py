"""Each AKS API version the program calls is written in one module
(components/catalog/api_versions.py) and imported wherever a call names it, so a new version
lands in one place."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from components.catalog import api_versions

ROOT = Path(__file__).resolve().parent.parent
# A string that reads like an ARM api-version (or a date).
VERSION = re.compile(r"""[rbuf]*(['"])20\d\d-\d\d-\d\d(-preview)?\1""", re.IGNORECASE)
# Dates and other services' versions, each where it lives: none is Microsoft.ContainerService's.
OTHERS = {
    '"2023-01-01-preview"': "components/cost/retail_prices.py",  # the Retail Prices API
    '"2022-04-01"': "components/preflight/permissions_live.py",  # Microsoft.Authorization/permissions
    '"2028-03-31"': "components/cluster/existing_cluster_checks.py",  # kubenet's retirement, a date
}


def spelt_versions() -> set[tuple[str, str]]:
    """Every string in the program's code (not its comments) that reads like an api-version."""
    found = set()
    for path in [ROOT / "__main__.py", *sorted((ROOT / "components").rglob("*.py"))]:
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
        found |= {(str(path.relative_to(ROOT)), t.string) for t in tokens if t.type == tokenize.STRING and VERSION.fullmatch(t.string)}
    return found


def test_each_aks_api_version_is_spelt_in_the_api_versions_module_alone():
    home = "components/catalog/api_versions.py"
    aks = {(home, f'"{api_versions.STABLE}"'), (home, f'"{api_versions.MIG_PREVIEW}"')}
    others = {(where, version) for version, where in OTHERS.items()}
    assert spelt_versions() - aks - others == set()
