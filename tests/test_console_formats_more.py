"""Console line shapes the console reader used to refuse or misread (branch fxlines), each built as the program that
prints it writes it, with a run where the reader must not fire:
* a hand-written loop's Python logger printing once an epoch `Epoch 001: train=2.5584, val=2.3731, ppl=10.73 [BEST]`
  (a training and a validation loss, the perplexity exp(val) beside them);
* a custom loop's comma-separated `time:2024-03-23, 04:31:58, iters:1000, iters_average_Loss:1.4231, ...`;
* Joey NMT 1.x's `Validation result (greedy) at epoch  26, step     4000: token_accuracy:   6.22, loss: 38782.6602,
  ppl:  22.9588, duration: 11.6068s` (joeynmt/training.py), whose loss is summed over the dev set's tokens.
"""
from __future__ import annotations

import math

import pytest

from support.format_runs import analyze_logs, write_file

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
                       f"token_accuracy: {6.22:6.2f}, loss: {12000 * math.log(ppl):8.4f}, ppl: {ppl:8.4f}, "
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


def test_a_prose_validation_sentence_is_no_joeynmt_line(tmp_path):
    """A sentence that names a validation result and a ppl without Joey's `at epoch E, step N:` is not read as one."""
    from forensics.ingest.pretrain_lines import parse_line
    assert parse_line("Validation result (greedy) was poor: the ppl: 23.0 at the end") is None

