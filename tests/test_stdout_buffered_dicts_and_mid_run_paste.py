"""Tests of the console reader's dating (ingest/stdout.py): buffered dicts, a paste from mid-run.

From the day-8 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AO2 /
AO3).

* The Trainer dicts of a resumed run, printed after its progress bar (stdout buffered, the bar jumping 0 -> n/T), are
  dated by their own epochs x the steps an epoch makes (the bar's total over the closing summary's epoch), not by
  their position from step 0 (vivsn289/Benchmarking-vanilla-llm-to-validate-forgetting: 1650-3250, not 99-3267)."""
from __future__ import annotations

from pathlib import Path
from forensics.ingest import stdout


def _metric(frame, name: str) -> list[tuple[int, float]]:
    rows = frame[frame["metric"] == name]
    return list(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


# ---- a resumed run's buffered dict lines ------------------------------------------------------------------------

def _buffered_console(path: Path, first: int, total: int, every: int, epochs: int) -> Path:
    """An HF Trainer console whose stdout was buffered: the whole tqdm bar (stderr) first, jumping from 0 to `first`
    where the run resumed, then every dict line, then the summary."""
    per_epoch = total / epochs
    bar = [f"  0%|          | 0/{total} [00:00<?, ?it/s]"]
    bar += [f" {100 * n // total}%|#####     | {n}/{total} [00:{n % 60:02d}<00:05, 3.57s/it]"
            for n in range(first or 1, total + 1, 7)] + [f"100%|##########| {total}/{total} [2:04:36<00:00, 3.57s/it]"]
    lines = ["\r".join(bar)]
    for k, step in enumerate(range(((first // every) + 1) * every, total + 1, every)):
        lines.append("{" + f"'loss': '{0.95 - 0.0002 * (k % 5):.4g}', 'grad_norm': '0.31', 'learning_rate': "
                     f"'{1e-4 * (1 - step / total):.4g}', 'epoch': '{step / per_epoch:.4g}'" + "}")
    lines.append("{'train_runtime': '7476', 'train_samples_per_second': '13.91', 'train_steps_per_second': '0.435', "
                 f"'train_loss': '0.4697', 'epoch': '{epochs}'" + "}")
    (path / "finetune.log").write_text("\n".join(lines) + "\n")
    return path / "finetune.log"


def test_a_resumed_runs_buffered_dicts_are_dated_by_their_epochs():
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        frame = stdout.read(_buffered_console(Path(tmp), 1627, 3252, 50, 2)).frame
    steps = [s for s, _ in _metric(frame, "loss")]
    assert len(steps) == 33 and abs(steps[0] - 1650) <= 2 and abs(steps[-1] - 3250) <= 2


def test_a_buffered_run_from_step_0_keeps_its_position_steps(tmp_path):
    frame = stdout.read(_buffered_console(tmp_path, 0, 3252, 50, 2)).frame
    steps = [s for s, _ in _metric(frame, "loss")]
    assert steps[:3] == [50, 100, 150] and len(steps) == 65


# ---- a dict line pasted without the bar above it -----------------------------------------------------------------

def _pasted_from_mid_run(path: Path, first_bar: int | None) -> Path:
    """A paste that begins with a dict line whose bar was cut, then `bar, dict` pairs at steps 2565-2569 of 5197 (the
    HF Trainer's console logging every step); with `first_bar`, the first dict keeps its bar too."""
    lines = [] if first_bar is None else [f" 49%|████▉     | {first_bar}/5197 [4:10:10<4:05:00,  5.72s/it]\n"]
    lines.append("{'loss': 0.7358, 'learning_rate': 1.2e-05, 'epoch': 0.49}\n")
    for step, loss in zip(range(2565, 2570), (0.7453, 4.2651, 0.7702, 0.7311, 0.7517)):
        lines.append(f" 49%|████▉     | {step}/5197 [4:10:{step - 2500}<4:05:00,  5.72s/it]\n")
        lines.append(f"{{'loss': {loss}, 'learning_rate': 1.2e-05, 'epoch': 0.49}}\n")
    (path / "train.log").write_text("".join(lines), encoding="utf-8")
    return path / "train.log"


def test_a_first_dict_without_its_bar_is_dated_back_from_the_bar_dated_ones(tmp_path):
    """haotian-liu/LLaVA issue 918: the paste's first dict has no bar above it (the tool put it at 428, 2569 / 6)."""
    steps = [s for s, _ in _metric(stdout.read(_pasted_from_mid_run(tmp_path, None)).frame, "loss")]
    assert steps == [2564, 2565, 2566, 2567, 2568, 2569]


def test_dicts_that_each_follow_their_bar_keep_the_bars_steps(tmp_path):
    steps = [s for s, _ in _metric(stdout.read(_pasted_from_mid_run(tmp_path, 2564)).frame, "loss")]
    assert steps == [2564, 2565, 2566, 2567, 2568, 2569]
