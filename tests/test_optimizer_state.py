"""The optimizer state beside HF Trainer checkpoints: read without torch, checked against torch.

Runs are made by the real transformers.Trainer (conftest fixtures): `blowup_dense` (LR 10 from step 21,
a checkpoint with its optimizer.pt every 5 steps, first NaN at step 34), `nan` (a NaN injected into
the last block before step 21), `healthy`, `spike` and `lora`. Every number is computed a second
time with torch from `torch.load(optimizer.pt)` and the checkpoint's weights.
"""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys

import pytest

import forensics
from forensics.checkpoints.layout import open_checkpoint
from forensics.checkpoints.optimizer_file import OptimizerFile
from forensics.checkpoints.adam_sums import SATURATED
from forensics.checkpoints.optimizer_stats import read_optimizer_state

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
safetensors_torch = pytest.importorskip("safetensors.torch")


def _true_names(spec, tmp_path) -> list[str]:
    """The parameter name of each optimizer index, as the real Trainer builds its optimizer."""
    from support import runmaker_loop as loop

    model = loop.build_model(spec)
    trainer = transformers.Trainer(model=model, args=loop.training_args(tmp_path / "out", spec))
    optimizer = trainer.create_optimizer()
    name_of = {id(p): n for n, p in model.named_parameters()}
    return [name_of[id(p)] for group in optimizer.param_groups for p in group["params"]]


def _torch_state(folder):
    return torch.load(folder / "optimizer.pt", map_location="cpu", weights_only=True)


def test_indices_are_mapped_to_the_names_the_trainer_used(blowup_dense_run, tmp_path):
    path, facts = blowup_dense_run
    from support.fixture_runs import FIXTURE_SPECS

    state = read_optimizer_state(open_checkpoint(path / "checkpoint-20"))
    truth = _true_names(FIXTURE_SPECS["blowup_dense"], tmp_path)
    assert [state.mapping.names[i] for i in range(len(truth))] == truth
    assert state.mapping.how in ("name order", "model definition")


def test_lora_indices_map_to_the_adapter_tensors(lora_run, tmp_path):
    path, _ = lora_run
    from support.fixture_runs import FIXTURE_SPECS

    state = read_optimizer_state(open_checkpoint(path / "checkpoint-10"))
    truth = [n.replace(".default", "") for n in _true_names(FIXTURE_SPECS["lora"], tmp_path)]
    assert [state.mapping.names[i] for i in range(len(truth))] == truth
    assert set(state.blocks["block"]) == {"model.layers.0", "model.layers.1"}


def test_moments_read_without_torch_are_the_bytes_torch_loads(blowup_dense_run):
    path, _ = blowup_dense_run
    saved = _torch_state(path / "checkpoint-25")["state"]
    opt = OptimizerFile(path / "checkpoint-25" / "optimizer.pt")
    try:
        for index, param in opt.params.items():
            assert param.step == float(saved[index]["step"])
            for key in ("exp_avg", "exp_avg_sq"):
                entry = getattr(param, key)
                expected = saved[index][key].contiguous().view(-1)
                with open(entry.file, "rb") as fh:
                    fh.seek(entry.offset)
                    raw = fh.read(entry.numel * 4)
                got = torch.frombuffer(bytearray(raw), dtype=torch.float32)
                # bit for bit: a moment that went NaN is NaN in both, and NaN != NaN
                assert torch.equal(got.view(torch.int32), expected.view(torch.int32)), (index, key)
    finally:
        opt.close()


