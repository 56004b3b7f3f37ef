"""A from-scratch loop's `iter N | train X | val Y` estimate print (forensics/ingest/pretrain_lines.py, split_pipe).

From corpus batch AS61 (DaraBodla_mini-gpt-pytorch). The notebooks are written in nbformat 4's shape with their outputs
as the libraries print them."""
from __future__ import annotations

from pathlib import Path

import re

import pytest

import forensics
from forensics.ingest import notebook
from forensics.ingest.console_lines.nanogpt import _ELAPSED, _ELAPSED_CUT, SPLIT_PIPE
from forensics.discover.log_hints import _SPLIT_PIPE_HINT
from forensics.ingest.pretrain_lines import parse_line
from support.notebook_files import counted_notebook as _notebook, stream as _stream


CORPUS = Path(__file__).parent / "realworld"
_C = re._constants
_MAX_REPEAT, _MIN_REPEAT, _SUBPATTERN, _BRANCH, _IN, _CATEGORY = (
    _C.MAX_REPEAT, _C.MIN_REPEAT, _C.SUBPATTERN, _C.BRANCH, _C.IN, _C.CATEGORY)
_DIGIT, _MAXREPEAT = _C.CATEGORY_DIGIT, _C.MAXREPEAT


# --- `iter N | train X | val Y` ---------------------------------------------------------------------------------------

def test_a_pipe_separated_estimate_of_both_splits_with_bare_names_is_read():
    record = parse_line("iter   200 | train 2.5202 | val 2.5344")
    assert (record.kind, record.step, dict(record.metrics)) == (
        "split_pipe", 200, {"train_split_loss": 2.5202, "eval_loss": 2.5344})


@pytest.mark.parametrize("line", ["iter 200 | train 2.5 | val 2.5 | acc 0.91",  # other fields: may be accuracies
                                  "epoch 3 | train 0.91 | val 0.88",  # an epoch's: accuracies as often as losses
                                  "200 | train 2.5 | val 2.5"])  # no counter word
def test_split_fields_beside_other_fields_or_without_an_iteration_counter_are_not_read(line):
    assert parse_line(line) is None


def test_a_from_scratch_notebook_printing_train_and_val_estimates_is_found_and_healthy(tmp_path):
    lines = "".join(f"iter {it:5d} | train {4.13 - it / 1200:.4f} | val {4.12 - it / 1300:.4f}\n"
                    for it in range(0, 3000, 200))
    code = "for it in range(3000):\n    pass"
    folder = _notebook(tmp_path / "run", [(code, [_stream(lines + "Training complete!\n")])])
    a = forensics.analyze(folder)
    assert a.status == "healthy"
    assert a.timeline.series("eval_loss").index[-1] == 2800


def test_the_mini_gpt_notebook_reads_its_sixteen_estimates():
    records = notebook.read(CORPUS / "DaraBodla_mini-gpt-pytorch" / "mini_gpt.ipynb")
    held_out = records.frame[records.frame["metric"] == "eval_loss"]
    assert (len(held_out), held_out["value"].iloc[0], held_out["value"].iloc[-1]) == (16, 4.1249, 1.9162)


# --- `step N | train X | val Y | Ts`: the same estimates with the time elapsed after them ---------------------------

def test_a_trailing_elapsed_time_field_is_allowed_after_the_two_estimates():
    """LispLLM_lispllm's train.log (corpus batch AS97): `step   250 | train 2.5660 | val 2.5619 |     15s`."""
    record = parse_line("step   250 | train 2.5660 | val 2.5619 |     15s")
    assert (record.kind, record.step, dict(record.metrics)) == (
        "split_pipe", 250, {"train_split_loss": 2.5660, "eval_loss": 2.5619})


@pytest.mark.parametrize("line", ["step 250 | train 2.56 | val 2.56 | 15",  # a bare number: may be anything
                                  "step 250 | train 2.56 | val 2.56 | 15s | acc 0.9",  # more fields after it
                                  "step 250 | train 2.56 | val 2.56 | 0.91 acc"])
def test_a_field_after_the_estimates_that_is_no_elapsed_time_is_still_not_read(line):
    assert parse_line(line) is None


def test_a_timed_split_pipe_log_is_found_and_healthy(tmp_path):
    lines = "".join(f"step {s:5d} | train {4.59 - s / 600:.4f} | val {4.58 - s / 650:.4f} | {4 + s // 23:6d}s\n"
                    for s in range(0, 1750, 250))
    (tmp_path / "train.log").write_text(lines + "best val 1.9133\n--- sample (T=0.8) ---\nROMEO: thou\n")
    a = forensics.analyze(tmp_path)
    assert a.status == "healthy" and a.timeline.series("eval_loss").index[-1] == 1500


