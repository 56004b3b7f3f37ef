"""Tests of console readings (ingest.stdout): averaged split losses, split perplexities under epoch lines, a
stopped one-line cell; and `dtype=torch.float` read as float32 (ingest.notebook_code.precision).

Corpus batch AS78's reader misses: a loss named for how it was taken before its split (`average training loss`,
ishandahal_simple-language-model), split-named perplexities under a bare `Epoch N` line with progress counts between
(`Train perplexity: X` / `Validation perplexity: Y`, Yanhan-ss_speech-recognition), a one-line cell of an abandoned
loop kept out of the next training's console, and `dtype=torch.float` read as float32 (GW-S_tranform_pytorch)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import forensics
from forensics.ingest import stdout
from forensics.ingest.notebook_code.precision import LOWER_PRECISION_WORDS
from forensics.discover.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"


def _read(text: str, tmp_path: Path) -> dict:
    """{(step, metric): value} of a console text."""
    frame = stdout.read_console(text, tmp_path / "console.log", []).frame
    return {(int(r.step), r.metric): r.value for r in frame.itertuples()}


# --- 1. `average training loss` / `average test loss`


def _averaged_lines(qualifier: str = "average") -> str:
    return "".join(f"step: {s} | {qualifier} training loss: {4.1 - s / 10000:.4f} | {qualifier} test loss: "
                   f"{4.2 - s / 10000:.4f}\n" for s in range(0, 40000, 10000))


def test_an_average_qualifier_before_a_split_loss_names_that_loss(tmp_path):
    read = _read(_averaged_lines(), tmp_path)
    assert read[(0, "loss")] == 4.1 and read[(30000, "loss")] == 1.1
    assert read[(10000, "test_loss")] == 3.2  # (the test split's loss, the eval loss where it is the only one)
    assert not any(metric.startswith("average") for _, metric in read)


def test_avg_and_mean_qualifiers_are_read_alike(tmp_path):
    for qualifier in ("avg", "mean"):
        read = _read(_averaged_lines(qualifier), tmp_path)
        assert read[(10000, "loss")] == 3.1 and read[(10000, "test_loss")] == 3.2


def test_an_average_qualifier_before_another_loss_is_kept_as_its_own_name(tmp_path):
    text = "".join(f"step: {s} | loss: 2.0 | average aux loss: 0.5\n" for s in range(3))
    read = _read(text, tmp_path)
    assert read[(1, "loss")] == 2.0 and (1, "average_aux_loss") in read


def test_the_average_named_notebook_is_judged_on_its_losses():
    a = forensics.analyze(CORPUS / "ishandahal_simple-language-model")
    assert a.status == "healthy"


# --- 2. `Train perplexity` / `Validation perplexity` under a bare `Epoch N` line


def _perplexity_epochs(epochs=5, test=True) -> str:
    text = "".join(f"Epoch {e}\n929568\nTrain perplexity: {400 / e}\n73760\nValidation perplexity: {300 - 20 * e}\n"
                   for e in range(1, epochs + 1))
    return text + ("Saved the model to  large/rnn.ckpt\nTest perplexity: 187.6\n" if test else "")


def test_split_perplexities_under_epoch_lines_are_the_losses_of_their_epoch(tmp_path):
    read = _read(_perplexity_epochs(), tmp_path)
    assert math.isclose(read[(1, "loss")], math.log(400)) and math.isclose(read[(5, "loss")], math.log(80))
    assert math.isclose(read[(2, "eval_loss")], math.log(260))
    assert sorted(step for step, metric in read if metric == "eval_loss") == [1, 2, 3, 4, 5]  # the test: no epoch's


def test_an_infinite_validation_perplexity_is_an_infinite_eval_loss(tmp_path):
    text = _perplexity_epochs(3, test=False).replace("Validation perplexity: 280", "Validation perplexity: inf")
    assert _read(text, tmp_path)[(1, "eval_loss")] == math.inf


def test_perplexity_sections_hint_a_log_and_bare_ppl_lines_do_not():
    assert log_hinted(_perplexity_epochs().encode())
    assert not log_hinted("".join(f"Epoch {e}\nppl: {100 - e}\n" for e in range(1, 6)).encode())


def test_a_perplexity_with_no_split_is_no_loss(tmp_path):
    text = "".join(f"=== Epoch {e} ===\nperplexity: {100 - e}\n" for e in range(1, 6))
    assert not any(metric in ("loss", "eval_loss") for _, metric in _read(text, tmp_path))


def test_the_perplexity_notebook_is_read_and_its_last_run_judged():
    a = forensics.analyze(CORPUS / "Yanhan-ss_speech-recognition")
    loss = a.timeline.frame.query("metric == 'eval_loss'")
    assert a.status == "healthy"
    assert math.isclose(loss["value"].iloc[-1], math.log(197.6807861328125))  # large_hidden256's epoch 5


# --- 4. a one-line cell of an abandoned loop; `dtype=torch.float`


def _cell(lines: list[str], count: int) -> dict:
    return {"cell_type": "code", "execution_count": count, "metadata": {}, "source": ["train()\n"],
            "outputs": [{"output_type": "stream", "name": "stdout", "text": lines}]}


def _notebook(tmp_path: Path, stopped: bool) -> Path:
    epoch = "Epoch: {:3d} | Train loss: {} | Val loss: {} | Gen: aaaa\n"
    cells = [_cell([epoch.format(0, 2.404, 1.932), "Exiting early from training.\n"], 1)] if stopped else []
    cells.append(_cell([epoch.format(e, 3e10 / (e + 1), 9e8 / (e + 1)) for e in range(10)], 2))
    (tmp_path / "nmt.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                    "nbformat_minor": 5}))
    return tmp_path


def test_a_cell_stopped_after_one_line_is_no_point_of_the_training_after_it(tmp_path):
    frame = forensics.analyze(_notebook(tmp_path, stopped=True)).timeline.frame
    first = frame.query("metric == 'loss'")["value"].iloc[0]
    assert first == 3e10  # not the stopped cell's 2.404
    assert 1.932 not in set(frame.query("metric == 'eval_loss'")["value"])


def test_the_training_alone_reads_the_same_without_the_stopped_cell(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    alone = forensics.analyze(_notebook(tmp_path / "a", stopped=False))
    stopped = forensics.analyze(_notebook(tmp_path / "b", stopped=True))
    assert alone.timeline.frame.query("metric == 'loss'")["value"].tolist() == \
        stopped.timeline.frame.query("metric == 'loss'")["value"].tolist()


def test_torch_float_is_float32_not_a_lower_precision():
    assert not LOWER_PRECISION_WORDS.search("torch.rsqrt(torch.tensor(h, dtype=torch.float))")
    assert not LOWER_PRECISION_WORDS.search("x = torch.zeros(3, dtype = torch.double)")
    assert LOWER_PRECISION_WORDS.search("x = torch.zeros(3, dtype=torch.float16)")
    assert LOWER_PRECISION_WORDS.search("x = torch.zeros(3, dtype=torch.bfloat16)")


def test_the_attention_notebook_trains_in_fp32():
    assert forensics.analyze(CORPUS / "GW-S_tranform_pytorch").run_profile.precision == "fp32"
