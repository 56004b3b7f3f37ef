"""A hand-written DeepSpeed loop's console: a loss line a batch that names only its epoch
(`Epoch 0, Loss: 1.0078125, Positive Score: ...`), DeepSpeed's own progress line every `steps_per_print`
(`[Rank 0] step=10, skipped=10, lr=[...]`, deepspeed/runtime/engine.py `_report_progress`), and the per-batch
noise of such a log, which no smoothing over 51 points averages away.

Shapes as the real RWKV reward-model loop of tests/realworld/Ourboros-Alignment-Team_RWKV-RM-Copilot* prints them.
"""
from __future__ import annotations

import numpy as np
import pytest
import pandas as pd

import forensics
from forensics.analyzers.divergence import detect_divergence
from forensics.config import Thresholds
from forensics.ingest import stdout

_DS = ("[2025-04-09 14:44:09,450] [INFO] [logging.py:96:log_dist] [Rank 0] step={step}, skipped={skipped}, "
       "lr=[1e-05, 1e-05], mom=[(0.9, 0.99), (0.9, 0.99)]")


def _console(losses, per_epoch: int, skipped_every: bool = False, every: int = 10, copies: int = 1) -> str:
    """The loop's lines, `per_epoch` batches an epoch, and DeepSpeed's progress line after each `every` updates."""
    lines = []
    for n, loss in enumerate(losses, 1):
        line = f"Epoch {(n - 1) // per_epoch}, Loss: {loss}, Positive Score: 0.37, Negative Score: 0.36"
        lines += [line] * copies
        if n % every == 0:
            lines.append(_DS.format(step=n, skipped=n if skipped_every else 0))
    return "\n".join(lines) + "\n"


def _series(frame: pd.DataFrame, metric: str) -> dict:
    rows = frame[frame["metric"] == metric]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist()))


def test_a_loss_line_printed_each_batch_with_only_its_epoch_is_one_step_a_line(tmp_path):
    """Sixteen lines an epoch are sixteen batches, numbered 1, 2, ... in file order, their epoch the epochs done;
    a bf16 loss repeated within an epoch (1.0 twice) is two batches, not one line printed by two ranks."""
    losses = [1.0, 1.0, 0.984375, 0.96875] * 12  # 48 batches, 3 epochs of 16
    path = tmp_path / "output.log"
    path.write_text(_console(losses, per_epoch=16))
    loss = _series(stdout.read(path).frame, "loss")
    assert sorted(loss) == list(range(1, 49))
    assert [loss[s] for s in (1, 2, 3, 48)] == [1.0, 1.0, 0.984375, 0.96875]
    epoch = _series(stdout.read(path).frame, "epoch")
    assert epoch[16] == 1.0 and epoch[8] == 0.5 and epoch[48] == 3.0


def test_epoch_lines_every_rank_printed_are_still_read_once(tmp_path):
    """Each line twice in a row (two ranks) and every line so: one of each pair kept."""
    path = tmp_path / "output.log"
    path.write_text(_console([2.0 - k / 100 for k in range(40)], per_epoch=10, copies=2))
    assert sorted(_series(stdout.read(path).frame, "loss")) == list(range(1, 41))


def test_once_an_epoch_lines_stay_at_their_epoch(tmp_path):
    """A loop printing one line an epoch keeps step = epochs done (the rule above needs two or more an epoch)."""
    path = tmp_path / "output.log"
    path.write_text("".join(f"Epoch {e}, Loss: {3.0 - e / 10}\n" for e in range(10)))
    assert sorted(_series(stdout.read(path).frame, "loss")) == list(range(1, 11))


def test_every_update_skipped_by_deepspeed_is_broken_from_its_first_progress_line(tmp_path):
    """`step=10, skipped=10` ... `step=300, skipped=300`: the scaler overflowed on every update, the weights never
    moved; a fresh scaler skips a few dozen at most while it halves to its level."""
    rng = np.random.default_rng(0)
    losses = np.round(0.98 + rng.normal(0, 0.03, 300), 4)
    (tmp_path / "output.log").write_text(_console(losses, per_epoch=16, skipped_every=True))
    result = forensics.analyze(tmp_path)
    assert result.status == "broken"
    first = result.first_incident
    assert (first.kind, first.step, first.severity) == ("skipped_steps", 10, "error")
    assert first.evidence["count"] == 300 and "every optimizer update" in first.message


def test_a_scaler_that_skipped_its_first_updates_then_applied_the_rest_is_a_warning(tmp_path):
    """skipped=10 at step 10 and no more after: the fresh fp16 scaler calibrating, a warning, not a broken run."""
    losses = [round(2.5 * 0.99 ** n, 4) for n in range(200)]
    lines = _console(losses, per_epoch=20).replace("step=10, skipped=0", "step=10, skipped=10")
    lines = "\n".join(line.replace("skipped=0", "skipped=10") if "step=" in line and "step=10," not in line else line
                      for line in lines.splitlines()) + "\n"
    (tmp_path / "output.log").write_text(lines)
    result = forensics.analyze(tmp_path)
    skipped = [f for f in result.findings if f.kind == "skipped_steps"]
    assert len(skipped) == 1 and skipped[0].severity == "warning" and skipped[0].evidence["count"] == 10
    assert result.status == "warning"


