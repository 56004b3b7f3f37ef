"""Tests of calls that load no trained weights (ingest.notebook_code) and MXNet's Speedometer lines
(ingest.console_lines.mxnet_speedometer).

Corpus batch AS67: calls named for loading that load no trained weights (a tokenizer class's `from_pretrained`,
`nltk.download`, the notebook's own text reader, a reload of a file the notebook itself saved), so a model built in
the notebook is read as trained from scratch; and MXNet's Speedometer lines (`Epoch[0] Batch [5]\\tSpeed: ...
\\tTrain-Perplexity=64.10`), read as a loss of ln perplexity."""
from __future__ import annotations

import math

from forensics.ingest.notebook_code import code_values
from support.format_runs import analyze_logs, losses, write_file


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


def _speedometer(values, epochs=1, per_epoch=None, validation=None):
    """MXNet 0.x FeedForward.fit's console: Speedometer every 5 batches, `Train-Perplexity=P`."""
    lines = ["05:56:59 INFO:Start training with [gpu(0)]"]
    per_epoch = per_epoch or len(values)
    for i, v in enumerate(values):
        epoch, batch = divmod(i, per_epoch)
        lines.append(f"05:57:{i % 60:02d} INFO:Epoch[{epoch}] Batch [{5 * (batch + 1)}]\tSpeed: 31.09 samples/sec\t"
                     f"Train-Perplexity={math.exp(v):.6f}")
        if validation is not None and batch == per_epoch - 1:
            lines.append(f"05:58:00 INFO:Epoch[{epoch}] Train-Perplexity={math.exp(v):.6f}")
            lines.append(f"05:58:00 INFO:Epoch[{epoch}] Time cost=12.345")
            lines.append(f"05:58:01 INFO:Epoch[{epoch}] Validation-Perplexity={validation:.6f}")
    return "\n".join(lines) + "\n"


def test_mxnet_speedometer_perplexity_is_read_as_a_loss(tmp_path):
    values = losses()
    a = analyze_logs(write_file(tmp_path, "train.log", _speedometer(values)))
    loss = a.timeline.series("loss")
    assert list(loss.index) == [5 * (i + 1) for i in range(len(values))]
    assert abs(loss.iloc[0] - values[0]) < 1e-5 and abs(loss.iloc[-1] - values[-1]) < 1e-5
    assert a.run_profile.framework == "mxnet"
    assert a.status == "healthy"


def test_mxnet_batches_run_on_across_epochs_and_the_validation_is_an_eval(tmp_path):
    values = losses()
    a = analyze_logs(write_file(tmp_path, "train.log", _speedometer(values, per_epoch=10, validation=7.5)))
    loss = a.timeline.series("loss")
    assert list(loss.index) == [5 * (i + 1) for i in range(len(values))]  # 50 batches an epoch, numbered on
    assert dict(a.timeline.series("eval_loss")) == {50 * e: math.log(7.5) for e in range(1, len(values) // 10 + 1)}


def test_mxnet_1x_batch_range_and_bare_names_are_read(tmp_path):
    text = "".join(f"INFO:root:Epoch[0] Batch [{5 * i}-{5 * (i + 1)}]\tSpeed: 900.1 samples/sec\taccuracy=0.{i}"
                   f"\tcross-entropy={v:.4f}\n" for i, v in enumerate(losses(n=9), 1))
    a = analyze_logs(write_file(tmp_path, "train.log", text))
    assert list(a.timeline.series("loss").index) == [5 * (i + 1) for i in range(1, 10)]
    assert "accuracy" in a.timeline.metrics


def test_an_mxnet_line_without_a_metric_or_speed_is_not_read(tmp_path):
    """A sentence quoting the epoch and an epoch-end time line are no Speedometer line: a file of them is no log."""
    from forensics.ingest.console_lines.mxnet_speedometer import MxnetLines
    reader = MxnetLines()
    for line in ("INFO:Epoch[0] Time cost=12.3", "see Epoch[0] Batch [5] in the docs",
                 "INFO:Epoch[0] Batch [5]\tSpeed: 31.09 samples/sec"):
        assert not reader.owns(line), line
