"""Tests of LitGPT's lines: an optimizer step that never advances or does.

From the logs the tool did not read, or read wrongly, found on real runs (day 7)."""
from __future__ import annotations

from support.final_series import _analyze, _series


# ---- (3) LitGPT's `iter N step S`: an optimizer step that never advances is no update -------------------------------


def _litgpt_log(path, iters, accumulation, loss):
    """litgpt/finetune/lora.py fit(): `fabric.print(f"Epoch {epoch} | iter {iter_num} step {step_count} | loss train:
    {loss:.3f}, val: {val_loss} | iter time: {t * 1000:.2f} ms{' (step)' if not is_accumulating else ''}")`."""
    lines = []
    for it in iters:
        step = it // accumulation
        lines.append(f"Epoch 1 | iter {it} step {step} | loss train: {loss(it):.3f}, val: n/a | iter time: 45.73 ms"
                     + (" (step)" if it % accumulation == 0 else ""))
    path.write_text("\n".join(lines) + "\n")


def test_litgpt_lines_whose_optimizer_step_never_advances_show_no_learning(tmp_path):
    """17 lines all at `step 1` (gradient accumulation longer than the excerpt) whose printed running-mean loss drifts
    3.72 -> 3.67: the tool called it healthy (the loss fell); no update happened between the lines, so it is a
    warning that nothing shows the run learned (no event, no first incident worse than that)."""
    _litgpt_log(tmp_path / "train.log", range(46, 63), 64, lambda it: 3.73 - 0.004 * (it - 46) + 0.005 * (it % 2))
    a = _analyze(tmp_path)
    assert a.status == "warning" and a.first_incident.kind == "no_learning_evidence"
    assert "optimizer step" in a.first_incident.message


def test_litgpt_lines_whose_optimizer_step_advances_are_judged_on_their_loss(tmp_path):
    """The same lines where the step goes on (4 micro-batches a step) and the loss falls: healthy, as before."""
    _litgpt_log(tmp_path / "train.log", range(1, 200), 4, lambda it: 3.7 * 0.995 ** it + 0.01 * (it % 3))
    a = _analyze(tmp_path)
    assert a.status == "healthy", [f.message for f in a.findings]
    assert sorted(set(_series(a, "optimizer_step").values()))[-1] == 199 // 4
