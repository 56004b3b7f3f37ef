"""Tests of epoch words in other languages and closing loss prints (ingest.stdout), Keras 3's total params
(console_param_counts, banners), Colab's upload and a Keras Input's dtype (ingest.notebook_code).

Corpus batch AS69 found wrong (executed from-scratch LM notebooks): an epoch counted in Russian (`эпоха N:`,
070705gavrilovaanna_text_generation), a closing stepless `Training loss:` print after a Keras fit read at step 0
(mrunmayee3108_deep-learning), Keras 3's `Total params: 227,085 (887.05 KB)` (sotetsuk_LectureColab), Colab's
`files.upload()` taken for a weight load (Hareeshma01_generative-ai-lstm-textgen) and a Keras Input's `dtype="int32"`
taken for lower precision (sotetsuk_LectureColab)."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout
from forensics.ingest.banners import find_banners
from forensics.ingest.console_param_counts import parameter_count_said
from forensics.ingest.notebook_code import code_values

CORPUS = Path(__file__).parent / "realworld"

_TRAIN = [6.427, 5.788, 5.541, 5.359]
_HELD_OUT = [5.959, 5.747, 5.657, 5.585]


def _frame(text: str):
    return stdout.read_console(text, Path("x.log"), []).frame


def _epoch_lines(word: str, best_saved: bool = False) -> str:
    lines = []
    for epoch, (train, held_out) in enumerate(zip(_TRAIN, _HELD_OUT), start=1):
        lines.append(f"{word} {epoch}: train_loss = {train:.3f}, val_loss = {held_out:.3f}")
        if best_saved:  # 070705gavrilovaanna_text_generation's line after each better epoch
            lines.append(f"сохранена лучшая модель на эпохе {epoch} с val_loss = {held_out:.3f}")
    return "\n".join(lines) + "\n"


def test_an_epoch_counted_in_russian_gives_its_losses_at_its_epoch():
    frame = _frame(_epoch_lines("эпоха"))
    assert list(frame[frame.metric == "loss"].step) == [1, 2, 3, 4]
    assert list(frame[frame.metric == "loss"].value) == _TRAIN
    assert list(frame[frame.metric == "eval_loss"].value) == _HELD_OUT


def test_the_epoch_words_of_other_languages_count_too():
    for word in ("Epoche", "época", "époque", "epoca", "epoka"):
        frame = _frame(_epoch_lines(word))
        assert list(frame[frame.metric == "loss"].step) == [1, 2, 3, 4], word


def test_the_best_model_lines_between_them_add_no_loss_and_no_step():
    frame = _frame(_epoch_lines("эпоха", best_saved=True))
    assert list(frame[frame.metric == "eval_loss"].step) == [1, 2, 3, 4]
    assert list(frame[frame.metric == "eval_loss"].value) == _HELD_OUT


def test_the_english_epoch_lines_read_as_before():
    frame = _frame(_epoch_lines("Epoch"))
    assert list(frame[frame.metric == "loss"].step) == [1, 2, 3, 4]
    assert list(frame[frame.metric == "eval_loss"].value) == _HELD_OUT


_KERAS_LOSSES = [3.4678, 3.4601, 3.4543]


def _keras_fit(closing: str) -> str:
    """Keras 3's model.fit lines of three epochs, then the notebook's own print after the fit (mrunmayee3108)."""
    epochs = "".join(f"Epoch {e}/3\n2/2 ━━━━━━━━━━━━━━━━━━━━ 0s 10ms/step - accuracy: 0.1765 - loss: {v:.4f}\n"
                     for e, v in enumerate(_KERAS_LOSSES, start=1))
    return epochs + closing


def test_a_closing_loss_print_after_the_epochs_is_no_step_0_before_them():
    frame = _frame(_keras_fit("Training loss:  0.19516390562057495\n"))
    assert list(frame[frame.metric == "loss"].step) == [1, 2, 3]
    assert list(frame[frame.metric == "loss"].value) == _KERAS_LOSSES


def test_the_corpus_run_with_the_closing_print_shows_no_spike_at_its_first_epoch():
    analysis = forensics.analyze(CORPUS / "mrunmayee3108_deep-learning")
    assert "loss_spike" not in {f.kind for f in analysis.findings}


def test_loss_lines_under_epoch_headers_are_still_dated_by_them():
    text = "".join(f"=== Epoch {e}/3 ===\nLoss: {v:.4f}, BLEU: 0.51\n" for e, v in enumerate(_KERAS_LOSSES, start=1))
    frame = _frame(text)
    assert list(frame[frame.metric == "loss"].step) == [1, 2, 3]


_KERAS3_SUMMARY = [' Total params: 227,085 (887.05 KB)', ' Trainable params: 227,085 (887.05 KB)',
                   ' Non-trainable params: 0 (0.00 B)']


def test_keras_3s_total_with_its_size_after_it_is_the_model_count():
    said = parameter_count_said("\n".join(_KERAS3_SUMMARY) + "\n")
    assert said["console_n_params"] == 227085


def test_keras_3s_summary_with_sizes_is_a_parameter_summary_banner():
    banners = find_banners(_KERAS3_SUMMARY)
    assert [(b.trainable_params, b.all_params) for b in banners if b.kind == "param_summary"] == [(227085, 227085)]


def test_a_total_followed_by_other_words_is_still_no_count():
    assert "console_n_params" not in parameter_count_said("Total params: 227,085 (of the encoder only)\n")


def _cells(*sources):
    return [{"cell_type": "code", "execution_count": i + 1, "metadata": {}, "source": s, "outputs": []}
            for i, s in enumerate(sources)]


_UPLOAD = "from google.colab import files\nuploaded = files.upload()\n"
_KERAS_NET = ("model = Sequential()\nmodel.add(LSTM(128, input_shape=(100, 1)))\nmodel.add(Dense(54, activation='softmax'))\n"
              "model.compile(loss='categorical_crossentropy', optimizer='adam')\n")
_FIT = "model.fit(X, y, batch_size=128, epochs=10)\n"


def test_colabs_upload_of_the_training_text_is_no_weight_load():
    """Hareeshma01_generative-ai-lstm-textgen: 'load' inside 'upload'."""
    assert code_values(_cells(_UPLOAD, _KERAS_NET + _FIT), "").get("model.built_here") == "Sequential"


def test_a_load_of_weights_beside_the_upload_is_still_a_load():
    cells = _cells(_UPLOAD, _KERAS_NET + "model.load_weights('best.h5')\n" + _FIT)
    assert code_values(cells, "").get("model.built_here") is None


_KERAS_INPUT = ("inputs = keras.Input(shape=(None,), dtype={dtype})\nx = layers.Embedding(61, 16)(inputs)\n"
                "x = layers.GRU(256, return_sequences=True)(x)\nmodel = keras.Model(inputs, layers.Dense(61)(x))\n"
                "model.compile(optimizer='adam', loss='sparse_categorical_crossentropy')\n" + _FIT)


def test_a_keras_inputs_int32_token_ids_say_nothing_of_the_precision():
    """sotetsuk_LectureColab: `keras.Input(shape=(None,), dtype="int32")`, trained in Keras' default float32."""
    assert code_values(_cells(_KERAS_INPUT.format(dtype='"int32"')), "").get("precision.default_fp32") is True


def test_a_keras_input_in_float16_is_still_no_default_float32():
    assert code_values(_cells(_KERAS_INPUT.format(dtype='"float16"')), "").get("precision.default_fp32") is not True
