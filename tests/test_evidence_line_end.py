"""A console line quoted in the run profile's evidence: whole where short, else its end from a word's start, marked as
cut, never beginning inside a word (a value-head warning quoted from 'ar to have a file named value_head.bin')."""
from __future__ import annotations

from forensics.ingest.console_text import line_end


def test_a_short_line_is_quoted_whole():
    assert line_end("  trainable params: 4,194,304 || all params: 1,100,052,480  ") == \
        "trainable params: 4,194,304 || all params: 1,100,052,480"


def test_a_long_line_is_cut_at_a_word_start_and_marked():
    line = ("[INFO|2024-12-14 11:00:08] llamafactory.model.model_utils.valuehead:157 >> Provided path (/data/x/sft) does "
            "not contain value head weights: /data/x/sft does not appear to have a file named value_head.bin. Checkout "
            "'https://huggingface.co//data/x/sft/tree/None' for available files.")
    quoted = line_end(line)
    assert quoted.startswith("...") and len(quoted) <= 163
    assert line.endswith(quoted[3:]) and line[-len(quoted) + 3 - 1] == " "


def test_a_long_line_without_spaces_near_the_cut_is_cut_where_it_must_be():
    quoted = line_end("x" * 400)
    assert quoted == "..." + "x" * 160
