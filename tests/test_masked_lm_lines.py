"""A BERT pre-training loop's step lines, its masked-LM (MLM) and next-sentence (NSP) losses printed side by side
(forensics/ingest/console_lines/masked_lm.py). From corpus batch AS102: KimRass_BERT's bracketed fields and
joonkeekim_AIGC_SilverIRIS's `N step, mlm : X, nsp : Y nsp_acc : Z`.

The MLM loss is the run's `loss` (the language model's own per-token loss); the NSP loss, a noisy binary loss per
sentence pair that BERT's optimizer adds to it, is kept as its own series, as the accuracies are (the module's
docstring says why the sum no line prints is not the loss)."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.ingest import stdout
from forensics.ingest.pretrain_lines import parse_line
from forensics.discover.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"

# KimRass_BERT pretrain/log.txt, its first lines
BRACKETED = ("[ 42,174/4,000,000 ][ 0:10:13 ][ NSP loss: 0.4465 ][ NSP acc: 0.766 ]"
             "[ MLM loss: 0.4008 ][ MLM acc: 0.935 ]\n"
             "[ 43,736/4,000,000 ][ 0:10:25 ][ NSP loss: 0.4305 ][ NSP acc: 0.776 ]"
             "[ MLM loss: 0.3902 ][ MLM acc: 0.937 ]\n"
             "[ 45,298/4,000,000 ][ 0:10:24 ][ NSP loss: 0.4254 ][ NSP acc: 0.779 ]"
             "[ MLM loss: 0.3853 ][ MLM acc: 0.937 ]\n")
# joonkeekim_AIGC_SilverIRIS pretraining/log.txt, its first lines
STEP_COMMA = ("20 step,  mlm : 6.20, nsp : 0.66 nsp_acc : 0.65625\n"
              "40 step,  mlm : 4.09, nsp : 0.34 nsp_acc : 0.875\n"
              "60 step,  mlm : 2.92, nsp : 0.23 nsp_acc : 0.90625\n")


# --- `[ N/T ][ time ][ NSP loss: x ][ NSP acc: y ][ MLM loss: z ][ MLM acc: w ]` --------------------------------------

def test_bracketed_fields_give_the_step_of_its_plan_and_the_masked_lm_loss_as_the_loss():
    record = parse_line(BRACKETED.splitlines()[0])
    assert (record.kind, record.step, record.total) == ("masked_lm", 42174, 4000000)
    assert dict(record.metrics) == {"loss": 0.4008, "nsp_loss": 0.4465, "nsp_acc": 0.766, "mlm_loss": 0.4008,
                                    "mlm_acc": 0.935}


def test_bracketed_fields_of_the_masked_lm_alone_are_read_too():
    """The RoBERTa-style run of the same script drops NSP: the MLM loss is all it trains on."""
    record = parse_line("[ 1,562/4,000,000 ][ 0:09:41 ][ MLM loss: 5.1234 ][ MLM acc: 0.412 ]")
    assert (record.step, dict(record.metrics)["loss"]) == (1562, 5.1234)


def test_a_printed_total_beside_the_terms_is_the_loss():
    record = parse_line("[ 1,562/4,000,000 ][ loss: 5.80 ][ MLM loss: 5.12 ][ NSP loss: 0.68 ]")
    assert dict(record.metrics)["loss"] == 5.80


@pytest.mark.parametrize("line", [
    "[ 42,174/4,000,000 ][ 0:10:13 ][ NSP acc: 0.766 ][ MLM acc: 0.935 ]",  # accuracies alone: no loss
    "[ 42,174/4,000,000 ][ 0:10:13 ][ saving checkpoint ][ MLM loss: 0.4008 ]",  # a field that is no value
    "[ 3/10 ][ loss: 0.4008 ]",  # a plain loss: no masked-LM term, not this reader's
    "[2024-01-01 10:00:00][ MLM loss: 0.4008 ]"])  # a time stamp, not a step of a plan
def test_bracketed_lines_without_a_masked_lm_loss_or_with_other_fields_are_not_read_as_such(line):
    record = parse_line(line)
    assert record is None or record.kind != "masked_lm"


def test_a_log_of_bracketed_masked_lm_lines_is_found_and_read(tmp_path: Path):
    assert log_hinted(BRACKETED.encode())
    (tmp_path / "log.txt").write_text(BRACKETED)
    frame = stdout.read(tmp_path / "log.txt").frame
    assert list(frame[frame.metric == "mlm_loss"].step) == [42174, 43736, 45298]


# --- `N step,  mlm : x, nsp : y nsp_acc : z` ----------------------------------------------------------------------

def test_a_step_comma_line_reads_its_bare_mlm_and_nsp_as_their_losses():
    record = parse_line(STEP_COMMA.splitlines()[0])
    assert (record.kind, record.step) == ("masked_lm", 20)
    assert dict(record.metrics) == {"loss": 6.20, "mlm_loss": 6.20, "nsp_loss": 0.66, "nsp_acc": 0.65625}


@pytest.mark.parametrize("line", [
    "20 step,  mlm_acc : 0.41, nsp_acc : 0.66",  # accuracies alone
    "20 step,  mlm : 6.20, then saved the model",  # prose after it
    "20 steps, mlm : 6.20, nsp : 0.66",  # a count of steps in a sentence, not the loop's counter
    "step 20, mlm : 6.20, nsp : 0.66"])  # another shape (the hand-written readers' to judge)
def test_step_comma_near_misses_are_not_read_as_masked_lm_lines(line):
    record = parse_line(line)
    assert record is None or record.kind != "masked_lm"


def test_a_step_counter_that_starts_over_where_the_losses_go_on_is_a_new_epoch(tmp_path: Path):
    """joonkeekim_AIGC_SilverIRIS's second segment: the counter back at 20, the MLM loss going on from 0.10."""
    first = "".join(f"{s} step,  mlm : {2.0 / (1 + s / 20):.2f}, nsp : 0.30 nsp_acc : 0.9\n"
                    for s in range(20, 220, 20))
    again = "".join(f"{s} step,  mlm : {0.18 - s / 4000:.2f}, nsp : 0.20 nsp_acc : 0.9\n"
                    for s in range(20, 220, 20))
    (tmp_path / "log.txt").write_text(first + again)
    assert log_hinted((first + again).encode())
    steps = list(stdout.read(tmp_path / "log.txt").frame.query("metric == 'mlm_loss'").step)
    assert steps == sorted(steps) and steps[-1] == 400


