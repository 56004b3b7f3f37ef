"""Tests of the fp16 scaler rules on DeepSpeed consoles: a bf16 count at zero, a fresh scaler.

From the review of the day's changes 8776af3..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire; the passing ones record shapes that held."""
from __future__ import annotations

from support.notebook_and_findings import _analyze, _kinds


# ---- shapes that held ------------------------------------------------------------------------------------------------

_DS = ("[2025-04-09 14:44:09,450] [INFO] [logging.py:96:log_dist] [Rank 0] step={step}, skipped={skipped}, "
       "lr=[1e-05, 1e-05], mom=[(0.9, 0.99), (0.9, 0.99)]")


def _ds_console(skips_at_start: int, n: int = 400) -> str:
    lines = []
    for s in range(1, n + 1):
        lines.append(f"{{'loss': {2.5 * 0.995 ** s + 0.5:.4f}, 'learning_rate': 2e-05, 'epoch': {s / n:.3f}}}")
        if s % 10 == 0:
            lines.append(_DS.format(step=s, skipped=min(s, skips_at_start)))
    return "\n".join(lines) + "\n"


def test_a_bf16_deepspeed_run_whose_count_stays_zero_is_healthy(tmp_path):
    (tmp_path / "train.log").write_text(_ds_console(0))
    a = _analyze(tmp_path)
    assert a.status == "healthy", _kinds(a)


def test_a_fresh_fp16_scaler_that_skipped_its_first_60_updates_is_no_error(tmp_path):
    (tmp_path / "train.log").write_text(_ds_console(60))
    a = _analyze(tmp_path)
    assert a.status != "broken", _kinds(a)
