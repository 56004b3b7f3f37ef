"""Adversarial review of ca9d85f..HEAD (rules 1-8 of the day's second batch): inputs real runs plausibly produce that
the new rules must not misread. A failing test is a misfire; its docstring names the real input it stands for, what
the tool says instead, and where the fix belongs. Passing tests record shapes that held."""
from __future__ import annotations

import json

import numpy as np
import pytest

import forensics
from forensics.ingest.notebook_code import code_values


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _kinds(a):
    return [(f.kind, f.severity, f.step) for f in a.findings]


def _cells(*sources):
    return [{"cell_type": "code", "execution_count": i + 1, "metadata": {}, "source": s, "outputs": []}
            for i, s in enumerate(sources)]


def _hf_console(first, last, grad=True):
    return "".join(f"{{'loss': {2.0 - s / 1000:.4f}, " + ("'grad_norm': 1.1, " if grad else "")
                   + f"'learning_rate': 1e-05, 'epoch': {s / 1000:.3f}}}\n" for s in range(first, last + 1, 10))


# ---- (1) tensorboardX's NaN-or-Inf warning ---------------------------------------------------------------------------


def test_fp16_scaler_calibration_warning_before_the_first_logged_step_is_no_warning(tmp_path):
    """A healthy HF Trainer fp16 run reporting to TensorBoard through tensorboardX: the GradScaler's first updates
    overflow (scale 65536 halving), their grad_norm is inf/nan and tensorboardX prints its warning twice before the
    first logged loss; the console (loss only, as a notebook's table or `disable_tqdm` dicts without grad_norm) is
    finite after. The same run whose console shows `'grad_norm': nan` at those steps is judged the scaler
    calibrating (skipped_steps.py); here the tool says status warning / nonfinite_unlogged at the last step.
    Fix: forensics/ingest/stdout.py:console_facts (note where each warning falls: the step lines before it) and
    forensics/analyzers/crash.py:detect_unlogged_nonfinite (warnings all within scaler_warmup_steps of the start of
    an fp16 run are the scaler calibrating)."""
    text = ("Using auto half precision backend\n"
            "WARNING:root:NaN or Inf found in input tensor.\nWARNING:root:NaN or Inf found in input tensor.\n"
            + _hf_console(10, 600, grad=False))
    (tmp_path / "train.log").write_text(text)
    (tmp_path / "training_args.json").write_text(json.dumps({"fp16": True, "bf16": False, "report_to": ["tensorboard"]}))
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "nonfinite_unlogged"], _kinds(a)


def test_the_warning_quoted_inside_a_longer_line_adds_nothing(tmp_path):
    text = _hf_console(10, 300) + "UserWarning: NaN or Inf found in input tensor. (see tensorboardX#123)\n" \
        + "2024-01-01 10:00:00 - INFO - print('NaN or Inf found in input tensor.')\n"
    (tmp_path / "train.log").write_text(text)
    assert not [f for f in _analyze(tmp_path).findings if f.kind == "nonfinite_unlogged"]


# ---- (2) a notebook that trains in float32 by default ----------------------------------------------------------------

_FP32_MISREAD = {
    "deepspeed_config_file": ("model_engine, opt, _, _ = deepspeed.initialize(model=model, config='ds_config.json')\n"
                              "for batch in loader:\n    loss = model_engine(batch)\n    model_engine.backward(loss)\n"
                              "    model_engine.step()\n"),
    "lightning_precision_in_a_dict": ("import lightning as L\ncfg = {'max_epochs': 3, 'precision': '16-mixed'}\n"
                                      "trainer = L.Trainer(**cfg)\ntrainer.fit(model, datamodule=dm)\n"),
    "lightning_trainer_from_yaml": ("import yaml\nimport pytorch_lightning as pl\n"
                                    "cfg = yaml.safe_load(open('config.yaml'))\ntrainer = pl.Trainer(**cfg['trainer'])\n"
                                    "trainer.fit(model)\n"),
    "trainer_args_from_json_beside_an_sklearn_fit": (
        "le = LabelEncoder()\nle.fit(df['label'])\nargs = TrainingArguments(**json.load(open('args.json')))\n"
        "trainer = Trainer(model=model, args=args, train_dataset=ds)\ntrainer.train()\n"),
    "xla_bf16_env": ("import os\nos.environ['XLA_USE_BF16'] = '1'\nimport torch_xla.core.xla_model as xm\n"
                     "for b in loader:\n    loss = model(b)\n    loss.backward()\n    xm.optimizer_step(opt)\n"),
}


