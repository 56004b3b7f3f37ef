"""Code that writes each example from a prompt and its response in one string and trains a causal LM on labels that are
its own input tokens is supervised fine-tuning on prompt / response pairs, whatever the notebook, the script or the
folder is called (BlayvasD_GPT-Histories' prompt / completion joined by the sep token, SahilSheikh12299's
f'[start]{question}[end]{answer}', hcygit1's train_sft.py `Question: ... Answer: ...` in a folder named for DPO). A
pair only printed, one side alone, or a pair with no labels from the inputs says nothing."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import forensics
from forensics.ingest.notebook_code.prompt_pairs import prompt_response_lm

REALWORLD = Path(__file__).parent / "realworld"

_LOOP = ("for batch in loader:\n    out = model(batch['input_ids'], labels=batch['input_ids'])\n"
         "    out.loss.backward()\n")


def _said(*sources: str) -> str | None:
    return prompt_response_lm([ast.parse(s) for s in sources])


@pytest.mark.parametrize("writes", [
    "text = f\"{prompt} {tok.sep_token} {completion}\"\n",
    "text = f'[start]{row[\"question\"]}[end]{row[\"answer\"]}'\n",
    "text = ex['instruction'] + '\\n' + ex['response']\n",
    "text = 'Q: {}\\nA: {}'.format(question, answer)\n",
])
def test_a_prompt_and_its_response_written_into_one_example_of_a_causal_lm(writes):
    assert _said(writes, _LOOP)


@pytest.mark.parametrize("labels", [
    "out = model(x, labels=x)\n",
    "out = model(**inputs, labels=inputs['input_ids'])\n",
    "labels = batch['input_ids'].clone()\nout = model(**batch, labels=labels)\n",
])
def test_labels_from_the_inputs_in_each_form(labels):
    assert _said("text = f'{prompt} {completion}'\n", labels)


@pytest.mark.parametrize("sources", [
    ("print(f'{question} -> {answer}')\n", _LOOP),  # a sample shown, no example written
    ("text = f'{prompt}'\n", _LOOP),  # one side alone
    ("text = f'{title}: {body}'\n", _LOOP),  # fields, but no prompt and response
    ("text = f'{prompt} {completion}'\n", "out = model(x, labels=y)\n"),  # labels not the inputs (a seq2seq target)
    ("text = f'{prompt} {completion}'\n",),  # no training on labels at all
])
def test_nothing_where_no_pair_is_trained_on_its_own_tokens(sources):
    assert _said(*sources) is None


@pytest.mark.parametrize("case", ["BlayvasD_GPT-Histories", "SahilSheikh12299_NLP-Notebooks",
                                  "hcygit1_lab2-math-reasoning-lora-dpo"])
def test_real_prompt_response_loops_are_sft(case):
    profile = forensics.analyze(REALWORLD / case).run_profile
    assert profile.objective == "sft", profile.evidence
    assert "prompt and its response" in profile.evidence["objective"]


def _stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text.splitlines(keepends=True)}


def _notebook(folder: Path, data: str) -> Path:
    """`train.ipynb`: gpt2 loaded, `data` writing the examples, a loop on labels = inputs that printed its loss."""
    folder.mkdir(parents=True, exist_ok=True)
    load = ("import torch\nfrom transformers import GPT2LMHeadModel, GPT2Tokenizer\n"
            "tok = GPT2Tokenizer.from_pretrained('gpt2')\nmodel = GPT2LMHeadModel.from_pretrained('gpt2')\n"
            "opt = torch.optim.AdamW(model.parameters(), lr=5e-5)\n")
    loop = ("for epoch in range(20):\n    for x in batches:\n        loss = model(x, labels=x).loss\n"
            "        loss.backward()\n        opt.step()\n    print(f'epoch {epoch} loss {loss.item():.4f}')\n")
    printed = _stream("".join(f"epoch {i} loss {3.0 - 0.1 * i:.4f}\n" for i in range(20)))
    cells = [(load, []), (data, []), (loop, [printed])]
    nb = {"cells": [{"cell_type": "code", "execution_count": n, "metadata": {}, "source": source, "outputs": outputs}
                    for n, (source, outputs) in enumerate(cells, 1)],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "train.ipynb").write_text(json.dumps(nb, indent=1))
    return folder


def test_a_notebook_of_pairs_is_sft_and_one_of_plain_lines_is_not(tmp_path):
    pairs = ("rows = [{'prompt': 'Hi', 'completion': 'Hello'}] * 50\n"
             "batches = [tok(f\"{r['prompt']} {tok.eos_token} {r['completion']}\", return_tensors='pt')['input_ids']"
             " for r in rows]\n")
    plain = ("lines = open('poems.txt').read().splitlines()\n"
             "batches = [tok(line, return_tensors='pt')['input_ids'] for line in lines]\n")
    said = forensics.analyze(_notebook(tmp_path / "a", pairs)).run_profile
    assert said.objective == "sft" and "prompt and its response" in said.evidence["objective"], said.evidence
    assert forensics.analyze(_notebook(tmp_path / "b", plain)).run_profile.objective != "sft"
