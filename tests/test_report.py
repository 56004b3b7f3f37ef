"""Tests of the report: the story's four answers, the plots, the damage map and the HTML page.

The HTML is parsed into a small DOM (stdlib html.parser) and checked by structure, never by
substring. Expected values come from how test_report_runs.py made the run.
"""
from __future__ import annotations

import base64
import io
from dataclasses import replace
from html.parser import HTMLParser

import matplotlib.image
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from forensics.bisection import BisectResult
from forensics.checkpoints.blocks import block_sort_key
from forensics.report import (block_ranges, build_story, damage_map_figure, main_figure, render_bisect_html,
                              render_html, story_text, summary_html, write_html)
from forensics.findings import Finding
from forensics.report.plots import ZOOM_POINTS
from forensics.timeline import LogRecords, build_timeline
from forensics.report.damage import FINITE, FINITE_NO_STATS, NONFINITE, NOT_SCANNED, damage_matrix
from test_report_runs import (BAD_LAYERS, FIRST_ATTEMPT_END, HOSTILE, LAST_STEP, LOG_EVERY, N_LAYERS, NAN_FROM,
                              RESUME_FROM, SPIKE_STEP, XSS_IMG, XSS_SCRIPT, bisect_result, broken_analysis,
                              healthy_analysis, hostile_analysis, steps)

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, dict(attrs), parent, [], []

    def iter(self):
        yield self
        for child in self.children:
            yield from child.iter()

    def find_all(self, tag):
        return [n for n in self.iter() if n.tag == tag]

    def by_id(self, id_):
        found = [n for n in self.iter() if n.attrs.get("id") == id_]
        assert len(found) <= 1, f"duplicate id {id_}"
        return found[0] if found else None

    def text_content(self) -> str:
        return "".join(self.text) + "".join(c.text_content() for c in self.children)