@pytest.mark.parametrize("case", sorted(_FP32_MISREAD))
def test_a_notebook_whose_precision_comes_from_elsewhere_is_not_said_fp32(case):
    """A notebook that trains in its own code (`.backward(...)`, `.fit(...)`) but takes its precision from a config
    file, a dict unpacked into the trainer, or an environment variable: DeepSpeed's `config='ds_config.json'`
    (fp16.enabled in the JSON), Lightning's `Trainer(**cfg)` with `'precision': '16-mixed'`, XLA_USE_BF16 on a TPU.
    The tool sets precision.default_fp32 and the profile says fp32. Fix: forensics/ingest/notebook_code.py:
    _trains_in_default_float32 (a training call's object built from `**kwargs` / a config path, `deepspeed.
    initialize`, `XLA_USE_BF16`, a `'precision'` key: no default known; the `**` check must cover the backward/fit
    path, not only the Trainer path)."""
    assert code_values(_cells(_FP32_MISREAD[case]), "").get("precision.default_fp32") is None


@pytest.mark.parametrize("src", [
    "model = model.to(torch.float16)\nloss.backward()\n",
    "torch.set_default_dtype(torch.bfloat16)\nloss.backward()\n",
    "from tensorflow.keras import mixed_precision\nmixed_precision.set_global_policy('mixed_float16')\nmodel.fit(x, y)\n",
    "accelerator = Accelerator(mixed_precision='fp16')\naccelerator.backward(loss)\n",
    "trainer = L.Trainer(precision='bf16-mixed')\ntrainer.fit(model)\n",
    "!python train.py --epochs 3\nloss.backward()\n",
])
def test_lower_precision_notebooks_that_held(src):
    assert code_values(_cells(src), "").get("precision.default_fp32") is None


# ---- (5) a writer's own split folder ---------------------------------------------------------------------------------


def test_a_lone_writer_in_a_folder_named_test_keeps_its_training_loss(tmp_path):
    """A quick experiment logged with `SummaryWriter("runs/test")` (a very common name for a trial run), its only
    writer, `add_scalar("Loss", loss, step)` each step: the training loss. The folder name `test` now makes it the
    eval loss, so the run has no training loss at all. Fix: forensics/ingest/tensorboard.py:_add_scalars_tags (read a
    bare folder name as a split only beside a sibling writer folder of the other split, `train/` next to `val/`;
    `loss_<key>/` as add_scalars writes it may stand alone)."""
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(tmp_path / "runs" / "test"))
    for i in range(1, 201):
        w.add_scalar("Loss", 2.5 * np.exp(-i / 50) + 0.4, i)
    w.close()
    a = _analyze(tmp_path)
    assert "loss" in a.timeline.metrics, a.timeline.metrics


