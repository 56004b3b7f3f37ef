"""Tests of the MetricLogger lines reader (torchvision-style consoles).

From the consoles and run texts the tool did not read, found on real runs (day 7, second batch)."""
from __future__ import annotations

from support.final_series import _analyze, _series


# ---- (1) the MetricLogger console of DeiT / MAE / DETR / DINO / LLaMA-Adapter ------------------------------------------


def _metric_logger_line(epoch, i, total, lr, loss, avg, loss_name="closs", grad=None):
    """`MetricLogger.log_every` (util/misc.py): header, `[{i:>width}/{total}]`, eta, each meter `median (global_avg)`
    (the lr meter formatted `{value:.6f}`), time, data, max mem; fields joined by two spaces, a timestamp before it
    where the script's print is patched (LLaMA-Adapter's builtin print with `[%H:%M:%S.%f]`)."""
    width = len(str(total))
    fields = [f"[17:11:{i % 60:02d}.859398] Epoch: [{epoch}]", f"[{i:>{width}}/{total}]", "eta: 2:17:53",
              f"lr: {lr:.6f}", f"{loss_name}: {loss:.4f} ({avg:.4f})"]
    if grad is not None:
        fields.append(f"grad_norm: {grad:.4f} ({grad * 1.2:.4f})")
    return "  ".join(fields + ["time: 0.6125", "data: 0.0001", "max mem: 20618"])


def test_metric_logger_lines_are_read_as_steps_with_their_smoothed_loss(tmp_path):
    """LLaMA2-Accessory's console (`Epoch: [0]  [N/1504]  lr  closs: median (avg)  grad_norm: median (avg) ...`) over
    two epochs with a falling loss and a `Test:` evaluation after each: the folder was no run at all (NotARunDirectory);
    it is read at step E x M + N, closs as the loss (its window median), lr and grad_norm, the evaluation's last line
    as eval_loss at the last training step, and the run learned."""
    total = 200
    lines = []
    for epoch in range(2):
        for i in list(range(0, total, 20)) + [total - 1]:
            k = epoch * total + i
            lines.append(_metric_logger_line(epoch, i, total, 3e-5, 2.0 - k / 400, 2.1 - k / 500, grad=2.0 - k / 1000))
        for j, (loss, avg) in enumerate(((1.9 - epoch * 0.3, 1.95 - epoch * 0.3), (1.8 - epoch * 0.3, 1.85 - epoch * 0.3))):
            lines.append(f"Test:  [{j * 49:>2}/50]  eta: 0:00:30  closs: {loss:.4f} ({avg:.4f})  time: 0.6000  "
                         f"data: 0.4000  max mem: 20618")
        lines.append(f"Averaged stats: lr: 0.000030  closs: {2.0 - epoch:.4f} ({2.0 - epoch:.4f})")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    loss = _series(a, "loss")
    assert loss[0] == 2.0 and loss[220] == 2.0 - 220 / 400 and loss[399] == 2.0 - 399 / 400
    assert _series(a, "learning_rate")[20] == 3e-5 and _series(a, "grad_norm")[20] == 2.0 - 20 / 1000
    assert _series(a, "eval_loss") == {199: 1.85, 399: 1.55}
    assert a.status == "healthy", [(f.kind, f.step) for f in a.findings]
    assert any("smoothed" in s.reason for s in a.skipped if s.note)


def test_metric_logger_loss_flat_in_warm_up_is_no_learning_evidence(tmp_path):
    """LLaMA-Adapter's alpaca fine-tuning console at the start of its warm-up (lr printed 0.000000, closs flat at
    ~1.5): read, and nothing shows learning."""
    lines = [_metric_logger_line(0, i, 13000, 0.0, 1.5 + 0.03 * ((i // 10) % 3), 1.6) for i in range(30, 120, 10)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    assert sorted(_series(a, "loss")) == list(range(30, 120, 10))
    assert a.status == "warning" and a.first_incident.kind == "no_learning_evidence"
