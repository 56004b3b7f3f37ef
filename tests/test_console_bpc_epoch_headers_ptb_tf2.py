"""Tests of console readings (ingest.stdout, console_facts, pretrain_lines): a loss ending a sentence, bpc evals,
stepless lines under epoch headers, the PTB and TF2 tutorials' consoles, a summed loss beside a per-token eval.

Corpus batch AS43's misread consoles: a loss that ends its logger's sentence and held-out `bpc = X` prints
(ThAIKeras_char-rnn-text-generation), stepless loss lines under `=== Epoch E/N ===` headers (YYYYXL1004_NLP2), the TF
PTB tutorial's perplexity console (graceGuor_emojiPrediction), a printed `Vocab Size: 65` (santhoshv6_era_v4_s13_
assignment), the TF2 Transformer tutorial's batch and epoch lines (Gregorgeous_ula-transformer-tensorflow2.0), and a
summed training loss beyond ln(vocabulary) beside a per-token eval loss (gbyuvd_ChemMiniQ3-HoriFIE)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

import forensics
from forensics.ingest import stdout
from forensics.ingest.console_facts import console_facts
from forensics.ingest.pretrain_lines import parse_line

CORPUS = Path(__file__).parent / "realworld"
_LOGGER = "2018-06-04 17:10:11,360 - __main__ - INFO - "


def _series(path: Path, metric: str) -> dict[int, float]:
    frame = stdout.read(path).frame
    rows = frame[frame.metric == metric]
    return dict(zip(rows.step.astype(int), rows.value))


def test_a_full_stop_after_the_loss_ends_the_sentence_not_the_number():
    record = parse_line(_LOGGER + "epoch: 3, duration: 360s, loss: 1.89829.")
    assert record is not None and dict(record.metrics)["loss"] == 1.89829
    assert dict(parse_line(_LOGGER + "epoch: 4, duration: 360s, loss: 2.").metrics)["loss"] == 2.0


def test_a_dot_before_a_digit_or_letter_is_still_no_number_end():
    assert parse_line("epoch 5, loss: 3.1.2") is None  # a version, not a loss
    assert parse_line("epoch 5, loss: 3.12.txt") is None


def _char_rnn_log(test_bpc: dict[int, float], epochs: int = 30) -> str:
    lines = []
    for epoch in range(epochs):
        lines.append(_LOGGER + f"epoch: {epoch}, duration: 360s, loss: {1.1 + 1.4 * math.exp(-epoch / 10):.5f}.")
        if epoch in test_bpc:
            lines += [_LOGGER + f"bpc = {test_bpc[epoch]:f}", _LOGGER + "best bpc = 9.000000",
                      _LOGGER + "test duration: 1061s"]
    return "\n".join(lines) + "\n"


def test_held_out_bpc_prints_are_an_eval_loss_in_nats_at_their_epoch(tmp_path: Path):
    bpc = {0: 3.87, 10: 2.16, 20: 2.06}
    (tmp_path / "shakespeare.log").write_text(_char_rnn_log(bpc))
    evals = _series(tmp_path / "shakespeare.log", "eval_loss")
    loss = _series(tmp_path / "shakespeare.log", "loss")
    assert len(loss) == 30 and loss[1] == 2.5  # epoch 0 at step 1, the epoch-only lines' numbering; its `.` no part
    assert sorted(evals) == [1, 11, 21]  # after epochs 0, 10 and 20; `best bpc` is no evaluation
    assert np.allclose([evals[1], evals[11], evals[21]], [b * math.log(2) for b in bpc.values()])


def test_held_out_bpc_rising_while_the_train_loss_falls_is_overfitting(tmp_path: Path):
    bpc = {e: 2.0 + (0.004 * (e - 40) if e > 40 else 0.01 * (40 - e) / 10) for e in range(0, 200, 10)}
    (tmp_path / "shakespeare.log").write_text(_char_rnn_log(bpc, epochs=200))
    a = forensics.analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "overfitting"


def test_the_real_char_rnn_log_is_read_with_its_test_bpc():
    a = forensics.analyze(CORPUS / "ThAIKeras_char-rnn-text-generation")
    assert len(a.timeline.series("loss")) == 1000 and len(a.timeline.series("eval_loss")) == 100
    assert a.first_incident.kind == "overfitting" and abs(a.first_incident.step - 150) <= 100


_EPOCH_LOSSES = (8.6529, 6.6398, 5.3513, 4.5662, 4.0054)


def _headed_log(header: str = "=== Epoch {e}/5 ===", extra: str = "") -> str:
    text = "配置: {'model_type': 'transformer', 'batch_size': 256, 'lr': 0.001, 'num_epoch': 5}\n开始训练\n\n"
    for e, loss in enumerate(_EPOCH_LOSSES, 1):
        text += (f"{header.format(e=e)}\nLoss: {loss:.4f}, BLEU: {e * 1.5:.2f}, 累计时间: {e * 12.4:.1f}s\n"
                 f"Ref: Why are you here?\nHyp: I to to\n{extra}保存模型到 checkpoints/transformer_best.pt\n\n")
    return text


def test_stepless_loss_lines_are_dated_by_the_epoch_header_above_them(tmp_path: Path):
    (tmp_path / "transformer.log").write_text(_headed_log())
    loss = forensics.analyze(tmp_path).timeline.series("loss")
    assert list(loss.index) == [1, 2, 3, 4, 5] and list(loss) == list(_EPOCH_LOSSES)


def test_stepless_loss_lines_without_headers_stay_unread(tmp_path: Path):
    """A loss line outside any header's section: none of them is dated (the rule holds only where every one is)."""
    text = "Loss: 9.1000, BLEU: 0.00\n\n" + _headed_log()
    (tmp_path / "transformer.log").write_text(text)
    assert _series(tmp_path / "transformer.log", "loss") == {}


