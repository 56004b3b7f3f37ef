"""A notebook that trains a causal LM on plain text with labels = input_ids (its own tokens, no prompt or response
written around them) is next-token training on raw text, pretrain, whatever its file is called (StaticOwl_dpnlp's
`fine_tune.ipynb`, AliN75_Memorization's run_clm group_texts, Abdelmanemm_Fine_Tunning_GPT2's column of jokes); one
that writes its examples from a template or from several fields is not (Ngwaru_auto_surgical_report's prompt +
completion, LevOssadtchi's f-string, SRM47's TextDataset of paraphrase lines stay sft by their names)."""
from __future__ import annotations

import json
from pathlib import Path

import forensics


def _stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text.splitlines(keepends=True)}


_TRAINING = _stream("".join(f"{{'loss': {3.5 - 0.05 * i:.3f}, 'grad_norm': 1.5, 'learning_rate': 3e-05, "
                            f"'epoch': {i / 40:.3f}}}\n" for i in range(1, 41)))
_LOAD = ("from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments\n"
         "from transformers import DataCollatorForLanguageModeling\n"
         "model = AutoModelForCausalLM.from_pretrained('gpt2')\ntok = AutoTokenizer.from_pretrained('gpt2')\n")
_TRAIN = ("args = TrainingArguments(output_dir='out', num_train_epochs=5)\n"
          "trainer = Trainer(model=model, args=args, train_dataset=train_dataset{collator})\ntrainer.train()\n")


def _notebook(folder: Path, data: str, collator: str = "") -> Path:
    """`fine_tune.ipynb`: gpt2 loaded, `data` building train_dataset, a Trainer run that logged its loss."""
    folder.mkdir(parents=True, exist_ok=True)
    cells = [(_LOAD, []), (data, []), (_TRAIN.format(collator=collator), [_TRAINING])]
    nb = {"cells": [{"cell_type": "code", "execution_count": n, "metadata": {}, "source": source, "outputs": outputs}
                    for n, (source, outputs) in enumerate(cells, 1)],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "fine_tune.ipynb").write_text(json.dumps(nb, indent=1))
    return folder


_CHUNKS = ("text = open('book.txt').read()\nchunks = [text[i:i + 1024] for i in range(0, len(text), 256)]\n"
           "enc = tok(chunks, truncation=True, padding=True, return_tensors='pt')\n"
           "class Chunks:\n    def __getitem__(self, i):\n        item = {k: v[i] for k, v in enc.items()}\n"
           "        item['labels'] = item['input_ids'].clone()\n        return item\n"
           "train_dataset = Chunks()\n")


def test_chunks_of_a_text_file_with_labels_equal_to_input_ids_are_pretrain_whatever_the_notebook_is_called(tmp_path):
    profile = forensics.analyze(_notebook(tmp_path, _CHUNKS)).run_profile
    assert profile.objective == "pretrain"
    assert "labels = input_ids" in profile.evidence["objective"]


def test_a_text_column_under_the_causal_lm_collator_is_pretrain(tmp_path):
    data = "import pandas as pd\njokes = pd.read_csv('jokes.csv')['joke'].tolist()\ntrain_dataset = tok(jokes)\n"
    folder = _notebook(tmp_path, data, ", data_collator=DataCollatorForLanguageModeling(tokenizer=tok, mlm=False)")
    assert forensics.analyze(folder).run_profile.objective == "pretrain"


def test_examples_written_from_a_template_or_from_two_fields_stay_sft_by_the_name(tmp_path):
    template = ("def fmt(ex):\n    enc = tok(f\"### Instruction: {ex['instruction']}\\n### Response: {ex['output']}\")\n"
                "    enc['labels'] = enc['input_ids'].copy()\n    return enc\ntrain_dataset = rows.map(fmt)\n")
    joined = ("def fmt(ex):\n    enc = tok(ex['prompt'] + '\\n' + ex['completion'])\n"
              "    enc['labels'] = enc['input_ids'].copy()\n    return enc\ntrain_dataset = rows.map(fmt)\n")
    lines = ("from transformers import TextDataset\n"
             "train_dataset = TextDataset(tokenizer=tok, file_path='pairs.txt', block_size=128)\n")
    for name, data, collator in (("template", template, ""), ("joined", joined, ""),
                                 ("lines", lines, ", data_collator=DataCollatorForLanguageModeling(tok, mlm=False)")):
        assert forensics.analyze(_notebook(tmp_path / name, data, collator)).run_profile.objective == "sft", name


_COLLATOR = ", data_collator=DataCollatorForLanguageModeling(tokenizer=tok, mlm=False)"


def test_a_rows_turns_joined_by_the_eos_token_are_dialogue_not_raw_text(tmp_path):
    """SolipsisAI_research: DialoGPT fine-tuned on a response and its previous turns, `eos.join(row.values)`."""
    data = ("import pandas as pd\ndf = pd.read_csv('lines.csv')\n"
            "def concat(row):\n    return f'{tok.eos_token}'.join(row.values) + tok.eos_token\n"
            "df['text'] = df.apply(concat, axis=1)\ntrain_dataset = tok(df['text'].tolist())\n")
    assert forensics.analyze(_notebook(tmp_path, data, _COLLATOR)).run_profile.objective == "sft"


def test_documents_joined_by_the_eos_token_stay_raw_text(tmp_path):
    data = ("import pandas as pd\ndocs = pd.read_csv('docs.csv')['text'].tolist()\n"
            "stream = tok.eos_token.join(docs)\ntrain_dataset = tok([stream[i:i + 2048] for i in range(0, len(stream), 2048)])\n")
    assert forensics.analyze(_notebook(tmp_path, data, _COLLATOR)).run_profile.objective == "pretrain"


def test_data_built_by_a_function_no_cell_that_ran_defines_is_not_called_raw_text(tmp_path):
    """SolipsisAI_research: `prepare_data(df, ...)` is defined in a cell saved without its execution count; what the
    cells that ran show of the data is not all of it, so the collator alone says nothing."""
    data = "import pandas as pd\ndf = pd.read_csv('lines.csv')\ntrain_dataset = prepare_data(df, n=7)\n"
    assert forensics.analyze(_notebook(tmp_path, data, _COLLATOR)).run_profile.objective == "sft"
