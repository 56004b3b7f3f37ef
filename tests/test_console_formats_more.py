"""Console line shapes the console reader used to refuse or misread (branch fxlines), each built as the program that
prints it writes it, with a run where the reader must not fire:
* a hand-written loop's Python logger printing once an epoch `Epoch 001: train=2.4900, val=2.4400, ppl=11.47 [BEST]`
  (a training and a validation loss, the perplexity exp(val) beside them);
* a custom loop's comma-separated `time:2024-03-23, 04:31:58, iters:1000, iters_average_Loss:1.4120, ...`;
* Joey NMT 1.x's `Validation result (greedy) at epoch  13, step     2000: token_accuracy:   5.90, loss: 41230.5117,
  ppl:  31.0412, duration: 10.2210s` (joeynmt/training.py), whose loss is summed over the dev set's tokens.
"""
from __future__ import annotations

import math

import pytest

import forensics
from forensics.errors import NotARunDirectory
from support.format_runs import analyze_logs, write_file

EPOCHS = 20


# --- a loop's logger, once an epoch: `Epoch NNN: train=X, val=Y, ppl=P` -------------------------------------------------


def _logger_stamp(i: int) -> str:
    """`logging.Formatter("%(asctime)s - %(levelname)s - %(message)s")`'s prefix, 20 s an epoch."""
    return f"2025-11-04 10:{i // 3 % 60:02d}:{i * 20 % 60:02d},{i * 37 % 1000:03d} - INFO - "


def _epoch_console(train, val, ppl=None):
    """A loop's logger: `Epoch NNN: train=%.4f, val=%.4f, ppl=%.2f` and a `[BEST]` or `(no improve k/10)` tag."""
    out = [_logger_stamp(0) + "Logger initialized. Writing to results/train.log", _logger_stamp(0) + "Using device: cuda"]
    best, waited = math.inf, 0
    for e, (t, v) in enumerate(zip(train, val), start=1):
        p = math.exp(v) if ppl is None else ppl[e - 1]
        tag = "[BEST]" if v < best else f"(no improve {waited + 1}/10)"
        waited = 0 if v < best else waited + 1
        best = min(best, v)
        out.append(_logger_stamp(e) + f"Epoch {e:03d}: train={t:.4f}, val={v:.4f}, ppl={p:.2f} {tag}")
    return "\n".join(out) + "\n"


def _falling(start, end, n=EPOCHS, wiggle=0.01):
    return [start + (end - start) * i / (n - 1) + (wiggle if i % 2 else -wiggle) for i in range(n)]


def test_epoch_train_val_ppl_lines_are_a_training_and_an_eval_loss(tmp_path):
    """`Epoch 001: train=2.4900, val=2.4400, ppl=11.47 [BEST]` once an epoch: the loss and the eval loss, one point an
    epoch at steps 1..20 (the epoch count); a run falling 2.5 -> 1.3 with val just above it is healthy."""
    train, val = _falling(2.5, 1.3), _falling(2.45, 1.4)
    a = analyze_logs(write_file(tmp_path, "results/train.log", _epoch_console(train, val)))
    loss, eval_loss = a.timeline.series("loss"), a.timeline.series("eval_loss")
    assert list(loss.index) == list(range(1, EPOCHS + 1))
    assert list(eval_loss.index) == list(range(1, EPOCHS + 1))
    assert loss.iloc[0] == pytest.approx(train[0], abs=1e-4) and eval_loss.iloc[-1] == pytest.approx(val[-1], abs=1e-4)
    assert a.status == "healthy", (a.status, a.first_incident)


def test_epoch_train_val_lines_with_val_rising_are_overfitting(tmp_path):
    """The same lines where val turns up at epoch 8 and keeps rising while train falls: overfitting, after epoch 8."""
    train = _falling(2.5, 0.3)
    val = [2.4 - 0.1 * e for e in range(8)] + [1.7 + 0.12 * e for e in range(1, EPOCHS - 7)]
    a = analyze_logs(write_file(tmp_path, "results/train.log", _epoch_console(train, val)))
    assert a.status == "warning"
    assert a.first_incident is not None and a.first_incident.kind == "overfitting"
    assert 8 <= a.first_incident.step <= 14


def test_epoch_train_val_lines_without_a_matching_perplexity_stay_unread(tmp_path):
    """`Epoch 003: train=0.9100, val=0.8800` may be accuracies: without a ppl that is exp(val) beside them (here an
    accuracy printed with its own `ppl=` that is no exp of val), the lines are no loss and the folder is no run."""
    acc = [0.5 + 0.02 * e for e in range(EPOCHS)]
    text = _epoch_console(acc, [a - 0.01 for a in acc], ppl=[12.5] * EPOCHS)
    with pytest.raises(NotARunDirectory):
        forensics.analyze(write_file(tmp_path, "results/train.log", text), check_checkpoints=False)
    plain = "\n".join(_logger_stamp(e) + f"Epoch {e:03d}: train={a:.4f}, val={a - 0.01:.4f}"
                      for e, a in enumerate(acc, 1)) + "\n"
    with pytest.raises(NotARunDirectory):
        forensics.analyze(write_file(tmp_path / "b", "results/train.log", plain), check_checkpoints=False)