def _torch_block_stats(folder, names: dict[int, str]) -> dict[str, dict[str, float]]:
    """The per-block figures computed by torch directly, float64."""
    state = _torch_state(folder)
    weights = safetensors_torch.load_file(folder / "model.safetensors")
    sums: dict[str, dict[str, float]] = {}
    for group in state["param_groups"]:
        b1, b2 = group["betas"]
        for index in group["params"]:
            s = state["state"][index]
            m, v = s["exp_avg"].double(), s["exp_avg_sq"].double()
            w = weights[names[index]].double()
            t = float(s["step"])
            u = (m / (1 - b1 ** t)) / ((v / (1 - b2 ** t)).sqrt() + group["eps"])
            update = u + group["weight_decay"] * w
            name = names[index]
            block = forensics.checkpoints.blocks.module_of(name)
            acc = sums.setdefault(block, dict(n=0, m=0.0, v=0.0, eps=0, sat=0, upd=0.0, w=0.0, lr=group["lr"]))
            acc["n"] += m.numel()
            acc["m"] += float((m * m).sum())
            acc["v"] += float((v * v).sum())
            acc["eps"] += int(((v / (1 - b2 ** t)).sqrt() < group["eps"]).sum())
            acc["sat"] += int((u.abs() > SATURATED).sum())
            acc["upd"] += float((update * update).sum())
            acc["w"] += float((w * w).sum())
    return {b: {"m_rms": math.sqrt(a["m"] / a["n"]), "v_rms": math.sqrt(a["v"] / a["n"]),
                "eps_dominated": a["eps"] / a["n"], "saturated": a["sat"] / a["n"],
                "update_ratio": a["lr"] * math.sqrt(a["upd"] / a["w"])} for b, a in sums.items()}


@pytest.mark.parametrize("checkpoint", ["checkpoint-20", "checkpoint-25"])
def test_block_figures_agree_with_torch(blowup_dense_run, checkpoint):
    path, _ = blowup_dense_run
    state = read_optimizer_state(open_checkpoint(path / checkpoint))
    expected = _torch_block_stats(path / checkpoint, state.mapping.names)
    got = {row["block"]: row for row in state.blocks.to_dict("records")}
    assert set(got) == set(expected)
    for block, figures in expected.items():
        for key, value in figures.items():
            assert got[block][key] == pytest.approx(value, rel=1e-5, abs=1e-12), (block, key)


def test_update_ratios_between_checkpoints_agree_with_torch(blowup_dense_run):
    path, _ = blowup_dense_run
    a = forensics.analyze(path)
    step = next(u for u in a.updates if u.from_name == "checkpoint-15")
    w1 = safetensors_torch.load_file(path / "checkpoint-15" / "model.safetensors")
    w2 = safetensors_torch.load_file(path / "checkpoint-20" / "model.safetensors")
    block = "model.layers.1"
    names = [n for n in w1 if n.startswith(block + ".")]
    diff = math.sqrt(sum(float(((w2[n].double() - w1[n].double()) ** 2).sum()) for n in names))
    base = math.sqrt(sum(float((w1[n].double() ** 2).sum()) for n in names))
    assert step.to_name == "checkpoint-20"
    assert step.blocks[block] == pytest.approx(diff / base, rel=1e-5)


def test_precursor_is_named_before_the_first_nonfinite_step(blowup_dense_run):
    path, facts = blowup_dense_run
    a = forensics.analyze(path)
    precursor = [f for f in a.findings if f.kind == "update_precursor"]
    assert len(precursor) == 1
    finding = precursor[0]
    assert finding.step < facts.first_nonfinite_step
    ahead = [c for c in a.checkpoints if finding.step <= c.step < facts.first_nonfinite_step]
    assert len(ahead) >= 1 and finding.evidence["checkpoints_before_nonfinite"] == len(ahead)
    assert finding.evidence["block"] in facts.blocks + ("model.embed_tokens", "lm_head")
    assert finding.step == 25  # the first checkpoint saved after the LR jump at step 21


def test_checkpoints_after_the_precursor_are_not_safe(blowup_dense_run):
    path, facts = blowup_dense_run
    a = forensics.analyze(path)
    assert a.last_good_checkpoint.name == "checkpoint-20"
    after = {c["name"]: c["after_incident_step"] for c in a.to_dict()["checkpoints"]}
    assert after["checkpoint-25"] == after["checkpoint-30"] == 25


def test_nan_run_optimizer_stops_counting_where_the_gradients_went_nan(nan_run):
    """The NaN gradients of this run never reach Adam (the update is dropped, its `step` stays): the saved
    moments stay finite and the optimizer's step count falls behind the trainer's."""
    path, facts = nan_run
    a = forensics.analyze(path)
    bad = next(c for c in a.checkpoints if c.name == facts.first_bad_checkpoint)
    saved = _torch_state(path / facts.first_bad_checkpoint)["state"]
    torch_step = int(max(float(s["step"]) for s in saved.values()))
    finite = all(torch.isfinite(s[k]).all() for s in saved.values() for k in ("exp_avg", "exp_avg_sq"))
    assert bad.optimizer.is_finite == finite
    assert bad.optimizer.step == torch_step
    assert bad.optimizer.skipped_steps == bad.step - torch_step > 0
    finding = next(f for f in a.findings if f.kind == "skipped_steps" and f.evidence.get("source") == "optimizer state")
    assert finding.evidence["skipped_by_checkpoint"][bad.name] == bad.step - torch_step
    good = a.last_good_checkpoint
    assert good.name == facts.last_good_checkpoint and good.optimizer_finite is True