def test_two_loss_prints_under_one_header_are_no_epochs_value(tmp_path: Path):
    (tmp_path / "transformer.log").write_text(_headed_log(extra="Loss: 1.0000, BLEU: 0.00\n"))
    assert _series(tmp_path / "transformer.log", "loss") == {}


def test_the_real_translation_console_is_healthy_from_its_epoch_losses():
    a = forensics.analyze(CORPUS / "YYYYXL1004_NLP2")
    assert len(a.timeline.series("loss")) == 20 and a.status == "healthy"


_PTB_HEAD = "keep_prob:0.1\nword_to_id.len:9277\nEpoch: 1 Learning rate: 1.000\n"
_PERPLEXITIES = (14566.362, 9242.835, 6970.343, 5834.140, 5118.654)


def _ptb_log(epoch_size: str = "", epochs: int = 1) -> str:
    text = _PTB_HEAD
    for epoch in range(1, epochs + 1):
        text += f"Epoch: {epoch} Learning rate: 1.000\n" if epoch > 1 else ""
        for k, ppl in enumerate(_PERPLEXITIES):
            text += f"{epoch_size}{(10 + 24 * k) / 120:.3f} perplexity: {ppl / epoch:.3f} speed: 525 wps\n"
        text += (f"Epoch: {epoch} Train Perplexity: {3601.977 / epoch:.3f} train_acc 1184.000:\n"
                 f"Epoch: {epoch} Valid Perplexity: {1113.859 / epoch:.3f} valid_acc 267.000:\n")
    return text + "Test Perplexity: 1176.581 test_rightCount: 0.000 test_acc 228.000:\nFinished!\n"


def test_the_ptb_tutorials_console_is_a_training_log_of_log_perplexities(tmp_path: Path):
    (tmp_path / "ptb.log").write_text(_ptb_log("epoch_size: 120  step / (model.input.epoch_size // 10): "))
    a = forensics.analyze(tmp_path)
    loss = a.timeline.series("loss")
    assert list(loss.index) == [10, 34, 58, 82, 106]  # the epoch's fraction x its printed size
    assert np.allclose(loss.to_numpy(), np.log(_PERPLEXITIES))
    evals = a.timeline.series("eval_loss")
    assert list(evals.index) == [106] and math.isclose(evals.iloc[0], math.log(1113.859))
    assert "accuracy" not in a.timeline.metrics and "eval_accuracy" not in a.timeline.metrics


