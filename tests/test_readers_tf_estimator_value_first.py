"""Two console shapes the tool could not read at all (corpus batch AS46, both NotARunDirectory on arrival):

* TF Estimator's LoggingTensorHook line, `INFO:tensorflow:loss = 1.96779, step = 54901 (116.492 sec)` (the loss
  before the step, ` = ` separators, the logger's prefix glued to the first name; absl's `I0612 ...] ` prefix in later
  TF), its `global_step/sec: 0.86` rate lines between, and the evaluation's `Saving dict for global step N: ...`
  (tensorflow_tensor2tensor_issue67);
* tinygrad's MLPerf line, each value before its name after a bare step number, `    1 93.44 s run, 11.8750 loss,
  0.000000000001 LR, 642.43 GB used,  19644.30 GFLOPS`, and `DEFAULT_FLOAT=bfloat16` on its launch line
  (tinygrad_tinygrad_pr13803).

Each run below is written as that code prints it; each reader also has a test that other lines are not misread.
"""
from __future__ import annotations

import math

import pytest
from support.format_runs import analyze_logs, assert_broken_at, assert_healthy_loss, losses, write_file

EVERY = 100  # the hook's every_n_iter


def _tf_value(v: float) -> str:
    return "nan" if math.isnan(v) else f"{v:.6g}"


def estimator_console(nan_at=None, absl=False, evaluate=False):
    """A tf.estimator train_and_evaluate console: the hook's `loss = L, step = S` every 100 steps (no seconds on its
    first print), the `global_step/sec` rate between, an evaluation's `Saving dict` every 1000 steps."""
    prefix = "I0612 10:11:12.123456 140123 basic_session_run_hooks.py:262] " if absl else "INFO:tensorflow:"
    out = [f"{prefix}Saving checkpoints for 0 into /tmp/model/model.ckpt."]
    for i, v in enumerate(losses(nan_at)):
        step = 1 + EVERY * i
        if i:
            out.append(f"{prefix}global_step/sec: 8.6{i % 10}")
        out.append(f"{prefix}loss = {_tf_value(v)}, step = {step}" + (f" ({11.5 + i % 3 / 10:.3f} sec)" if i else ""))
        if evaluate and i and i % 10 == 0:
            out.append(f"{prefix}Saving dict for global step {step}: accuracy = 0.{50 + i}, global_step = {step}, "
                       f"loss = {2.6 - i * 0.03:.4f}")
    return "\n".join(out) + "\n"


def test_absl_prefixed_hook_lines_and_the_evaluation_summary_are_read(tmp_path):
    a = analyze_logs(write_file(tmp_path, "train.log", estimator_console(absl=True, evaluate=True)))
    assert_healthy_loss(a)
    assert dict(a.timeline.series("eval_loss")) == {1001: 2.3, 2001: 2.0}
    assert dict(a.timeline.series("eval_accuracy")) == {1001: 0.6, 2001: 0.7}


def test_the_tensor2tensor_window_is_read_without_its_rate_lines():
    a = analyze_logs("tests/realworld/tensorflow_tensor2tensor_issue67")
    loss = a.timeline.series("loss")
    assert list(loss.index) == list(range(54901, 55702, 100)) and loss.iloc[0] == 1.96779
    assert sorted(a.timeline.metrics) == ["loss"]


def test_equals_pairs_without_a_step_or_a_loss_are_no_hook_line(tmp_path):
    """A printed setting (`lr = 0.001, step = 5`) names no loss, and a loop's `loss = X, acc = Y` no step: with the
    hook's own lines around them, neither becomes a step."""
    text = estimator_console() + "lr = 0.001, step = 5\nloss = 0.3, acc = 0.9\n"
    a = analyze_logs(write_file(tmp_path, "train.log", text))
    assert_healthy_loss(a)
    assert 5 not in a.timeline.series("loss").index and "acc" not in a.timeline.metrics


# --- value before name (tinygrad's MLPerf trainer) -------------------------------------------------------------------

LAUNCH = ("REWRITE_STACK_LIMIT=1000000 BASEDIR=/raid/datasets/c4-8b BS=8 DEFAULT_FLOAT=bfloat16 MODEL=llama3 "
          "python3 examples/mlperf/model_train.py")


def tinygrad_console(nan_at=None, launch=LAUNCH):
    """The launch line, a blank line, then model_train.py's step lines (`{i:5} {t:.2f} s run, {loss:.4f} loss, {lr:.12f}
    LR, {mem:.2f} GB used, {gflops:9.2f} GFLOPS`)."""
    out = [launch, ""] if launch else []
    for i, v in enumerate(losses(nan_at), 1):
        loss = "nan" if math.isnan(v) else f"{v:.4f}"
        out.append(f"{i:5d} {93.44 if i == 1 else 4.32:.2f} s run, {loss} loss, {i * 1e-5:.12f} LR, "
                   f"1454.57 GB used, {401488.40:9.2f} GFLOPS")
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("console, steps, nan_step", [(estimator_console, [1, 101, 201], 1 + 24 * EVERY),
                                                     (tinygrad_console, [1, 2, 3], 25)])
def test_the_lines_are_read_at_their_step_and_a_nan_is_broken(tmp_path, console, steps, nan_step):
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", console()))
    assert_healthy_loss(a)
    assert list(a.timeline.series("loss").index[:3]) == steps
    assert not any("sec" in name for name in a.timeline.metrics)  # TF's rate lines and interval seconds: no metric
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", console(25))), nan_step)


def test_value_first_names_are_the_timeline_s(tmp_path):
    t = analyze_logs(write_file(tmp_path, "train.log", tinygrad_console())).timeline
    assert t.series("learning_rate").iloc[1] == 2e-5 and t.series("run_time_s").iloc[0] == 93.44
    assert "gb_used" in t.metrics and "gflops" in t.metrics


def test_default_float_on_the_launch_line_gives_the_precision(tmp_path):
    assert analyze_logs(write_file(tmp_path / "bf16", "train.log", tinygrad_console())).run_profile.precision == "bf16"
    plain = analyze_logs(write_file(tmp_path / "plain", "train.log", tinygrad_console(launch=LAUNCH.replace(
        "DEFAULT_FLOAT=bfloat16 ", ""))))
    assert plain.run_profile.precision == "unknown"


def test_one_value_name_pair_or_no_loss_is_no_value_first_line():
    from forensics.ingest.console_lines.value_first import read_line
    assert read_line("    1 93.44 s run, 11.8750 loss, 0.000000000001 LR") is not None
    assert read_line("   12 2.31 loss") is None  # one pair: any script's print
    assert read_line("   12 2.31 loss, 3 GPUs") is None  # two
    assert read_line("    3 8 nodes, 16 GPUs, 2 epochs, 4 hours") is None  # no loss


def test_a_console_of_another_shape_with_value_name_prose_is_read_as_before(tmp_path):
    """A nanoGPT console whose notes hold value-name pairs is read as nanoGPT's, every step once."""
    lines = [f"iter {i}: loss {v:.4f}, time 120.00ms, mfu 7.90%" for i, v in enumerate(losses())]
    text = "\n".join(["  8 GPUs, 2 nodes, 1 loss"] + lines) + "\n"
    a = analyze_logs(write_file(tmp_path, "train.log", text))
    assert_healthy_loss(a)
    assert set(a.timeline.console_kinds) == {"nanogpt"}
