"""Tests of MXNet's Speedometer lines (ingest.console_lines.mxnet_speedometer).

Corpus batch AS67: MXNet's Speedometer lines (`Epoch[0] Batch [5]\\tSpeed: ...\\tTrain-Perplexity=64.10`), read as a
loss of ln perplexity (the batch's notebook loads: tests/test_notebook_code_no_weight_loads.py)."""
from __future__ import annotations

import math

from support.format_runs import analyze_logs, losses, write_file


def _speedometer(values, epochs=1, per_epoch=None, validation=None):
    """MXNet 0.x FeedForward.fit's console: Speedometer every 5 batches, `Train-Perplexity=P`."""
    lines = ["05:56:59 INFO:Start training with [gpu(0)]"]
    per_epoch = per_epoch or len(values)
    for i, v in enumerate(values):
        epoch, batch = divmod(i, per_epoch)
        lines.append(f"05:57:{i % 60:02d} INFO:Epoch[{epoch}] Batch [{5 * (batch + 1)}]\tSpeed: 31.09 samples/sec\t"
                     f"Train-Perplexity={math.exp(v):.6f}")
        if validation is not None and batch == per_epoch - 1:
            lines.append(f"05:58:00 INFO:Epoch[{epoch}] Train-Perplexity={math.exp(v):.6f}")
            lines.append(f"05:58:00 INFO:Epoch[{epoch}] Time cost=12.345")
            lines.append(f"05:58:01 INFO:Epoch[{epoch}] Validation-Perplexity={validation:.6f}")
    return "\n".join(lines) + "\n"


def test_mxnet_speedometer_perplexity_is_read_as_a_loss(tmp_path):
    values = losses()
    a = analyze_logs(write_file(tmp_path, "train.log", _speedometer(values)))
    loss = a.timeline.series("loss")
    assert list(loss.index) == [5 * (i + 1) for i in range(len(values))]
    assert abs(loss.iloc[0] - values[0]) < 1e-5 and abs(loss.iloc[-1] - values[-1]) < 1e-5
    assert a.run_profile.framework == "mxnet"
    assert a.status == "healthy"


def test_mxnet_batches_run_on_across_epochs_and_the_validation_is_an_eval(tmp_path):
    values = losses()
    a = analyze_logs(write_file(tmp_path, "train.log", _speedometer(values, per_epoch=10, validation=7.5)))
    loss = a.timeline.series("loss")
    assert list(loss.index) == [5 * (i + 1) for i in range(len(values))]  # 50 batches an epoch, numbered on
    assert dict(a.timeline.series("eval_loss")) == {50 * e: math.log(7.5) for e in range(1, len(values) // 10 + 1)}


def test_mxnet_1x_batch_range_and_bare_names_are_read(tmp_path):
    text = "".join(f"INFO:root:Epoch[0] Batch [{5 * i}-{5 * (i + 1)}]\tSpeed: 900.1 samples/sec\taccuracy=0.{i}"
                   f"\tcross-entropy={v:.4f}\n" for i, v in enumerate(losses(n=9), 1))
    a = analyze_logs(write_file(tmp_path, "train.log", text))
    assert list(a.timeline.series("loss").index) == [5 * (i + 1) for i in range(1, 10)]
    assert "accuracy" in a.timeline.metrics


def test_an_mxnet_line_without_a_metric_or_speed_is_not_read(tmp_path):
    """A sentence quoting the epoch and an epoch-end time line are no Speedometer line: a file of them is no log."""
    from forensics.ingest.console_lines.mxnet_speedometer import MxnetLines
    reader = MxnetLines()
    for line in ("INFO:Epoch[0] Time cost=12.3", "see Epoch[0] Batch [5] in the docs",
                 "INFO:Epoch[0] Batch [5]\tSpeed: 31.09 samples/sec"):
        assert not reader.owns(line), line
