"""The public API of issue 5: what `import forensics` offers, the types and frames it returns, and its HTML.

Most expected values come from `sample_runs/nan_masked.facts.json` (how the shipped run was made by the
real Trainer); the hostile-name run is written here by the real writers (TrainerState.save_to_json,
safetensors) with names that are HTML.
"""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import forensics
from forensics.checkpoints import DIFF_COLUMNS, STATS_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "sample_runs" / "nan_masked"
FACTS = json.loads((ROOT / "sample_runs" / "nan_masked.facts.json").read_text())
GOOD, BAD = FACTS["last_good_checkpoint"], FACTS["first_bad_checkpoint"]

DOCUMENTED = ["analyze", "load_timeline", "bisect", "scan_checkpoint", "diff_checkpoints",
              "Analysis", "Timeline", "Finding", "Cause", "Skipped", "RunConfig", "Thresholds",
              "CheckpointInfo", "BisectResult",
              "ForensicsError", "UnreadableFile", "NotARunDirectory", "NoCheckpoints"]
EVIL_METRIC = '<script>alert("metric")</script>'
EVIL_CHECKPOINT = "<b onmouseover=alert(1)>checkpoint-4"
EVIL_TENSOR = "<img src=x onerror=alert(2)>.weight"


def _python(code: str, *args: str) -> str:
    """Run `code` in a fresh interpreter (nothing imported yet) and return its stdout."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def analysis():
    return forensics.analyze(RUN)


# --- what `import forensics` costs and offers -------------------------------------------------------------

def test_import_forensics_loads_no_click_torch_matplotlib_or_tensorboard():
    out = _python("import sys, forensics\n"
                  "print([m for m in ('click', 'torch', 'matplotlib', 'tensorboard', 'transformers') "
                  "if m in sys.modules])")
    assert out.strip() == "[]"


def test_analyzing_and_plotting_a_safetensors_run_needs_no_click_torch_or_pyplot():
    out = _python("import sys, forensics\n"
                  "a = forensics.analyze(sys.argv[1]); a.plot(); a._repr_html_()\n"
                  "forensics.bisect(sys.argv[2], sys.argv[3])._repr_html_()\n"
                  "print([m for m in ('click', 'torch', 'matplotlib.pyplot') if m in sys.modules])",
                  str(RUN), str(RUN / GOOD), str(RUN / BAD))
    assert out.strip() == "[]"


def test_every_module_imports_without_output_or_torch():
    out = _python("import contextlib, io, pkgutil, importlib, sys, forensics\n"
                  "buf = io.StringIO()\n"
                  "with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):\n"
                  "    names = [m.name for m in pkgutil.walk_packages(forensics.__path__, 'forensics.')\n"
                  "             if not m.name.endswith('__main__')]\n"
                  "    for name in names: importlib.import_module(name)\n"
                  "print(len(names), repr(buf.getvalue()), 'torch' in sys.modules)")
    n_modules, printed, torch_loaded = out.split()
    assert int(n_modules) > 20
    assert (printed, torch_loaded) == ("''", "False")


def test_doctests_pass_with_torch_blocked():
    # sys.modules[name] = None makes `import torch` raise ImportError, as on a machine without torch.
    out = _python("import sys; sys.modules['torch'] = None\n"
                  "import pytest\n"
                  "code = pytest.main(['forensics', '--doctest-modules', '-q', '-p', 'no:cacheprovider'])\n"
                  "print('EXIT', int(code))")
    assert out.strip().splitlines()[-1] == "EXIT 0", out


def test_all_lists_the_documented_api_and_every_name_resolves():
    assert set(DOCUMENTED) <= set(forensics.__all__)
    assert all(hasattr(forensics, name) for name in forensics.__all__)
    assert issubclass(forensics.NoCheckpoints, forensics.ForensicsError)


def test_public_functions_say_what_comes_back_and_carry_an_example():
    for fn in (forensics.analyze, forensics.load_timeline, forensics.bisect):
        assert "Returns" in fn.__doc__ and ">>>" in fn.__doc__, fn.__name__
    assert ">>>" in forensics.__doc__
    for name in ("scan_checkpoint", "diff_checkpoints", "bisect(", "analyze("):
        assert name in forensics.__doc__.split(">>>", 1)[1], name


# --- the calls of issue 5 and the types they return --------------------------------------------------------

def test_analyze_returns_an_analysis_with_the_first_incident_of_the_facts(analysis):
    assert isinstance(analysis, forensics.Analysis)
    assert analysis.status == FACTS["expected_status"]
    assert isinstance(analysis.first_incident, forensics.Finding)
    assert analysis.first_incident.step == FACTS["first_nonfinite_step"]


def test_timeline_wide_is_step_by_metric_with_nan_kept(analysis):
    assert isinstance(analysis.timeline, forensics.Timeline)
    wide = analysis.timeline.wide()
    assert isinstance(wide, pd.DataFrame)
    assert wide.index.tolist() == FACTS["logged_steps"]
    assert {"loss", "grad_norm", "learning_rate"} <= set(wide.columns)
    broke = wide.index >= FACTS["first_nonfinite_step"]
    assert wide.loc[broke, "grad_norm"].isna().all()
    assert np.isfinite(wide.loc[~broke, "grad_norm"]).all()
    assert (wide.loc[wide.index >= FACTS["first_masked_loss_step"], "loss"] == 0.0).all()


def test_findings_frame_has_one_row_per_finding_and_the_documented_columns(analysis):
    frame = analysis.findings_frame()
    assert list(frame.columns) == ["kind", "severity", "step", "end_step", "metric", "message", "abandoned",
                                   "caused_by"]
    assert frame["kind"].tolist() == [f.kind for f in analysis.findings]
    assert FACTS["first_masked_loss_step"] in frame.loc[frame["kind"] == "masked_nan_loss", "step"].tolist()
    assert frame["step"].dtype == "int64"
    # a root of the chain has no cause: None, not NaN
    assert frame["caused_by"].tolist() == [f.caused_by for f in analysis.findings]
    assert None in frame["caused_by"].tolist()


def test_checkpoints_stay_a_list_and_have_a_frame(analysis):
    ckpts = analysis.checkpoints
    assert isinstance(ckpts, list) and all(isinstance(c, forensics.CheckpointInfo) for c in ckpts)
    assert [c.name for c in ckpts] == list(FACTS["checkpoints"])
    frame = ckpts.frame
    assert list(frame.columns) == ["name", "step", "status", "path", "n_nonfinite_tensors", "nonfinite_blocks",
                                   "reason"]
    assert frame["step"].tolist() == [c["step"] for c in FACTS["checkpoints"].values()]
    expected = ["nonfinite" if c["nonfinite_blocks"] else "ok" for c in FACTS["checkpoints"].values()]
    assert frame["status"].tolist() == expected
    assert frame["nonfinite_blocks"].tolist() == [c["nonfinite_blocks"] for c in FACTS["checkpoints"].values()]
    pd.testing.assert_frame_equal(frame, analysis.checkpoints_frame)
    assert "<table" in ckpts._repr_html_()


def test_timeline_html_lists_each_metric_with_its_first_nonfinite_step(analysis):
    html = analysis.timeline._repr_html_()
    row = re.search(r"<th>grad_norm</th>(.*?)</tr>", html, re.S).group(1)
    steps = FACTS["logged_steps"]
    n_bad = sum(s >= FACTS["first_nonfinite_step"] for s in steps)
    # points, first_step, last_step, nonfinite, first_nonfinite_step, last_value
    assert re.findall(r"<td>(.*?)</td>", row) == [str(len(steps)), str(steps[0]), str(steps[-1]), str(n_bad),
                                                   str(FACTS["first_nonfinite_step"]), "nan"]


def test_plot_returns_a_matplotlib_figure(analysis):
    from matplotlib.figure import Figure

    fig = analysis.plot()
    assert isinstance(fig, Figure) and fig.axes


def test_load_timeline_gives_the_same_history_as_analyze(analysis):
    timeline = forensics.load_timeline(RUN)
    assert isinstance(timeline, forensics.Timeline)
    pd.testing.assert_frame_equal(timeline.wide(), analysis.timeline.wide())


@pytest.mark.parametrize("name", list(FACTS["checkpoints"]))
def test_scan_checkpoint_is_a_per_tensor_frame_naming_the_poisoned_blocks(name):
    stats = forensics.scan_checkpoint(RUN / name)
    assert isinstance(stats, pd.DataFrame)
    assert list(stats.columns[:len(STATS_COLUMNS)]) == STATS_COLUMNS
    damaged = stats.loc[(stats["n_nan"] + stats["n_inf"]) > 0, "block"]
    assert sorted(damaged.unique()) == FACTS["checkpoints"][name]["nonfinite_blocks"]


def test_diff_checkpoints_flags_the_tensors_that_became_nonfinite():
    changes = forensics.diff_checkpoints(RUN / GOOD, RUN / BAD)
    assert list(changes.columns) == DIFF_COLUMNS
    broke = changes[changes["became_nonfinite"]]
    assert sorted(broke["block"].unique()) == FACTS["checkpoints"][BAD]["nonfinite_blocks"]
    assert (broke["rel_change"] == math.inf).all()


def test_bisect_returns_a_bisect_result_with_the_facts_pair():
    first, last = list(FACTS["checkpoints"])[0], list(FACTS["checkpoints"])[-1]
    result = forensics.bisect(RUN / first, RUN / last)
    assert isinstance(result, forensics.BisectResult)
    assert (result.last_good.name, result.first_bad.name) == (GOOD, BAD)
    assert result.first_bad.nonfinite_blocks == FACTS["checkpoints"][BAD]["nonfinite_blocks"]
    html = result._repr_html_()
    assert GOOD in html and BAD in html


def test_the_api_prints_nothing(capfd, analysis):
    forensics.analyze(RUN)
    forensics.load_timeline(RUN)
    forensics.scan_checkpoint(RUN / BAD)
    forensics.diff_checkpoints(RUN / GOOD, RUN / BAD)
    result = forensics.bisect(RUN / GOOD, RUN / BAD)
    analysis.plot()
    for obj in (analysis, analysis.timeline, analysis.checkpoints, result):
        obj._repr_html_()
    assert capfd.readouterr() == ("", "")


# --- _repr_html_ escapes names that come from a run's files ------------------------------------------------

@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    """A trainer_state.json with an HTML metric name, and two checkpoints with HTML folder and tensor names."""
    transformers = pytest.importorskip("transformers")
    from safetensors.numpy import save_file

    run = tmp_path_factory.mktemp("hostile")
    history = [{"step": s, "loss": 2.0 - s / 10, EVIL_METRIC: float(s), "epoch": s / 4} for s in (1, 2, 3, 4)]
    transformers.TrainerState(global_step=4, max_steps=4, log_history=history).save_to_json(
        str(run / "trainer_state.json"))
    for folder, value in (("checkpoint-2", 1.0), (EVIL_CHECKPOINT, math.nan)):
        (run / folder).mkdir()
        save_file({EVIL_TENSOR: np.full(4, value, dtype=np.float32), "model.layers.0.w": np.ones(3, np.float32)},
                  str(run / folder / "model.safetensors"))
    return run


def _assert_escaped(html: str, raw: str, escaped: str) -> None:
    assert raw not in html
    assert escaped in html


def test_timeline_html_escapes_a_hostile_metric_name(hostile_run):
    timeline = forensics.load_timeline(hostile_run)
    assert EVIL_METRIC in timeline.metrics
    _assert_escaped(timeline._repr_html_(), "<script", "&lt;script&gt;alert(")


def test_analysis_and_checkpoint_html_escape_a_hostile_checkpoint_name(hostile_run):
    a = forensics.analyze(hostile_run)
    assert a.first_bad_checkpoint.name == EVIL_CHECKPOINT
    for html in (a._repr_html_(), a.checkpoints._repr_html_()):
        _assert_escaped(html, "<b onmouseover", "&lt;b onmouseover=alert(1)&gt;checkpoint-4")
        assert "<script" not in html


def test_bisect_html_escapes_hostile_checkpoint_and_tensor_names(hostile_run):
    result = forensics.bisect(hostile_run / "checkpoint-2", hostile_run / EVIL_CHECKPOINT)
    assert result.first_bad.nonfinite_tensors == [EVIL_TENSOR]
    html = result._repr_html_()
    _assert_escaped(html, "<b onmouseover", "&lt;b onmouseover=alert(1)&gt;checkpoint-4")
    _assert_escaped(html, "<img src=x", "&lt;img src=x onerror=alert(2)&gt;.weight")


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "sample_runs").iterdir() if p.is_dir()))
def test_every_finding_kind_and_status_on_the_sample_runs_is_one_the_contract_names(name):
    from forensics.checkpoints.types import STATUSES
    from forensics.findings import CONFIDENCES, KINDS, SEVERITIES

    a = forensics.analyze(ROOT / "sample_runs" / name, workers=1)
    assert {f.kind for f in a.findings} <= set(KINDS)
    assert {f.severity for f in a.findings} <= set(SEVERITIES)
    assert {c.status for c in a.checkpoints} <= set(STATUSES)
    assert {c.confidence for c in a.causes} <= set(CONFIDENCES)


def test_a_cause_or_checkpoint_with_a_value_outside_the_contract_is_refused():
    from forensics.checkpoints.types import CheckpointInfo, CheckpointRef

    with pytest.raises(ValueError, match="confidence"):
        forensics.Cause("lr_too_high", "certain", [], "")
    with pytest.raises(ValueError, match="status"):
        CheckpointInfo(CheckpointRef("c", 1, Path("c"), ()), "broken")