def test_keras_train_and_validation_folders_with_epoch_loss_held(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    tr, va = SummaryWriter(str(tmp_path / "logs" / "train")), SummaryWriter(str(tmp_path / "logs" / "validation"))
    for e in range(10):
        tr.add_scalar("epoch_loss", 2.0 - 0.15 * e, e)
        va.add_scalar("epoch_loss", 2.1 - 0.12 * e, e)
    tr.close()
    va.close()
    a = _analyze(tmp_path)
    assert {"loss", "eval_loss"} <= set(a.timeline.metrics) and a.status == "healthy", (a.timeline.metrics, _kinds(a))


# ---- (6) epoch-only per-batch lines ----------------------------------------------------------------------------------


def test_two_ranks_printing_per_batch_epoch_lines_out_of_step_at_an_epoch_boundary_are_no_restart(tmp_path):
    """A DDP loop whose two ranks each print `Epoch E, Loss: x` a batch (their own losses, so no copy groups), rank 0
    reaching the next epoch a few lines before rank 1 finishes this one: the epoch seems to go back (1 then 0) at each
    boundary. Each such dip starts a new 'attempt', the timeline takes the later one as a resume. Should stay one
    healthy run. Fix: forensics/ingest/once_an_epoch.py:_attempts (a new attempt only where the epoch goes back and
    stays back: the lines of the higher epoch do not come again just after)."""
    rng = np.random.default_rng(0)
    lines, n = [], 60
    for e in range(4):
        for b in range(n):
            for r in range(2):
                lines.append((e, b, r, 2.5 - 0.004 * (e * n + b) + rng.normal(0, 0.03)))
    # rank 0 runs 3 batches ahead: its first lines of epoch e+1 come before rank 1's last of epoch e
    order = sorted(lines, key=lambda t: (t[0] * n + t[1] - (3 if t[2] == 0 else 0), t[2]))
    (tmp_path / "train.log").write_text("".join(f"Epoch {e}, Loss: {v:.4f}\n" for e, b, r, v in order))
    a = _analyze(tmp_path)
    assert a.status == "healthy" and len(a.timeline.frame) >= 400, (_kinds(a), len(a.timeline.frame))


def test_a_run_resumed_from_the_previous_epochs_checkpoint_held(tmp_path):
    rng = np.random.default_rng(1)
    rows = [(e, 2.5 - 0.01 * (e * 40 + b) + rng.normal(0, 0.03)) for e in range(3) for b in range(40)]
    rows += [(e, 2.5 - 0.01 * (e * 40 + b) + rng.normal(0, 0.03)) for e in range(2, 5) for b in range(40)]
    (tmp_path / "train.log").write_text("".join(f"Epoch {e}, Loss: {v:.4f}\n" for e, v in rows))
    a = _analyze(tmp_path)
    assert a.status in ("healthy", "warning") and not any(f.severity == "error" for f in a.findings), _kinds(a)


# ---- (3) a pairwise loss that blew up --------------------------------------------------------------------------------


def _dpo_state(folder, values):
    folder.mkdir(parents=True, exist_ok=True)
    n = len(values)
    hist = [{"loss": round(float(v), 4), "rewards/chosen": 0.1, "rewards/rejected": -0.1, "rewards/accuracies": 0.6,
             "rewards/margins": 0.2, "logps/chosen": -100.0, "logps/rejected": -110.0, "grad_norm": 5.0,
             "learning_rate": 5e-7, "epoch": (i + 1) / n * 3, "step": 10 * (i + 1)} for i, v in enumerate(values)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": hist, "global_step": 10 * n}))
    return folder


def test_a_dpo_loss_that_rises_mildly_and_recovers_is_no_divergence(tmp_path):
    v = np.concatenate([np.linspace(0.69, 0.3, 30), np.linspace(0.3, 1.1, 10), np.linspace(1.1, 0.35, 20)])
    a = _analyze(_dpo_state(tmp_path, v))
    assert not any(f.kind == "divergence" for f in a.findings), _kinds(a)


def test_a_dpo_loss_whose_last_epochs_overfit_held(tmp_path):
    """Three epochs: the loss falls in each epoch and the last points are low: nothing to say."""
    v = np.concatenate([np.linspace(0.69, 0.5, 20), np.linspace(0.45, 0.2, 20), np.linspace(0.15, 0.05, 20)])
    a = _analyze(_dpo_state(tmp_path, v))
    assert not any(f.kind == "divergence" for f in a.findings), _kinds(a)


def test_an_ipo_loss_starting_near_ln2_by_its_beta_that_rises_and_settles_is_no_divergence(tmp_path):
    """TRL IPO (loss_type='ipo', beta=0.6): (margin - 1/(2 beta))^2 starts at 1/(4 beta^2) = 0.694, near ln 2 by
    chance; its margins overshoot the target and the squared loss settles above 1.04 while the pairs are ranked right
    (rewards/accuracies 0.9). The tool says broken / divergence ('the policy now ranks the rejected answers far
    above'), which is false for a squared loss. Fix: forensics/analyzers/divergence.py:_pairwise_blow_up (judge only
    where the log's own pair accuracy / margins say the pairs went the wrong way, or the loss type is sigmoid)."""
    v = np.concatenate([np.linspace(0.694, 0.4, 15), np.linspace(0.4, 1.3, 15), np.full(30, 1.3)])
    folder = _dpo_state(tmp_path, v)
    state = json.loads((folder / "trainer_state.json").read_text())
    for h in state["log_history"]:
        h["rewards/accuracies"], h["rewards/margins"] = 0.9, 2.5
    (folder / "trainer_state.json").write_text(json.dumps(state))
    a = _analyze(folder)
    assert not any(f.kind == "divergence" for f in a.findings), _kinds(a)
