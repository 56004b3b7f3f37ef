"""A run that its own early-stopping rule ended while its learning rate was still rising in the warm-up
(analyzers.early_stop_in_warmup, ingest.early_stop_end): the stop judged a model that never trained at its configured
rate. Real case: yuki-nyaa_myGPT (tests/realworld), a nanoGPT GPT-2 from scratch ended at iter 16 of 100,000 by
'patience exceeded max(1)' with the rate at 5.1e-6 of its 6e-4 peak, judged warning; styxjedi_ada-self-attn-defseq,
early-stopped at epoch 43 long after its 10-epoch warm-up (its console logs no rate), judged healthy."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest.early_stop_end import early_stop_line

CORPUS = Path(__file__).parent / "realworld"
_PATIENCE_OUT = "2024-05-26 18:10:51.724455 -- -----Training ended with `patience` exceeded max(1).-----"
_FINISHED = "2024-05-26 18:10:51.724455 -- -----Training finished.-----"


def _console(tmp_path: Path, iters: int, warmup: int, tail: tuple[str, ...] = ()) -> Path:
    """A nanoGPT-style console: the loss falling from about ln(50304) while the rate climbs linearly to 6e-4 over
    `warmup` iterations, then holds."""
    lines = [f"2024-05-26 18:09:51.568942 -- iter {i}: loss {10.8 - 0.07 * i:.4f}, time 1644.18ms, mfu 17.09%, "
             f"lr {6e-4 * min(i + 1, warmup) / warmup:.2e}, grad_norm 9.10(clipped to 1.0)" for i in range(iters)]
    (tmp_path / "training.log").write_text("\n".join(lines + list(tail)) + "\n")
    return tmp_path


def _early_stops(analysis) -> list:
    return [f for f in analysis.findings if f.kind == "run_cut_short" and "early-stopping" in f.message]


def test_an_early_stop_while_the_rate_still_warms_up_is_a_warning(tmp_path):
    a = forensics.analyze(_console(tmp_path, 17, 2000, (_PATIENCE_OUT,)))
    (found,) = _early_stops(a)
    assert (a.status, found.severity, found.step) == ("warning", "warning", 16)
    assert "eval_iters" in found.message and "warm-up" in found.message


def test_an_early_stop_after_the_warm_up_ended_is_silent(tmp_path):
    a = forensics.analyze(_console(tmp_path, 40, 10, (_PATIENCE_OUT,)))
    assert (a.status, _early_stops(a)) == ("healthy", [])


def test_a_run_ending_in_its_warm_up_without_an_early_stop_line_is_not_this(tmp_path):
    a = forensics.analyze(_console(tmp_path, 17, 2000, (_FINISHED,)))
    assert _early_stops(a) == []


def test_configured_early_stopping_is_not_an_early_stop_that_fired():
    for config in ("early_stopping = True", '"early_stopping": true,', "[config] early-stopping: 10",
                   "patience = 1", "callbacks=[EarlyStoppingCallback(early_stopping_patience=2)]"):
        assert early_stop_line(config) is None, config
    for fired in (_PATIENCE_OUT, "Epoch 00028: early stopping", "No improvement in 5 epochs. Early stopping triggered.",
                  "Monitored metric val_loss did not improve in the last 3 records. Best score: 1.234.",
                  "EARLY STOPPING TRIGGERED AT EPOCH 7"):
        assert early_stop_line(fired) is not None, fired


def test_yuki_nyaa_myGPT_stopped_by_patience_inside_its_warm_up_is_a_warning():
    a = forensics.analyze(CORPUS / "yuki-nyaa_myGPT")
    (found,) = _early_stops(a)
    assert (a.status, found.step) == ("warning", 16)


def test_styxjedi_early_stopped_long_after_its_warm_up_stays_healthy():
    a = forensics.analyze(CORPUS / "styxjedi_ada-self-attn-defseq")
    assert (a.status, _early_stops(a)) == ("healthy", [])
