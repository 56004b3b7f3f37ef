"""Memorization of a language model trained from random weights on subword pieces whose characters the notebook
counts, judged a character (analyzers.subword_floor, the facts read by ingest.notebook_code.subword_corpus).

Aditya-Giri-4356_gpt-from-scratch-study- (corpus): Karpathy's GPT lecture redone with a SentencePiece BPE of 5,000
pieces trained on tiny Shakespeare; the notebook prints `len(text)` (1,115,394 characters) and the encoded text's
length (295,231 tokens: 3.78 characters a token); batch 32 x block 128 for 5,000 iterations (~69 passes), no eval loss:
1.27 nats a token at the end is 0.34 nats a character, judged memorized from iteration 4000 +- 1000.
A run that logs a held-out loss, that made few passes, or whose loss stays over 0.75 nats a character is silent.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.char_floor import CHAR_FLOOR
from forensics.analyzers.subword_floor import SubwordCorpus, memorized_per_subword
from forensics.ingest.notebook_code import code_values

ADITYA_LOSSES = (8.4974, 5.0480, 4.4311, 4.0122, 3.6081, 3.0580, 2.6362, 2.1601, 1.9444, 1.6425, 1.2681)
ADITYA_STEPS = (0, 500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 4999)
# TanaseVictorFlavian_Dissertation-code's ten epoch means: GPT-2 pieces of ~3.3 characters, 2.95 nats a token at the end
# is 0.89 nats a character, over the floor
TANASE_LOSSES = (5.0502, 4.1650, 3.8316, 3.6069, 3.4399, 3.3066, 3.1963, 3.1034, 3.0239, 2.9536)
CORPUS = Path(__file__).parent / "realworld"


def _cell(source: str, count: int, text: str = "") -> dict:
    outputs = [{"output_type": "stream", "name": "stdout", "text": text}] if text else []
    return {"cell_type": "code", "source": source, "execution_count": count, "metadata": {}, "outputs": outputs}


def _loop_output(losses, steps, val=False) -> str:
    return "".join(f"step {s}: train loss {v:.4f}, val loss {v + 0.3:.4f}\n" if val else
                   f"Iteration {s}: Loss = {v:.4f}\n" for s, v in zip(steps, losses))


def _subword_notebook(losses=ADITYA_LOSSES, steps=ADITYA_STEPS, chars=1115394, tokens=295231, val=False,
                      tokens_print="print(data.shape, data.dtype)\nprint(data[:10])") -> list[dict]:
    """A from-scratch GPT notebook in the shape of Aditya-Giri-4356_gpt-from-scratch-study-'s."""
    return [
        _cell("with open('input.txt', 'r', encoding='utf-8') as f:\n    text = f.read()", 1),
        _cell('print("the total length of all the charecters: ", len(text))', 2,
              f"the total length of all the charecters:  {chars}\n"),
        _cell("import sentencepiece as spm\nspm.SentencePieceTrainer.train(input='input.txt', model_prefix='tok', "
              "vocab_size=5000, model_type='bpe')\nsp = spm.SentencePieceProcessor(model_file='tok.model')\n"
              "def encode(s):\n    return sp.encode(s, out_type=int)", 3),
        _cell(f"import torch\ndata = torch.tensor(encode(text), dtype=torch.long)\n{tokens_print}", 4,
              f"torch.Size([{tokens}]) torch.int64\ntensor([ 423,  807, 4964, 2088,   84, 2438,  548, 2014, 4956])\n"),
        _cell("n = int(0.9 * len(data))\ntrain_data = data[:n]\nval_data = data[n:]", 5),
        _cell("batch_size = 32\nblock_size = 128\nn_embd = 128\nn_head = 4\nn_layer = 4\ndropout = 0.0", 6),
        _cell("import torch.nn as nn\nclass GPTLanguageModel(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.token_embedding_table = nn.Embedding(5000, n_embd)\n"
              "        self.lm_head = nn.Linear(n_embd, 5000)\n"
              "gpt = GPTLanguageModel()\nprint('Number of parameters:', sum(p.numel() for p in gpt.parameters()))", 7,
              "Number of parameters: 2093192\n"),
        _cell("optimizer = torch.optim.AdamW(gpt.parameters(), lr=3e-4)\nfor iter in range(5000):\n"
              "    xb, yb = get_batch('train')\n    logits, loss = gpt(xb, yb)\n"
              "    optimizer.zero_grad(set_to_none=True)\n    loss.backward()\n    optimizer.step()\n"
              "    if iter % 500 == 0 or iter == 4999:\n        print(f'Iteration {iter}: Loss = {loss.item():.4f}')",
              8, _loop_output(losses, steps, val)),
    ]


def _outputs(cells) -> str:
    return "".join(c["outputs"][0]["text"] for c in cells if c["outputs"])


def _analyze(tmp_path, cells, name="gpt_from_scratch.ipynb"):
    notebook = {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / name).write_text(json.dumps(notebook))
    return forensics.analyze(tmp_path)


