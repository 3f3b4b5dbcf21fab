"""`make mutation`'s set-up, without running cosmic-ray (docs/design/mutation.md): every
configuration names a module and tests that exist, every mutant listed as equivalent names a
line its module still has and gives its reason, and the score leaves out only those."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from tools import mutation
from tools.mutation import Mutant, Score

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted((ROOT / "mutation").glob("*.toml"))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_each_configuration_names_a_module_and_tests_that_exist(config):
    settings = tomllib.loads(config.read_text())["cosmic-ray"]
    assert (ROOT / settings["module-path"]).is_file()
    tests = [word for word in settings["test-command"].split() if word.startswith("tests/")]
    assert tests and all((ROOT / t).is_file() for t in tests)
    assert settings["test-command"].startswith(".venv/bin/python -m pytest -x "), "stops at the first failure: a kill needs one"


def test_the_modules_the_issue_names_are_all_covered():
    covered = {tomllib.loads(c.read_text())["cosmic-ray"]["module-path"] for c in CONFIGS}
    assert {
        "components/pools/managed_gpu_pool.py",
        "components/pools/agent_pool_calls.py",
        "components/cost/cost.py",
        "components/cost/prices.py",
    } <= covered


def test_every_listed_equivalent_mutant_names_a_line_its_module_still_has_and_says_why():
    listed = mutation.equivalent_mutants()
    assert listed, "the list is read"
    for (module, operator, text, mutated), reason in listed.items():
        lines = [line.strip() for line in (ROOT / module).read_text().splitlines()]
        assert text in lines, f"{module} no longer has: {text}"
        assert operator.startswith("core/") and text != mutated and len(reason) > 20


def mutant(outcome: str, text: str = "x == 1", mutated: str = "x is 1") -> Mutant:
    return Mutant("m.py", "core/ReplaceComparisonOperator_Eq_Is", 1, text, mutated, outcome, "")


def test_the_score_leaves_out_only_listed_and_skipped_mutants():
    listed = mutant("survived").key
    score = Score("m.py", (mutant("killed", "a"), mutant("survived"), mutant("survived", "b"), mutant("skipped", "c")), frozenset({listed}))
    assert (score.killed, len(score.counted), [m.text for m in score.survivors]) == (1, 2, ["b"])
    assert score.rate == 0.5


def test_the_report_fails_under_ninety_percent_or_on_a_stale_listing(capsys):
    killed = tuple(mutant("killed", f"k{n}") for n in range(9))
    assert mutation.report([Score("m.py", killed + (mutant("survived", "s"),), frozenset())], {}) == 0, "9 of 10"
    assert mutation.report([Score("m.py", killed[:8] + (mutant("survived", "s"), mutant("survived", "t")), frozenset())], {}) == 1
    gone = ("m.py", "core/NumberReplacer", "y = 2", "y = 3")
    assert mutation.report([Score("m.py", killed, frozenset())], {gone: "a reason long enough"}) == 1
    assert "equivalent.txt names a mutant that no longer exists: m.py | core/NumberReplacer | y = 2 => y = 3" in capsys.readouterr().out
