"""`forensics compare` on the seed-style pairs of INCIDENTS.md, made with the real Trainer.

Case 3's fp16 run (loss overflows from step 31) against its bf16 twin, and case 5's DeepSpeed run
(`communication_data_type: fp32`, early spike and collapse) against a twin whose DeepSpeed config
lacks that key and trains normally. What must come first is known from how the pairs were made:
the one setting that differs on purpose.
"""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from click.testing import CliRunner  # noqa: E402

from support import incidents as inc  # noqa: E402
from support import runmaker as rm  # noqa: E402
from forensics.cli import cli  # noqa: E402
from forensics.compare import compare  # noqa: E402


def _bf16_twin(out):
    spec = rm.RunSpec(arch="qwen2", learning_rate=1e-5)
    with inc._patched("training_args", inc._with_args(bf16=True)):
        return rm.make_run(out, spec)


def _deepspeed_twin(out, monkeypatch):
    """Case 5's recipe without `communication_data_type` and without the incident."""
    config = {k: v for k, v in inc._DS_CONFIG.items() if k != "communication_data_type"}
    monkeypatch.setattr(inc, "_DS_CONFIG", config)
    monkeypatch.setattr(inc, "_OVERFLOW_STEPS", range(0))
    spec = rm.RunSpec(arch="qwen2", learning_rate=1e-5, max_steps=20, logging_steps=1, save_steps=10)
    with inc._patched("training_args", inc._with_args(fp16=True, deepspeed="ds_config.json")):
        facts = rm.make_run(out, spec)
    (out / "ds_config.json").write_text(json.dumps(config, indent=2))
    for name, info in facts.checkpoints.items():
        inc._write_deepspeed_states(out / name, info["step"])
    return facts


@pytest.fixture(scope="module")
def fp16_pair(tmp_path_factory):
    base = tmp_path_factory.mktemp("fp16pair")
    bad = inc.case3_fp16(base / "fp16")
    _bf16_twin(base / "bf16")
    return base / "bf16", bad


@pytest.fixture(scope="module")
def deepspeed_pair(tmp_path_factory):
    base = tmp_path_factory.mktemp("dspair")
    bad = inc.case5_deepspeed(base / "comm_fp32")
    with pytest.MonkeyPatch.context() as mp:
        _deepspeed_twin(base / "plain", mp)
    return base / "plain", bad


def test_fp16_twin_ranks_precision_first(fp16_pair):
    good, bad = fp16_pair
    c = compare([good, bad.path])
    assert [r.status for r in c.runs][1] == "broken" and c.reference == 0
    top = c.config_diff[0]
    assert top.topic == "precision" and top.risk == "high", top
    assert {d.key for d in c.config_diff if d.risk == "high"} <= {"precision", "fp16", "bf16"}


def test_fp16_twin_parts_where_the_overflow_starts(fp16_pair):
    good, bad = fp16_pair
    c = compare([good, bad.path], check_checkpoints=False)
    first = bad.facts.first_nonfinite_step
    loss = [p for p in c.parted if p.metric == "loss"]
    assert loss and loss[0].step == first and loss[0].run == 1


def test_deepspeed_twin_ranks_communication_dtype_first(deepspeed_pair):
    good, bad = deepspeed_pair
    c = compare([good, bad.path], check_checkpoints=False)
    top = c.config_diff[0]
    assert top.key == "ds.communication_data_type" and top.risk == "high", c.config_diff[:3]
    assert top.values == (None, "fp32")


def test_the_order_of_the_runs_does_not_change_the_ranking(deepspeed_pair):
    good, bad = deepspeed_pair
    c = compare([bad.path, good], check_checkpoints=False)
    assert c.reference == 1 and c.config_diff[0].key == "ds.communication_data_type"
    assert c.config_diff[0].values == ("fp32", None)


def test_paths_and_names_are_ranked_none_and_last(fp16_pair):
    good, bad = fp16_pair
    c = compare([good, bad.path], check_checkpoints=False)
    risks = [d.risk for d in c.config_diff]
    assert risks == sorted(risks, key=["high", "medium", "low", "none"].index)
    for d in c.config_diff:
        if d.key in ("output_dir", "logging_dir", "run_name", "seed"):
            assert d.risk == "none", d


def test_identical_recipes_show_no_risky_difference(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    spec = rm.RunSpec(max_steps=20, logging_steps=5, save_steps=10)
    rm.make_run(a, spec)
    rm.make_run(b, spec)
    c = compare([a, b])
    assert all(d.risk == "none" for d in c.config_diff), c.config_diff
    assert c.parted == () and [r.status for r in c.runs] == ["healthy", "healthy"]
    assert not c.block_diff.empty and (c.block_diff["rel_change"] < 1e-6).all()


def test_cli_json_contract_and_html(fp16_pair, tmp_path):
    good, bad = fp16_pair
    page = tmp_path / "c.html"
    result = CliRunner().invoke(cli, ["compare", str(good), str(bad.path), "--json", "--no-checkpoints",
                                      "--html", str(page)])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    statuses = [r["status"] for r in data["runs"]]
    assert statuses[1] == "broken" and statuses[0] != "broken"  # LR 1e-5 for 60 steps: may not show learning
    assert {"path", "status", "run_profile"} <= set(data["runs"][0])
    assert {"key", "values", "risk", "why"} <= set(data["config_diff"][0])
    assert data["parted"][0]["metric"] in ("loss", "grad_norm") and "step" in data["parted"][0]
    html = page.read_text()
    assert "data:image/png;base64," in html and "<script" not in html


def test_cli_needs_two_runs(tmp_path):
    result = CliRunner().invoke(cli, ["compare", str(tmp_path)])
    assert result.exit_code == 2 and "two" in result.output