def test_the_notebook_prints_the_texts_characters_and_its_subword_tokens():
    said = code_values(_subword_notebook(), _outputs(_subword_notebook()))
    assert said["data.subword_tokenizer"] == "sentencepiece"
    assert (said["data.text_chars"], said["data.text_chars_line"]) == (
        1115394, "the total length of all the charecters:  1115394")
    assert (said["data.text_tokens"], said["data.text_tokens_line"]) == (
        295231, "torch.Size([295231]) torch.int64")
    assert said["data.tokens_a_batch"] == 32 * 128


def test_a_count_the_prints_cannot_be_matched_to_its_line_is_not_read():
    # a tensor printed first takes several lines: which line is the token count is not known
    cells = _subword_notebook(tokens_print="print(data[:10])\nprint(data.shape, data.dtype)")
    assert "data.text_tokens" not in code_values(cells, _outputs(cells))


def _with_cell(cells, index, source, output=""):
    """The notebook with cell `index` replaced (execution counts renumbered in order)."""
    cells = [dict(c) for c in cells]
    cells[index] = _cell(source, 0, output)
    return [dict(c, execution_count=i) for i, c in enumerate(cells, 1)]


def _counts(cells):
    said = code_values(cells, _outputs(cells))
    return said.get("data.text_chars"), said.get("data.text_tokens")


def test_the_tokens_of_a_cut_or_truncated_encoding_are_not_the_texts_tokens():
    cut = {"torch.tensor(encode(text)[:50000], dtype=torch.long)": "torch.Size([50000]) torch.int64\n",
           "torch.tensor(sp.encode(text, out_type=int, max_length=1024, truncation=True))":
               "torch.Size([1024]) torch.int64\n"}
    for value, output in cut.items():
        cells = _with_cell(_subword_notebook(), 3, f"import torch\ndata = {value}\nprint(data.shape, data.dtype)",
                           output)
        assert _counts(cells)[1] is None, value
    sample = _with_cell(_subword_notebook(), 3, "import torch\ndata = torch.tensor(encode(text), dtype=torch.long)\n"
                        "sample = encode(text)[:1000]\nprint(len(sample))", "1000\n")
    assert _counts(sample)[1] is None


def test_characters_and_tokens_counted_of_two_different_texts_are_not_paired():
    val = ("with open('val.txt') as g:\n    val_text = g.read()\nval_ids = encode(val_text)\nprint(len(val_ids))")
    cells = _subword_notebook()
    cells = _with_cell(cells[:4] + [cells[4]] + cells[4:], 4, val, "30000\n")
    cells = _with_cell(cells, 3, "import torch\ndata = torch.tensor(encode(text), dtype=torch.long)\nprint(data[:10])",
                       "tensor([ 423,  807, 4964])\n")
    assert _counts(cells) == (None, None)
    # the same name read from a second, smaller file after its length was printed
    cells = _subword_notebook()
    cells = _with_cell(cells[:2] + [cells[2]] + cells[2:], 2, "with open('small.txt') as f:\n    text = f.read()")
    assert _counts(cells) == (None, None)
    # its length printed before the text was cut: the tokens are of the cut text
    cells = _subword_notebook()
    cells = _with_cell(cells[:2] + [cells[2]] + cells[2:], 2, "text = text[:200000]")
    assert _counts(cells) == (None, None)


def test_counts_in_thousands_separators_are_read_and_rounded_ones_are_not():
    printed = {"print(f'chars: {len(text):,}')": ("chars: 1,115,394\n", 1115394),
               "print(f'chars: {len(text):.2e}')": ("chars: 1.12e+06\n", None),
               "print(f'chars: {len(text) / 1e6:.2f}M')": ("chars: 1.12M\n", None),
               "print('chars:', len(text) // 1000, 'k')": ("chars: 1115 k\n", None)}
    for source, (output, chars) in printed.items():
        assert _counts(_with_cell(_subword_notebook(), 1, source, output))[0] == chars, source


def test_the_real_notebook_counts_its_characters_and_tokens():
    notebook = json.loads((CORPUS / "Aditya-Giri-4356_gpt-from-scratch-study-" / "gpt_from_scratch.ipynb").read_text())
    cells = notebook["cells"]
    outputs = "".join("".join(o.get("text", "")) for c in cells for o in c.get("outputs", []))
    said = code_values(cells, outputs)
    assert (said["data.text_chars"], said["data.text_tokens"], said["data.tokens_a_batch"]) == (
        1115394, 295231, 32 * 128)


def _corpus(text_tokens=295231, chars=1115394):
    return SubwordCorpus("sentencepiece", chars, "the total length of all the charecters:  1115394", text_tokens,
                         "torch.Size([295231]) torch.int64", 32 * 128)


def _steps(losses, steps):
    return {"loss": pd.Series(losses, index=list(steps), dtype="float64")}


