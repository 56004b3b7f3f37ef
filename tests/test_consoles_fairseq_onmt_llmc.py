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
    read as fairseq's legacy line; the train_inner line is fairseq's own (its loss in bits: ppl 5.66 = 2^2.5), the
    word_language_model's loss stays as printed."""
    inner = parse_line("epoch 001:     10 / 10 loss=2.500, ppl=5.66, wps=20000, ups=2.5, wpb=8192, bsz=16, "
                       "num_updates=10, lr=0.0001, gnorm=1.3")
    wlm = parse_line("| epoch   1 |   200/ 2983 batches | lr 20.00 | ms/batch 45.63 | loss  7.63 | ppl  2050.12")
    end = parse_line("| end of epoch   1 | time: 12.30s | valid loss  5.80 | valid ppl   330.61")
    assert inner.kind == "fairseq_inner" and math.isclose(dict(inner.metrics)["loss"], 2.5 * LN2)
    assert wlm.kind != "fairseq_legacy" and dict(wlm.metrics)["loss"] == 7.63
    assert end.kind != "fairseq_epoch" and dict(end.metrics)["eval_loss"] == 5.8


# --- fairseq's console since 2020 (train_inner / train / valid loggers) and its JSON progress bar -------------------


def _fairseq_log(epochs=2, per_epoch=300, every=100):
    """fairseq_cli/train.py's loggers as issue 2338 and 940 show them: `train_inner` progress lines with a
    label-smoothed loss above nll_loss and ppl = 2^nll_loss, `train` and `valid` epoch summaries, all in bits."""
    out = []
    for e in range(1, epochs + 1):
        for n in range(every, per_epoch + 1, every):
            u = (e - 1) * per_epoch + n
            nll = 9.0 - 0.002 * u
            out.append(f"2020-07-17 07:11:02 | INFO | train_inner | epoch {e:03d}:   {n:4d} / {per_epoch} "
                       f"loss={nll + 0.6:.3f}, nll_loss={nll:.3f}, ppl={2 ** nll:.2f}, wps=57.3, ups=0.04, wpb=1613, "
                       f"bsz=80, num_updates={u}, lr=2.8e-05, gnorm=3.23, train_wall=13, wall=1236")
        out.append(f"2020-07-17 08:00:00 | INFO | valid | epoch {e:03d} | valid on 'valid' subset | loss {nll + 0.5:.3f} "
                   f"| nll_loss {nll - 0.1:.3f} | ppl {2 ** (nll - 0.1):.2f} | wps 5000 | num_updates {u}")
        out.append(f"2020-07-17 08:00:00 | INFO | train | epoch {e:03d} | loss {nll + 0.8:.3f} | nll_loss {nll + 0.2:.3f}"
                   f" | ppl {2 ** (nll + 0.2):.2f} | wps 57 | num_updates {u} | lr 2.8e-05 | gnorm 3.1")
    return "\n".join(out) + "\n"


def test_fairseq_train_inner_lines_are_at_their_update_count_in_nats(tmp_path):
    """The losses of fairseq's console are bits (its criterions divide by ln 2): read in nats, as every other reader
    gives them, at num_updates across epochs; the epoch's own summary adds no second training loss at its last step,
    and the validation's loss is in nats too."""
    a = analyze_logs(write_file(tmp_path, "train.log", _fairseq_log()))
    loss, nll, ev = (a.timeline.series(n) for n in ("loss", "nll_loss", "eval_loss"))
    assert list(loss.index) == [100, 200, 300, 400, 500, 600]
    assert math.isclose(float(loss.loc[100]), (9.0 - 0.2 + 0.6) * LN2, rel_tol=1e-3)
    assert math.isclose(float(nll.loc[600]), (9.0 - 1.2) * LN2, rel_tol=1e-3)
    assert math.isclose(float(loss.loc[300]), (9.0 - 0.6 + 0.6) * LN2, rel_tol=1e-3)  # not the summary's mean
    assert list(ev.index) == [300, 600] and math.isclose(float(ev.loc[300]), (9.0 - 0.6 + 0.5) * LN2, rel_tol=1e-3)
    assert a.run_profile.framework == "fairseq"


def test_fairseq_json_progress_dicts_are_read_in_nats(tmp_path):
    """--log-format json prints the same fields as dicts through its loggers (progress_bar.py JsonProgressBar; fields
    as issue 233 shows them): training dicts by num_updates and wpb, validation dicts with valid_ppl =
    2^valid_nll_loss."""
    head = "2020-07-17 07:11:02 | INFO | "
    lines = [head + 'train_inner | {"epoch": 25, "loss": "3.097", "nll_loss": "1.328", "ppl": "2.51", "wps": 16674, '
             f'"ups": "2.7", "wpb": 617156, "bsz": 16626, "num_updates": {u}, "lr": 0.00019, "gnorm": "0.194"}}'
             for u in range(100, 1100, 100)]
    lines.append(head + 'valid | {"epoch": 25, "valid_loss": 3.1106, "valid_nll_loss": 1.3199, "valid_ppl": "2.50"}')
    a = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert math.isclose(float(a.timeline.series("loss").iloc[0]), 3.097 * LN2, rel_tol=1e-6)
    assert math.isclose(float(a.timeline.series("eval_loss").iloc[-1]), 3.1106 * LN2, rel_tol=1e-6)


def test_a_loop_printing_a_natural_log_perplexity_keeps_its_losses():
    """A hand-written loop's dict with valid_ppl = e^valid_loss (nats) is left as printed."""
    from forensics.ingest.console_lines.fairseq import fairseq_dict_in_nats
    pairs = {"epoch": 3.0, "valid_loss": 2.3026, "valid_nll_loss": 2.3026, "valid_ppl": 10.0}
    assert fairseq_dict_in_nats(pairs) == pairs


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


