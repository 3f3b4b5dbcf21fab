"""The samples of the render the docs show are the render's own output (tools/render_sample.py
writes them between two marker lines, `make config-docs`): the README's of `make render
STACK=dev`, and docs/existing-cluster.md's of the guide's cluster adopted. A count, a warning or a
last line the render no longer prints fails here."""

from __future__ import annotations

import pytest

from tools import render, render_sample


@pytest.mark.parametrize("sample", render_sample.SAMPLES, ids=lambda s: s.page.name)
def test_a_pages_sample_render_is_what_the_render_prints(sample):
    page = sample.page.read_text()
    assert page == sample.written(page), "stale: run `make config-docs`"


def test_the_readme_shows_the_renders_first_and_last_lines_and_every_warning_that_would_stop_up_whole():
    summary = render_sample.rendered()
    shown = render.unfold("\n".join(render_sample.excerpt(summary))).splitlines()
    lines = summary.splitlines()
    assert shown[0] == lines[0] and shown[-1] == lines[-1]
    assert [w for w in lines if w.startswith("  - ") and render.STOPS in w] == [w for w in shown if w.startswith("  - ")]
    assert all(line in lines for line in shown if line != render_sample.LEFT_OUT)


def test_the_adopting_sample_counts_the_three_imports_and_shows_what_the_pools_import_changes():
    summary = render_sample.guide_adopted()
    shown = render.unfold("\n".join(render_sample.excerpt(summary, render_sample.kept_in_guide))).splitlines()
    assert shown[0].startswith("aks-gpu ml-prod: ") and " 3 imported (3 then updated in place)" in shown[0]
    [pool] = [line for line in shown if line.startswith(render_sample.ADOPTED_POOL)]
    assert "imports AgentPool gpunp" in pool and "replaces nothing" in pool


def test_a_stale_sample_fails_the_check_and_names_the_fix(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "README.md"
    stale.write_text(render_sample.README.read_text().replace("aks-gpu dev: 2", "aks-gpu dev: 1", 1))
    readme = render_sample.Sample(stale, render_sample.START, render_sample.rendered, render_sample.kept_in_readme, "would stop")
    monkeypatch.setattr(render_sample, "SAMPLES", (readme,))
    monkeypatch.setattr(render_sample, "ROOT", tmp_path)
    assert render_sample.main(["--check"]) == 1
    assert capsys.readouterr().err == "README.md's sample render is stale: run `make config-docs`\n"


def test_a_sample_whose_lines_the_render_no_longer_prints_stops_the_writer():
    with pytest.raises(SystemExit, match="no longer prints a line 'adopt: aks-gpu:gpuPools.'"):
        render_sample.SAMPLES[1].block("aks-gpu ml-prod: 9 resources\nwould stop `pulumi up`: nothing")


def test_a_left_out_run_of_lines_is_one_ellipsis():
    summary = "first\n  1 x a\n  1 x b\nGPU pool: gpu\nwarnings (1):\n  - advice\nwould stop `pulumi up`: nothing"
    assert render_sample.excerpt(summary) == ["first", "...", "GPU pool: gpu", "warnings (1):", "...", "would stop `pulumi up`: nothing"]
