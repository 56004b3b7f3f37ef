"""A split's perplexity read as its loss (forensics/ingest/console_lines/hand_written.py): a word that only contains
"loss" (glossary, lossless) does not name a loss; a line that names one keeps its perplexity out of the loss.

From session 22's review findings (fx-review3c)."""
from __future__ import annotations


import pytest


@pytest.mark.parametrize("line", ["glossary Train perplexity: 1439.57", "lossless codec | Train perplexity: 1439.57"])
def test_a_word_that_only_contains_loss_does_not_stop_a_split_perplexity_being_read_as_its_loss(line):
    from forensics.ingest.console_lines.hand_written import stepless_pairs
    assert dict(stepless_pairs(line, False)[0]).get("loss") == pytest.approx(7.2721, abs=1e-3)


@pytest.mark.parametrize("line", ["Train perplexity: 1439.57 train_epoch_loss=tensor(7.27)",
                                  "Train perplexity: 1439.57 losses: n/a", "Train perplexity: 1439.57 Loss -"])
def test_a_line_that_names_a_loss_keeps_its_perplexity_out_of_the_loss(line):
    from forensics.ingest.console_lines.hand_written import stepless_pairs
    assert "loss" not in dict(stepless_pairs(line, False)[0])
