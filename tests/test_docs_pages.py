"""The docs a person reads: every link in the README and docs/ (design notes included) leads to a
file there is and, with an anchor, to a heading of it; the user pages (docs/*.md) say what to
do, and leave the research (issue numbers, test paths, commit hashes) to docs/design/; and the
timing figures they quote are the program's (tools/doc_figures.py writes docs/proof.md's table)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools import doc_figures

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
# The user pages: not the generated key reference, not the code's own page (docs/layout.md),
# not the design notes.
USER_PAGES = [ROOT / "README.md", *(p for p in sorted(DOCS.glob("*.md")) if p.name not in {"layout.md", "configuration-keys.md"})]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^[ ]*```.*?^[ ]*```", re.MULTILINE | re.DOTALL)


def anchors(page: Path) -> set[str]:
    """GitHub's anchor for each heading: lower case, punctuation but `-` and `_` dropped, spaces
    as `-`, a repeated one suffixed `-1`, `-2`, ..."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#+ (.+)$", FENCE.sub("", page.read_text()), re.MULTILINE):
        anchor = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        n = seen.get(anchor, 0)
        found.add(anchor if n == 0 else f"{anchor}-{n}")
        seen[anchor] = n + 1
    return found


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(target)
    return broken


@pytest.mark.parametrize(
    "page",
    PAGES,
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_link_leads_to_a_file_and_heading_there_are(page: Path) -> None:
    assert broken_links(page) == []


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_user_page_names_no_issue_test_path_or_commit(page: Path) -> None:
    """Those belong to the design notes: a user page says what to do, and links to the why."""
    text = page.read_text()
    issues = re.findall(r"(?<![\w/&#-])#\d+\b", text)
    tests = re.findall(r"\btests/[\w/.-]+", text)
    commits = [h for h in re.findall(r"(?<![\w:@-])[0-9a-f]{7,40}(?![\w-])", text) if re.search(r"[a-f]", h) and re.search(r"\d", h)]
    assert (issues, tests, commits) == ([], [], [])


def test_the_timings_the_docs_state_are_what_make_config_docs_writes() -> None:
    page = doc_figures.PAGE.read_text()
    assert page == doc_figures.with_figures(page, doc_figures.render()), "stale: run `make config-docs`"


def test_a_stale_timings_table_fails_the_check_and_names_the_fix(tmp_path, monkeypatch, capsys) -> None:
    stale = tmp_path / "docs" / "proof.md"
    stale.parent.mkdir()
    stale.write_text(doc_figures.PAGE.read_text().replace("| the watch looks | every ", "| the watch looks | every 1"))
    monkeypatch.setattr(doc_figures, "PAGE", stale)
    monkeypatch.setattr(doc_figures, "ROOT", tmp_path)
    assert doc_figures.main(["--check"]) == 1
    assert capsys.readouterr().err == "docs/proof.md's timings are stale: run `make config-docs`\n"


def test_the_timings_say_how_often_the_watch_looks_and_when_it_hands_back() -> None:
    """Figures more than one page relied on (the watch's look, its hand-back), stated once."""
    from components.proof import watch_live as proof_watch

    table = doc_figures.render()
    assert f"| the watch looks | every {int(proof_watch.POLL_SECONDS)} s |" in table
    assert f"after {int(proof_watch.NOT_CREATED_SECONDS)} s the watch hands back" in table


def test_every_docs_page_the_program_its_tools_and_tests_name_is_there() -> None:
    """A message, a comment or a schema description that names docs/<page>.md leads to a page
    there is, so a page moved or merged leaves no reader at a dead end."""
    sources = [
        ROOT / "__main__.py",
        ROOT / "Makefile",
        *(ROOT / "components").rglob("*.py"),
        *(ROOT / "tools").glob("*.py"),
        *(ROOT / "proof").rglob("*.py"),
        *(ROOT / "tests").glob("*.py"),
        *(ROOT / "tests" / "support").glob("*.py"),
        *(ROOT / "mutation").glob("*.toml"),
        *(ROOT / ".github" / "workflows").glob("*.yml"),
        ROOT / "schema" / "stack.schema.json",
    ]
    named = {
        (p.relative_to(ROOT), m)
        for p in sources
        if p.is_file() and p.name != Path(__file__).name
        for m in re.findall(r"(?<![\w./-])docs/[\w./-]+?\.md\b", p.read_text())
    }
    assert named, "the program names its docs pages"
    assert sorted(f"{p} names {m}" for p, m in named if not (ROOT / m).is_file()) == []


# A duration in a sentence of prose: "30 minutes", "10 min", "an hour", "2 hours".
DURATION = re.compile(r"\b(?:(\d+) (minutes?|min|hours?)\b|(half an hour|an hour)\b)")


def minutes_said(sentence: str) -> list[int]:
    found = []
    for number, unit, words in DURATION.findall(sentence):
        if words:
            found.append(30 if words.startswith("half") else 60)
        else:
            found.append(int(number) * (60 if unit.startswith("hour") else 1))
    return found


def proof_hold_sentences(page: Path) -> list[str]:
    """The sentences of a page that speak of how long a proof Job may run (its deadline) with a
    duration, outside code and outside the generated table itself."""
    text = FENCE.sub("", page.read_text())
    if doc_figures.START in text:
        text = text[: text.index(doc_figures.START)] + text[text.index(doc_figures.END) :]
    sentences = (s for para in re.split(r"\n\s*\n", text) for s in re.split(r"(?<=[.;])\s+", " ".join(para.split())))
    return [s for s in sentences if re.search(r"\bdeadline", s, re.IGNORECASE) and re.search(r"\b(Job|proof)", s) and minutes_said(s)]


def code_minutes() -> set[int]:
    """Every figure in minutes the program's own constants give a proof Job's time: the generated
    table's rows of the Job and of a group, and the parts job_deadline.py adds up."""
    from components.proof import job_deadline as jd

    rows = [*doc_figures.job_rows(120), *doc_figures.group_rows(120)]
    table = {int(m) for _, figure in rows for m in re.findall(r"(\d+) min\b", figure)}
    table |= {int(s) // 60 for _, figure in rows for s in re.findall(r"(\d+) s\b", figure) if int(s) % 60 == 0}
    parts = (jd.NODE_FROM_ZERO_SECONDS, jd.OPERATOR_STACK_SECONDS, jd.PULL_SECONDS, jd.MARGIN_SECONDS, jd.AWAIT_GRACE_SECONDS)
    return table | {s // 60 for s in parts}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_that_says_how_long_a_proof_may_hold_its_gpu_node_says_the_programs_figure(page: Path) -> None:
    """Three pages once gave three figures (an hour, 55 minutes, the table's): each page now says
    a figure the code gives, or links to the generated table (docs/proof.md, "Timings")."""
    allowed = code_minutes()
    assert [s for s in proof_hold_sentences(page) if not set(minutes_said(s)) <= allowed] == []


def test_the_timings_say_the_longest_a_proof_may_hold_a_gpu_node_in_minutes_too() -> None:
    from components.proof import job_deadline as jd
    from tools.doc_figures import FROM_ZERO

    deadline = jd.job_deadline(FROM_ZERO, 120)
    assert f"| the Job's deadline, a pool from zero | {deadline} s ({deadline // 60} min {deadline % 60} s);" in doc_figures.render()
    assert "the longest a proof may hold a GPU node" in doc_figures.PAGE.read_text()
