"""Guards of this session's profile rules found in review: the Trainer card's model-index task (named from the model's
class) is no README saying next-token prediction, a response the model generated is no training pair, a table row of
more than two cells is no report's precision field, and a long README is read in linear time."""
from __future__ import annotations

import ast
import time

from forensics.ingest.notebook_code.prompt_pairs import prompt_response_lm
from forensics.ingest.readme_objective import language_modelling_said
from forensics.ingest.report_precision import report_precision

# transformers' modelcard.py: a causal LM's class gives the task text-generation, named 'Causal Language Modeling'
_TRAINER_CARD = """---
base_model: gpt2
tags:
- generated_from_trainer
datasets:
- gsm8k
model-index:
- name: gpt2-gsm8k
  results:
  - task:
      name: Causal Language Modeling
      type: text-generation
    dataset:
      name: gsm8k
      type: gsm8k
---

# gpt2-gsm8k

This model is a fine-tuned version of [gpt2](https://huggingface.co/gpt2) on the gsm8k dataset.
"""


def test_the_trainer_cards_model_index_task_says_no_objective():
    assert language_modelling_said(_TRAINER_CARD) is None
    # the card's prose still tells where it says so
    told = _TRAINER_CARD + "\nThe model was trained with next-token prediction on raw text.\n"
    assert language_modelling_said(told) == "next-token prediction"


_LOOP = "for x in batches:\n    loss = model(x, labels=x).loss\n    loss.backward()\n"


def test_a_generated_sample_written_out_is_no_training_pair():
    sample = ("response = tok.decode(model.generate(tok(prompt, return_tensors='pt')['input_ids'])[0])\n"
              "samples.append(f'{prompt} => {response}')\n")
    assert prompt_response_lm([ast.parse(_LOOP + sample)]) is None
    # a response read from the data still writes a pair
    data = "response = row['response']\ntext = f'{prompt} {response}'\n"
    assert prompt_response_lm([ast.parse(_LOOP + data)])


def test_a_table_row_of_more_than_two_cells_is_no_precision_field():
    assert report_precision("| Precision | FP16 | BF16 | FP32 |\n|---|---|---|---|\n") is None
    assert report_precision("| setting | run A | run B |\n|---|---|---|\n| precision | fp32 | bf16 |\n") is None
    assert report_precision("| precision | bf16 |\n") == ("bf16", "| precision | bf16 |")


def test_a_long_readme_of_hedged_task_words_is_read_in_linear_time():
    text = "This is not a chat model.\n" * 8000  # 208 KB: 38 s before the sentence window
    began = time.perf_counter()
    assert language_modelling_said(text) is None
    assert time.perf_counter() - began < 5


def test_a_causal_language_model_named_as_the_kind_of_model_says_no_objective():
    assert language_modelling_said("We fine-tune a causal language model on our company's emails to answer them.") \
        is None
    assert language_modelling_said("Trained with a causal language modeling (CLM) objective.") == \
        "causal language modeling"
    # saranscript's card: its 'casual language model' sentence still tells it, by the from-scratch words
    assert language_modelling_said("This casual language model was trained from scratch on CNN/Dailymail dataset.")
