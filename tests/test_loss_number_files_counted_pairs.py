"""Tests of loss files of numbers only written as `i: loss | ` pairs on a line, after a launch's settings line.

Corpus batch AS112's RohollahHS_ChatBot: a seq2seq chatbot's train.py appends to outputs/train_loss.txt and
outputs/valid_loss.txt, at each launch, a line of its settings (`MAX_LENGTH: 20, MIN_COUNT: 3, RNN: LSTM, ...,`)
and then `1: 5.9341 | 2: 5.8312 | ... | ` (iteration: loss). The name says loss and the split, the `i:` says the
counter; the counter that starts again at 1 is a new launch, as any step that goes back. A console whose lines name
a loss is not such a file."""
from __future__ import annotations

import re._compiler as _regex_compiler  # the stdlib's own regex parser: what a pattern's parts are
import re._constants as _constants
import re._parser as _regex_parser

from pathlib import Path

import pytest

import forensics
from forensics.ingest import loss_number_files
from forensics.discover.loss_numbers import _PAIR_LINE, _SETTINGS_LINE, counted_pairs
from forensics.discover.run import discover

CORPUS = Path(__file__).parent / "realworld"
SETTINGS = "ALL_DATA: False, MAX_LENGTH: 20, MIN_COUNT: 3, RNN: LSTM, HIDDEN: 512, LR: 0.0001, N_ITERATION: 1000,\n"


def _pairs(values) -> str:
    return "".join(f"{i}: {v:.4f} | " for i, v in enumerate(values, 1)) + "\n"


def _launches(*runs) -> str:
    return "".join(SETTINGS + _pairs(run) + "\n" for run in runs)


def test_counted_pairs_after_settings_lines_are_read_at_their_counter_split_by_the_name(tmp_path):
    (tmp_path / "train_loss.txt").write_text(_launches([8.83, 8.82], [5.93, 5.83, 5.70, 5.52, 5.27, 4.88]))
    (tmp_path / "valid_loss.txt").write_text(_launches([8.80, 8.79], [5.90, 5.80, 5.71, 5.60, 5.41, 5.20]))
    assert sorted(p.name for p in discover(tmp_path).loss_number_files) == ["train_loss.txt", "valid_loss.txt"]
    train = loss_number_files.read(tmp_path / "train_loss.txt").frame
    held = loss_number_files.read(tmp_path / "valid_loss.txt").frame
    assert train["metric"].unique().tolist() == ["loss"] and held["metric"].unique().tolist() == ["eval_loss"]
    assert train["step"].tolist() == [1, 2, 1, 2, 3, 4, 5, 6]  # the second launch counts from 1 again
    assert train["value"].tolist()[-1] == pytest.approx(4.88)


def test_the_last_launch_is_the_run_and_the_earlier_ones_abandoned_attempts(tmp_path):
    falling = [5.9 * 0.97 ** i for i in range(40)]
    (tmp_path / "train_loss.txt").write_text(_launches([8.83, 8.82, 8.81], falling))
    a = forensics.analyze(tmp_path)
    assert a.timeline.series("loss").tolist() == pytest.approx([round(v, 4) for v in falling])
    assert (a.status, a.findings) == ("healthy", [])


@pytest.mark.parametrize("text", [
    "epoch: 1, loss: 2.31,\n1: 2.31 | 2: 2.20 | 3: 2.11 | \n",  # a line that names a loss is no settings line
    "Training started\n1: 2.31 | 2: 2.20 | 3: 2.11 | \n",  # words
    "1: 2.31 | 2: 2.20 | \n",  # two losses say nothing of a curve
    "1: 2.31 | two: 2.20 | 3: 2.11 | \n",
])
def test_a_loss_named_file_with_other_lines_than_settings_and_counted_pairs_is_not_read_as_numbers(tmp_path, text):
    (tmp_path / "train_loss.txt").write_text(text)
    assert discover(tmp_path).loss_number_files == []