def _poison_moment(folder, index: int = 3) -> None:
    state = _torch_state(folder)
    state["state"][index]["exp_avg_sq"].view(-1)[0] = float("nan")
    (folder / "optimizer.pt").unlink()
    torch.save(state, folder / "optimizer.pt")


def test_finite_weights_with_nan_moments_are_never_called_safe(healthy_run, tmp_path):
    source, _ = healthy_run
    run = tmp_path / "run"
    shutil.copytree(source, run)
    _poison_moment(run / "checkpoint-30")
    a = forensics.analyze(run)
    poisoned = next(c for c in a.checkpoints if c.name == "checkpoint-30")
    assert poisoned.status == "ok" and poisoned.optimizer_finite is False
    assert a.last_good_checkpoint.name == "checkpoint-20"
    finding = next(f for f in a.findings if f.kind == "nonfinite_optimizer_state")
    assert finding.severity == "error" and finding.evidence["weights_finite"] is True
    assert finding.evidence["nonfinite_tensors"] == [f"{poisoned.optimizer.mapping.names[3]}.exp_avg_sq"]
    assert a.status == "broken"


@pytest.mark.parametrize("fixture", ["healthy_run", "spike_run"])
def test_healthy_and_recovering_runs_get_no_optimizer_finding(fixture, request):
    path, _ = request.getfixturevalue(fixture)
    a = forensics.analyze(path)
    kinds = {f.kind for f in a.findings}
    assert not kinds & {"update_precursor", "nonfinite_optimizer_state"}
    assert all(c.optimizer is not None and c.optimizer.is_finite for c in a.checkpoints)
    assert all(c.optimizer.skipped_steps == 0 for c in a.checkpoints)


def test_json_has_optimizer_per_checkpoint_and_updates(blowup_dense_run):
    path, _ = blowup_dense_run
    out = subprocess.run([sys.executable, "-m", "forensics", "analyze", str(path), "--json"],
                         capture_output=True, text=True)
    data = json.loads(out.stdout)
    first = data["checkpoints"][0]["optimizer"]
    assert first["file"].endswith("checkpoint-5/optimizer.pt")
    assert first["nonfinite_tensors"] == []
    assert {"block", "m_rms", "v_rms", "eps_dominated", "update_ratio"} <= set(first["blocks"][0])
    assert data["updates"][0]["from"] == "checkpoint-5" and data["updates"][0]["to"] == "checkpoint-10"
    assert "model.layers.0" in data["updates"][0]["blocks"]


def test_json_optimizer_is_null_without_optimizer_state():
    run = forensics.__file__.rsplit("/", 2)[0] + "/sample_runs/nan_masked"  # saved with save_only_model
    data = forensics.analyze(run).to_dict()
    assert all(c["optimizer"] is None for c in data["checkpoints"])


def test_scan_of_optimizer_file_gives_rows_per_moment(blowup_dense_run):
    path, _ = blowup_dense_run
    out = subprocess.run([sys.executable, "-m", "forensics", "scan", str(path / "checkpoint-20" / "optimizer.pt"),
                          "--json"], capture_output=True, text=True)
    rows = json.loads(out.stdout)
    saved = _torch_state(path / "checkpoint-20")["state"]
    assert len(rows) == 2 * len(saved)
    row = next(r for r in rows if r["name"] == "model.layers.1.mlp.down_proj.weight" and r["state"] == "exp_avg")
    assert row["block"] == "model.layers.1"
    index = read_optimizer_state(open_checkpoint(path / "checkpoint-20")).mapping.names
    i = next(k for k, n in index.items() if n == row["name"])
    assert row["l2"] == pytest.approx(float(saved[i]["exp_avg"].double().norm()), rel=1e-6)


