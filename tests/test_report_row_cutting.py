"""Where the report cuts a row short (review 31b of session 31's clause_end): a cut row ends on no hanging word
("0.1279 at its first logged point and 0.1302 at…", AananthV_Pytorch-Transformer), never drops a "not" that turns
the sentence around, keeps at least about half its space (a long path, a CJK excerpt or `acc(top1 ...` reduced the
row to "step N…"), always ends with "…", and leaves no bracket or quote open.
"""
from __future__ import annotations

import forensics
from pathlib import Path

from forensics.report.notation import clause_end
from forensics.report.text import LABEL, WIDTH, _row

CORPUS = Path(__file__).resolve().parent / "realworld"
HANGING = {"at", "to", "from", "of", "and", "than", "not", "step", "by", "in", "on", "for", "with"}


def _last_word(row: str) -> str:
    return row.rstrip("…").split(" ")[-1].lower()


# ---- no hanging word -------------------------------------------------------------------------------------------------

def test_a_cut_with_no_late_clause_break_falls_back_to_an_earlier_one():
    text = "the loss did not fall over the run: about 1.395 over its first 25 logged points and"
    assert clause_end(text) == "the loss did not fall over the run"


def test_a_cut_with_no_clause_break_worth_keeping_drops_its_hanging_words():
    assert clause_end("step 4323: the loss did not fall since 0.1279 at its first logged point and 0.1302 at") == \
        "step 4323: the loss did not fall since 0.1279 at its first logged point and 0.1302"
    assert clause_end("reward rose from about 0.3333 to 1.667 around step 28 and fell back to") == \
        "reward rose from about 0.3333 to 1.667 around step 28 and fell back"
    assert clause_end("loss 2.254 at step 10 and") == "loss 2.254 at step 10"


def test_a_clause_break_after_a_hanging_word_drops_it_too():
    assert clause_end("nothing tells whether the run learned. Log the loss (logging_steps) and, where there is") == \
        "nothing tells whether the run learned. Log the loss (logging_steps)"


def test_a_step_that_ends_a_noun_phrase_is_no_hanging_word():
    assert clause_end("grad_norm is vanishingly small below 2.489e-07 at 1 isolated step").endswith("isolated step")
    assert clause_end("5 single-batch loss spikes in a log of every step") == \
        "5 single-batch loss spikes in a log of every step"


def test_a_trailing_not_is_never_kept_nor_dropped_to_flip_the_meaning():
    assert clause_end("the run ran to step 900, grad_norm was not") == "the run ran to step 900"
    assert clause_end("the run ran to step 900, grad_norm was not at") == "the run ran to step 900"
    assert not clause_end("grad_norm was not").endswith(("not", "was"))


def test_the_corpus_rows_end_on_no_hanging_word():
    # each finding as an Info row cut to one line (review 31b's scan: 37 such rows in 36 runs ended on "at…" "and…")
    for case in ("AananthV_Pytorch-Transformer", "Jason-Youu_unsloth-GRPO", "Artaccann_OSOL_backend"):
        findings = forensics.analyze(CORPUS / case).findings
        rows = [_row("Info", f"step {f.step}: {f.message}", clip=True) for f in findings]
        cut = [row[0] for row in rows if row[0].endswith("…")]
        assert cut, case
        assert all(_last_word(row) not in HANGING for row in cut), (case, cut)


# ---- never less than about half the row, always "…" ------------------------------------------------------------------

def _said(rows: list[str]) -> str:
    return " ".join(row[LABEL:] for row in rows)


def test_a_row_ending_in_a_long_unbroken_word_keeps_the_row_and_ends_with_an_ellipsis():
    [row] = _row("Info", "see https://example.com/" + "a" * 200, clip=True)
    assert row.endswith("…") and len(row) == WIDTH, row


def test_a_row_that_is_one_word_is_cut_with_an_ellipsis():
    [row] = _row("Info", "https://example.com/" + "a" * 200, clip=True)
    assert row.endswith("…") and len(row) == WIDTH, row


def test_a_cjk_excerpt_is_not_reduced_to_its_step():
    [row] = _row("Info", "step 7: 日志 " + "训练损失突然上升并且没有恢复" * 12, clip=True)
    assert row.endswith("…") and len(_said([row])) >= (WIDTH - LABEL) // 2, row


def test_a_long_path_in_two_lines_keeps_at_least_half():
    rows = _row("Hidden by", "step 12: read /data/runs/" + "/".join(["segment"] * 40) + " and more", max_lines=2)
    assert len(rows) == 2 and rows[-1].endswith("…"), rows
    assert len(_said(rows)) >= (WIDTH - LABEL), rows


def test_an_unmatched_parenthesis_early_in_the_row_is_not_cut_before():
    text = ("step 9: acc(top1 fell from 0.91 at step 100 to 0.42 at step 900, the eval loss rose from 0.3 to 2.1 "
            "meanwhile")
    assert clause_end(text[:90]) == "step 9: acc(top1 fell from 0.91 at step 100 to 0.42 at step 900"
    [row] = _row("Info", text, clip=True)
    assert row.endswith("…") and "0.42" in row, row


def test_a_late_unmatched_parenthesis_is_still_cut_before():
    assert clause_end("the loss spiked at step 40 and 90, then settled near 0.3 (only fp16 has") == \
        "the loss spiked at step 40 and 90, then settled near 0.3"


def test_a_row_that_fits_is_not_touched():
    assert _row("Info", "step 3: the loss fell", clip=True) == ["Info" + " " * (LABEL - 4) + "step 3: the loss fell"]


def test_a_two_line_row_of_one_long_word_ends_its_last_line_with_an_ellipsis():
    rows = _row("Hidden by", "/data/" + "x" * 400, max_lines=2)
    assert len(rows) == 2 and rows[-1].endswith("…") and len(rows[-1]) == WIDTH, rows


# ---- brackets and quotes closed too ---------------------------------------------------------------------------------

def test_a_cut_leaves_no_square_bracket_open():
    assert clause_end("the rate was not read from its files, the DeepSpeed lines print lr=[0.0001, 0.0002") == \
        "the rate was not read from its files"


def test_a_cut_leaves_no_quote_open():
    assert clause_end('the optimizer was not named, the config reads "adamw_torch, fused') == \
        "the optimizer was not named"


def test_closed_brackets_and_quotes_still_allow_a_late_cut():
    assert clause_end('the log prints lr=[1e-05, 1e-05] and "optim": "adamw", then the loss at') == \
        'the log prints lr=[1e-05, 1e-05] and "optim": "adamw"'