def test_counted_pairs_in_a_file_whose_name_says_no_loss_are_not_read(tmp_path):
    (tmp_path / "bleu.txt").write_text(_launches([3.1, 5.4, 8.0, 9.1]))
    assert discover(tmp_path).loss_number_files == []


def test_the_chatbot_whose_validation_is_written_as_zero_is_read_launch_by_launch():
    a = forensics.analyze(CORPUS / "RohollahHS_ChatBot")
    assert sorted(p.name for p in a.layout.loss_number_files) == ["train_loss.txt", "valid_loss.txt"]
    assert a.timeline.series("loss").tolist() == pytest.approx([5.9341, 5.8312, 5.7023, 5.5245, 5.2698, 4.8784])
    assert a.timeline.series("eval_loss").tolist() == [0.0] * 6  # launches are no copies of each other's zeros


_FIELDS = ["Epoch: 1", "Iter: 100", "LR: 0.0001", "batch: 64", "time: 12.3", "acc: 0.51", "ppl: 9.9", "gnorm: 1.2"]


def test_a_long_console_line_of_fields_ending_without_a_comma_is_no_settings_line():
    """24 `name: value,` fields, then one with no comma: a console line, not a settings line, so no pairs file. (The
    regex before 6b41c9b6 gave the same answer, after seconds of backtracking: what guards against that is
    `test_no_part_of_a_repeated_line_pattern_can_read_a_character_the_part_after_it_reads`, not this test.)"""
    line = ", ".join((_FIELDS * 3)[:24]) + ", loss: 2.3"
    assert counted_pairs(line + "\n" + line + "\n") is None


def test_a_long_line_of_counted_pairs_ending_in_a_word_is_no_pairs_file():
    line = "".join(f"{i}:5.{i}|" for i in range(1, 27)) + "x"
    assert counted_pairs(line + "\n") is None


def test_settings_fields_and_pairs_written_without_spaces_are_still_read():
    text = "LR: 0.0001,RNN:GRU, HIDDEN:512,\n" + "".join(f"{i}:{5 - i / 10:.2f}|" for i in range(1, 9)) + "\n"
    assert counted_pairs(text)[:2] == [(1, "1", "4.90"), (1, "2", "4.80")]


@pytest.mark.parametrize("pattern", [_PAIR_LINE, _SETTINGS_LINE], ids=["pairs", "settings"])
def test_no_part_of_a_repeated_line_pattern_can_read_a_character_the_part_after_it_reads(pattern):
    """A structural check of each line pattern's repeated group (no timing): a part of variable length must not read
    any character that the parts after it, up to the next one that must match, read. Where two may (the old
    `:\\s*[^,:|]*`, the space read by both; `\\S+?\\s*\\|`, the bar), a line that fails at its end is tried
    at every split of every field: backtracking exponential in the fields (seconds at 24 fields)."""
    group = next(av[2] for op, av in _regex_parser.parse(pattern.pattern) if op is _constants.MAX_REPEAT)
    parts = list(group)
    for i, part in enumerate(parts):
        if not _variable(part):
            continue
        for later in parts[i + 1:] + parts[:i]:  # around the group: its last part meets the next field's first
            overlap = _chars(part) & _chars(later)
            assert not overlap, (pattern.pattern, i, sorted(overlap)[:5])
            if _required(later):
                break


def _variable(part) -> bool:
    op, av = part
    return op in (_constants.MAX_REPEAT, _constants.MIN_REPEAT) and av[0] != av[1]


def _required(part) -> bool:
    op, av = part
    return op not in (_constants.MAX_REPEAT, _constants.MIN_REPEAT) or av[0] >= 1


def _chars(part) -> set[str]:
    """The ASCII characters one part reads (a repeat's body, or the part itself)."""
    op, av = part
    body = av[2] if op in (_constants.MAX_REPEAT, _constants.MIN_REPEAT) else _regex_parser.SubPattern(
        _regex_parser.State(), [part])
    compiled = _regex_compiler.compile(body, 0)
    return {chr(c) for c in range(128) if compiled.fullmatch(chr(c))}