class DomBuilder(HTMLParser):
    """A tiny DOM: elements with attributes (values unescaped by html.parser) and their text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.current = Node("#document", [])

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag):
        node = self.current
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.current = node.parent

    def handle_data(self, data):
        # Text is kept in order with children by a text pseudo-node.
        text = Node("#text", [], self.current)
        text.text.append(data)
        self.current.children.append(text)


def parse(html: str) -> Node:
    builder = DomBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


def body_rows(dom: Node, table_id: str) -> int:
    table = dom.by_id(table_id)
    if table is None:
        return 0
    return len(table.find_all("tbody")[0].find_all("tr"))


def decode_image(src: str) -> np.ndarray:
    assert src.startswith("data:image/png;base64,")
    data = base64.b64decode(src.split(",", 1)[1], validate=True)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return matplotlib.image.imread(io.BytesIO(data), format="png")


# -- the story ------------------------------------------------------------------------------------

def test_story_of_a_broken_run_answers_the_four_questions():
    story = build_story(broken_analysis())
    assert story.verdict == "Broken"
    assert f"step {SPIKE_STEP}" in story.headline
    health, chain, ckpts, cause = story.answers
    assert f"step {SPIKE_STEP}" in health.paragraphs[0]
    assert "1 finding happened only in attempts" in health.paragraphs[1]
    # The chain follows caused_by links from the spike, in step order; the abandoned spike is not in it.
    assert [b.split(":")[0] for b in chain.bullets] == [f"step {NAN_FROM}", f"step {NAN_FROM}", f"step {LAST_STEP}"]
    assert "checkpoint-300 (step 300) is the last good one" in ckpts.paragraphs[0]
    assert "checkpoint-400 (step 400) is the first" in ckpts.paragraphs[0]
    assert f"model.layers.{BAD_LAYERS[0]}-{BAD_LAYERS[-1]}" in ckpts.paragraphs[1]
    assert ckpts.bullets == ("checkpoint-350: unreadable (header offsets past the end of file)",)
    assert cause.paragraphs[0].startswith("Learning rate too high (likely)")


def test_story_without_causes_says_what_is_known_and_what_was_missing():
    cause = build_story(broken_analysis(causes=False)).answers[3]
    assert cause.paragraphs[0] == "No cause could be pinned down from the run's own files."
    assert any(b.startswith("learning_rate = 0.0003") for b in cause.bullets)
    assert cause.bullets[-1] == "not found: DeepSpeed config"


def test_story_of_a_healthy_run():
    story = build_story(healthy_analysis())
    assert story.verdict == "Healthy"
    assert story.answers[0].paragraphs[0].startswith("Yes.")
    assert "The one readable checkpoint holds finite weights." == story.answers[2].paragraphs[0]
    assert story_text(story).startswith("HEALTHY: ")


def test_block_ranges_and_natural_order():
    assert sorted(["layers.10", "layers.2", "layers.1"], key=block_sort_key) == ["layers.1", "layers.2", "layers.10"]
    assert block_ranges(["model.layers.3", "model.layers.1", "model.layers.2", "model.layers.7"]) == \
        "model.layers.1-3, model.layers.7"


# -- the plots ------------------------------------------------------------------------------------

def _lines(ax, label):
    return [line for line in ax.get_lines() if line.get_label() == label]


def test_main_figure_marks_nonfinite_points_abandoned_attempts_and_checkpoints():
    fig = main_figure(broken_analysis())
    assert isinstance(fig, Figure)
    ax_loss, ax_grad, ax_lr, ax_ckpt, ax_zoom = fig.axes[:5]
    assert ax_grad.get_yscale() == "log"
    nan_steps = steps(NAN_FROM, LAST_STEP)
    (nan_marks,) = _lines(ax_grad, "NaN (band)")
    assert list(nan_marks.get_xdata()) == list(nan_steps)
    # The first attempt's loss from the resume step to its end is drawn apart, dashed.
    (abandoned,) = _lines(ax_loss, "abandoned attempt")
    assert list(abandoned.get_xdata()) == list(steps(RESUME_FROM, FIRST_ATTEMPT_END))
    assert abandoned.get_linestyle() == "--"
    ticks = {int(line.get_xdata()[0]): line.get_color() for line in ax_ckpt.get_lines()}
    assert ticks == {100: "#2e7d32", 200: "#2e7d32", 300: "#2e7d32", 350: "#9e9e9e", 400: "#c62828"}
    finding_lines = {float(line.get_xdata()[0]) for line in ax_lr.get_lines() if line.get_xdata()[0] ==
                     line.get_xdata()[-1]}
    assert {230.0, SPIKE_STEP, NAN_FROM, LAST_STEP} <= finding_lines
    # ZOOM_POINTS logged steps either side of the spike, cut at the last logged step.
    assert ax_zoom.get_xlim() == (SPIKE_STEP - ZOOM_POINTS * LOG_EVERY - 0.5, LAST_STEP + 0.5)


def test_zoom_stays_near_the_start_of_a_long_incident():
    analysis = healthy_analysis()
    collapse = Finding("loss_collapse", "error", 20, "loss fell to 0", end_step=LAST_STEP, metric="loss")
    analysis = replace(analysis, findings=[collapse], first_incident=collapse, status="broken")
    ax_zoom = main_figure(analysis).axes[4]
    assert ax_zoom.get_xlim() == (LOG_EVERY - 0.5, 20 + ZOOM_POINTS * LOG_EVERY + 0.5)


def test_main_figure_marks_zero_grad_norm_on_the_log_axis():
    analysis = healthy_analysis()
    frame = analysis.timeline.frame
    grad = frame["metric"] == "grad_norm"
    frame.loc[grad & (frame["step"] == 100), "value"] = 500.0  # three decades: a log axis shows it
    frame.loc[grad & (frame["step"] >= 390), "value"] = 0.0
    ax_grad = main_figure(analysis).axes[1]
    assert ax_grad.get_yscale() == "log"
    (marks,) = _lines(ax_grad, "0 or below on a log axis (band)")
    assert list(marks.get_xdata()) == [390, 400]


def test_grad_norm_over_a_narrow_range_is_drawn_on_a_linear_axis():
    ax_grad = main_figure(healthy_analysis()).axes[1]  # grad_norm within a few x of itself: noise on a log axis
    assert ax_grad.get_yscale() == "linear"


def test_masked_nan_loss_is_drawn_on_the_band_not_as_a_fall_to_zero():
    analysis = broken_analysis()
    masked = [f for f in analysis.findings if f.kind == "masked_nan_loss"]
    assert masked  # the fixture holds one: loss 0.0 next to a NaN grad_norm from NAN_FROM
    ax_loss = main_figure(analysis).axes[0]
    (loss_line,) = [ln for ln in _lines(ax_loss, "loss")]
    drawn = dict(zip(loss_line.get_xdata(), loss_line.get_ydata()))
    for f in masked:
        assert np.isnan(drawn[f.step]), "a masked NaN is drawn as a value"
    (band,) = _lines(ax_loss, "NaN logged as 0.0 (band)")
    assert masked[0].step in list(band.get_xdata())


def test_main_figure_of_a_healthy_run_has_no_zoom_panel():
    assert len(main_figure(healthy_analysis()).axes) == 4


def test_damage_map_states_follow_the_checkpoints():
    analysis = broken_analysis()
    matrix = damage_matrix(analysis.checkpoints)
    assert matrix.blocks == [f"model.layers.{i}" for i in range(N_LAYERS)]  # layers.2 before layers.10
    assert matrix.columns == [c.name for c in analysis.checkpoints]
    col = {name: j for j, name in enumerate(matrix.columns)}
    assert (matrix.states[:, col["checkpoint-100"]] == FINITE_NO_STATS).all()
    assert (matrix.states[:, col["checkpoint-350"]] == NOT_SCANNED).all()
    assert (matrix.states[:, col["checkpoint-300"]] == FINITE).all()
    bad = matrix.states[:, col["checkpoint-400"]]
    assert [i for i in range(N_LAYERS) if bad[i] == NONFINITE] == list(BAD_LAYERS)
    # absmax per block is 0.1 * (layer + 1), the largest of its two tensors.
    np.testing.assert_allclose(matrix.absmax[:, col["checkpoint-300"]], 0.1 * np.arange(1, N_LAYERS + 1))
    assert isinstance(damage_map_figure(analysis), Figure)


def test_damage_map_is_none_without_block_information():
    assert damage_map_figure(healthy_analysis()) is None  # one quick-checked ok checkpoint: no block known
    analysis = replace(broken_analysis(), checkpoints=[])
    assert damage_map_figure(analysis) is None


# -- the page -------------------------------------------------------------------------------------

def test_report_page_structure():
    analysis = broken_analysis()
    dom = parse(render_html(analysis))
    verdict = dom.by_id("verdict")
    assert "status-broken" in verdict.attrs["class"]
    assert verdict.text_content().split()[0] == "Broken"
    answers = [li for li in dom.by_id("answers").find_all("li") if li.attrs.get("class") == "answer"]
    assert len(answers) == 4
    assert f"step {SPIKE_STEP}" in answers[0].text_content()
    for img_id in ("main-plot", "damage-plot"):
        image = decode_image(dom.by_id(img_id).attrs["src"])
        assert image.shape[0] > 100 and image.shape[1] > 100
    assert body_rows(dom, "findings-table") == len(analysis.findings)
    assert body_rows(dom, "checkpoints-table") == len(analysis.checkpoints)
    assert body_rows(dom, "skipped-table") == len(analysis.skipped)
    assert body_rows(dom, "worst-table") == 2 * N_LAYERS   # every tensor of the small checkpoint, worst first
    first_worst = dom.by_id("worst-table").find_all("tbody")[0].find_all("tr")[0]
    assert first_worst.find_all("td")[1].text_content() == f"model.layers.{BAD_LAYERS[-1]}"
    assert body_rows(dom, "files-table") == 5


def test_report_lists_causes_and_flags_config_sources_that_disagree():
    analysis = broken_analysis()
    analysis.config.add("fp16", True, "/runs/demo/training_args.bin")
    analysis.config.add("fp16", False, "/runs/demo/ds_config.json")
    dom = parse(render_html(analysis))
    assert body_rows(dom, "causes-table") == len(analysis.causes)
    rows = dom.by_id("config-table").find_all("tbody")[0].find_all("tr")
    flagged = [r.find_all("td")[0].text_content() for r in rows if r.attrs.get("class") == "conflict"]
    assert flagged == ["fp16", "fp16"]
    unflagged = [r.find_all("td")[0].text_content() for r in rows if r.attrs.get("class") != "conflict"]
    assert unflagged == ["learning_rate"]
    story = build_story(analysis)
    assert any("disagree on fp16" in b for b in story.answers[3].bullets)


def test_sections_come_in_the_documented_order():
    dom = parse(render_html(broken_analysis()))
    ids = [n.attrs["id"] for n in dom.iter() if n.tag == "section"]
    assert ids == ["verdict", "run-profile", "answers", "plots", "damage", "tables", "provenance"]


def test_report_is_self_contained():
    dom = parse(render_html(broken_analysis()))
    assert dom.find_all("script") == []
    for node in dom.iter():
        for attr in ("src", "href", "action", "data", "poster"):
            if attr in node.attrs:
                assert node.attrs[attr].startswith("data:"), (node.tag, attr)
    csp = [m for m in dom.find_all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in csp[0].attrs["content"]


def test_healthy_report_has_no_damage_map_and_no_empty_tables():
    dom = parse(render_html(healthy_analysis()))
    assert dom.by_id("damage-plot") is None
    assert dom.by_id("findings-table") is None and dom.by_id("skipped-table") is None
    assert body_rows(dom, "checkpoints-table") == 1
    assert dom.by_id("verdict").text_content().split()[0] == "Healthy"


def test_hostile_input_stays_text():
    analysis = hostile_analysis()
    dom = parse(render_html(analysis))
    assert dom.find_all("script") == []
    assert [img.attrs.get("id") for img in dom.find_all("img")] == ["main-plot", "damage-plot"]
    assert not [(n.tag, a) for n in dom.iter() for a in n.attrs if a.startswith("on")]
    text = dom.text_content()
    # The payloads are shown literally (escaped in the markup): in the path, the findings and the tables.
    assert dom.by_id("run-path").text_content() == str(analysis.path)
    assert text.count(XSS_SCRIPT) >= 5 and text.count(XSS_IMG) >= 5
    findings_text = dom.by_id("findings-table").text_content()
    assert HOSTILE in findings_text


def test_bisect_page_structure():
    result = bisect_result()
    dom = parse(render_bisect_html(result))
    assert dom.find_all("script") == []
    verdict = dom.by_id("bisect-verdict").text_content()
    assert "checkpoint-400" in verdict and "checkpoint-300" in verdict
    assert body_rows(dom, "probed-table") == len(result.probed)
    assert body_rows(dom, "damaged-table") == len(BAD_LAYERS)   # one row per damaged block
    assert body_rows(dom, "changes-table") == len(result.changes)
    assert body_rows(dom, "window-findings-table") == len(result.findings)


def test_report_with_bisect_section():
    analysis = broken_analysis()
    dom = parse(render_html(analysis, bisect=bisect_result(analysis)))
    assert dom.by_id("bisect") is not None
    assert body_rows(dom, "probed-table") == 4


@pytest.mark.parametrize("n_steps", [200, 20000])
def test_report_size_stays_under_2_mb(tmp_path, n_steps):
    analysis = broken_analysis()
    s = np.arange(1, n_steps + 1)
    noisy = np.random.default_rng(0).random(3 * n_steps)   # noise: the worst case for PNG compression
    frame = pd.DataFrame({"step": np.repeat(s, 3), "metric": ["loss", "grad_norm", "learning_rate"] * n_steps,
                          "value": noisy, "wall_time": np.nan})
    analysis = replace(analysis, timeline=build_timeline([LogRecords("/x/trainer_state.json", "trainer_state", frame)]))
    path = write_html(analysis, tmp_path / "report.html")
    assert path.stat().st_size < 2 * 1024 * 1024


def test_story_sections_and_next_step_for_the_terminal():
    story = build_story(broken_analysis())
    titles = [title for title, _ in story.sections()]
    assert titles[0].startswith("1. Is the run healthy?") and len(titles) == 4
    assert story.sections()[1][1][1] == f"- step {NAN_FROM}: loss logged as 0.0 next to a NaN grad_norm."
    assert story.next_step.startswith("Next: lower the learning rate")
    assert "resume from checkpoint-300 (step 300)" in story.next_step


def test_notebook_summary_is_escaped():
    dom = parse(summary_html(hostile_analysis()))
    assert dom.find_all("script") == [] and dom.find_all("img") == []
    assert not [(n.tag, a) for n in dom.iter() for a in n.attrs if a.startswith("on")]
    assert HOSTILE in dom.text_content()
    assert len(dom.find_all("ol")[0].find_all("em")) == 4


def test_report_of_checkpoints_only_quick_checked():
    """No logs at all, and the bad checkpoint only quick-checked: the page still answers from what there is."""
    analysis = broken_analysis()
    quick = [replace(c, stats=None, full_scan=False) if c is analysis.first_bad_checkpoint else c
             for c in analysis.checkpoints]
    analysis = replace(analysis, timeline=build_timeline([]), checkpoints=quick)
    bad = analysis.first_bad_checkpoint
    dom = parse(render_html(analysis))
    decode_image(dom.by_id("main-plot").attrs["src"])
    assert body_rows(dom, "worst-table") == len(bad.nonfinite_tensors)   # names only, from the quick check
    col = damage_matrix(analysis.checkpoints).columns.index(bad.name)
    states = damage_matrix(analysis.checkpoints).states[:, col]
    # A quick check that stopped at a bad tensor says nothing about the other blocks.
    assert [s for i, s in enumerate(states) if i not in BAD_LAYERS] == [NOT_SCANNED] * (N_LAYERS - len(BAD_LAYERS))


def test_bisect_page_when_nothing_was_found():
    result = BisectResult(last_good=None, first_bad=None, probed=[], window=(None, None), changes=pd.DataFrame())
    dom = parse(render_bisect_html(result))
    assert dom.by_id("bisect-verdict").text_content().split()[:4] == ["No", "bad", "checkpoint", "found"]
    assert body_rows(dom, "probed-table") == 0 and dom.by_id("changes-table") is None
