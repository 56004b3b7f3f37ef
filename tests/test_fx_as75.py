"""Corpus batch AS75 found unread or misread: the PyTorch NLP tutorials' progress print with no word in it
(`1m 1s (500 3%) 4.2725`, 164887081_python-), a seq2seq lab's bracketed iteration and share done
(`[1000 - 20.0%] loss = 1.3149`, 1-sang_data), and a reload of the model a notebook saved in a cell left without an
execution count after an interrupted fit (GoLok56_lyric_generation), taken for a load of trained weights."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.ingest.console_lines import elapsed_percent
from forensics.ingest.notebook_code import code_values
from forensics.ingest.pretrain_lines import parse_line
from forensics.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"
# the mean loss every 500 iterations, falling with batch-1 noise (164887081_python-'s first and last prints)
_LOSSES = [4.2725, 3.7417, 3.5464, 3.4867, 3.3409, 3.2846, 3.2149, 3.1602, 3.0440, 3.0399, 2.8851, 2.9064]


def _tutorial_prints(time_left: bool) -> str:
    n = len(_LOSSES) * 500
    lines = []
    for i, loss in enumerate(_LOSSES):
        it = (i + 1) * 500
        spent = f"{it // 500}m {it % 60}s"
        left = f" (- {(n - it) // 500}m 2s)" if time_left else ""
        lines.append(f"{spent}{left} ({it} {it * 100 // n}%) {loss:.4f}\n")
    return "".join(lines)


# --- the tutorial's `elapsed (iteration percent%) loss` -------------------------------------------------------------

@pytest.mark.parametrize("time_left", [False, True])
def test_the_tutorial_progress_print_is_read_as_the_loss_at_its_iteration(tmp_path, time_left):
    (tmp_path / "train.log").write_text(_tutorial_prints(time_left))
    a = forensics.analyze(tmp_path)
    loss = a.timeline.series("loss")
    assert loss.index.tolist() == [500 * (i + 1) for i in range(len(_LOSSES))]
    assert loss.tolist() == pytest.approx(_LOSSES)
    assert a.status == "healthy"


def test_the_seq2seq_tutorial_notebook_is_read_and_healthy():
    a = forensics.analyze(CORPUS / "164887081_python-")
    loss = a.timeline.series("loss")
    assert (len(loss), loss.index[0], loss.iloc[0], loss.index[-1], loss.iloc[-1]) == (26, 500, 4.2725, 13000, 2.4786)
    assert a.status == "healthy" and a.causes == []


@pytest.mark.parametrize("line", ["(500 3%) 4.2725",  # no elapsed time before it
                                  "1m 1s (500 3%)",  # no loss after it
                                  "1m 1s 500 3% 4.2725",  # no parentheses
                                  "took 1m 1s (500 3%) 4.2725 on the GPU"])  # prose around it
def test_a_line_short_of_the_tutorial_print_is_not_read_as_it(line):
    assert elapsed_percent.read_line(line) is None
    assert not log_hinted(((line + "\n") * 5).encode())


# --- `[iteration - percent%] loss = X` ------------------------------------------------------------------------------

def test_a_bracketed_iteration_with_its_share_done_counts_the_step():
    record = parse_line("[1000 - 20.0%] loss = 1.3149")
    assert (record.kind, record.step, dict(record.metrics)) == ("generic", 1000, {"loss": 1.3149})


def test_the_seq2seq_lab_notebook_reads_its_five_prints():
    a = forensics.analyze(CORPUS / "1-sang_data")
    loss = a.timeline.series("loss")
    assert loss.index.tolist() == [1000, 2000, 3000, 4000, 5000]
    assert loss.tolist() == pytest.approx([1.3149, 0.3536, 0.1966, 0.0960, 0.0492])
    assert (a.run_profile.method, a.run_profile.precision) == ("full", "fp32")


@pytest.mark.parametrize("line", ["[20.0%] loss = 1.3149", "[1000 20.0%] loss = 1.3149", "[1000 - 20.0] loss = 1.3149"])
def test_a_bracket_without_both_the_iteration_and_its_share_counts_no_step(line):
    record = parse_line(line)
    assert record is None or record.step != 1000


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