def test_one_noisy_batch_of_the_next_sentence_task_is_no_loss_spike(tmp_path: Path):
    """Guard: joonkeekim's second epoch, the MLM loss steady at 0.07-0.09 while one batch of 32 pairs puts the NSP loss
    at 0.44 among 0.01-0.28 (four pairs wrong): the NSP term's noise is no spike of the run's loss."""
    nsp = [0.05, 0.02, 0.08, 0.05, 0.03, 0.02, 0.19, 0.18, 0.06, 0.44, 0.08, 0.08, 0.05, 0.11, 0.01, 0.08, 0.09, 0.07]
    lines = "".join(f"{20 * (k + 1)} step,  mlm : {0.08 + 0.01 * (k % 2 - (k % 3 == 0)):.2f}, nsp : {nsp[k % 18]:.2f} "
                    f"nsp_acc : 0.96875\n" for k in range(72))
    (tmp_path / "log.txt").write_text(lines)
    assert not [f for f in forensics.analyze(tmp_path).findings if f.kind == "loss_spike"]


def test_a_learning_masked_lm_run_is_healthy_and_profiled_as_pre_training(tmp_path: Path):
    """Guard: a BERT pre-training loop whose losses fall stays silent, and its objective is pre-training."""
    lines = "".join(f"[ {1562 * k:,}/1,000,000 ][ 0:10:00 ][ NSP loss: {0.69 - 0.01 * k:.4f} ][ NSP acc: 0.6 ]"
                    f"[ MLM loss: {9.6 * 0.97 ** k:.4f} ][ MLM acc: 0.3 ]\n" for k in range(1, 40))
    (tmp_path / "log.txt").write_text(lines)
    a = forensics.analyze(tmp_path)
    assert a.status == "healthy", [f.message for f in a.findings]
    assert a.run_profile.objective == "pretrain"


def test_the_two_bert_consoles_of_the_corpus_are_read():
    kimrass = forensics.analyze(CORPUS / "KimRass_BERT")
    assert len(kimrass.timeline.series("mlm_loss")) == 150
    assert kimrass.run_profile.objective == "pretrain"
    joonkee = forensics.analyze(CORPUS / "joonkeekim_AIGC_SilverIRIS")
    assert len(joonkee.timeline.series("mlm_loss")) == 711
    assert joonkee.run_profile.objective == "pretrain"
