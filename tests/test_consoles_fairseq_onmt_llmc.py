"""Three consoles, each written as its program prints it: fairseq-py's legacy (2017-18) progress lines and epoch
summaries (facebookresearch/fairseq e734b0fa..50fdf591: fairseq/progress_bar.py simple_progress_bar, train.py),
OpenNMT-py's 2018 `Epoch  1, N/M; acc: ...; xent: ...` line (OpenNMT/OpenNMT-py 9d51f2c7 onmt/Trainer.py:66) and
llm.c's train_gpt2.cu step line and `val loss` (karpathy/llm.c f1e2ace train_gpt2.cu:1728, :1872); and, for each
rule, a look-alike line of another program it must leave alone."""
from __future__ import annotations

import math

from forensics.ingest.pretrain_lines import parse_line
from support.format_runs import analyze_logs, write_file

LN2 = math.log(2)


# --- fairseq-py's legacy console ------------------------------------------------------------------------------------


def _fairseq_legacy_log(epochs=3, batches=4000, every=1000, colon=False, start=2.4, fall=0.15, noise=0.35):
    """train.py's `'| epoch {:03d}'` prefix and simple_progress_bar's `'{} {:5d} / {:d} {}'` (`'{}:  {:5d} ...'` from
    Nov 2017) with the postfix `loss={:.2f} ({:.2f}), wps=..., wpb=..., bsz=..., lr=..., clip={:3.0f}%,
    gnorm={:.4f}`: each batch's loss (here swinging by +-`noise` around the mean) and the epoch's running mean in
    brackets, falling by `fall` bits an epoch; then the epoch summary, the validation's progress line and its
    summary (the valid loss at the epoch's mean). Losses in bits, as fairseq's criterions give them."""
    out = []
    for e in range(1, epochs + 1):
        mean = start - fall * (e - 1)
        for k, n in enumerate(range(every, batches, every)):
            running = mean - 0.05 * k / (batches // every)
            batch = running + (noise if k % 2 else -noise)
            sep = ":  " if colon else " "
            out.append(f"| epoch {e:03d}{sep}{n:5d} / {batches} loss={batch:.2f} ({running:.2f}), wps=962, wpb=908, "
                       f"bsz=32, lr=0.001, clip=100%, gnorm={2.1 - 0.01 * e:.4f}")
        out.append(f"| epoch {e:03d} | train loss {mean:2.2f} | train ppl {2 ** mean:3.2f} | s/checkpoint    7747 "
                   f"| words/s    961 | words/batch    906 | bsz    32 | lr 0.001000 | clip 100% | gnorm 2.1113")
        out.append(f"| epoch {e:03d} | valid on 'valid' subset{':' if colon else ''}  1000 / 1311 loss={mean + 0.3:.2f}")
        out.append(f"| epoch {e:03d} | valid on 'valid' subset | valid loss {mean:2.2f} | valid ppl {2 ** mean:3.2f}")
    return "\n".join(out) + "\n"


def test_fairseq_legacy_progress_lines_are_numbered_on_across_epochs(tmp_path):
    """Batch n of M in epoch E is step (E - the first epoch) x M + n, so the next epoch goes on from the last."""
    a = analyze_logs(write_file(tmp_path, "train.log", _fairseq_legacy_log()))
    steps = list(a.timeline.series("loss").index)
    assert steps == [1000, 2000, 3000, 5000, 6000, 7000, 9000, 10000, 11000], steps


def test_fairseq_legacy_losses_are_read_in_nats_with_their_running_mean_and_gnorm():
    """fairseq's loss is in bits (ppl = 2^loss): `loss=1.27 (1.50)` is a batch loss of 1.27 ln 2 nats and a running
    mean of 1.50 ln 2 (loss_avg); gnorm is the grad norm."""
    record = parse_line("| epoch 010  2000 / 8223 loss=1.27 (1.50), wps=962, wpb=908, bsz=32, lr=0.001, clip=100%, "
                        "gnorm=2.1427")
    values = dict(record.metrics)
    assert record.kind == "fairseq_legacy" and (record.step, record.total) == (2000, 8223)
    assert math.isclose(values["loss"], 1.27 * LN2) and math.isclose(values["loss_avg"], 1.50 * LN2)
    assert values["grad_norm"] == 2.1427 and values["learning_rate"] == 0.001 and values["epoch"] == 10


def test_fairseq_legacy_validation_progress_line_is_no_training_loss():
    """`| epoch 010 | valid on 'valid' subset  1000 / 1311 loss=1.60` is the validation's running mean over part of its
    set: no record (it used to be read as a training loss at step 1000, restarting the count)."""
    assert parse_line("| epoch 010 | valid on 'valid' subset  1000 / 1311 loss=1.60") is None
    assert parse_line("| epoch 010 | valid on 'valid' subset:  1000 / 1311 loss=1.60") is None


def test_fairseq_legacy_valid_summary_is_the_eval_loss_at_the_epochs_last_step_line(tmp_path):
    """`| epoch 001 | valid on 'valid' subset | valid loss L | valid ppl P`: eval_loss L ln 2 at the last progress line
    before it; the epoch's train summary adds no second training loss there."""
    a = analyze_logs(write_file(tmp_path, "train.log", _fairseq_legacy_log(colon=True)))
    evals = a.timeline.series("eval_loss")
    assert list(evals.index) == [3000, 7000, 11000], evals
    assert math.isclose(float(evals.iloc[0]), 2.40 * LN2, abs_tol=0.01)
    assert len(a.timeline.series("loss")) == 9


def test_fairseq_legacy_summaries_alone_are_one_point_an_epoch(tmp_path):
    """Epochs shorter than the bar's 1000-batch interval print no progress line: the summaries are the log, the train
    loss at step 1, 2, 3 (epochs done) and the valid loss beside it, in nats."""
    text = "".join(line + "\n" for line in _fairseq_legacy_log(batches=900).splitlines() if " / " not in line)
    a = analyze_logs(write_file(tmp_path, "train.log", text))
    loss = a.timeline.series("loss")
    assert list(loss.index) == [1, 2, 3] and math.isclose(float(loss.iloc[0]), 2.40 * LN2, abs_tol=0.01)
    assert list(a.timeline.series("eval_loss").index) == [1, 2, 3]


def test_fairseq_legacy_run_with_noisy_batches_and_a_falling_running_mean_is_healthy_fairseq(tmp_path):
    """Batch losses swinging by +-0.35 bits around a running mean that falls 2.40 -> 2.05 over three epochs: the
    running mean shows the run learning; the profile names fairseq."""
    a = analyze_logs(write_file(tmp_path, "train.log", _fairseq_legacy_log()))
    assert a.status == "healthy", [(f.kind, f.message) for f in a.findings]
    assert a.run_profile.framework == "fairseq"


def test_fairseq_legacy_running_mean_that_stays_flat_is_no_evidence_of_learning(tmp_path):
    """The same noisy batches around a running mean that does not fall: no_learning_evidence still warns."""
    a = analyze_logs(write_file(tmp_path, "train.log", _fairseq_legacy_log(fall=0.0)))
    mean = a.timeline.series("loss_avg")
    assert float(mean.iloc[0]) - float(mean.iloc[-1]) < 0.05  # (the run's shape: flat)
    assert any(f.kind == "no_learning_evidence" for f in a.findings), [(f.kind, f.message) for f in a.findings]


def test_newer_fairseq_train_inner_and_word_language_model_lines_are_not_the_legacy_kind():
    """fairseq's later `train_inner` line (no leading `| `, num_updates in it) and PyTorch's word_language_model
    example (`| epoch   1 |   200/ 2983 batches | ... | loss  7.63 | ppl  2050.12`, natural log) look alike: neither is
    read as fairseq's legacy line, and neither loss is converted."""
    inner = parse_line("epoch 001:     10 / 10 loss=2.500, ppl=5.66, wps=20000, ups=2.5, wpb=8192, bsz=16, "
                       "num_updates=10, lr=0.0001, gnorm=1.3")
    wlm = parse_line("| epoch   1 |   200/ 2983 batches | lr 20.00 | ms/batch 45.63 | loss  7.63 | ppl  2050.12")
    end = parse_line("| end of epoch   1 | time: 12.30s | valid loss  5.80 | valid ppl   330.61")
    assert inner.kind != "fairseq_legacy" and dict(inner.metrics)["loss"] == 2.5
    assert wlm.kind != "fairseq_legacy" and dict(wlm.metrics)["loss"] == 7.63
    assert end.kind != "fairseq_epoch" and dict(end.metrics)["eval_loss"] == 5.8


# --- OpenNMT-py's 2018 report line ---------------------------------------------------------------------------------


def _onmt_2018_log(batches=400, every=50, epochs=2, nan_from=None):
    """onmt/Trainer.py:66 `("Epoch %2d, %5d/%5d; acc: %6.2f; ppl: %6.2f; xent: %6.2f; %3.0f src tok/s; %3.0f tgt
    tok/s; %6.0f s elapsed")`: xent the loss (nats), ppl = exp(xent), acc in percent; the batch counter starts over
    each epoch."""
    out, i = [], 0
    for e in range(1, epochs + 1):
        for n in range(every, batches + 1, every):
            i += 1
            xent = float("nan") if nan_from is not None and i >= nan_from else 6.0 - 0.25 * i
            ppl = math.exp(xent) if xent == xent else xent
            out.append("Epoch %2d, %5d/%5d; acc: %6.2f; ppl: %6.2f; xent: %6.2f; %3.0f src tok/s; %3.0f tgt tok/s; "
                       "%6.0f s elapsed" % (e, n, batches, 10 + 2 * i, ppl, xent, 3438, 3517, 40 * i))
    return "\n".join(out) + "\n"


def test_opennmt_2018_epoch_lines_are_read_and_numbered_on_across_epochs(tmp_path):
    """Batch n of M in epoch E at (E - 1) x M + n; xent the loss, acc accuracy_pct; framework opennmt; healthy."""
    a = analyze_logs(write_file(tmp_path, "train.log", _onmt_2018_log()))
    loss = a.timeline.series("loss")
    assert list(loss.index) == list(range(50, 801, 50)), list(loss.index)
    assert float(loss.iloc[0]) == 5.75 and float(a.timeline.series("accuracy_pct").iloc[-1]) == 42.0
    assert a.run_profile.framework == "opennmt"
    assert a.status == "healthy", [(f.kind, f.message) for f in a.findings]


def test_opennmt_2018_nan_xent_is_broken_at_its_step(tmp_path):
    """`xent:    nan` from the 11th line on (epoch 2, batch 150: step 550)."""
    a = analyze_logs(write_file(tmp_path, "train.log", _onmt_2018_log(nan_from=11)))
    assert a.status == "broken" and a.first_incident.step == 550, a.first_incident


def test_a_hand_written_epoch_line_with_acc_is_not_opennmts():
    """A loop's own `Epoch 1, 50/100; loss: 2.3; acc: 41.0` (no ppl, no xent) is not OpenNMT-py's line."""
    record = parse_line("Epoch 1, 50/100; loss: 2.3; acc: 41.0")
    assert record is None or record.kind != "opennmt_epoch"
