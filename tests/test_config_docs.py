"""The key reference, docs/configuration-keys.md: generated from the stack schema by `make
config-docs` (tools/config_docs.py), fresh, naming every key and member the program parses,
with links that lead somewhere; and the README names every key and member (its list,
written with the page) and its short table only keys there are."""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

from components import stack as config
from components.config.messages import camel_case
from tools import config_docs
from tools.stack_files import ROOT

PAGE = config_docs.PAGE.read_text()
ROWS = {m.group(1) for m in re.finditer(r"^\| `([^`]+)` \|", PAGE, re.MULTILINE)}


def test_the_committed_key_reference_is_what_make_config_docs_writes():
    assert PAGE == config_docs.render(), "stale: run `make config-docs`"


def test_a_stale_key_reference_fails_the_check_and_names_the_fix(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "configuration-keys.md"
    stale.write_text(PAGE.replace("`Standard_D2s_v5`", "`Standard_D4s_v5`"))
    monkeypatch.setattr(config_docs, "PAGE", stale)
    monkeypatch.setattr(config_docs, "ROOT", tmp_path)
    assert config_docs.main(["--check"]) == 1
    assert capsys.readouterr().err == "configuration-keys.md is stale: run `make config-docs`\n"


def _member_paths(prefix: str, cls: type) -> list[str]:
    """Every member of a config object, and of the objects inside it, as a stack file spells it."""
    paths = []
    for name, hint in typing.get_type_hints(cls).items():
        path = f"{prefix}.{camel_case(name)}"
        paths.append(path)
        inner = config.strip_optional(hint)
        if dataclasses.is_dataclass(inner):
            paths += _member_paths(path, typing.cast(type, inner))
    return paths


def test_the_key_reference_has_a_row_for_every_key_and_member_the_program_parses():
    hints = {name: config.strip_optional(t) for name, t in typing.get_type_hints(config.ProjectConfig).items()}
    structured = {f"{config.NAMESPACE}:{camel_case(n)}": t for n, t in hints.items() if dataclasses.is_dataclass(t)}
    assert {"aks-gpu:gpuPool", "aks-gpu:cost", "aks-gpu:existingCluster"} <= set(structured), "members are checked"
    expected = {*config.known_keys(), config.LOCATION_KEY, *(p for key, cls in structured.items() for p in _member_paths(key, cls))}
    assert "aks-gpu:cost.budget.contactEmails" in expected and "aks-gpu:gpuPool.upgradeSettings.maxSurge" in expected
    assert sorted(expected - ROWS) == []


def test_several_pools_take_the_one_pools_members_but_its_name():
    (row,) = [line for line in PAGE.splitlines() if line.startswith("| `aks-gpu:gpuPools` |")]
    assert "with the members of `aks-gpu:gpuPool` but `name`" in row


def _anchors(page: Path) -> set[str]:
    """GitHub's anchor for each heading: lowercase, punctuation but `-` and `_` dropped, spaces as `-`."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def test_every_page_and_section_the_key_reference_links_to_exists():
    links = re.findall(r"\]\(([a-z0-9-]+\.md)(?:#([a-z0-9_-]+))?\)", PAGE)
    assert links, "the schema's descriptions name docs/ pages"
    docs = config_docs.PAGE.parent
    missing = [
        f"{page}#{anchor}" for page, anchor in links if not (docs / page).is_file() or (anchor and anchor not in _anchors(docs / page))
    ]
    assert missing == []


def test_the_readmes_table_names_only_keys_there_are_and_links_every_key():
    readme = (ROOT / "README.md").read_text()
    assert "[docs/configuration-keys.md](docs/configuration-keys.md)" in readme
    rows = [line for line in readme.splitlines() if re.match(r"\| `(aks-gpu|azure-native):", line)]
    assert rows, "the README keeps a short table of the keys to start with"
    named = []
    for row in rows:
        first, *more = re.findall(r"`([^`]+)`", row.split(" | ")[0])
        named += [first, *(f"{first.rsplit('.', 1)[0]}.{m}" for m in more)]
    assert sorted(set(named) - ROWS) == []


def _readme_block() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme[readme.index(config_docs.README_START) : readme.index(config_docs.README_END) + len(config_docs.README_END)]


def test_the_readmes_list_of_every_key_is_what_make_config_docs_writes():
    assert _readme_block() == config_docs.readme_keys(), "stale: run `make config-docs`"


def test_the_readme_names_every_key_and_member_the_key_reference_has():
    named = set()
    for key, members in re.findall(r"\[`([^`]+)`\]\([^)]+\)(?:\s\(([^)]*)\))?", _readme_block()):
        named |= {key, *(f"{key}.{m}" for m in re.findall(r"`([^`]+)`", members))}
    assert named == ROWS


def test_a_stale_readme_list_fails_the_check_and_names_the_fix(tmp_path, monkeypatch, capsys):
    readme = tmp_path / "README.md"
    readme.write_text((ROOT / "README.md").read_text().replace("(`vmSize`, `nodeCount`)", "(`vmSize`)", 1))
    monkeypatch.setattr(config_docs, "README", readme)
    monkeypatch.setattr(config_docs, "ROOT", tmp_path)
    monkeypatch.setattr(config_docs, "PAGE", tmp_path / "configuration-keys.md")
    (tmp_path / "configuration-keys.md").write_text(PAGE)
    assert config_docs.main(["--check"]) == 1
    assert capsys.readouterr().err == "README.md is stale: run `make config-docs`\n"
