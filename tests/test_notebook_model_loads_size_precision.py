"""What a notebook's code and prints say of the model it trains (forensics/ingest/notebook_code, console_param_counts):
loads that are no weights of the trained model, a parameter count in thousands, Keras' mixed-precision policy.

From corpus batch AS52: a SentencePiece processor's `Load`, a KerasHub preset shown generating before a model built
from scratch, a pickled dict of tokenizer data, a reload cell that never ran; Keras' mixed precision policy
(BMunitiz_NLP) and a parameter count printed in thousands (evintunador_micro-GPT-sandbox). The notebooks are written in nbformat 4's shape
with their outputs as the libraries print them."""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

import forensics
from forensics.ingest.console_param_counts import said_param_count


def _stream(text: str):
    return new_output("stream", name="stdout", text=text)


def _notebook(folder: Path, cells: list[tuple[str, list, int | None]]) -> Path:
    """`folder/run.ipynb` of code cells (source, outputs, execution count or None for a cell that never ran)."""
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell(source, outputs=outputs, execution_count=count)
                                       for source, outputs, count in cells]), folder / "run.ipynb")
    return folder


# --- what loads no weights of the trained model ----------------------------------------------------------------------

_KERAS_FIT = _stream("".join(f"Epoch {e}/12\n10/10 [==============================] - 1s 10ms/step - loss: {5 - 0.2 * e:.4f}"
                             f" - val_loss: {5.1 - 0.2 * e:.4f}\n" for e in range(1, 13)))
_OWN_MODEL = ("import keras\ninputs = keras.Input(shape=(None,))\noutputs = keras.layers.Dense(10)(inputs)\n"
              "model = keras.Model(inputs=inputs, outputs=outputs)\nmodel.compile(optimizer='adam', loss='mse')\n")


def _keras_notebook(folder: Path, setup: str) -> forensics.Analysis:
    _notebook(folder, [(setup, [], 1), (_OWN_MODEL, [], 2), ("model.fit(x, epochs=12)", [_KERAS_FIT], 3)])
    return forensics.analyze(folder)


def test_a_sentencepiece_processor_s_load_is_no_weights_load(tmp_path):
    a = _keras_notebook(tmp_path, "import sentencepiece as spm\ns = spm.SentencePieceProcessor()\ns.Load('bpe.model')\n")
    assert (a.run_profile.method, a.run_profile.objective) == ("full", "pretrain")


def test_a_preset_only_asked_to_generate_is_no_load_of_the_trained_model(tmp_path):
    a = _keras_notebook(tmp_path, "import keras_nlp\n"
                                  "pre = keras_nlp.models.GPT2CausalLMPreprocessor.from_preset('gpt2_base_en')\n"
                                  "lm = keras_nlp.models.GPT2CausalLM.from_preset('gpt2_base_en', preprocessor=pre)\n"
                                  "print(lm.generate('My trip to Yosemite was', max_length=200))\n")
    assert (a.run_profile.method, a.run_profile.objective) == ("full", "pretrain")


def test_a_preset_used_as_a_layer_of_the_trained_model_is_still_a_load(tmp_path):
    a = _keras_notebook(tmp_path, "import keras_nlp\nbackbone = keras_nlp.models.GPT2Backbone.from_preset('gpt2_base_en')\n"
                                  "features = backbone(inputs)\n")
    assert a.run_profile.objective != "pretrain"


def test_a_model_s_own_weights_load_still_counts(tmp_path):
    a = _keras_notebook(tmp_path, "import sentencepiece as spm\ns = spm.SentencePieceProcessor()\ns.Load('bpe.model')\n"
                                  "other = keras.models.Sequential()\nother.load_weights('saved.h5')\n")
    assert a.run_profile.objective != "pretrain"


_TORCH_MODEL = ("import torch\nimport torch.nn as nn\nclass GPT(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.lin = nn.Linear(4, 4)\n"
                "model = GPT()\nprint(sum(p.numel() for p in model.parameters())/1e3, 'K parameters')\n")
_TORCH_LOOP = ("optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)\nfor it in range(1000):\n"
               "    loss = model(x)\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n")
_STEPS = _stream("".join(f"step {s}: train loss {4.8 - 0.0017 * s:.4f}, val loss {4.81 - 0.0017 * s:.4f}\n"
                         for s in range(0, 1000, 50)))


def _torch_notebook(folder: Path, reload_count: int | None, tokenizer: str = "") -> forensics.Analysis:
    """A tiny GPT built in cell 1 and trained in cell 3; between them a reload of saved weights, run (`reload_count`)
    or never run (None: uncounted among counted cells, as evintunador_micro-GPT-sandbox's below its training)."""
    _notebook(folder, [(tokenizer + _TORCH_MODEL, [_stream("59.328 K parameters\n")], 1),
                       ("model.load_state_dict(torch.load('models/GPT.pth'))", [], reload_count),
                       (_TORCH_LOOP, [_STEPS], 3)])
    return forensics.analyze(folder)


def test_a_reload_cell_that_never_ran_among_counted_cells_is_no_load(tmp_path):
    assert _torch_notebook(tmp_path, None).run_profile.objective == "pretrain"


def test_a_reload_cell_that_ran_is_a_load(tmp_path):
    assert _torch_notebook(tmp_path, 2).run_profile.objective != "pretrain"


def test_a_pickled_dict_read_by_its_keys_is_no_weights_load(tmp_path):
    tokenizer = ("import pickle\nwith open('tokenizer.model', 'rb') as f:\n    data = pickle.load(f)\n"
                 "stoi = data['stoi']\nmerges = data['merges']\n")
    assert _torch_notebook(tmp_path, None, tokenizer).run_profile.objective == "pretrain"


def test_a_parameter_count_in_thousands_is_read():
    assert said_param_count("59.328 K parameters\n")[0] == 59328


def test_a_notebook_printing_k_parameters_gives_the_model_size(tmp_path):
    assert _torch_notebook(tmp_path, None).run_profile.model_params == 59328


def test_a_lowercase_k_in_prose_is_no_count():
    assert said_param_count("we trained with 5 k parameters frozen\n") is None


# --- Keras' mixed-precision policy -----------------------------------------------------------------------------------

def test_keras_mixed_float16_policy_is_fp16(tmp_path):
    a = _keras_notebook(tmp_path, "import keras\nkeras.mixed_precision.set_global_policy('mixed_float16')\n")
    assert a.run_profile.precision == "fp16"


def test_keras_mixed_bfloat16_policy_object_is_bf16(tmp_path):
    a = _keras_notebook(tmp_path, "from tensorflow.keras import mixed_precision\n"
                                  "mixed_precision.set_global_policy(mixed_precision.Policy('mixed_bfloat16'))\n")
    assert a.run_profile.precision == "bf16"


def test_keras_without_a_policy_and_with_tensorflow_int_dtypes_is_fp32(tmp_path):
    a = _keras_notebook(tmp_path, "import tensorflow as tf\nids = tf.constant([1, 2], dtype=tf.int32)\n"
                                  "pad = tf.ones_like(ids, dtype=ids.dtype)\n")
    assert a.run_profile.precision == "fp32"
