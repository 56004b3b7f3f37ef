"""Metamorphic tests: a real run's verdict under a coarser logging step or fewer printed digits.

Review day 6: does a verdict survive harmless changes to a real run's logs? Each test takes a real case of
tests/realworld/, logs it the way another user would (a coarser logging_steps, a loss printed with fewer digits),
writes the changed copy under tmp_path and checks that the verdict the real log gets still holds. Each failed on the
code as reviewed (commit 4385ad5)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import forensics


CORPUS = Path(__file__).parent / "realworld"


def _thinned_trainer_state(case: str, every: int, tmp_path: Path) -> Path:
    """A copy of `case` whose trainer_state.json keeps every `every`-th training record (as logging_steps `every`
    times larger would log it, roughly) and every evaluation."""
    folder = tmp_path / case
    shutil.copytree(CORPUS / case, folder)
    state = json.loads((folder / "trainer_state.json").read_text())
    kept, k = [], 0
    for row in state["log_history"]:
        if "loss" in row:
            if k % every == 0:
                kept.append(row)
            k += 1
        else:
            kept.append(row)
    state["log_history"] = kept
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))
    return folder


def _kinds(analysis) -> set[str]:
    return {f.kind for f in analysis.findings}


def test_a_noisy_plateau_logged_every_fifth_point_does_not_diverge(tmp_path):
    """cloud-zhoubingye's ChatGLM3 LoRA, a loss that sits at about 0.18 with point noise of 0.14 (0.0 to 0.97) for
    2,900 steps: warning for its zero-loss windows. Logged every 50 steps instead of 10 (60 points), the lowest
    7-point median (0.11) and the last five points' median (0.28) are both that noise, 1.2 point sigmas apart, and
    the tool called it a divergence ('2.5x the low'): broken. A rise the loss's own noise explains is no divergence."""
    a = forensics.analyze(_thinned_trainer_state("cloud-zhoubingye_GynecologicalPrediction", 5, tmp_path))
    assert "divergence" not in _kinds(a)
    assert a.status != "broken"


def test_a_loss_printed_with_four_significant_digits_agrees_with_tensorboard(tmp_path):
    """lucamiletto's Alpaca LoRA: TensorBoard events and the checkpoints' trainer_state.json of one run, healthy.
    With the trainer_state losses written to 4 significant digits (as a 4-decimal Trainer writes a loss over 1),
    the tool warned that the files disagree on 40 points, 'Two runs' logs in one folder?', where the values agree to
    the digits printed."""
    folder = tmp_path / "lucamiletto_MediQAlpaca"
    shutil.copytree(CORPUS / "lucamiletto_MediQAlpaca", folder)
    for path in folder.rglob("trainer_state.json"):
        state = json.loads(path.read_text())
        for row in state["log_history"]:
            for key in ("loss", "eval_loss"):
                if isinstance(row.get(key), float):
                    row[key] = float(f"{row[key]:.4g}")
        path.write_text(json.dumps(state, indent=2))
    a = forensics.analyze(folder)
    assert "source_disagreement" not in _kinds(a)
    assert a.status == "healthy"


def test_a_schedule_that_ran_out_is_seen_at_a_coarser_logging_step(tmp_path):
    """marthinsurya's QLoRA SFT: the learning rate decays linearly to exactly 0 at steps 60 and 300 and starts over
    each time (the run restarted with a larger max_steps), lr_anomaly. Logged every 10 steps instead of 5, the last
    rate before each restart is 3e-5 and 5.2e-6 (11% and 1.9% of the peak, the decay's last step short of 0) and
    the restart went unseen: healthy. A decay whose next step would reach 0 has run out, whatever the log's step."""
    a = forensics.analyze(_thinned_trainer_state("marthinsurya_lab2-ID2223", 2, tmp_path))
    assert "lr_anomaly" in _kinds(a)
    assert a.status == "warning"


def test_grad_norm_zero_at_most_logged_steps_is_seen_without_a_zero_loss_window(tmp_path):
    """The same ChatGLM3 LoRA logged every 50 steps: its four windows of loss 0.0 are not among the 60 points, but
    grad_norm is still exactly 0 at 37 of them (168 of 300 in the real log), between non-zero values, with the loss
    finite and non-zero there. More than half the updates carried no gradient; the tool said healthy."""
    a = forensics.analyze(_thinned_trainer_state("cloud-zhoubingye_GynecologicalPrediction", 5, tmp_path))
    assert a.status == "warning"
    assert any(f.kind == "skipped_steps" and f.evidence.get("grad_norm_zero_share", 0) > 0.5 for f in a.findings)


def test_a_trainer_output_dir_whose_state_is_in_its_checkpoints_keeps_the_method(tmp_path):
    """BREKOJI's full SFT: a model config.json saved by the Trainer beside trainer_state.json, no adapter: method
    full. The same files laid out as an output_dir whose trainer_state.json is only in its checkpoints (trainer.
    save_state() not called: checkpoint-232/ and checkpoint-387/, the final config.json at the top) lost the method
    (unknown)."""
    case = "BREKOJI_FT-Data-Ranker-1B-NO.5"
    folder = tmp_path / case
    shutil.copytree(CORPUS / case, folder)
    state = json.loads((folder / "trainer_state.json").read_text())
    (folder / "trainer_state.json").unlink()
    history = state["log_history"]
    early = history[:int(len(history) * 0.6)]
    for rows in (early, history):
        step = max(row["step"] for row in rows)
        (folder / f"checkpoint-{step}").mkdir()
        (folder / f"checkpoint-{step}" / "trainer_state.json").write_text(
            json.dumps(dict(state, log_history=rows, global_step=step), indent=2))
    a = forensics.analyze(folder)
    assert a.run_profile.to_dict()["method"] == "full"
    assert a.status == forensics.analyze(CORPUS / case).status