# --- Joey NMT 1.x ---------------------------------------------------------------------------------------------------


def _joey_console(dev_ppls, valid_every=1000, log_every=200, steps_per_epoch=150):
    """joeynmt/training.py's console (its logger: `%(asctime)s %(message)s`): the batch lines every `log_every` steps
    (`Epoch %3d Step: %8d Batch Loss: %12.6f Tokens per Sec: %8.0f, Lr: %.6f`), each epoch's total, and every
    `valid_every` steps `Validation result (greedy) at epoch %3d, step %8d: %s: %6.2f, loss: %8.4f, ppl: %8.4f,
    duration: %.4fs`, whose loss is the dev set's summed over its ~12,000 tokens (ppl = exp(loss / tokens))."""
    out = ["2020-05-12 16:47:34,244 Hello! This is Joey-NMT.", "2020-05-12 16:47:35,805 Total params: 58957824"]
    steps = valid_every * len(dev_ppls)
    for step in range(log_every, steps + 1, log_every):
        epoch = step // steps_per_epoch + 1
        loss = 4.6 * math.exp(-step / 1500) + 0.05 + (0.01 if step % 400 else -0.01)
        out.append(f"2020-05-12 17:00:00,000 Epoch {epoch:3d} Step: {step:8d} Batch Loss: {loss:12.6f} "
                   f"Tokens per Sec:     8992, Lr: 0.000200")
        if step % valid_every == 0:
            ppl = dev_ppls[step // valid_every - 1]
            out.append(f"2020-05-12 17:00:10,000 Validation result (greedy) at epoch {epoch:3d}, step {step:8d}: "
                       f"token_accuracy: {6.22:6.2f}, loss: {12000 * math.log(ppl) if ppl > 0 else 0.0:8.4f}, ppl: {ppl:8.4f}, "
                       f"duration: 11.6068s")
        if step % steps_per_epoch < log_every:
            out.append(f"2020-05-12 17:00:20,000 Epoch {epoch:3d}: total training loss {400 * loss:.2f}")
    return "\n".join(out) + "\n"


def test_joeynmt_validation_ppl_is_the_eval_loss_and_its_rise_is_overfitting(tmp_path):
    """Joey NMT's validation line: eval_loss = ln(ppl) at its printed step (not its summed dev loss, which is no
    training loss either); the dev ppl rising 23 -> 54 -> 81 while the batch loss falls is overfitting, dated at the
    first evaluation past the minimum (step 2000)."""
    a = analyze_logs(write_file(tmp_path, "results/train.log", _joey_console([22.96, 54.44, 81.17])))
    eval_loss = a.timeline.series("eval_loss")
    assert list(eval_loss.index) == [1000, 2000, 3000]
    assert eval_loss.iloc[0] == pytest.approx(math.log(22.96), abs=1e-4)
    assert a.timeline.series("loss").max() < 5  # the summed dev loss (37,000+) is not read as a training loss
    assert len(a.timeline.series("loss")) == 15
    assert a.first_incident is not None and a.first_incident.kind == "overfitting", a.first_incident
    assert a.first_incident.step == 2000
    assert a.run_profile.framework == "joeynmt"


def test_joeynmt_validation_falling_is_healthy(tmp_path):
    """The same console with the dev ppl falling 30 -> 12 at each validation: no finding, healthy."""
    a = analyze_logs(write_file(tmp_path, "results/train.log", _joey_console([30.0, 18.0, 14.0, 12.0])))
    assert list(a.timeline.series("eval_loss").round(3)) == [round(math.log(p), 3) for p in (30.0, 18.0, 14.0, 12.0)]
    assert a.timeline.series("loss").max() < 5
    assert a.status == "healthy", (a.status, a.first_incident)


def test_a_joeynmt_perplexity_of_zero_is_no_eval_loss(tmp_path):
    """A printed ppl of 0 is no model's (a perplexity is at least 1): that validation gives no eval_loss, and no
    non-finite finding is raised for it; the others are read as before."""
    a = analyze_logs(write_file(tmp_path, "results/train.log", _joey_console([30.0, 0.0, 14.0, 12.0])))
    assert list(a.timeline.series("eval_loss").index) == [1000, 3000, 4000]
    assert not any(f.kind.startswith("nonfinite") for f in a.findings), a.findings


def test_a_prose_validation_sentence_is_no_joeynmt_line(tmp_path):
    """A sentence that names a validation result and a ppl without Joey's `at epoch E, step N:` is not read as one."""
    from forensics.ingest.pretrain_lines import parse_line
    assert parse_line("Validation result (greedy) was poor: the ppl: 23.0 at the end") is None


# --- a custom loop's comma-separated `name:value` lines after a counter ------------------------------------------------


def _iters_console(loss_at, names=("Loss", "logprobability_for_Positive", "Log_Odds"), lines=23, every=500):
    """A loop's `print(f"time:{now}, iters:{i}, iters_average_{name}:{value:.4f}, ...")` (the date's own comma
    included), under a header of its settings."""
    out = ["time:2024-03-23, 04:24:46, batch_size:2, trainable_parameters_num:463987712, warmup_steps:2000, "
           "max_lr:1e-05, min_lr:5e-07"]
    for k in range(lines):
        i, loss = every * (k + 2), loss_at(k)
        values = {"Loss": loss, "logprobability_for_Positive": -loss, "Log_Odds": 0.19, "Accuracy": 1 / (1 + loss)}
        fields = ", ".join(f"iters_average_{name}:{values[name]:.4f}" for name in names)
        out.append(f"time:2024-03-23, {4 + k // 15:02d}:{k * 4 % 60:02d}:58, iters:{i}, {fields}")
    return "\n".join(out) + "\n"


def test_iters_counter_with_averaged_loss_pairs_is_a_step_line(tmp_path):
    """`time:..., iters:1000, iters_average_Loss:1.4120, ...`: the loss at step 1000, 1500, ... (the counter as
    printed), the other pairs kept under their own names; a loss falling 1.42 -> 1.32 in small steps is healthy."""
    a = analyze_logs(write_file(tmp_path, "sft_log.txt", _iters_console(lambda k: 1.42 - 0.0045 * k
                                                                        + (0.008 if k % 2 else -0.008))))
    loss = a.timeline.series("loss")
    assert list(loss.index) == [500 * (k + 2) for k in range(23)]
    assert loss.iloc[0] == pytest.approx(1.412, abs=1e-4)
    assert "iters_average_logprobability_for_positive" in a.timeline.metrics
    assert a.status == "healthy", (a.status, a.first_incident)


def test_iters_lines_without_a_loss_stay_unread(tmp_path):
    """The same loop's lines holding an accuracy only (an evaluation script's output, no loss among the pairs): no step
    line, the folder is no run."""
    text = _iters_console(lambda k: 1.0 - 0.01 * k, names=("Accuracy", "Log_Odds"))
    with pytest.raises(NotARunDirectory):
        forensics.analyze(write_file(tmp_path, "eval_log.txt", text), check_checkpoints=False)


def test_another_loss_term_or_prose_after_iters_is_no_training_loss():
    """`iters:100, aux_loss:0.1` (another loss term) and a sentence (`iters: 3, and the loss: fell`) are no step line."""
    from forensics.ingest.pretrain_lines import parse_line
    assert parse_line("time:2024-03-23, 04:31:58, iters:100, aux_loss:0.1000, tokens:512") is None
    assert parse_line("after iters: 3, and then the loss: fell to 2.0") is None
    record = parse_line("time:2024-03-23, 04:31:58, iters:100, running_loss:2.5000, lr:0.0001")
    assert record is not None and record.step == 100 and dict(record.metrics)["loss"] == 2.5


def test_a_held_out_loss_named_for_how_it_was_taken_is_no_training_loss():
    """`val_avg_loss`, `eval_mean_loss`, `valid_running_loss`, `test_avg_loss`: the held-out word makes them no training
    loss, however the loss was taken."""
    from forensics.ingest.pretrain_lines import parse_line
    for name in ("val_avg_loss", "eval_mean_loss", "valid_running_loss", "test_avg_loss"):
        record = parse_line(f"time:2024-03-23, 04:31:58, iters:100, {name}:2.5000, lr:0.0001")
        assert record is None or "loss" not in dict(record.metrics), (name, record)


def test_a_perplexity_of_the_training_loss_says_nothing_of_val(tmp_path):
    """`Epoch 001: train=2.7100, val=0.3537, ppl=15.03`: the ppl is exp(train), so train is the training loss; val,
    which the ppl says nothing of (an accuracy here), is no eval loss."""
    train = _falling(2.71, 1.5)
    acc = [0.3537 + 0.01 * e for e in range(EPOCHS)]
    a = analyze_logs(write_file(tmp_path, "results/train.log",
                                _epoch_console(train, acc, ppl=[math.exp(t) for t in train])))
    assert len(a.timeline.series("loss")) == EPOCHS
    assert "eval_loss" not in a.timeline.metrics
    assert not any(f.kind == "overfitting" for f in a.findings)


def test_a_perplexity_printed_to_one_decimal_still_says_its_loss():
    """`ppl=10.7` for exp(2.3731) = 10.73: within half its last digit's unit, the same perplexity as printed."""
    from forensics.ingest.pretrain_lines import parse_line
    record = parse_line("2025-11-04 10:38:56,383 - INFO - Epoch 001: train=2.5584, val=2.3731, ppl=10.7 [BEST]")
    assert record is not None and dict(record.metrics)["eval_loss"] == 2.3731
    assert parse_line("2025-11-04 10:38:56,383 - INFO - Epoch 001: train=2.5584, val=2.3731, ppl=10.9 [BEST]") is None
