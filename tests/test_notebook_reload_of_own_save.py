"""A reload of the model a notebook saved itself (forensics/ingest/notebook_code): no load of trained weights.

From corpus batch AS75: the save in a cell left without an execution count after an interrupted fit
(GoLok56_lyric_generation), taken for a load of trained weights."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.ingest.notebook_code import code_values


CORPUS = Path(__file__).parent / "realworld"


# --- a reload of the notebook's own save, the save cell left uncounted ----------------------------------------------

_BUILD = "encoder_inputs = Input(shape=(None, 40))\nmodel = Model([encoder_inputs, decoder_inputs], decoder_outputs)\n"
_FIT = "model.fit(x=[a, b], y=c, batch_size=64, epochs=30, validation_split=0.2)"
_EPOCHS = "Epoch 1/30\n2789/2789 [====] - 502s 180ms/step - loss: 0.2130 - val_loss: 0.1971\n"


def _cell(source: str, count: int | None, output: str = "") -> dict:
    outputs = [{"output_type": "stream", "name": "stdout", "text": output}] if output else []
    return {"cell_type": "code", "execution_count": count, "metadata": {}, "source": source, "outputs": outputs}


def _built_here(save: str, load: str) -> str | None:
    """GoLok56_lyric_generation's cells: the build counted, the fit interrupted (its output, no count), the save
    left with no count and no output, the reload counted below."""
    cells = [_cell(_BUILD, 1), _cell(_FIT, None, _EPOCHS), _cell(save, None), _cell(load + "\nprint(model)", 57)]
    return code_values(cells, _EPOCHS).get("model.built_here")


def test_a_reload_of_what_an_uncounted_cell_saved_is_no_load_of_trained_weights():
    assert _built_here("model.save('seq2seq_model.h5')", "model = load_model('seq2seq_model.h5')") == "Model"


@pytest.mark.parametrize("save, load", [
    ("model.save('seq2seq_model.h5')", "model = load_model('pretrained.h5')"),  # another file: trained weights
    ("print('saving')", "model = load_model('seq2seq_model.h5')"),  # nothing saved above it
    ("model = load_model('big.h5')\nmodel.save('seq2seq_model.h5')", "model = load_model('seq2seq_model.h5')"),
])
def test_a_load_no_uncounted_save_above_it_wrote_stays_a_load(save, load):
    assert _built_here(save, load) is None


def test_the_lyrics_notebook_is_a_full_training():
    a = forensics.analyze(CORPUS / "GoLok56_lyric_generation")
    assert (a.status, a.run_profile.method, a.run_profile.framework) == ("healthy", "full", "keras")
