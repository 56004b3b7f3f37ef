"""Memorization of a character-level model trained from random weights, judged a character (analyzers.char_floor,
the facts read by ingest.notebook_code.char_corpus).

sotetsuk_LectureColab (corpus): a GRU on the first 100,000 characters of tiny Shakespeare, vocabulary
`sorted(list(set(text)))`, windows of 50 started at every character, batch 256, 390 batches an epoch, 5 epochs, no
validation: 0.72 nats a character at epoch 5 after training on ~250 times the text's characters, judged memorized.
HannaKi_Deep_Learning_in_LangTech_course (corpus): the TF char-GRU recipe on all of Shakespeare, 0.95 nats a character
after ten passes, no validation: healthy, still generalising. A token that is a SentencePiece piece is no character.
"""
from __future__ import annotations

import json

import pandas as pd

import forensics
from forensics.analyzers.char_floor import CHAR_FLOOR, CharCorpus, memorized_per_character
from forensics.ingest.notebook_code import code_values

_BAR = ("\x1b[1m{n}/{n}\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m \x1b[1m6s\x1b[0m 14ms/step - accuracy: {acc} - "
        "loss: {loss}\n")
SOTETSUK_LOSSES = (2.7307, 1.5956, 1.1840, 0.8724, 0.7204)
HANNAKI_LOSSES = (2.0904, 1.5259, 1.3863, 1.3078, 1.2444, 1.1853, 1.1260, 1.0663, 1.0073, 0.9519)


def _cell(source: str, count: int, text: str = "") -> dict:
    outputs = [{"output_type": "stream", "name": "stdout", "text": text}] if text else []
    return {"cell_type": "code", "source": source, "execution_count": count, "metadata": {}, "outputs": outputs}


def _char_notebook(losses, text_length=100000, batches=390, window=50, tokenizer="") -> list[dict]:
    """A Keras 3 character-level LM notebook in the shape of sotetsuk_LectureColab's."""
    fit = "".join(f"Epoch {e}/{len(losses)}\n" + _BAR.format(n=batches, acc=0.5, loss=v)
                  for e, v in enumerate(losses, 1))
    return [
        _cell(f"import numpy as np\nfrom keras import layers, Model, Input\n{tokenizer}", 1),
        _cell("class TextDataset:\n    def __init__(self, text):\n        self.chars = sorted(list(set(text)))\n"
              "        self.num_chars = len(self.chars)", 2),
        _cell(f"max_seq_length = {window}\nbatch_size = 256\nepochs = {len(losses)}", 3),
        _cell("text = load_text()\ndataset = TextDataset(text)\nprint(f'Text length: {len(text)}')\n"
              "print(f'Number of unique characters: {dataset.num_chars}')", 4,
              f"Text length: {text_length}\nNumber of unique characters: 61\n"),
        _cell("inputs = Input(shape=(None,))\nx = layers.Embedding(dataset.num_chars, 16)(inputs)\n"
              "x = layers.GRU(256, return_sequences=True)(x)\n"
              "outputs = layers.Dense(dataset.num_chars, activation='softmax')(x)\n"
              "model = Model(inputs=inputs, outputs=outputs)\nmodel.compile(optimizer='adam', "
              "loss='sparse_categorical_crossentropy', metrics=['accuracy'])", 5),
        _cell("model.fit(dataset, epochs=epochs, verbose=1)", 6, fit),
    ]


def _analyze(tmp_path, cells):
    notebook = {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "char_level_lm.ipynb").write_text(json.dumps(notebook))
    return forensics.analyze(tmp_path)


def test_the_code_says_a_token_is_a_character_and_the_outputs_the_texts_size_and_batches():
    cells = _char_notebook(SOTETSUK_LOSSES)
    said = code_values(cells, "".join(c["outputs"][0]["text"] for c in cells if c["outputs"]))
    assert said["data.char_vocabulary"] == "self.chars = sorted(list(set(text)))"
    assert (said["data.text_chars"], said["data.text_chars_line"]) == (100000, "Text length: 100000")
    assert (said["data.chars_a_batch"], said["data.batches_an_epoch"]) == (50 * 256, 390)


