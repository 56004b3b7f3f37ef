"""Tests of calls named for loading that load no trained weights (ingest.notebook_code's `model.built_here`).

Corpus batch AS67: calls named for loading that load no trained weights (a tokenizer class's `from_pretrained`,
`nltk.download`, the notebook's own text reader, a reload of a file the notebook itself saved), so a model built in
the notebook is read as trained from scratch (the batch's MXNet lines: tests/test_mxnet_speedometer_lines.py)."""
from __future__ import annotations

from forensics.ingest.notebook_code import code_values


def _cells(*sources):
    return [{"cell_type": "code", "execution_count": i + 1, "metadata": {}, "source": s, "outputs": []}
            for i, s in enumerate(sources)]


def _built_here(*sources):
    return code_values(_cells(*sources), "").get("model.built_here")


_NET = "class MiniGPT(nn.Module):\n    pass\nmodel = MiniGPT()\n"
_LOOP = "for x, y in loader:\n    loss = crit(model(x), y)\n    loss.backward()\n    opt.step()\n"


def test_a_tokenizer_class_from_pretrained_loads_no_weights():
    """Roy19921010_WASP_DeepLearning_M3: `GPT2Tokenizer.from_pretrained("gpt2")` tokenizes for a MiniGPT built in
    the cell."""
    assert _built_here("tokenizer = GPT2Tokenizer.from_pretrained('gpt2')\n" + _NET + _LOOP) == "MiniGPT"


def test_nltk_download_is_no_load():
    """stopstressingmeout_Next-Word-Prediction-Using-LSTM: 'load' inside 'download'."""
    assert _built_here("import nltk\nnltk.download('punkt')\n" + _NET + _LOOP) == "MiniGPT"


def test_the_notebooks_own_text_reader_and_reloads_of_its_own_saves_are_no_loads():
    """UWPRG_UW-Molecular-Data-Mining: `load_doc()` opens and reads a text file; `load_model('model.h5')` and
    pickle's `load(open('mapping.pkl', 'rb'))` read back what the cell above saved after its fit."""
    assert _built_here(
        "def load_doc(filename):\n    file = open(filename, 'r')\n    text = file.read()\n    file.close()\n"
        "    return text\nraw_text = load_doc('rhyme.txt')\nmodel = Sequential()\nmodel.fit(X, y, epochs=100)\n"
        "model.save('model.h5')\ndump(mapping, open('mapping.pkl', 'wb'))",
        "from pickle import load\nmodel = load_model('model.h5')\nmapping = load(open('mapping.pkl', 'rb'))\n"
        "print(generate_seq(model, mapping, 10, 'Sing a son', 20))") == "Sequential"


def test_loads_of_trained_weights_stay_loads():
    """A tokenizer beside a model's own `from_pretrained`, a hub download then a load, a helper that opens a
    checkpoint and `torch.load`s it, a reload of a file saved only after the load, a model loaded from a file the
    notebook never saved: no model built here."""
    loaded = [
        "tok = AutoTokenizer.from_pretrained('gpt2')\nmodel = GPT2LMHeadModel.from_pretrained('gpt2')\n" + _LOOP,
        "path = hf_hub_download('org/m', 'model.pt')\n" + _NET + "model.load_state_dict(torch.load(path))\n" + _LOOP,
        "def load_ckpt(p):\n    with open(p, 'rb') as f:\n        return torch.load(f)\n" + _NET
        + "model.load_state_dict(load_ckpt('ckpt.pt'))\n" + _LOOP,
        "model = load_model('model.h5')\nmodel.fit(X, y)\nmodel.save('model.h5')",
        "model = load_model('pretrained.h5')\nmodel.fit(X, y)\nmodel.save('model.h5')",
    ]
    for source in loaded:
        assert _built_here(source) is None, source
