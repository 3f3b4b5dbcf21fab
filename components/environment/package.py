"""The component package's name, namespace and version (docs/design/package.md)."""

import re
from pathlib import Path

from components.config import values

# The program's namespace (`aks-gpu:` keys, its components' type tokens): the schema's `name`.
NAME = values.NAMESPACE
# The owner the stack schema's $id names (github.com/aks-gpu/aks-gpu): generated SDKs' Go module
# path and Java package; nothing at run time.
NAMESPACE = "aks-gpu"
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
# [project]'s `version = "1.0.0"`, the first such line; tomllib is Python 3.11's, and the program runs on 3.10.
VERSION_LINE = re.compile(r'^version = "([0-9A-Za-z.+-]+)"$', re.MULTILINE)


def project_version() -> str:
    """The project's version, pyproject.toml's: the package's, and the tag `pulumi package add` names."""
    found = VERSION_LINE.search(PYPROJECT.read_text())
    if found is None:
        raise SystemExit(f'{PYPROJECT}: no `version = "..."` line')
    return found.group(1)
