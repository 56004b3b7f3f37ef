"""The model card transformers' Keras PushToHubCallback wrote (tag `generated_from_keras_callback`): its results table
`| Train Loss | Validation Loss | Epoch |` (epochs from 0) is the run's log, the card says the framework, and its
`- training_precision:` line the precision. Real cards from the AS84 batch (YinanWusoymilk_hf-readme_*); the
installed transformers no longer has the Keras callback, so the hand-made card below copies their exact shape."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout

CORPUS = Path(__file__).parent / "realworld"
KALUDI = CORPUS / "YinanWusoymilk_hf-readme_kaludi-bart"

CARD = """---
tags:
- generated_from_keras_callback
model-index:
- name: tiny-bart
  results: []
---

# tiny-bart

## Training procedure

### Training hyperparameters

The following hyperparameters were used during training:
- optimizer: {'name': 'AdamWeightDecay', 'learning_rate': 2e-05, 'decay': 0.0, 'beta_1': 0.9}
- training_precision: {precision}

### Training results

| Train Loss | Validation Loss | Epoch |
|:----------:|:---------------:|:-----:|
| 3.1982     | 2.6801          | 0     |
| 2.3601     | 2.5493          | 1     |
| 1.9225     | 2.4377          | 2     |
| 1.5465     | 2.3794          | 3     |


### Framework versions

- Transformers 4.26.1
- TensorFlow 2.11.0
"""


def _series(frame, metric):
    rows = frame[frame["metric"] == metric]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist()))


def _card(tmp_path, precision="float32"):
    (tmp_path / "README.md").write_text(CARD.replace("{precision}", precision))
    return tmp_path


def test_the_keras_cards_train_loss_column_is_the_training_loss(tmp_path):
    frame = stdout.read(_card(tmp_path) / "README.md").frame
    assert _series(frame, "loss") == {0: 3.1982, 1: 2.3601, 2: 1.9225, 3: 1.5465}
    assert _series(frame, "eval_loss") == {0: 2.6801, 1: 2.5493, 2: 2.4377, 3: 2.3794}


def test_the_keras_card_names_its_framework_and_precision(tmp_path):
    profile = forensics.analyze(_card(tmp_path)).run_profile
    assert (profile.framework, profile.precision) == ("keras", "fp32")
    assert "Keras" in profile.evidence["framework"] and "training_precision" in profile.evidence["precision"]


def test_a_mixed_float16_policy_is_fp16(tmp_path):
    assert forensics.analyze(_card(tmp_path, "mixed_float16")).run_profile.precision == "fp16"


def test_a_real_keras_card_whose_eval_loss_rose_after_epoch_2_overfit():
    """Kaludi's BART card: eval loss 2.6801, 2.5493, 2.5377 (lowest, epoch 2), then 2.6794, 2.7584 while the training
    loss falls 3.20 -> 1.22: overfitting from epoch 3, as judged."""
    a = forensics.analyze(KALUDI)
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "overfitting", 3)
    assert (a.run_profile.framework, a.run_profile.precision) == ("keras", "fp32")


def test_the_trainers_own_card_stays_the_trainers(tmp_path):
    """Guard: a card without the Keras tag (the Trainer's `### Training results` alone) keeps hf_trainer, and its
    precision is not read from a Keras line it does not have."""
    text = CARD.replace("- generated_from_keras_callback\n", "- generated_from_trainer\n")
    text = text.replace("- training_precision: {precision}\n", "").replace("Train Loss", "Training Loss")
    text = text.replace("| Training Loss | Validation Loss | Epoch |", "| Training Loss | Epoch | Validation Loss |")
    text = text.replace("|:----------:|:---------------:|:-----:|", "|:---:|:---:|:---:|")
    for old, new in (("| 3.1982     | 2.6801          | 0     |", "| 3.1982 | 0 | 2.6801 |"),
                     ("| 2.3601     | 2.5493          | 1     |", "| 2.3601 | 1 | 2.5493 |"),
                     ("| 1.9225     | 2.4377          | 2     |", "| 1.9225 | 2 | 2.4377 |"),
                     ("| 1.5465     | 2.3794          | 3     |", "| 1.5465 | 3 | 2.3794 |")):
        text = text.replace(old, new)
    (tmp_path / "README.md").write_text(text)
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.framework, profile.precision) == ("hf_trainer", "unknown")
