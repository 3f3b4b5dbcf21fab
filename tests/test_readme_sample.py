"""The README's sample of `make render STACK=dev` is the render's own output (tools/render_sample.py
writes it between two marker lines, `make config-docs`): a count, a warning or a last line the
render no longer prints fails here."""

from __future__ import annotations

from tools import render, render_sample


def test_the_readmes_sample_render_is_what_the_render_of_the_dev_stack_prints():
    readme = render_sample.README.read_text()
    assert readme == render_sample.with_sample(readme, render_sample.block(render_sample.rendered())), "stale: run `make config-docs`"


def test_the_sample_shows_the_renders_first_and_last_lines_and_every_warning_that_would_stop_up_whole():
    summary = render_sample.rendered()
    shown = render.unfold("\n".join(render_sample.excerpt(summary))).splitlines()
    lines = summary.splitlines()
    assert shown[0] == lines[0] and shown[-1] == lines[-1]
    assert [w for w in lines if w.startswith("  - ") and render.STOPS in w] == [w for w in shown if w.startswith("  - ")]
    assert all(line in lines for line in shown if line != render_sample.LEFT_OUT)


def test_a_stale_sample_fails_the_check_and_names_the_fix(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "README.md"
    stale.write_text(render_sample.README.read_text().replace("aks-gpu dev: 2", "aks-gpu dev: 1", 1))
    monkeypatch.setattr(render_sample, "README", stale)
    assert render_sample.main(["--check"]) == 1
    assert capsys.readouterr().err == "README.md's sample render is stale: run `make config-docs`\n"


def test_a_left_out_run_of_lines_is_one_ellipsis():
    summary = "first\n  1 x a\n  1 x b\nGPU pool: gpu\nwarnings (1):\n  - advice\nwould stop `pulumi up`: nothing"
    assert render_sample.excerpt(summary) == ["first", "...", "GPU pool: gpu", "warnings (1):", "...", "would stop `pulumi up`: nothing"]