def test_the_ptb_tutorials_prints_count_on_across_epochs_without_an_epoch_size(tmp_path: Path):
    (tmp_path / "ptb.log").write_text(_ptb_log(epochs=2))
    loss = _series(tmp_path / "ptb.log", "loss")
    evals = _series(tmp_path / "ptb.log", "eval_loss")
    assert sorted(loss) == list(range(1, 11)) and sorted(evals) == [5, 10]  # the n-th print; each epoch's valid


def test_a_vocabulary_printed_in_title_case_or_as_the_ptb_maps_length_is_read():
    assert console_facts("Model Configuration:\n  Layers: 30\n  Vocab Size: 65\n")["console_vocab_size"] == 65
    assert console_facts(_PTB_HEAD)["console_vocab_size"] == 9277
    assert "console_vocab_size" not in console_facts("  vocab: 65 words\n")


def test_the_real_ptb_console_and_smollm_header_give_a_from_scratch_profile():
    for case in ("graceGuor_emojiPrediction", "santhoshv6_era_v4_s13_assignment"):
        profile = forensics.analyze(CORPUS / case).run_profile
        assert (profile.method, profile.objective) == ("full", "pretrain"), case


def _tf2_transformer_log(epochs: int = 6) -> str:
    text = ""
    for e in range(1, epochs + 1):
        text += (f"0: Epoch {e} Batch 0 Loss {2.1 - 0.1 * e:.4f} Accuracy {0.01 * e:.4f}\n"
                 f"0: Epoch {e} Loss {2.05 - 0.1 * e:.4f} Accuracy {0.012 * e:.4f}\n"
                 f"0: Time taken for 1 epoch: 12.3 secs\n\n")
    return text


def test_the_tf2_tutorials_epoch_summary_is_no_step_of_its_own(tmp_path: Path):
    (tmp_path / "transformer.log").write_text(_tf2_transformer_log())
    loss = _series(tmp_path / "transformer.log", "loss")
    assert len(loss) == 6 and np.allclose(sorted(loss.values(), reverse=True), [2.1 - 0.1 * e for e in range(1, 7)])


def test_a_loops_comma_separated_batch_pairs_stay_epoch_lines(tmp_path: Path):
    """`Epoch: 0, Batch: 100, Loss: X` (shresthakamal_dialogpt2-finetune's loguru lines): numbered in file order as
    before, not at batch 100, as the SummaryWriter beside such a log counts them."""
    (tmp_path / "train.log").write_text("".join(f"2022-07-03 at 16:5{i}:08 Epoch: 0, Batch: {100 * i}, Loss: {5 - i}.0\n"
                                                for i in range(4)))
    assert sorted(_series(tmp_path / "train.log", "loss")) == [1, 2, 3, 4]


def _trainer_state_with_summed_loss(tmp_path: Path, vocab: int) -> None:
    history = []
    for k, (loss, ev) in enumerate(((20.4, 2.69), (10.4, 2.0), (8.9, 1.83), (8.3, 1.73))):
        step = 175 * (k + 1)
        history += [{"loss": loss, "grad_norm": 2.4, "learning_rate": 5e-5, "epoch": 0.25 + k, "step": step},
                    {"eval_loss": ev, "epoch": 0.25 + k, "step": step}]
    state = {"global_step": 700, "max_steps": 700, "log_history": history}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3", "vocab_size": vocab,
                                                      "hidden_size": 320, "num_hidden_layers": 6}))


def test_a_training_loss_beyond_ln_vocabulary_beside_a_per_token_eval_loss_is_the_mismatch_note(tmp_path: Path):
    """20.4 = 3 x ln 782 against an eval loss of 2.69 falling to 1.73 (gbyuvd_ChemMiniQ3-HoriFIE's multi-token loss):
    the training loss is another quantity, which the train/eval note says; no impossible-loss warning beside it."""
    _trainer_state_with_summed_loss(tmp_path, 782)
    a = forensics.analyze(tmp_path)
    assert [f.kind for f in a.findings] == ["train_eval_mismatch"] and a.status == "healthy"


def test_a_training_loss_beyond_ln_vocabulary_with_no_eval_is_still_impossible(tmp_path: Path):
    _trainer_state_with_summed_loss(tmp_path, 782)
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    state["log_history"] = [h for h in state["log_history"] if "loss" in h]
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    assert "impossible_loss" in [f.kind for f in forensics.analyze(tmp_path).findings]
