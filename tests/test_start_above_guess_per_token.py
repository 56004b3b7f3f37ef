"""Tests of the bad-start rule: a first loss several times any uniform guess.

From the SFT / fine-tune misreadings found on real runs (branch fix-al-sft): every test FAILS on main at a6d3009,
except those whose docstring says 'its bound' (a control that holds before and after)."""
from __future__ import annotations

import math
import random

from support.trainer_state_files import _analyze


def _findings(a):
    return [(f.kind, f.severity, f.step, f.message[:160]) for f in a.findings]


# ---- change 4: a start several times any uniform guess, by a loss that later comes down to per-token levels ------------


def _hf_console(folder, losses, evals):
    """An HF Trainer console (the dict lines it prints every logging_steps=5): NaN grad_norm at the first line (an
    fp16 scaler's first skip), eval lines every 100 points."""
    folder.mkdir(parents=True, exist_ok=True)
    lines, n = [], len(losses)
    for i, loss in enumerate(losses):
        grad = "nan" if i == 0 else f"{20.0 if i < 40 else 1.5}"
        lines.append(f"{{'loss': {loss}, 'grad_norm': {grad}, 'learning_rate': {5e-5 * (i + 1) / n}, "
                     f"'epoch': {round(3 * (i + 1) / n, 2)}}}")
        if (i + 1) % 100 == 0:
            lines.append(f"{{'eval_loss': {evals[(i + 1) // 100 - 1]}, 'eval_runtime': 12.6, 'epoch': "
                         f"{round(3 * (i + 1) / n, 2)}}}")
    (folder / "output.log").write_text("\n".join(lines) + "\n")
    return folder


def test_a_first_loss_several_times_any_uniform_guess_that_falls_to_per_token_levels_is_a_bad_start(tmp_path):
    """Change 4 (fine_tune_start `_far_above_any_guess`). olavodd42's GPT-2 chatbot
    through 8-bit layers, an HF Trainer console with no model config: loss 88.7 at the first log, falling over 80
    points to ln(vocab) and on to about 3, the eval loss 7.4 -> 3.0 with it. The tool said only skipped_steps (the
    first NaN grad_norm): no vocabulary known, the method not an adapter, the start drew nothing. 88.7 is nearly 7x
    the uniform guess of the largest vocabulary in use (ln 440k = 13), and the same logged loss comes down to 3, as a
    per-token mean does (no sum): the model at its start predicted the targets far worse than chance. Right:
    warning, start_above_uniform_guess at the first step, named before the scaler's skip at that step."""
    rng = random.Random(11)
    losses = [round(88.7 * math.exp(-i / 18) + 3.0 + 0.1 * rng.gauss(0, 1), 4) for i in range(400)]
    a = _analyze(_hf_console(tmp_path / "run", losses, [7.44, 3.68, 3.2, 3.03]))
    assert a.status == "warning", _findings(a)
    assert (a.first_incident.kind, a.first_incident.step) == ("start_above_uniform_guess", a.findings[0].step), \
        _findings(a)


def test_a_summed_loss_far_above_the_guess_that_stays_there_is_not_called_a_bad_start(tmp_path):
    """Change 4, its bound: a hand-written loop's loss summed over a batch's response tokens (91 -> 55, Tianshi-Xu's
    CS336 SFT) never comes down to a per-token level: no start_above_uniform_guess, the model's start is not judged."""
    rng = random.Random(2)
    losses = [round(91 - 36 * i / 400 + 8 * rng.gauss(0, 1), 3) for i in range(400)]
    a = _analyze(_hf_console(tmp_path / "run", losses, [80.0, 70.0, 62.0, 55.0]))
    assert "start_above_uniform_guess" not in [f.kind for f in a.findings], _findings(a)
