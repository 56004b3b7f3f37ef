"""Tests of hand-written loops' lines (ingest.stdout): bare leading counters, a loss per word, split tags.

Corpus batch AS77's hand-written loops the line reader missed: a bare leading counter before named split losses
(`5300: train loss: X / val loss: Y`, Hari-Krishna-QmFuZGk_llm_mastery), a loss per word (`train loss/word=6.2583`,
6ma6X_nn4nlp-code) and a split tag before a bare loss (`Epoch 1: valid: loss 3.12`, AugustinCombes_icu_MLM)."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout
from forensics.discover.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"


def _read(text: str, tmp_path: Path) -> dict:
    """{(step, metric): value} of a console text."""
    frame = stdout.read_console(text, tmp_path / "console.log", []).frame
    return {(int(r.step), r.metric): r.value for r in frame.itertuples()}


def _leading_counter_lines(steps=(5300, 5350, 5400, 5450)) -> str:
    return "".join(f"\n{s}: train loss: {3.5 - (s - 5300) / 1000} / val loss: {3.6 - (s - 5300) / 1000}\nsample\n"
                   for s in steps)


def test_a_bare_leading_counter_before_split_losses_is_the_step(tmp_path):
    read = _read(_leading_counter_lines(), tmp_path)
    assert read[(5300, "loss")] == 3.5 and read[(5300, "eval_loss")] == 3.6
    assert read[(5450, "loss")] == 3.35


def test_lines_opening_with_a_bare_counter_before_split_losses_hint_a_log():
    assert log_hinted(_leading_counter_lines().encode())


def test_a_leading_number_before_other_words_is_no_step(tmp_path):
    # a numbered list of notes: no split's loss right after the counter
    text = "".join(f"{i}: we tried lr 1e-4 and the loss: {2.0 + i} stayed\n" for i in range(1, 5))
    assert not any(metric == "loss" for _, metric in _read(text, tmp_path))
    assert not log_hinted(text.encode())


def test_a_loss_per_word_is_the_loss_and_dev_its_held_out_split(tmp_path):
    text = "".join(f"iter {i}: train loss/word={6.2 - i / 10:.4f}, ppl=500.0 (word/sec=6597.91)\n"
                   f"iter {i}: dev loss/word={5.8 - i / 10:.4f}, ppl=350.0 (word/sec=29892.49)\n" for i in range(3))
    read = _read(text, tmp_path)
    assert read[(0, "loss")] == 6.2 and read[(0, "eval_loss")] == 5.8 and read[(2, "eval_loss")] == 5.6


def test_a_loss_per_other_name_after_the_slash_is_not_read(tmp_path):
    text = "".join(f"iter {i}: train loss/scaled={6.2 - i / 10:.4f}\n" for i in range(3))
    assert not any(metric in ("loss", "eval_loss") for _, metric in _read(text, tmp_path))


def _split_tagged_epochs(held_out: str = "valid") -> str:
    return "".join(f"Epoch {e}: train: loss {4 - e / 2:.2f}; accuracy 0.3\nEpoch {e}: {held_out}: loss {3.5 - e / 2:.2f}; "
                   f"accuracy 0.4\n" for e in range(1, 4))


def test_a_held_out_split_tag_before_the_loss_makes_it_the_eval_loss_of_the_same_epoch(tmp_path):
    read = _read(_split_tagged_epochs(), tmp_path)
    losses = sorted((step, value) for (step, metric), value in read.items() if metric == "loss")
    evals = sorted((step, value) for (step, metric), value in read.items() if metric == "eval_loss")
    assert [v for _, v in losses] == [3.5, 3.0, 2.5] and [v for _, v in evals] == [3.0, 2.5, 2.0]
    assert [s for s, _ in losses] == [s for s, _ in evals]  # each at its own epoch's step, not a training point after it
    assert read[(evals[0][0], "eval_accuracy")] == 0.4


def test_a_train_split_tag_keeps_the_training_loss(tmp_path):
    text = "".join(f"Epoch {e}: train: loss {4 - e / 2:.2f}; accuracy 0.3\n" for e in range(1, 4))
    read = _read(text, tmp_path)
    assert sorted(v for (_, m), v in read.items() if m == "loss") == [2.5, 3.0, 3.5]
    assert not any(m == "eval_loss" for _, m in read)


def test_the_small_llm_course_run_resumed_at_5300_is_healthy():
    analysis = forensics.analyze(CORPUS / "Hari-Krishna-QmFuZGk_llm_mastery")
    assert analysis.status == "healthy" and analysis.first_incident is None


def test_a_split_tag_after_a_training_loss_on_the_line_leaves_that_loss_the_training_one(tmp_path):
    text = "".join(f"Step {s}, Train Loss: 2.{s}, val: loss 1.{s}\n" for s in range(1, 4))
    read = _read(text, tmp_path)
    assert read[(1, "loss")] == 2.1 and (1, "eval_loss") not in read
