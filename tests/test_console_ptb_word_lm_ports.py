"""The PyTorch ports of the TF PTB word-LM tutorial (forensics/ingest/console_lines/stepless.py, ptb_progress and
ptb_epoch): `{} perplexity: {:8.2f} speed: {} wps` with the epoch's fraction unrounded and the perplexity padded,
and `Train perplexity at epoch N: P` / `Validation perplexity at epoch N: P` (epochs from 0) closing each epoch.

From corpus batch AS97 (iceljc_language-model: code/nohup.out, 40 epochs, validation 228.86 -> 80.95)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import forensics
from forensics.ingest import stdout
from forensics.ingest.pretrain_lines import parse_line

CORPUS = Path(__file__).parent / "realworld"
_FRACTIONS = (0.007535795026375283, 0.20648078372268275, 0.4054257724189902, 0.6043707611152976, 0.8033157498116051)


def _port_log(epochs: int = 4) -> str:
    text = "Vocabluary size: 10000\n########## Training ##########################\n"
    for epoch in range(epochs):
        for k, fraction in enumerate(_FRACTIONS):
            text += f"{fraction} perplexity: {900 / (epoch + 1) - 40 * k:8.2f} speed: 9093.503309248155 wps\n"
        text += (f"Train perplexity at epoch {epoch}: {700 / (epoch + 1):8.2f}\n"
                 f"Validation perplexity at epoch {epoch}: {400 / (epoch + 1) + 50:8.2f}\n")
    return text + "########## Testing ##########################\nTest Perplexity:    77.44\n"


def _series(path: Path, metric: str) -> dict[int, float]:
    frame = stdout.read(path).frame
    rows = frame[frame.metric == metric]
    return dict(zip(rows.step.astype(int), rows.value))


def test_an_unrounded_fraction_and_a_padded_perplexity_are_a_progress_line():
    record = parse_line("0.10700828937452901 perplexity:  1527.65 speed: 8936.414493654802 wps")
    assert record.kind == "ptb_progress"
    assert math.isclose(dict(record.metrics)["loss"], math.log(1527.65))


@pytest.mark.parametrize("split, name", [("Train", "loss"), ("Validation", "eval_loss")])
def test_the_ports_epoch_lines_are_the_epochs_mean_log_perplexity(split, name):
    record = parse_line(f"{split} perplexity at epoch 3:   129.14")
    assert (record.kind, record.step) == ("ptb_epoch", 3)
    assert math.isclose(dict(record.metrics)[name], math.log(129.14))


@pytest.mark.parametrize("line", ["Test perplexity at epoch 3: 77.44",  # the test split: no training epoch
                                  "Train log perplexity at epoch 3: 4.86",  # a log perplexity, not one
                                  "The Validation perplexity at epoch 3: 80.95 beat the paper's",  # prose
                                  "Validation perplexity at epoch 3 was 80.95",
                                  "we saw 0.5 perplexity: 120.3 at half an epoch"])
def test_prose_and_other_perplexities_are_not_read_as_the_ports_lines(line):
    assert parse_line(line) is None


def test_the_ports_console_is_read_by_epoch_with_its_validations(tmp_path: Path):
    (tmp_path / "nohup.out").write_text(_port_log())
    loss = _series(tmp_path / "nohup.out", "loss")
    evals = _series(tmp_path / "nohup.out", "eval_loss")
    assert sorted(loss) == list(range(1, 21))  # the n-th print, 5 an epoch
    assert sorted(evals) == [5, 10, 15, 20] and np.isclose(evals[20], math.log(150))


def test_the_ports_healthy_console_is_judged_healthy(tmp_path: Path):
    (tmp_path / "nohup.out").write_text(_port_log())
    assert forensics.analyze(tmp_path).status == "healthy"


def test_the_real_port_console_is_a_healthy_from_scratch_lm():
    a = forensics.analyze(CORPUS / "iceljc_language-model")
    assert len(a.timeline.series("loss")) == 400 and len(a.timeline.series("eval_loss")) == 40
    assert a.status == "healthy" and a.first_incident is None
    assert (a.run_profile.method, a.run_profile.objective) == ("full", "pretrain")


def test_a_port_that_diverges_to_nan_perplexity_is_broken_at_that_epoch(tmp_path: Path):
    """The ports print np.exp(costs / iters), which is `nan` once the cost is: NaN is data, so the epochs that print it
    are read as a non-finite loss (the run is broken there), not dropped as if they were never logged."""
    text = _port_log(3)
    for epoch in (3, 4):
        text = text.replace("########## Testing", f"{_FRACTIONS[0]} perplexity:      nan speed: 9093.5 wps\n"
                                                   f"Train perplexity at epoch {epoch}:      nan\n"
                                                   f"Validation perplexity at epoch {epoch}:      nan\n"
                                                   "########## Testing", 1)
    assert math.isnan(dict(parse_line("Validation perplexity at epoch 3: nan").metrics)["eval_loss"])
    (tmp_path / "nohup.out").write_text(text)
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "broken"
    assert analysis.first_incident.kind == "nonfinite_metric"


# --- a console still being written: its last line (no newline after it) cut mid-number -------------------------------

def _held_out_perplexities(tmp_path: Path, last_line: str) -> list[float]:
    (tmp_path / "nohup.out").write_text(_port_log(4).split("########## Testing")[0] + last_line)
    return list(_series(tmp_path / "nohup.out", "eval_perplexity").values())


def test_a_last_epoch_line_cut_mid_perplexity_is_not_read(tmp_path):
    # `Validation perplexity at epoch 4:   130.00` cut to `    13`: its one number may be cut, so the line is left out
    assert _held_out_perplexities(tmp_path, "Validation perplexity at epoch 4:    13")[-1] == 150.0  # epoch 3's


def test_a_whole_last_epoch_line_without_its_newline_is_read(tmp_path):
    assert _held_out_perplexities(tmp_path, "Validation perplexity at epoch 4:   130.00")[-1] == 130.0