def test_a_subword_tokenizer_in_the_code_makes_no_character_vocabulary():
    cells = _char_notebook(SOTETSUK_LOSSES, tokenizer="import sentencepiece as spm")
    assert "data.char_vocabulary" not in code_values(cells, "Text length: 100000\n")


def test_an_old_keras_bar_that_may_count_samples_gives_no_batches_an_epoch():
    cells = _char_notebook(SOTETSUK_LOSSES)
    said = code_values(cells, "Epoch 1/1\n600860/600860 [==============================] - 376s - loss: 1.5152\n")
    assert "data.batches_an_epoch" not in said


def _corpus(batches_an_epoch=390):
    return CharCorpus("chars = sorted(set(text))", 100000, "Text length: 100000", 50 * 256, batches_an_epoch)


def _epochs(losses):
    return {"loss": pd.Series(losses, index=range(1, len(losses) + 1), dtype="float64")}


def test_a_character_loss_under_the_floor_after_many_passes_is_memorization_where_both_hold():
    found = memorized_per_character(_epochs(SOTETSUK_LOSSES), _corpus(), steps_are_epochs=True)
    assert [(f.kind, f.step, f.severity) for f in found] == [("memorization", 5, "warning")]
    assert found[0].evidence["passes"] == 5 * 390 * 12800 / 100000
    assert "0.7204 nats a character" in found[0].message and "sorted(set(text))" in found[0].message


def test_under_the_floor_after_few_passes_or_above_it_or_with_an_eval_loss_is_silent():
    few = CharCorpus("chars = sorted(set(text))", 1115394, "length of dataset in characters: 1115394", 1600, 691)
    assert memorized_per_character(_epochs(SOTETSUK_LOSSES), few, steps_are_epochs=True) == []  # 5 x ~1 pass
    assert memorized_per_character(_epochs(HANNAKI_LOSSES), _corpus(), steps_are_epochs=True) == []  # 0.95 > floor
    with_eval = {**_epochs(SOTETSUK_LOSSES), "eval_loss": pd.Series([2.0, 1.6], index=[2, 5], dtype="float64")}
    assert memorized_per_character(with_eval, _corpus(), steps_are_epochs=True) == []
    assert memorized_per_character(_epochs(SOTETSUK_LOSSES), _corpus(None), steps_are_epochs=True) == []
    assert CHAR_FLOOR < min(HANNAKI_LOSSES)


def test_a_char_notebook_trained_past_the_floor_over_many_passes_is_warned_of_memorization(tmp_path):
    analysis = _analyze(tmp_path, _char_notebook(SOTETSUK_LOSSES))
    assert (analysis.status, analysis.first_incident.kind, analysis.first_incident.step) == (
        "warning", "memorization", 5)


def test_a_char_notebook_still_over_the_floor_or_seen_a_few_times_stays_healthy(tmp_path):
    assert _analyze(tmp_path, _char_notebook(HANNAKI_LOSSES)).status == "healthy"
    # the same losses over a text 100 times longer: 2.5 passes, not enough to tell recall from learning
    assert _analyze(tmp_path, _char_notebook(SOTETSUK_LOSSES, text_length=10_000_000)).status == "healthy"


def test_a_char_notebook_of_tinystories_is_not_held_to_ordinary_texts_floor(tmp_path):
    cells = _char_notebook(SOTETSUK_LOSSES)
    cells[3] = _cell("text = load_dataset('roneneldan/TinyStories')['train']['text'][0]\ndataset = TextDataset(text)\n"
                     "print(f'Text length: {len(text)}')\nprint(f'Number of unique characters: {dataset.num_chars}')", 4,
                     "Text length: 100000\nNumber of unique characters: 61\n")
    analysis = _analyze(tmp_path, cells)
    assert not any(f.kind == "memorization" for f in analysis.findings)


def test_the_floor_is_told_as_a_large_models_figure_not_as_one_no_model_has_reached():
    # GPT-2 (1.5B) reached 0.98 bits a character on text8: 0.75 nats (1.08 bits, Transformer-XL's) bounds a model
    # trained from random weights on one small text, not every model
    found = memorized_per_character(_epochs(SOTETSUK_LOSSES), _corpus(), steps_are_epochs=True)[0]
    assert "no model has" not in found.message
    assert "Transformer-XL" in found.message and "100,000 characters" in found.message
