"""bisect: exact last good / first bad in O(log n) probes, the diff, the window, the JSON contract."""
from __future__ import annotations

import json
import math

import pytest

from support.checkpoint_files import checkpoint_series, poison, qwen2_state, save_tensors
from forensics.analysis import load_timeline
from forensics.bisection import bisect_checkpoints as bisect
from forensics.bisection import bisect_to_dict
from forensics.checkpoints import block_sort_key, open_checkpoint
from forensics.findings import Finding

STEPS = list(range(100, 1700, 100))  # 16 checkpoints


def _max_probes(n: int) -> int:
    return math.ceil(math.log2(n)) + 2


@pytest.mark.parametrize("prefix", ["checkpoint", "ckpt"])
@pytest.mark.parametrize("poison_from", [100, 200, 800, 900, 1500, 1600])
def test_exact_last_good_and_first_bad(tmp_path, prefix, poison_from):
    folders = checkpoint_series(tmp_path, STEPS, poison_from, prefix=prefix)
    result = bisect(folders[0], folders[-1], workers=1)
    first_bad = result.first_bad
    assert (first_bad.name, first_bad.step) == (f"{prefix}-{poison_from}", poison_from)
    if poison_from == STEPS[0]:
        assert result.last_good is None
    else:
        assert result.last_good.name == f"{prefix}-{poison_from - 100}"
    assert first_bad.nonfinite_blocks == ["model.layers.2"]
    assert len(result.probed) <= _max_probes(len(STEPS))
    assert len(result.candidates) == len(STEPS)
    for ref, verdict in result.probed:
        assert verdict == ("bad" if ref.step >= poison_from else "ok")


def test_a_healthy_range_has_no_first_bad(tmp_path):
    folders = checkpoint_series(tmp_path, STEPS[:5], poison_from=None)
    result = bisect(folders[0], folders[-1], workers=1)
    assert result.first_bad is None and result.last_good.name == "checkpoint-500"
    assert [v for _, v in result.probed] == ["ok"]
    assert result.window == (100, 500)
    assert len(result.changes) == len(qwen2_state())  # what moved across the range


def test_nothing_between_compares_the_two(tmp_path):
    good = qwen2_state(seed=1)
    bad = qwen2_state(seed=1)
    bad["model.layers.1.mlp.up_proj.weight"] *= 3.0
    names = poison(bad, "model.layers.3")
    a = save_tensors(tmp_path / "run_a" / "model.safetensors", good)
    b = save_tensors(tmp_path / "run_b" / "model.safetensors", bad)
    result = bisect(a, b, workers=1)
    assert result.last_good.path == a and result.first_bad.ref.path == b
    assert [v for _, v in result.probed] == ["bad", "ok"]
    assert sorted(result.first_bad.nonfinite_tensors) == sorted(names)
    changes = result.changes.set_index("tensor")
    assert all(changes.loc[n, "became_nonfinite"] for n in names)
    assert changes.loc["model.layers.1.mlp.up_proj.weight", "rel_change"] == pytest.approx(2.0, rel=1e-6)


def test_an_unreadable_checkpoint_drops_out_of_the_search(tmp_path):
    folders = checkpoint_series(tmp_path, STEPS[:9], poison_from=700)
    broken = folders[4] / "model.safetensors"
    broken.write_bytes(broken.read_bytes()[:100])
    result = bisect(folders[0], folders[-1], workers=1)
    assert (result.last_good.name, result.first_bad.name) == ("checkpoint-600", "checkpoint-700")
    assert ("checkpoint-500", "unreadable") in [(r.name, v) for r, v in result.probed]


def test_criterion_beyond_nonfinite(tmp_path):
    for i, step in enumerate(STEPS[:6]):
        state = qwen2_state(seed=i)
        state["model.layers.0.mlp.down_proj.weight"][0, 0] = 10.0 ** i  # grows without going non-finite
        save_tensors(tmp_path / f"checkpoint-{step}" / "model.safetensors", state)
    a, b = tmp_path / "checkpoint-100", tmp_path / "checkpoint-600"
    assert bisect(a, b, workers=1).first_bad is None
    result = bisect(a, b, criterion="absmax>5e3", workers=1)
    assert (result.last_good.name, result.first_bad.name) == ("checkpoint-400", "checkpoint-500")
    assert result.first_bad.status == "bad"
    assert result.first_bad.over_bound_tensors == ["model.layers.0.mlp.down_proj.weight"]
    assert bisect_to_dict(result)["criterion"] == "absmax > 5000"


