"""A model card's prose blocks (`ingest.card_blocks`): the summary `It achieves the following results on the
evaluation set:` and the `The following hyperparameters were used during training:` bullets restate the run; the
card's `### Training results` table is its log. The hand-made card copies the exact shape of the real Keras card
YinanWusoymilk_hf-readme_merve-bart (transformers' Keras PushToHubCallback)."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout
from forensics.ingest.card_blocks import card_blocks_blanked

CORPUS = Path(__file__).parent / "realworld"
MERVE = CORPUS / "YinanWusoymilk_hf-readme_merve-bart"

CARD = """---
tags:
- generated_from_keras_callback
---

# tiny-bart

This model is a fine-tuned version of bart-large on a prompts dataset.
It achieves the following results on the evaluation set:
It achieves the following results on the evaluation set:
- Train Loss: 2.4800
- Validation Loss: 2.7320
- Epoch: 4

## Training procedure

### Training hyperparameters

The following hyperparameters were used during training:
- optimizer: {'name': 'AdamWeightDecay', 'learning_rate': 2e-05, 'decay': 0.0, 'beta_1': 0.9, 'beta_2': 0.999}
- training_precision: float32

### Training results

| Train Loss | Validation Loss | Epoch |
|:----------:|:---------------:|:-----:|
| 5.3808     | 3.3133          | 0     |
| 3.2642     | 3.0104          | 1     |
| 2.8886     | 2.8600          | 2     |
| 2.6594     | 2.7949          | 3     |
| 2.4800     | 2.7320          | 4     |
"""


def _series(frame, metric):
    rows = frame[frame["metric"] == metric]
    return list(zip(rows["step"].tolist(), rows["value"].tolist()))


def _read(tmp_path, text):
    path = tmp_path / "README.md"
    path.write_text(text)
    return stdout.read(path).frame


def test_the_cards_summary_is_no_evaluation_before_training(tmp_path):
    """The summary restates the table's last row: the eval series is the table's five rows, none at step 0 twice."""
    frame = _read(tmp_path, CARD)
    assert _series(frame, "eval_loss") == [(0, 3.3133), (1, 3.0104), (2, 2.86), (3, 2.7949), (4, 2.732)]
    assert _series(frame, "loss") == [(0, 5.3808), (1, 3.2642), (2, 2.8886), (3, 2.6594), (4, 2.48)]


def test_the_cards_optimizer_dict_is_no_logged_record(tmp_path):
    frame = _read(tmp_path, CARD)
    assert not {"learning_rate", "beta_1", "decay"} & set(frame["metric"])


def test_the_blocks_keep_the_files_lines_and_leave_the_rest():
    blanked = card_blocks_blanked(CARD)
    assert len(blanked.split("\n")) == len(CARD.split("\n"))
    assert "Epoch: 4" not in blanked and "AdamWeightDecay" not in blanked
    assert "| 2.4800     | 2.7320          | 4     |" in blanked and "## Training procedure" in blanked


def test_the_real_keras_card_whose_losses_fell_every_epoch_is_healthy():
    """merve's BART card: validation 3.3133 -> 2.7320 falling at each of 5 epochs, as judged healthy."""
    a = forensics.analyze(MERVE)
    assert (a.status, a.first_incident) == ("healthy", None)


def test_a_consoles_epoch_header_still_dates_its_loss_lines(tmp_path):
    """Guard: outside a card's blocks, `Epoch: 4` alone on its line is still an epoch section header."""
    console = "".join(f"Epoch: {e}\nTrain Loss: {3.0 - 0.2 * e:.4f}\nValidation Loss: {3.1 - 0.1 * e:.4f}\n"
                      for e in range(1, 6))
    path = tmp_path / "train.log"
    path.write_text(console)
    frame = stdout.read(path).frame
    assert [step for step, _ in _series(frame, "eval_loss")] == [1, 2, 3, 4, 5]


def test_a_trainer_cards_summary_leaves_its_table_as_it_was(tmp_path):
    """Guard: the Trainer's own card (`- Loss: X` summary, bullets of hyper-parameters) reads its table alone."""
    text = ("It achieves the following results on the evaluation set:\n- Loss: 0.6602\n\n"
            "The following hyperparameters were used during training:\n- learning_rate: 2e-05\n- num_epochs: 3\n\n"
            "### Training results\n\n| Training Loss | Epoch | Step | Validation Loss |\n|:---:|:---:|:---:|:---:|\n"
            "| 0.6962 | 1.0 | 555 | 0.6636 |\n| 0.5302 | 2.0 | 1110 | 0.6351 |\n| 0.3983 | 3.0 | 1665 | 0.6602 |\n")
    frame = _read(tmp_path, text)
    assert _series(frame, "eval_loss") == [(555, 0.6636), (1110, 0.6351), (1665, 0.6602)]
