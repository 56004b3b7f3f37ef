"""Session 25, fx-profile9: statements of a notebook's own code that were misread or not read, hiding a model trained
from random weights or a loop in float32: a print inside a function's body (a cell that only defines the function shows
nothing when it runs), a default tensor type that is float32 on either device (`torch.cuda.FloatTensor if ... else
torch.FloatTensor`), a spaCy pipeline loaded to tokenize (no weights of the network the notebook trains), a tokenizer
the notebook trains itself (a vocabulary no trained model knows)."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest.notebook_code import code_values
from forensics.ingest.notebook_code.cells import cells_that_ran

_CORPUS = Path(__file__).parent / "realworld"


def _cell(source, count=None, outputs=()):
    return {"cell_type": "code", "execution_count": count, "metadata": {}, "source": source,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": t} for t in outputs]}


def _counted(*sources):
    return [_cell(s, i + 1) for i, s in enumerate(sources)]


_NET = "class MiniGPT(nn.Module):\n    pass\nmodel = MiniGPT()\n"
_LOOP = ("opt = torch.optim.AdamW(model.parameters())\nfor x, y in loader:\n    loss = crit(model(x), y)\n"
         "    loss.backward()\n    opt.step()\n")


# --- a print inside a function's body shows nothing where the function is only defined

def test_a_cell_that_only_defines_a_printing_function_ran_silently_before_the_uncounted_training_cell():
    """omardaklaoui_LLM_from_Scratch-GPT2: counts kept on the first cells only; the uncounted cell defining
    `train_model_simple` (a print in its loop) has no output, and the uncounted cell below it shows the training: the
    definition ran too, so its `loss.backward()` is read."""
    cells = [_cell("import torch", 1), _cell("def train(model):\n    for x in data:\n        print(x)\n"
                                               "        loss.backward()\n"),
             _cell("train(model)", None, ["Ep 1 (Step 000000): Train loss 9.9"])]
    assert cells[1] in cells_that_ran(cells)


def test_a_cell_that_prints_when_it_runs_still_stops_the_walk_back():
    """A print at the cell's own level (or in a loop, not a function) shows something when the cell runs: with no
    output kept, that cell did not run, nor those above it."""
    for source in ("print('ready')\nx = 1", "for i in range(3):\n    print(i)\n"):
        cells = [_cell("import torch", 1), _cell(source), _cell("train(model)", None, ["loss 9.9"])]
        assert cells[1] not in cells_that_ran(cells)


def test_omardaklaoui_precision_is_fp32_from_its_loop():
    """The corpus case: its plain loop (loss.backward(), optimizer.step(), no autocast / half / GradScaler) in the
    cells now read trains in float32; method full and objective pretrain stay."""
    profile = forensics.analyze(_CORPUS / "omardaklaoui_LLM_from_Scratch-GPT2").run_profile
    assert (profile.precision, profile.method, profile.objective) == ("fp32", "full", "pretrain")


# --- a float32 default tensor type asks for no lower precision

def test_a_float32_default_tensor_type_leaves_the_loop_in_float32():
    """AananthV_Pytorch-Transformer: `torch.set_default_tensor_type(torch.cuda.FloatTensor if
    torch.cuda.is_available() else torch.FloatTensor)` is float32 on either device."""
    for call in ("torch.set_default_tensor_type(torch.cuda.FloatTensor if torch.cuda.is_available() "
                 "else torch.FloatTensor)", "torch.set_default_tensor_type('torch.cuda.FloatTensor')"):
        assert code_values(_counted(call, _NET + _LOOP), "").get("precision.default_fp32") is True


def test_a_half_or_unknown_default_tensor_type_says_no_fp32():
    """A HalfTensor default (on either branch) or a type the code computes may train below float32."""
    for call in ("torch.set_default_tensor_type(torch.cuda.HalfTensor)",
                 "torch.set_default_tensor_type(torch.FloatTensor if cpu else torch.cuda.HalfTensor)",
                 "torch.set_default_tensor_type(chosen)"):
        assert "precision.default_fp32" not in code_values(_counted(call, _NET + _LOOP), "")


def test_aananthv_precision_is_fp32():
    profile = forensics.analyze(_CORPUS / "AananthV_Pytorch-Transformer").run_profile
    assert profile.precision == "fp32"


# --- a spaCy pipeline is no load of the trained network's weights

def test_a_spacy_tokenizer_is_no_weight_load():
    """2b3o4o_transformer-implementation: `tokenizer = spacy.load("en_core_web_sm")` tokenizes the text a
    TransformerNetwork built in the notebook trains on."""
    said = code_values(_counted("import spacy\ntokenizer = spacy.load('en_core_web_sm')", _NET + _LOOP), "")
    assert said.get("model.built_here") == "MiniGPT"


def test_a_spacy_pipeline_whose_vectors_are_read_stays_a_load():
    """Word vectors read out of the pipeline (`token.vector`, `nlp.vocab.vectors`) may start the network's
    embeddings: no model built from random weights."""
    for read in ("emb = torch.tensor(nlp.vocab.vectors.data)", "rows = [t.vector for t in nlp(text)]"):
        said = code_values(_counted("import spacy\nnlp = spacy.load('en_core_web_lg')\n" + read, _NET + _LOOP), "")
        assert "model.built_here" not in said


def test_2b3o4o_objective_is_pretrain():
    profile = forensics.analyze(_CORPUS / "2b3o4o_transformer-implementation").run_profile
    assert (profile.method, profile.objective, profile.precision) == ("full", "pretrain", "fp32")


# --- a tokenizer trained in the notebook: a vocabulary no trained model knows

_OWN_MODULE_NET = "from GPT.gpt_functions import *\nmodel = GPTLanguageModel(config)\n"


def test_a_tokenizer_trained_in_the_notebook_says_its_model_starts_from_random_weights():
    """Drykx_GPT2-Scratch: `tokenizer = BasicTokenizer(); tokenizer.train(corpus, vocab_size)` before a GPT of the
    repository's own module; the tokenizers library's and SentencePiece's trainers alike."""
    for trains in ("tokenizer = BasicTokenizer()\ntokenizer.train(corpus, vocab_size=400)",
                   "tok = Tokenizer(BPE())\ntok.train(files, trainer)",
                   "spm.SentencePieceTrainer.train(input='corpus.txt', model_prefix='m', vocab_size=8000)",
                   "tok = old.train_new_from_iterator(texts, 52000)"):
        said = code_values(_counted(trains, _OWN_MODULE_NET + _LOOP), "")
        assert said.get("model.tokenizer_trained"), trains


def test_no_tokenizer_trained_or_a_trained_model_loaded_says_nothing():
    """`model.train()` trains no tokenizer; a tokenizer trained beside a loaded model (or weights loaded into it)
    says nothing of where the model starts."""
    for source in ("model.train()\n" + _LOOP,
                   "tokenizer = BasicTokenizer()\ntokenizer.train(corpus, 400)\n"
                   "model = GPT2LMHeadModel.from_pretrained('gpt2')\n" + _LOOP,
                   "tokenizer = BasicTokenizer()\ntokenizer.train(corpus, 400)\n" + _OWN_MODULE_NET
                   + "model.load_state_dict(torch.load('gpt.pt'))\n" + _LOOP):
        assert "model.tokenizer_trained" not in code_values(_counted(source), ""), source


def test_drykx_objective_is_pretrain():
    profile = forensics.analyze(_CORPUS / "Drykx_GPT2-Scratch").run_profile
    assert profile.objective == "pretrain" and "trains its own tokenizer" in profile.evidence["objective"]
