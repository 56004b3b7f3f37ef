"""Logs of a given shape (a trainer_state.json of a loss and grad norm by step, a console of rows) and their
analysis."""
from __future__ import annotations

import json
import math

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _trainer_state(folder, steps, loss, grad_norm=lambda s: 1.0, per_epoch=100, eval_loss=None):
    """An HF Trainer checkpoint's trainer_state.json: one log_history row per logged step ({'epoch', 'grad_norm',
    'learning_rate', 'loss', 'step'}), plus {'eval_loss', 'epoch', 'step'} rows where `eval_loss` gives one."""
    history = []
    for s in steps:
        history.append({"epoch": round(s / per_epoch, 4), "grad_norm": grad_norm(s),
                        "learning_rate": 5e-4 * (1 - s / (steps[-1] + 1)), "loss": round(loss(s), 4), "step": s})
        if eval_loss is not None and eval_loss(s) is not None:
            history.append({"epoch": round(s / per_epoch, 4), "eval_loss": eval_loss(s), "eval_runtime": 1.0,
                            "step": s})
    state = {"epoch": steps[-1] / per_epoch, "global_step": steps[-1], "log_history": history,
             "logging_steps": steps[1] - steps[0], "max_steps": steps[-1], "num_train_epochs": steps[-1] // per_epoch}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))


def _wobble(s):
    return 1 + 0.15 * math.sin(s * 1.7)


def _console(path, rows):
    """HF Trainer / TRL console: one printed dict a logging step, `{'loss': 1.46, 'grad_norm': 14.98, ...}`."""
    lines = []
    for i, (loss, grad) in enumerate(rows):
        lines.append(str({"loss": loss, "grad_norm": grad, "learning_rate": 2e-4, "epoch": round((i + 1) / 40, 3)}))
    path.write_text("\n".join(lines) + "\n")
