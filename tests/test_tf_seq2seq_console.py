"""The TensorFlow 1.x seq2seq tutorial's checkpoint blocks, `global step N learning rate LR step-time T [perplexity P]`
and the lines under them (forensics/ingest/console_lines/tf_seq2seq.py, log_hints.py).

From corpus batch AS95 (1-sun_H-s2s)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest import stdout
from forensics.discover.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"
_TRAIN_PPL = [343.51, 160.20, 95.40, 61.30, 44.10, 33.25, 27.80, 24.10, 21.60, 19.90]
_BUCKET_PPL = [(152.94, 201.10), (90.10, 120.40), (60.20, 80.30), (45.60, 61.20), (38.10, 50.90),
               (33.40, 44.80), (30.10, 41.00), (28.00, 38.10), (26.70, 36.40), (25.90, 35.20)]


def _translate_py_console() -> str:
    """translate.py's prints every 200 steps: the header with the training perplexity, then a line a bucket (bucket 1
    empty in this dev set)."""
    lines = ["Creating 3 layers of 1024 units.\n", "Created model with fresh parameters.\n"]
    for i, (ppl, (b0, b2)) in enumerate(zip(_TRAIN_PPL, _BUCKET_PPL)):
        lines += [f"global step {200 * (i + 1)} learning rate 0.5000 step-time 0.49 perplexity {ppl:.2f}\n",
                  f"  eval: bucket 0 perplexity {b0:.2f}\n", "  eval: empty bucket 1\n",
                  f"  eval: bucket 2 perplexity {b2:.2f}\n"]
    return "".join(lines)


def _cost_fork_console() -> str:
    """A fork's block (1-sun_H-s2s): the header without a perplexity, the train perplexity, cost and one eval
    perplexity a line each, a `step: N` print per step between the blocks."""
    lines = []
    for i, ppl in enumerate(_TRAIN_PPL):
        lines += ["".join(f"step: {s}" for s in range(100 * i, 100 * (i + 1))) + "\n",
                  f"global step {100 * (i + 1)} learning rate 0.1000 step-time 12.05\n",
                  f"  train perplexity {ppl:.2f}\n", f"  train cost {math.log(ppl):.10f}\n",
                  f"  eval perplexity {_BUCKET_PPL[i][0]:.2f}\n"]
    return "".join(lines)


def test_translate_py_blocks_give_the_loss_as_ln_perplexity_and_the_buckets_mean_eval_loss(tmp_path):
    (tmp_path / "nohup.out").write_text(_translate_py_console())
    a = forensics.analyze(tmp_path)
    loss, eval_loss = a.timeline.series("loss"), a.timeline.series("eval_loss")
    assert loss.index.tolist() == [200 * (i + 1) for i in range(10)]
    assert loss.tolist() == pytest.approx([math.log(p) for p in _TRAIN_PPL])
    assert eval_loss.tolist() == pytest.approx([(math.log(b0) + math.log(b2)) / 2 for b0, b2 in _BUCKET_PPL])
    assert a.timeline.series("learning_rate").tolist() == [0.5] * 10
    assert stdout.read(tmp_path / "nohup.out").console_kinds == ("tf_seq2seq_ppl",)
    assert a.status == "healthy"


def test_a_forks_blocks_give_the_printed_cost_as_the_loss_and_the_eval_perplexitys_log(tmp_path):
    (tmp_path / "nohup.out").write_text(_cost_fork_console())
    a = forensics.analyze(tmp_path)
    loss, eval_loss = a.timeline.series("loss"), a.timeline.series("eval_loss")
    assert loss.index.tolist() == [100 * (i + 1) for i in range(10)]
    assert loss.tolist() == pytest.approx([math.log(p) for p in _TRAIN_PPL], abs=1e-9)
    assert eval_loss.tolist() == pytest.approx([math.log(b0) for b0, _ in _BUCKET_PPL])
    assert stdout.read(tmp_path / "nohup.out").console_kinds == ("tf_seq2seq_cost",)
    assert a.status == "healthy"


def test_the_annotator_console_is_read_and_healthy():
    a = forensics.analyze(CORPUS / "1-sun_H-s2s")
    loss, eval_loss = a.timeline.series("loss"), a.timeline.series("eval_loss")
    assert (len(loss), loss.index[0], loss.index[-1]) == (334, 100, 33400)
    assert (loss.iloc[0], loss.iloc[-1]) == pytest.approx((4.6022906947, 1.7000085151))
    assert eval_loss.iloc[-1] == pytest.approx(math.log(4.59))
    assert a.status == "healthy" and a.first_incident is None


@pytest.mark.parametrize("text", [
    # prose that names the tutorial's numbers
    "We trained for a while; the global step 200 had a learning rate of 0.5 and the perplexity was 343.\n" * 5,
    # the header's words cut short (no step-time)
    "global step 200 learning rate 0.5000 perplexity 343.51\n  eval: bucket 0 perplexity 152.94\n" * 5,
    # the bucket lines alone, no header
    "  eval: bucket 0 perplexity 152.94\n  eval: bucket 1 perplexity 201.10\n" * 5,
])
def test_text_short_of_the_tutorials_block_is_not_read_as_a_run(tmp_path, text):
    (tmp_path / "notes.out").write_text(text)
    assert not log_hinted(text.encode())
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


# --- the tutorial's loop has no planned end: a kill is how it stops --------------------------------------------------

_KILLED = "./run.sh: line 3:  5967 Killed                  python annotate.py --data_dir=../data\n"
_OUT_OF_MEMORY = ("Traceback (most recent call last):\n  File \"annotate.py\", line 310, in train\n"
                  "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n")


def test_a_kill_after_the_last_block_is_noted_as_how_the_open_ended_loop_stops(tmp_path):
    (tmp_path / "nohup.out").write_text(_cost_fork_console() + "step: 1000step: 1001" + _KILLED)
    a = forensics.analyze(tmp_path)
    stop = [f for f in a.findings if f.kind == "run_crashed"]
    assert [(f.severity, f.step) for f in stop] == [("info", 1000)]
    assert "no planned end" in stop[0].message
    assert a.status == "healthy"


def test_the_open_ended_loop_out_of_memory_is_still_a_crash(tmp_path):
    (tmp_path / "nohup.out").write_text(_cost_fork_console() + _OUT_OF_MEMORY)
    a = forensics.analyze(tmp_path)
    assert [(f.kind, f.severity) for f in a.findings if f.kind == "run_crashed"] == [("run_crashed", "warning")]
    assert a.status == "warning"


def test_a_kill_of_another_consoles_run_is_still_a_crash(tmp_path):
    lines = "".join(f"step {s}: loss {4.0 - s / 100:.4f}\n" for s in range(10, 110, 10))
    (tmp_path / "nohup.out").write_text(lines + _KILLED)
    a = forensics.analyze(tmp_path)
    assert [(f.kind, f.severity) for f in a.findings if f.kind == "run_crashed"] == [("run_crashed", "warning")]


# --- the method: `Created model with fresh parameters.` (create_model found no checkpoint) ----------------------------

def test_a_model_created_with_fresh_parameters_is_trained_full(tmp_path):
    (tmp_path / "nohup.out").write_text(_translate_py_console())
    a = forensics.analyze(tmp_path)
    assert a.run_profile.method == "full"
    assert "Created model with fresh parameters." in a.run_profile.evidence["method"]


def test_a_model_read_back_from_a_checkpoint_is_not_called_fresh(tmp_path):
    text = _translate_py_console().replace("Created model with fresh parameters.",
                                           "Reading model parameters from ../models/translate.ckpt-2000")
    (tmp_path / "nohup.out").write_text(text)
    # (its first loss, ln 343.5, far over a fine-tune's start and halved, may still say random weights: not this line)
    assert "create_model" not in forensics.analyze(tmp_path).run_profile.evidence.get("method", "")


def test_the_style_transfer_console_says_its_model_is_fresh():
    profile = forensics.analyze(CORPUS / "guotong1988_text-style-transfer-chinese").run_profile
    assert profile.method == "full" and "fresh parameters" in profile.evidence["method"]


# --- a console still being written: its last line (no newline after it) cut mid-number -------------------------------

def _read(tmp_path, text: str):
    (tmp_path / "nohup.out").write_text(text)
    return stdout.read(tmp_path / "nohup.out")


def _at(records, step: int) -> dict[str, float]:
    rows = records.frame[records.frame.step == step]
    return dict(zip(rows.metric, rows.value))


def test_a_last_header_cut_mid_perplexity_is_read_without_its_perplexity_and_said(tmp_path):
    records = _read(tmp_path, _translate_py_console()
                    + "global step 2200 learning rate 0.5000 step-time 0.49 perplexity 1")  # 19.80, cut at its `1`
    assert _at(records, 2200) == {"learning_rate": 0.5, "step_time_s": 0.49}
    assert "the last line (step 2200) is cut mid-write; its complete fields were kept" in records.warnings


def test_a_last_bucket_line_cut_mid_number_leaves_that_blocks_held_out_mean_out(tmp_path):
    # bucket 2's 35.20 cut to `3`: a mean of bucket 0 alone, or with a 3, is no mean over the block's buckets
    records = _read(tmp_path, _translate_py_console() + "global step 2200 learning rate 0.5000 step-time 0.49 "
                    "perplexity 19.80\n  eval: bucket 0 perplexity 25.10\n  eval: empty bucket 1\n"
                    "  eval: bucket 2 perplexity 3")
    assert _at(records, 2200) == pytest.approx({"learning_rate": 0.5, "step_time_s": 0.49,
                                                "loss": math.log(19.80), "perplexity": 19.80})
    assert "the last line (step 2200) is cut mid-write; its complete fields were kept" in records.warnings


def test_a_whole_last_line_printed_as_the_ones_before_it_is_read_whole(tmp_path):
    records = _read(tmp_path, _translate_py_console().rstrip("\n"))  # only the final newline missing
    last = _at(records, 2000)
    assert last["eval_loss"] == pytest.approx((math.log(25.90) + math.log(35.20)) / 2)
    assert not records.warnings
