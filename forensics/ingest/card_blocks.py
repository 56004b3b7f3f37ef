"""The prose blocks of a model card that transformers writes beside a trained model, which restate the run and log
nothing of it:

* the summary, `It achieves the following results on the evaluation set:` then a bullet a value (the Trainer's card:
  `- Loss: 0.6602`, the last evaluation's metrics; the Keras PushToHubCallback's card: `- Train Loss: 2.4800`,
  `- Validation Loss: 2.7320`, `- Epoch: 4`, the last row of its results table, epochs from 0: transformers
  modelcard.py `parse_keras_history`);
* the hyper-parameters, `The following hyperparameters were used during training:` then a bullet each (the Keras
  card's `- optimizer: {'name': 'AdamWeightDecay', 'learning_rate': 2e-05, ...}`, the optimizer's config as a dict).

The card's log is its `### Training results` table (`results_table`). Read as console lines, the summary's bullets
were a last evaluation at step 0 (its `- Epoch: 4` an epoch section header, the two losses above it the evaluation
before training) and the optimizer's dict a logged record: the run looked as if it had never improved on its first
evaluation (YinanWusoymilk_hf-readme_merve-bart). `card_blocks_blanked(text)` gives the text with each such block's
lines blank (the lines kept, so a line's place in the file is unchanged); what states the run's facts (precision,
framework, hyper-parameters) reads the text whole, elsewhere.
"""
from __future__ import annotations

import re

# the sentence that opens each block, as modelcard.py writes it (a card edited by hand may say it twice)
_OPENERS = re.compile(r"^\s*(?:It achieves the following results on the evaluation set|"
                      r"The following hyperparameters were used during training)\s*:\s*$")
# a block's bullet: `- Name: value` on one line
_BULLET = re.compile(r"^\s*- [^:\n]{1,80}:[ \t]\S")


def card_blocks_blanked(text: str) -> str:
    """The text with each card block's opener and bullets as empty lines (module docstring); the text itself where
    it holds no opener."""
    if "following results on the evaluation set" not in text and "following hyperparameters were used" not in text:
        return text
    lines = text.split("\n")
    in_block = False
    for i, line in enumerate(lines):
        if _OPENERS.match(line):
            in_block = True
        elif not (in_block and _BULLET.match(line)):
            in_block = False
            continue
        lines[i] = "\r" if line.endswith("\r") else ""
    return "\n".join(lines)
