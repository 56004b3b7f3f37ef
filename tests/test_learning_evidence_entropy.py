"""A loss whose first window stands above the later level by less than the one-point test's 3 noise units is learning
evidence where TRL's logged prediction entropy, beside it, passes that test on its own (secondary_evidence's
`_entropy_fell_in_the_first_window`); an entropy within its noise, or a loss that did not fall by the share, is not."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import forensics

CORPUS = Path(__file__).parent / "realworld"


def _trl_sft_log(folder, first_loss=0.72, first_entropy=0.76, first_accuracy=0.817, n=40, seed=24):
    """An HF / TRL SFT trainer_state.json of `n` 10-step windows from step 10: each metric's first window at the value
    given, then a plateau (loss 0.578 +- 0.055, entropy 0.57 +- 0.045, token accuracy 0.84 +- 0.013, the later levels
    and noises of F-Bafti_llama-qlora), the entropy and accuracy going with the loss window for window (r about 0.88,
    as there)."""
    rng = np.random.default_rng(seed)
    log = []
    for i in range(n):
        z, own = (float(v) for v in rng.standard_normal(2))
        loss, entropy, accuracy = (first_loss, first_entropy, first_accuracy) if i == 0 else (
            0.578 + 0.055 * z, 0.57 + 0.045 * (0.88 * z + 0.47 * own), 0.84 - 0.013 * z)
        log.append({"step": 10 * (i + 1), "epoch": round((i + 1) / 100, 3), "loss": round(loss, 4),
                    "grad_norm": 0.45, "learning_rate": 2e-4, "entropy": round(entropy, 4),
                    "mean_token_accuracy": round(accuracy, 4)})
    state = {"log_history": log, "global_step": 10 * n, "max_steps": 10 * n}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=1))
    return folder


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _no_learning(analysis) -> bool:
    return any(f.kind == "no_learning_evidence" for f in analysis.findings)


def _first_window_units(folder, name: str) -> float:
    """How many of its noise units `name`'s first window stands above the median of the later windows."""
    from forensics.analyzers.metrics import point_noise

    values = np.array([r[name] for r in json.loads((folder / "trainer_state.json").read_text())["log_history"]])
    return float((values[0] - np.median(values[1:])) / point_noise(values))


def test_a_first_window_the_entropy_shows_clearly_is_learning_the_loss_alone_does_not_show(tmp_path):
    folder = _trl_sft_log(tmp_path)
    assert 2.4 < _first_window_units(folder, "loss") < 3 < _first_window_units(folder, "entropy")
    a = _analyze(folder)
    assert not _no_learning(a), [f.message for f in a.findings]
    assert a.learning is not None and "entropy" in a.learning.said, a.learning


def test_an_entropy_within_its_noise_leaves_the_loss_first_window_as_no_evidence(tmp_path):
    a = _analyze(_trl_sft_log(tmp_path, first_entropy=0.60))
    assert _no_learning(a), [f.message for f in a.findings]


def test_an_entropy_that_dropped_while_the_loss_held_is_no_evidence(tmp_path):
    a = _analyze(_trl_sft_log(tmp_path, first_loss=0.62))  # (the loss's first window 7% over the plateau)
    assert _no_learning(a), [f.message for f in a.findings]


def test_a_token_accuracy_that_fell_in_the_first_window_vetoes_the_entropy(tmp_path):
    a = _analyze(_trl_sft_log(tmp_path, first_accuracy=0.87))
    assert _no_learning(a), [f.message for f in a.findings]


def test_f_bafti_trl_qlora_learned_within_its_first_window():
    a = _analyze(CORPUS / "F-Bafti_llama-qlora")
    assert a.status == "healthy", [f.message for f in a.findings]
    assert a.learning is not None and "entropy" in a.learning.said, a.learning


def test_vivsn289_trl_sft_whose_first_window_is_within_noise_keeps_its_warning():
    # loss 0.953 against 0.938 (2.0 units, 1.6%), entropy 0.957 against 0.941 (2.5 units), accuracy not up
    a = _analyze(CORPUS / "vivsn289_Benchmarking-forgetting")
    assert _no_learning(a), [f.message for f in a.findings]
