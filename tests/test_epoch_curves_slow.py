"""Epoch-level curves that go wrong slowly: a few points, each a mean over a whole pass or a whole eval set.

Runs are written as a hand-written loop leaves them: results/metrics.csv with one row an epoch (epoch, train_loss,
val_loss). An epoch mean of the training loss that climbs a tenth or more over two epochs in a row is the updates
doing harm (a `divergence` warning, not broken); a held-out loss flat over the last third of many evaluations while
the training loss falls a fifth is overfitting, however little the evals after the best rise. A noisy epoch mean that
rises for one epoch and falls again, a plateau of few evaluations, and one beside a training loss that fell little
are not these.
"""
from __future__ import annotations

from pathlib import Path

import forensics

CORPUS = Path(__file__).resolve().parent / "realworld"


def _run(tmp_path, train, val):
    run = tmp_path / "results"
    run.mkdir()
    rows = [f"{i},{t},{v}" for i, (t, v) in enumerate(zip(train, val), start=1)]
    (run / "metrics.csv").write_text("epoch,train_loss,val_loss\n" + "\n".join(rows) + "\n")
    return run


def _first(a):
    return None if a.first_incident is None else (a.first_incident.kind, a.first_incident.step)


def test_an_epoch_mean_climbing_two_epochs_in_a_row_by_a_fifth_is_a_divergence_warning(tmp_path):
    train = [2.40, 1.60, 1.30, 1.20, 1.31, 1.44, 1.40, 1.30]
    val = [1.80, 1.60, 1.50, 1.52, 1.53, 1.56, 1.55, 1.54]
    a = forensics.analyze(_run(tmp_path, train, val))
    assert (a.status, _first(a)) == ("warning", ("divergence", 5))


def test_an_epoch_mean_rising_once_and_falling_again_is_not(tmp_path):
    train = [2.40, 1.60, 1.30, 1.20, 1.40, 1.15, 1.45, 1.10]
    val = [1.80, 1.60, 1.50, 1.45, 1.44, 1.42, 1.41, 1.40]
    a = forensics.analyze(_run(tmp_path, train, val))
    assert a.status == "healthy" and not [f for f in a.findings if f.kind == "divergence"]


def _plateau(train_end: float, n: int = 30):
    """A held-out loss that falls for two thirds of `n` evals, then holds within 0.5% of its level (lowest two evals
    before the end), beside a training loss that falls steadily from 4.0 to 3.0 and on to `train_end`."""
    cut = n - n // 3
    val = [6.0 - 0.5 * i / cut for i in range(cut)]
    val += [5.50 + 0.01 * ((i % 3) + 1) for i in range(n - cut)]
    val[-3] = 5.495
    train = [4.0 - 1.0 * i / cut for i in range(cut)]
    train += [3.0 - (3.0 - train_end) * (i + 1) / (n - cut) for i in range(n - cut)]
    return train, val


def test_a_held_out_plateau_over_the_last_third_while_train_fell_a_quarter_is_overfitting(tmp_path):
    a = forensics.analyze(_run(tmp_path, *_plateau(2.2)))
    assert (a.status, _first(a)) == ("warning", ("overfitting", 29))


def test_the_same_plateau_while_train_fell_a_tenth_is_not(tmp_path):
    a = forensics.analyze(_run(tmp_path, *_plateau(2.7)))
    assert a.status == "healthy"


def test_the_corpus_cases_are_read_where_they_were_judged():
    first = {"181482_Mid-Term-Assignment-of-Fundamentals-and-Applications-of-Large-Models": ("divergence", 5),
             "iug-htw_GPTAndPrejudice": ("overfitting", 39)}
    for case, incident in first.items():
        a = forensics.analyze(CORPUS / case)
        assert (a.status, _first(a)) == ("warning", incident)


def test_the_healthy_corpus_runs_that_bound_the_bars_stay_healthy():
    for case in ("APP201204_transformer-from-scratch", "Jaong_Checkpoint-of-CPT", "lifestrugglee_fullmouth",
                 "kmilink_OpenNMT-Indonesia-Bima", "wangd12rpi_FinLoRA-sentiment",
                 "SHIVITG_FineTune-Phi-2-LLM-using-PEFT-QLora", "alex000kim_ML-Pipeline-With-DVC-SkyPilot-HuggingFace"):
        assert forensics.analyze(CORPUS / case).status == "healthy", case


def test_an_epoch_mean_climb_that_came_back_under_its_low_is_a_recovered_loss_spike_not_a_divergence(tmp_path):
    """VERDICTS.md: a divergence does not come back; a rise the run recovered from on its own is a spike (a warning).
    IngRicardoZavala_RATCHET-ESP (tests/realworld): epoch means 2.564 -> 2.892 -> ... 3.558 -> 2.426, 2.273 at the end."""
    train = [4.14, 2.80, 2.56, 2.89, 3.10, 3.30, 3.56, 2.90, 2.43, 2.27]
    val = [3.00, 2.70, 2.60, 2.80, 2.95, 3.00, 3.10, 2.70, 2.50, 2.40]
    a = forensics.analyze(_run(tmp_path, train, val))
    assert (a.status, _first(a)) == ("warning", ("loss_spike", 4))
    assert not [f for f in a.findings if f.kind == "divergence"]


def test_the_recovered_epoch_climb_says_so_in_its_evidence_and_the_unrecovered_one_too(tmp_path):
    """Other rules read a loss_spike's evidence["recovered"] (train_eval_gap takes a missing one as unrecovered)."""
    train = [4.14, 2.80, 2.56, 2.89, 3.10, 3.30, 3.56, 2.90, 2.43, 2.27]
    val = [3.00, 2.70, 2.60, 2.80, 2.95, 3.00, 3.10, 2.70, 2.50, 2.40]
    assert _epoch_climb(tmp_path / "back", train, val) == ("loss_spike", True)
    assert _epoch_climb(tmp_path / "up", train[:-3] + [3.6, 3.7, 3.8], val) == ("divergence", False)


def _epoch_climb(folder, train, val):
    folder.mkdir()
    found = next(f for f in forensics.analyze(_run(folder, train, val)).findings if "epoch_means" in f.evidence)
    return found.kind, found.evidence.get("recovered")
