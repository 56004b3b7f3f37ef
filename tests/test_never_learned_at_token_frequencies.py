"""A translation model whose per-token loss swings about the uniform guess over a vocabulary (9-10.7 nats, 3 nats from
one report to the next) at a token accuracy no better than always predicting the commonest tokens, thousands of
updates in, never learned (broken), however noisy the loss: OpenNMT-py issue 709's report lines (xent 7.7-10.7,
acc 1.9-5.7% from batch 12,850). The same losses beside a token accuracy far above the commonest tokens' are not
called never learned, and a run whose loss falls is healthy.
"""
from __future__ import annotations

import forensics

# OpenNMT-py issue 709's xent, batch 12,900 to 13,400 (every 50)
_XENT = (10.47, 10.67, 10.09, 10.18, 9.18, 8.24, 7.73, 7.82, 8.00, 9.69, 9.95)


def _write_log(folder, xent, accuracy_pct) -> None:
    """OpenNMT-py's 2018 report lines (onmt/Trainer.py's Statistics.output), one every 50 batches."""
    lines = []
    for i, (loss, acc) in enumerate(zip(xent, accuracy_pct)):
        batch = 12900 + 50 * i
        lines.append(f"Epoch  1, {batch}/37527; acc: {acc:6.2f}; ppl: {2.718281828 ** loss:8.2f}; xent: {loss:6.2f}; "
                     f"3600 src tok/s; 3680 tgt tok/s; {9861 + 37 * i:6d} s elapsed")
    (folder / "train.log").write_text("\n".join(lines) + "\n")


def test_a_noisy_loss_at_the_guess_with_token_accuracy_at_the_commonest_tokens_is_never_learned(tmp_path):
    _write_log(tmp_path, _XENT, (4.48, 4.50, 4.40, 4.36, 5.25, 5.66, 5.32, 4.79, 4.27, 4.25, 1.89))
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "broken"
    assert (analysis.first_incident.kind, analysis.first_incident.step) == ("never_learned", 12900)


def test_the_same_losses_beside_a_token_accuracy_well_above_the_commonest_tokens_are_not_never_learned(tmp_path):
    _write_log(tmp_path, _XENT, (18.2, 19.0, 18.7, 18.1, 19.5, 20.3, 20.9, 20.1, 19.8, 19.2, 18.9))
    analysis = forensics.analyze(tmp_path)
    assert not any(f.kind == "never_learned" for f in analysis.findings)


def test_a_falling_loss_with_a_rising_token_accuracy_is_healthy(tmp_path):
    xent = [6.0 - 0.25 * i for i in range(11)]
    _write_log(tmp_path, xent, [30.0 + 2.0 * i for i in range(11)])
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "healthy"
    assert not any(f.kind == "never_learned" for f in analysis.findings)