# --- llm.c's train_gpt2 console ------------------------------------------------------------------------------------


def _llmc_log(steps=30, val_every=10, nan_from=None, total=74, start=10.9):
    """train_gpt2.cu: `val loss %f` at every val_every-th step (before the step's update: the model after the step line
    before it, and before any step, the weights as loaded) and `step %4d/%d | loss %7.6f (%+.2fz)| norm %6.4f
    (%+.2fz)| lr %.2e | %.2f ms | %.1f%% bf16 MFU | %.0f tok/s` after each update; NaN prints `nan (+nanz)`."""
    out = []
    for s in range(0, steps + 1):
        if s % val_every == 0:
            late = nan_from is not None and s >= nan_from
            out.append(f"val loss {float('nan') if late else start - 0.2 * s if s else start + 0.05:f}")
        if s == steps:
            break
        bad = nan_from is not None and s + 1 >= nan_from
        loss, norm = (float("nan"),) * 2 if bad else (start - start / 50 * s, 2.0 - 0.03 * s)
        z = "+nanz" if bad else "+0.10z"
        out.append(f"step {s + 1:4d}/{total} | loss {loss:7.6f} ({z})| norm {norm:6.4f} ({z})| lr {3e-4:.2e} | "
                   f"36.58 ms | 9.2% bf16 MFU | 112241 tok/s")
    out += ["generating:", "---"]
    return "\n".join(out) + "\n"


def test_llmc_norm_column_is_the_grad_norm_and_val_loss_the_eval_loss(tmp_path):
    """`| norm 1.7000 (+0.10z)|` -> grad_norm; `val loss X` -> eval_loss at the step line before it (the one before
    any step line, the weights as loaded, is no step's)."""
    a = analyze_logs(write_file(tmp_path, "train.log", _llmc_log()))
    norm = a.timeline.series("grad_norm")
    assert len(norm) == 30 and math.isclose(float(norm.iloc[0]), 2.0)
    assert list(a.timeline.series("eval_loss").index) == [10, 20, 30]


def test_llmc_console_is_pre_training(tmp_path):
    """llm.c's train_gpt2 step line is a pre-training loop's own (token streams, no fine-tuning mode): objective
    pretrain, here for a run continued from a checkpoint (a first loss of 3.3, far under the random guess, which
    alone would not say so); a healthy falling run."""
    a = analyze_logs(write_file(tmp_path, "train.log", _llmc_log(start=3.3)))
    assert a.run_profile.objective == "pretrain", a.run_profile
    assert a.status == "healthy", [(f.kind, f.message) for f in a.findings]


def test_llmc_nan_norm_and_val_loss_are_non_finite(tmp_path):
    """From step 12 on loss and norm print `nan (+nanz)`, and the val loss after step 20 is nan: broken at 12, the
    grad norm and the eval loss read non-finite too."""
    a = analyze_logs(write_file(tmp_path, "train.log", _llmc_log(nan_from=12)))
    assert a.status == "broken" and a.first_incident.step == 12
    kinds = {(f.metric, f.kind) for f in a.findings}
    assert ("grad_norm", "nonfinite_metric") in kinds and ("eval_loss", "nonfinite_metric") in kinds, kinds


def test_a_hand_written_step_norm_line_and_a_lone_val_loss_are_not_llmcs(tmp_path):
    """A loop's `step 10/100 | loss 2.3 | norm 1.2 | lr 1e-4` (no ms, MFU, tok/s) is not llm.c's line, and `val loss X`
    lines in a file with no llm.c step line are nobody's evaluation: no eval_loss, objective not pretrain."""
    record = parse_line("step   10/100 | loss 2.300000 | norm 1.2000 | lr 1.00e-04")
    assert record is not None and record.kind != "llmc_console"
    lines = [f"step {s:4d}/100 | loss {3.0 - 0.05 * s:.6f} | lr 1.00e-04" for s in range(1, 31)]
    lines += [f"val loss {2.5:f}"] * 3
    a = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert "eval_loss" not in a.timeline.metrics
    assert a.run_profile.objective != "pretrain"


# --- char-rnn-tensorflow's train.py ---------------------------------------------------------------------------------


def _char_rnn_log(batches=446, epochs=2, every=1):
    """train.py's `print("{}/{} (epoch {}), train_loss = {:.3f}, time/batch = {:.3f}".format(e * num_batches + b,
    num_epochs * num_batches, e, train_loss, end - start))`, a loss falling from 4.2 (ln 65 characters)."""
    lines = []
    for e in range(epochs):
        for b in range(0, batches, every):
            step = e * batches + b
            lines.append(f"{step}/{epochs * batches} (epoch {e}), train_loss = {4.2 - 2.4 * step / (epochs * batches):.3f}, "
                         "time/batch = 0.151")
    return "\n".join(lines) + "\n"


def test_char_rnn_lines_are_the_runs_own_steps_of_a_model_trained_from_scratch(tmp_path):
    """sherjilozair/char-rnn-tensorflow issue 138's paste reads as a pre-training console (AS34): the first count is
    already the run's step across epochs, not a batch of the epoch to number on."""
    a = analyze_logs(write_file(tmp_path, "train.log", _char_rnn_log(every=10)))
    loss = a.timeline.series("loss")
    assert loss.index[-1] == 886 and float(loss.loc[446]) == 3.0
    assert a.run_profile.objective == "pretrain"


def test_a_line_that_only_looks_like_char_rnns_is_not_read_as_it():
    record = parse_line("1200/44600 (epoch 2), loss = 1.482, time = 0.2")
    assert record is None or record.kind != "char_rnn"