def test_a_subword_loss_under_the_character_floor_times_the_pieces_length_after_many_passes_is_memorization():
    found = memorized_per_subword(_steps(ADITYA_LOSSES, ADITYA_STEPS), _corpus(), steps_are_epochs=False)
    assert [(f.kind, f.step, f.severity) for f in found] == [("memorization", 3000, "warning")]
    evidence = found[0].evidence
    assert evidence["chars_per_token"] == 1115394 / 295231
    assert evidence["level"] == CHAR_FLOOR * (1115394 / 295231)  # 2.83 nats a token
    assert evidence["passes"] == 3000 * 4096 / 295231
    assert "2.636 nats a token" in found[0].message and "sentencepiece" in found[0].message


def test_over_the_floor_after_few_passes_or_with_an_eval_loss_it_is_silent():
    tanase = SubwordCorpus("GPT2TokenizerFast", 1115394, "Dataset length: 1,115,394 characters", 338025,
                           "Total tokens: 338025", 16 * 16, 2641)
    tanase_epochs = {"loss": pd.Series(TANASE_LOSSES, index=range(1, 11), dtype="float64")}
    assert memorized_per_subword(tanase_epochs, tanase, steps_are_epochs=True) == []  # 0.89 nats a character
    few = _corpus(text_tokens=100 * 295231, chars=100 * 1115394)  # 0.7 passes
    assert memorized_per_subword(_steps(ADITYA_LOSSES, ADITYA_STEPS), few, steps_are_epochs=False) == []
    with_eval = {**_steps(ADITYA_LOSSES, ADITYA_STEPS), "eval_loss": pd.Series([3.0, 2.9], index=[2500, 4999])}
    assert memorized_per_subword(with_eval, _corpus(), steps_are_epochs=False) == []
    assert memorized_per_subword(_steps(ADITYA_LOSSES, ADITYA_STEPS), None, steps_are_epochs=False) == []


def test_a_subword_notebook_trained_past_the_floor_over_many_passes_is_warned_of_memorization(tmp_path):
    analysis = _analyze(tmp_path, _subword_notebook())
    assert (analysis.status, analysis.first_incident.kind, analysis.first_incident.step) == (
        "warning", "memorization", 3000)


def test_a_pretrained_model_tuned_on_the_text_is_not_judged_by_the_fresh_models_floor(tmp_path):
    cells = _subword_notebook()
    cells[6] = _cell("from transformers import GPT2LMHeadModel\ngpt = GPT2LMHeadModel.from_pretrained('gpt2')", 7)
    analysis = _analyze(tmp_path, cells, name="continued_pretraining.ipynb")  # the notebook's name says pre-training
    assert analysis.run_profile.objective == "pretrain"
    assert not [f for f in analysis.findings if f.kind == "memorization"]


def test_a_subword_notebook_with_a_val_loss_or_a_large_text_stays_healthy(tmp_path):
    assert _analyze(tmp_path, _subword_notebook(val=True)).status == "healthy"
    # the same losses over a text 100 times longer: under one pass, not enough to tell recall from learning
    assert _analyze(tmp_path, _subword_notebook(chars=100 * 1115394, tokens=100 * 295231)).status == "healthy"


def test_a_real_from_scratch_notebook_that_logs_a_val_loss_stays_silent_though_its_counts_are_read():
    # Murat-Simsek_scratch_transformers (judged healthy): the lecture's character model in a notebook that also imports
    # SentencePiece; it prints the text's 1,115,394 characters and as many tokens, and logs a val loss at each eval
    case = CORPUS / "Murat-Simsek_scratch_transformers"
    cells = json.loads((case / "transformer_scratch.ipynb").read_text())["cells"]
    said = code_values(cells, "".join("".join(o.get("text", "")) for c in cells for o in c.get("outputs", [])))
    assert (said["data.text_chars"], said["data.text_tokens"]) == (1115394, 1115394)
    analysis = forensics.analyze(case)
    assert analysis.status == "healthy" and not [f for f in analysis.findings if f.kind == "memorization"]


def test_a_notebook_of_tinystories_is_not_held_to_ordinary_texts_floor(tmp_path):
    # TinyStories is held out far under 0.75 nats a character (llama2.c's 110M: ~0.76 nats a Llama-2 token), so the
    # same losses over it say nothing of memorization
    cells = _subword_notebook()
    cells[0] = _cell("with open('TinyStories-valid.txt', 'r', encoding='utf-8') as f:\n    text = f.read()", 1)
    assert code_values(cells, _outputs(cells))["data.simplified_text"] == "TinyStories-valid.txt"
    analysis = _analyze(tmp_path, cells)
    assert not any(f.kind == "memorization" for f in analysis.findings)


def test_the_floor_is_told_as_a_large_models_figure_not_as_one_no_model_has_reached():
    # GPT-2 (1.5B) reached 0.98 bits a character on text8 and larger models go lower: the 1.08 bits of Transformer-XL
    # (277M parameters, 90M characters) bounds a model trained from random weights on one small text, not every model
    found = memorized_per_subword(_steps(ADITYA_LOSSES, ADITYA_STEPS), _corpus(), steps_are_epochs=False)[0]
    assert "no model has" not in found.message and "best held-out figure" not in found.message
    assert "Transformer-XL" in found.message and "1,115,394 characters" in found.message