def test_the_lisp_char_gpt_console_is_a_healthy_from_scratch_lm():
    a = forensics.analyze(CORPUS / "LispLLM_lispllm")
    assert len(a.timeline.series("eval_loss")) == 7 and a.status == "healthy" and a.first_incident is None
    assert (a.run_profile.method, a.run_profile.objective) == ("full", "pretrain")


def test_a_markdown_table_of_splits_is_not_a_training_log(tmp_path):
    """A results table whose rows read `| step | train | val |` is a table, not the loop's prints."""
    (tmp_path / "notes.txt").write_text("| model | train | val |\n|---|---|---|\n| small | 2.1 | 2.3 |\n"
                                        "| large | 1.8 | 2.0 |\n")
    with pytest.raises(forensics.NotARunDirectory):
        forensics.analyze(tmp_path)


def test_a_timed_split_pipe_log_that_starts_near_where_it_ends_is_no_from_scratch_run(tmp_path):
    """Guard: a fine-tune's step-0 estimate (3.5 -> 3.0, nanoGPT's finetune_shakespeare from GPT-2) is no random
    guess that halves: the objective is not read as pre-training."""
    lines = "".join(f"step {s:5d} | train {3.52 - s / 3000:.4f} | val {3.50 - s / 3000:.4f} | {4 + s // 23:6d}s\n"
                    for s in range(0, 1750, 250))
    (tmp_path / "train.log").write_text(lines)
    assert forensics.analyze(tmp_path).run_profile.objective != "pretrain"


# --- a console still being written: its last line (no newline after it) cut mid-write ---------------------------------

def test_a_last_line_cut_inside_its_elapsed_time_keeps_both_estimates():
    # LispLLM_lispllm's `step   250 | train 2.5660 | val 2.5619 |     15s` cut inside the time: val is whole (a `|`
    # follows it), the time is not read anyway
    record = parse_line("step   250 | train 2.5660 | val 2.5619 |     1", last_line=True)
    assert dict(record.metrics) == {"train_split_loss": 2.5660, "eval_loss": 2.5619} and record.cut  # (said)


def test_a_last_line_ending_at_its_val_leaves_the_val_out():
    record = parse_line("step   250 | train 2.5660 | val 2.56", last_line=True)
    assert dict(record.metrics) == {"train_split_loss": 2.5660} and record.cut


def test_a_number_after_the_val_with_no_unit_is_still_no_elapsed_time_on_a_whole_line():
    assert parse_line("step   250 | train 2.5660 | val 2.5619 |     1") is None


# --- `Iteration N: Train X | Test Y | LR L | Tm`: the same estimates, a colon after the counter, a learning rate ----

def test_an_iteration_line_with_a_test_split_and_a_learning_rate_is_read():
    """yasirkhalil5665_GPT's train_log.txt (corpus batch AS102): a char GPT's estimate every 250 iterations."""
    record = parse_line("Iteration 250: Train 2.4206 | Test 2.4253 | LR 1.00e-03 | 1.5m")
    assert (record.kind, record.step, dict(record.metrics)) == (
        "split_pipe", 250, {"train_split_loss": 2.4206, "eval_loss": 2.4253, "learning_rate": 1e-3})


@pytest.mark.parametrize("line", ["Iteration 250: Train 2.42 | Test 2.42 | Acc 0.91 | 1.5m",  # a field not a rate
                                  "Epoch 3: Train 0.91 | Test 0.88 | LR 1e-3",  # an epoch's: accuracies as often
                                  "Iteration 250: Train 2.42 | LR 1e-3"])  # no held-out split
def test_an_iteration_line_with_other_fields_or_an_epoch_counter_is_not_read(line):
    assert parse_line(line) is None


_ITERATION_LINES = ("Iteration 0: Train 4.1922 | Test 4.1904 | LR 5.00e-06 | 0.1m\n"
                    "Iteration 250: Train 2.4206 | Test 2.4253 | LR 1.00e-03 | 1.5m\n"
                    "Iteration 500: Train 2.1760 | Test 2.2041 | LR 9.91e-04 | 3.0m\n"
                    "Iteration 750: Train 2.0122 | Test 2.0769 | LR 9.71e-04 | 4.5m\n"
                    "Iteration 1000: Train 1.8980 | Test 1.9914 | LR 9.40e-04 | 6.0m\n")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-8"])