def test_deepspeed_counts_beside_its_overflow_lines_give_one_finding_not_two(tmp_path):
    """Where the console also prints DeepSpeed's OVERFLOW lines, overflow.py tells the skips; the running count
    adds no second finding for the same updates."""
    losses = [round(2.5 * 0.99 ** n, 4) for n in range(100)]
    text = _console(losses, per_epoch=20).replace(
        "step=10, skipped=0",
        "step=10, skipped=1").replace("Epoch 0, Loss: 2.475,", "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                                      "Attempted loss scale: 65536, reducing to 32768\nEpoch 0, Loss: 2.475,")
    (tmp_path / "output.log").write_text(text)
    result = forensics.analyze(tmp_path)
    assert len([f for f in result.findings if f.kind == "skipped_steps"]) == 1


def test_a_noisy_per_batch_loss_whose_level_holds_does_not_diverge():
    """3,600 batches, the loss's median 0.34 from batch 600 to the end, each batch anywhere in 0 to 1.3 (a pair
    loss `1 + neg - pos`, exactly 0 at one batch in twenty, as the real loop's): the lowest of the 51-point medians
    is a dip of the noise, not a level the loss held and left."""
    rng = np.random.default_rng(3)
    n = 3600
    level = np.where(np.arange(n) < 600, 0.8 - 0.46 * np.arange(n) / 600, 0.34)
    values = np.clip(level + rng.normal(0, 0.25, n), 0, 1.3)
    values[rng.random(n) < 0.05] = 0.0  # a pair separated perfectly
    loss = pd.Series(values, index=np.arange(1, n + 1))
    assert detect_divergence({"loss": loss}, Thresholds()) == []


def test_the_real_rwkv_loops_per_batch_losses_do_not_diverge():
    """The 3,728 losses of the real RWKV reward-model console, one a batch (median 0.34 from batch 600 on, 160 of them
    exactly 0): the lowest 51-point median (0.17, at batch 2,389) sits in a stretch whose level is 0.33."""
    from pathlib import Path

    log = next((Path(__file__).parent / "realworld" / "Ourboros-Alignment-Team_RWKV-RM-Copilot").rglob("output.log"))
    loss = _series(stdout.read(log).frame, "loss")
    assert len(loss) == 3728
    assert detect_divergence({"loss": pd.Series(loss).sort_index()}, Thresholds()) == []


def test_a_long_log_that_really_rises_off_its_level_still_diverges():
    """The same log, but from batch 3000 the loss doubles and stays: a divergence, dated near 3000."""
    rng = np.random.default_rng(3)
    n = 3600
    level = np.where(np.arange(n) < 3000, 0.34, 0.9)
    values = np.clip(level + rng.normal(0, 0.1, n), 0, None)
    (found,) = detect_divergence({"loss": pd.Series(values, index=np.arange(1, n + 1))}, Thresholds())
    assert found.kind == "divergence" and abs(found.step - 3000) <= 30


def test_rank_copies_of_epoch_lines_are_dropped_though_the_log_was_cut_before_the_last_copy(tmp_path):
    """Review of this session: two ranks print each once-an-epoch line; the log ends after the first rank's last."""
    lines = "".join(f"Epoch {e}, Loss: {3.0 - e / 10}\n" * 2 for e in range(10)) + "Epoch 10, Loss: 1.9\n"
    path = tmp_path / "output.log"
    path.write_text(lines)
    assert sorted(_series(stdout.read(path).frame, "loss")) == list(range(1, 12))


def test_a_loop_started_again_from_epoch_0_is_a_new_attempt_not_more_batches(tmp_path):
    """Review of this session: `Epoch 0 ... Epoch 2` a batch a line, then the script run again from `Epoch 0`: the
    second run's batches count from 1 again, and the timeline keeps the later attempt."""
    first = [3.3 - k / 40 for k in range(60)]
    again = [3.3 - k / 50 for k in range(90)]
    path = tmp_path / "output.log"
    path.write_text(_console(first, per_epoch=20) + _console(again, per_epoch=20))
    result = forensics.analyze(path)
    loss = result.timeline.series("loss")
    assert list(loss.index) == list(range(1, 91)) and loss.iloc[-1] == pytest.approx(again[-1])


def test_three_zeros_in_a_row_among_a_pair_losss_scattered_zeros_are_no_collapse():
    """The real RWKV loop's loss `1 + neg - pos` is exactly 0 at 160 single batches; three in a row at 3,216-3,218
    are chance, not a NaN the filter hid nor a collapse (the loss is back at 0.34 after)."""
    from pathlib import Path

    from forensics.analyzers.collapse import detect_loss_collapse

    log = next((Path(__file__).parent / "realworld" / "Ourboros-Alignment-Team_RWKV-RM-Copilot").rglob("output.log"))
    loss = pd.Series(_series(stdout.read(log).frame, "loss")).sort_index()
    assert [f.kind for f in detect_loss_collapse({"loss": loss}, Thresholds())] == []


def test_three_zeros_in_a_row_in_a_loss_that_is_never_zero_elsewhere_are_still_flagged():
    from forensics.analyzers.collapse import detect_loss_collapse

    values = np.full(300, 1.2)
    values[150:153] = 0.0
    found = detect_loss_collapse({"loss": pd.Series(values, index=np.arange(1, 301))}, Thresholds())
    assert [f.step for f in found] == [151]


def test_a_noisy_per_step_qlora_loss_whose_25_point_median_dips_by_chance_does_not_diverge():
    """AbrahamKong's Llama-2 QLoRA assignment (batch AI8): 250 per-step losses around 1.24 (0.7 to 2.4 a step), the
    last dozen 1.7 to 2.3; the lowest 25-point median, 1.07, is a dip of the noise, and the end is 1.4x the level the
    loss held there, not 1.5x."""
    from pathlib import Path

    run = Path(__file__).parent / "realworld" / "AbrahamKong_CMPE297-LLM_Finetuning_Assignment"
    loss = forensics.analyze(run).timeline.series("loss")
    assert len(loss) == 250
    assert detect_divergence({"loss": loss}, Thresholds()) == []
