"""Keras `model.fit` consoles: every form of the epoch's closing line is read, one point an epoch at step E, and the
run is named Keras'. Consoles written as Keras prints them (keras 2.2.4 keras/utils/generic_utils.py Progbar.update:
verbose=2 prints ` - 131s - loss: 2.3976 - acc: 0.51` at the epoch's end, no batch count; tf.keras and Keras 3 print
`100/100 - 5s - loss: ...` or the `[=====]` / `━━━` bar), and a hand-written loop that prints `Epoch 1/3` lines too."""
from __future__ import annotations

import math

from support.format_runs import analyze_logs, assert_healthy_loss, losses, write_file

EPOCHS = 30


def _keras_22_verbose_2(nan_at=None, validation=True):
    """Keras 2.2's fit(verbose=2): `Epoch E/N`, then ` - 131s - loss: X - acc: Y - val_loss: Z - val_acc: W`."""
    out = ["Using TensorFlow backend.", "Train on 4006 samples, validate on 1002 samples"]
    for epoch, loss in enumerate(losses(nan_at, EPOCHS), 1):
        held_out = f" - val_loss: {2.6 - 0.03 * epoch:.4f} - val_acc: {0.4 + 0.005 * epoch:.4f}" if validation else ""
        out += [f"Epoch {epoch}/200", f" - {100 + epoch}s - loss: {loss:.4f} - acc: {0.4 + 0.01 * epoch:.4f}{held_out}"]
    return "\n".join(out) + "\n"


def test_keras_22_verbose_2_epoch_lines_give_the_loss_a_point_an_epoch(tmp_path):
    analysis = analyze_logs(write_file(tmp_path, "log/nohup.out", _keras_22_verbose_2()))
    assert_healthy_loss(analysis, EPOCHS)
    assert list(analysis.timeline.series("loss").index) == list(range(1, EPOCHS + 1))
    assert len(analysis.timeline.series("eval_loss")) == EPOCHS
    assert {"acc", "eval_acc"} <= set(analysis.timeline.metrics)  # Keras 2.2 names its accuracy `acc`


def test_keras_22_verbose_2_nan_epoch_is_broken_at_its_epoch(tmp_path):
    analysis = analyze_logs(write_file(tmp_path, "nohup.out", _keras_22_verbose_2(nan_at=25, validation=False)))
    assert analysis.status == "broken" and analysis.first_incident.step == 25


def test_a_keras_console_names_keras_as_the_framework(tmp_path):
    analysis = analyze_logs(write_file(tmp_path, "nohup.out", _keras_22_verbose_2()))
    assert analysis.run_profile.framework == "keras"


def test_a_hand_written_loop_with_epoch_lines_is_not_named_keras(tmp_path):
    """`Epoch 1/3` then `Step 100/1000 - loss: X - lr: Y`: a loop's own lines, every step of them read, no Keras."""
    lines = []
    for epoch in (1, 2, 3):
        lines.append(f"Epoch {epoch}/3")
        for k in range(1, 11):
            lines.append(f"Step {k * 100}/1000 - loss: {2.5 - 0.04 * (10 * (epoch - 1) + k):.4f} - lr: 0.0003")
    analysis = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert len(analysis.timeline.series("loss")) == 30
    assert analysis.run_profile.framework != "keras"
    assert not math.isnan(analysis.timeline.series("loss").iloc[-1])