def test_findings_inside_the_window_and_the_json_contract(tmp_path):
    folders = checkpoint_series(tmp_path, STEPS[:8], poison_from=500)
    findings = [Finding("grad_norm_spike", "warning", step, f"spike at {step}") for step in (350, 400, 401, 500, 501)]
    result = bisect(folders[0], folders[-1], findings=findings, workers=1)
    assert [f.step for f in result.findings] == [401, 500]
    d = bisect_to_dict(result)
    json.dumps(d, allow_nan=False)
    assert d["last_good"] == {"name": "checkpoint-400", "step": 400, "path": str(folders[3])}
    assert {k: d["first_bad"][k] for k in ("name", "step", "path", "nonfinite_blocks")} == {
        "name": "checkpoint-500", "step": 500, "path": str(folders[4]), "nonfinite_blocks": ["model.layers.2"]}
    assert d["first_bad"]["nonfinite_tensors"] == sorted(poison(qwen2_state(), "model.layers.2"), key=block_sort_key)
    assert [p["verdict"] for p in d["probed"]] == [v for _, v in result.probed]
    assert set(d["probed"][0]) >= {"name", "step", "verdict"}
    assert d["window"] == {"from_step": 400, "to_step": 500}
    assert [f["step"] for f in d["findings"]] == [401, 500]
    assert d["changes"][0]["rel_change"] is None and d["changes"][0]["n_new_nonfinite"] > 0
    assert d["changes"][0]["block"] == "model.layers.2"
    assert {"tensor", "block", "rel_change"} <= set(d["changes"][0])
    assert d["damaged_blocks"] == [{"block": "model.layers.2", "tensors": d["first_bad"]["nonfinite_tensors"]}]


@pytest.mark.parametrize("run", ["nan_run", "bf16_run", "gpt2_run"])
def test_bisect_on_real_trainer_runs_with_the_timeline(run, request):
    path, facts = request.getfixturevalue(run)
    names = list(facts.checkpoints)
    timeline = load_timeline(path)
    result = bisect(open_checkpoint(path / names[0]), path / names[-1], timeline=timeline, workers=1)
    assert result.last_good.name == facts.last_good_checkpoint
    assert result.first_bad.name == facts.first_bad_checkpoint
    assert result.first_bad.nonfinite_blocks == facts.checkpoints[facts.first_bad_checkpoint]["nonfinite_blocks"]
    lo, hi = result.window
    assert (lo, hi) == (facts.checkpoints[facts.last_good_checkpoint]["step"],
                        facts.checkpoints[facts.first_bad_checkpoint]["step"])
    assert lo < facts.first_nonfinite_step <= hi  # each run goes NaN between two checkpoints
    firsts = [m["first_nonfinite_step"] for m in result.window_summary.values() if m["first_nonfinite_step"]]
    assert min(firsts) == facts.first_nonfinite_step
    assert any(f.step == facts.first_nonfinite_step for f in result.findings)
    json.dumps(bisect_to_dict(result), allow_nan=False)


def test_a_bisect_result_is_frozen_prints_one_line_and_shows_itself_in_html(tmp_path):
    import dataclasses

    folders = checkpoint_series(tmp_path, STEPS[:8], poison_from=500)
    result = bisect(folders[0], folders[-1], workers=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.window = (0, 0)
    text = str(result)
    assert "\n" not in text and len(text) < 300
    assert "last good checkpoint-400" in text and "first bad checkpoint-500" in text
    assert "model.layers.2" in text
    html = result._repr_html_()
    assert html.startswith('<div class="forensics-bisect">') and "checkpoint-500" in html
    assert result.to_dict() == bisect_to_dict(result)