def test_truncated_optimizer_file_is_one_skipped_line_and_the_rest_goes_on(healthy_run, tmp_path):
    source, _ = healthy_run
    run = tmp_path / "run"
    shutil.copytree(source, run)
    target = run / "checkpoint-20" / "optimizer.pt"
    target.write_bytes(target.read_bytes()[:2000])
    a = forensics.analyze(run)
    assert any(s.path.endswith("checkpoint-20/optimizer.pt") for s in a.skipped)
    ck = next(c for c in a.checkpoints if c.name == "checkpoint-20")
    assert ck.optimizer is None and ck.optimizer_problem
    assert ck.status == "ok"
    out = subprocess.run([sys.executable, "-m", "forensics", "analyze", str(run)], capture_output=True, text=True)
    assert "Traceback" not in out.stderr + out.stdout


def test_unmatched_shapes_fall_back_to_indices(blowup_dense_run, tmp_path):
    path, _ = blowup_dense_run
    folder = tmp_path / "ck"
    folder.mkdir()
    shutil.copy(path / "checkpoint-20" / "optimizer.pt", folder)
    weights = safetensors_torch.load_file(path / "checkpoint-20" / "model.safetensors")
    weights.pop("lm_head.weight")
    safetensors_torch.save_file(weights, folder / "model.safetensors")
    state = read_optimizer_state(open_checkpoint(folder))
    assert state.mapping.how == "indices" and "do not match" in state.mapping.note
    assert state.blocks.empty


def test_report_shows_where_the_weights_were_heading(blowup_dense_run, tmp_path):
    path, _ = blowup_dense_run
    page = tmp_path / "report.html"
    out = subprocess.run([sys.executable, "-m", "forensics", "analyze", str(path), "--html", str(page)],
                         capture_output=True, text=True)
    assert out.returncode == 1, out.stderr
    html = page.read_text()
    assert 'id="updates-plot" src="data:image/png;base64,' in html
    assert 'id="precursor"' in html and "update ratio" in html


def test_attention_bound_and_norms_between_checkpoints_agree_with_torch(blowup_dense_run):
    path, _ = blowup_dense_run
    a = forensics.analyze(path)
    step = next(u for u in a.updates if u.to_name == "checkpoint-20")
    w = safetensors_torch.load_file(path / "checkpoint-20" / "model.safetensors")
    for layer in ("model.layers.0", "model.layers.1"):
        q, k = w[f"{layer}.self_attn.q_proj.weight"].double(), w[f"{layer}.self_attn.k_proj.weight"].double()
        gain = float(w[f"{layer}.input_layernorm.weight"].double().abs().max())
        assert step.attention_bound_to[layer] == pytest.approx(float(q.norm() * k.norm()) * gain ** 2, rel=1e-5)
    assert step.norms_to["model.embed_tokens"] == pytest.approx(float(w["model.embed_tokens.weight"].double().norm()),
                                                                rel=1e-5)
    data = a.to_dict()["updates"]
    assert {"norms_to", "attention_bound_to"} <= set(data[0])


def test_over_the_read_budget_only_the_key_checkpoints_have_their_optimizer_measured(blowup_dense_run):
    from dataclasses import replace as with_

    from forensics.config import Thresholds

    path, facts = blowup_dense_run
    a = forensics.analyze(path, thresholds=with_(Thresholds(), optimizer_read_budget=1))
    measured = [c.name for c in a.checkpoints if c.optimizer is not None]
    assert facts.last_good_checkpoint in measured and facts.first_bad_checkpoint in measured
    assert a.checkpoints[-1].name in measured and len(measured) <= 3
    assert any("not measured" in s.reason and "budget" in s.reason for s in a.skipped)


def test_over_the_update_budget_only_the_pairs_nearest_the_first_bad_checkpoint_are_compared(blowup_dense_run):
    from forensics.checkpoints.run_checks import check_run_checkpoints
    from forensics.checkpoints.updates import checkpoint_updates
    from forensics.config import Thresholds

    path, _ = blowup_dense_run
    infos, _ = check_run_checkpoints(path, Thresholds(), workers=1)
    every, _ = checkpoint_updates(infos, workers=1)
    pair_bytes = 2 * (path / "checkpoint-30" / "model.safetensors").stat().st_size
    few, notes = checkpoint_updates(infos, workers=1, budget=2 * pair_bytes)
    assert [u.to_name for u in few] == [u.to_name for u in every][-2:] == ["checkpoint-30", "checkpoint-35"]
    assert len(notes) == 1 and "not compared" in notes[0]