def test_a_console_saved_by_powershell_as_utf16_with_a_bom_is_found_and_read(tmp_path, encoding):
    """Windows PowerShell 5's `>` and Out-File write UTF-16 LE with a BOM (Python's "utf-16" here writes one too)."""
    (tmp_path / "train_log.txt").write_bytes(("Using device: cpu\r\n" + _ITERATION_LINES.replace("\n", "\r\n"))
                                             .encode(encoding))
    a = forensics.analyze(tmp_path)
    assert list(a.timeline.series("eval_loss").index) == [0, 250, 500, 750, 1000]
    assert a.status == "healthy"


def test_the_utf16_char_gpt_console_is_a_healthy_from_scratch_lm():
    a = forensics.analyze(CORPUS / "yasirkhalil5665_GPT")
    assert len(a.timeline.series("eval_loss")) == 21 and a.status == "healthy" and a.first_incident is None
    assert (a.run_profile.method, a.run_profile.objective) == ("full", "pretrain")


def test_a_last_iteration_line_cut_inside_its_learning_rate_keeps_both_estimates():
    record = parse_line("Iteration 250: Train 2.4206 | Test 2.4253 | LR 1.0", last_line=True)
    assert dict(record.metrics) == {"train_split_loss": 2.4206, "eval_loss": 2.4253} and record.cut


def test_a_last_line_of_100k_digits_after_the_val_is_read_as_the_regexes_say():
    # a cut time is digits: read, cut; digits then a letter that is no unit: no elapsed time, no record
    digits = "1" * 100_000  # (the old pattern took minutes on the second line)
    record = parse_line(f"step 250 | train 2.5660 | val 2.5619 | {digits}", last_line=True)
    assert dict(record.metrics) == {"train_split_loss": 2.5660, "eval_loss": 2.5619} and record.cut
    assert parse_line(f"step 250 | train 2.5660 | val 2.5619 | {digits}z", last_line=True) is None


@pytest.mark.parametrize("pattern", [_ELAPSED, _ELAPSED_CUT])
def test_the_elapsed_time_patterns_split_a_run_of_digits_one_way_only(pattern):
    # `\d+\.?\d*` can split a run of n digits between its two repeats n ways, and tries each before it fails: a cut
    # last line of 16k digits took 15 s, 100k would take minutes (review of session 28). Asserted on the pattern's
    # structure, not on a clock: no unbounded digit repeat followed, past optional items only, by another
    assert not _digit_repeats_in_a_row(re._parser.parse(pattern.pattern, pattern.flags))


@pytest.mark.parametrize("pattern", [SPLIT_PIPE, _SPLIT_PIPE_HINT])
def test_the_split_pipe_patterns_split_a_run_of_spaces_one_way_only(pattern):
    # `\s*:?\s*` splits a run of n spaces between its two repeats n ways: `| lr ` then 16k spaces took 13 s to read
    # and 30 s to sniff (second review of session 28). Asserted on the structure, as the digits are above
    assert not _digit_repeats_in_a_row(re._parser.parse(pattern.pattern, pattern.flags), body=_SPACES)


_SPACES = ([(_IN, [(_CATEGORY, _C.CATEGORY_SPACE)])], [(_IN, [(_C.LITERAL, 32), (_C.LITERAL, 9)])])


def _digit_repeats_in_a_row(items, body=([(_IN, [(_CATEGORY, _DIGIT)])],)) -> bool:
    """Whether an unbounded repeat of `body` (digits; or spaces) is followed, past optional items only, by another."""
    items = list(items)
    for i, (op, arg) in enumerate(items):
        if _is_digit_repeat(op, arg, unbounded=True, body=body):
            for op_next, arg_next in items[i + 1:]:
                if _is_digit_repeat(op_next, arg_next, unbounded=False, body=body):
                    return True
                if not (op_next in (_MAX_REPEAT, _MIN_REPEAT) and arg_next[0] == 0):
                    break
        if any(_digit_repeats_in_a_row(sub, body) for sub in _subpatterns(op, arg)):
            return True
    return False


def _is_digit_repeat(op, arg, unbounded: bool, body=([(_IN, [(_CATEGORY, _DIGIT)])],)) -> bool:
    if op not in (_MAX_REPEAT, _MIN_REPEAT):
        return False
    low, high, repeated = arg
    return list(repeated) in body and (high == _MAXREPEAT or not unbounded)


def _subpatterns(op, arg) -> list:
    if op in (_MAX_REPEAT, _MIN_REPEAT):
        return [arg[2]]
    if op == _SUBPATTERN:
        return [arg[-1]]
    if op == _BRANCH:
        return list(arg[1])
    return []
