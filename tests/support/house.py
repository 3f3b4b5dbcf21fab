"""Which tests run per stack: those parametrized over the project's stack files."""

from __future__ import annotations

import ast


def per_stack(function: ast.FunctionDef) -> bool:
    """Parametrized over the project's stack files: `@pytest.mark.parametrize("stack", stacks())`."""
    return any(
        isinstance(d, ast.Call) and len(d.args) == 2 and ast.unparse(d.args[0]) == "'stack'" and ast.unparse(d.args[1]) == "stacks()"
        for d in function.decorator_list
    )
