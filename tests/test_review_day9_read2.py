"""Reading gaps found on real runs (batches AQ7-AQ9): each test builds a small log as the real program writes it and
checks that it is read as the run it is."""
from __future__ import annotations

import json

import pytest

import forensics
from forensics.errors import SeveralRuns


def _losses(folder):
    """{step: loss} as the analysis of `folder` reads them."""
    rows = forensics.analyze(folder, check_checkpoints=False).timeline.final()
    return {int(r.step): r.value for r in rows[rows["metric"] == "loss"].itertuples()}


# ---- (1) a Trainer dict printed just before its own bar's redraw ------------------------------------------------------


def _bar(n, total):
    return f"\n\n\n{100 * n // total:3d}%|          | {n}/{total} [00:{n:02d}<01:00, 27.17s/it]\x1b[A\n\n"


def _unsloth_console(path, total, logged, early=()):
    """An Unsloth run's console (its banner, tqdm's training bar with a nested-bar escape after each redraw, the
    Trainer's dict each step, epoch printed to two decimals); for the steps in `early` the dict comes out before the
    bar moves to its step (stderr and stdout out of order). The capture ends after `logged` steps (a job timed out)."""
    out = ["==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1\n",
           f"   \\\\   /|    Num examples = {total} | Num Epochs = 1 | Total steps = {total}\n",
           _bar(0, total)]
    for step in range(1, logged + 1):
        line = (f"{{'loss': {2.0 * 0.97 ** step:.4f}, 'grad_norm': 0.5, 'learning_rate': {5e-6 * (1 - step / total)},"
                f" 'epoch': {round(step / total, 2)}}}\n")
        if step in early:
            out += [_bar(step - 1, total), line, _bar(step, total)]
        else:
            out += [_bar(step - 1, total), _bar(step, total), line]
    path.write_text("".join(out))


def test_a_dict_printed_before_its_bar_moves_is_dated_at_its_own_step(tmp_path):
    """One dict of forty printed before the bar reaches its step (the bar before it still shows the last step): it is
    that step + 1, and the other dicts keep their bar's step; before, the clash threw out every bar and the dicts were
    dated by their two-decimal epochs x the banner's 200 steps (two dicts a step, steps skipped)."""
    _unsloth_console(tmp_path / "train.log", 200, 40, early={10})
    loss = _losses(tmp_path)
    assert sorted(loss) == list(range(1, 41))
    assert abs(loss[10] - 2.0 * 0.97 ** 10) < 1e-3 and abs(loss[11] - 2.0 * 0.97 ** 11) < 1e-3


def test_a_console_whose_dicts_follow_their_bars_is_dated_as_before(tmp_path):
    """The same console with every dict after its bar: each dict at its bar's step."""
    _unsloth_console(tmp_path / "train.log", 200, 40)
    loss = _losses(tmp_path)
    assert sorted(loss) == list(range(1, 41))
    assert abs(loss[10] - 2.0 * 0.97 ** 10) < 1e-3


# ---- (2) build-nanogpt's log of a resumed pre-training run ----------------------------------------------------------


def _nanogpt_log(path, first, steps, hella=True):
    """build-nanogpt's train_gpt2.py log file: `N train X` every step, `N val X` and `N hella X` every 250 (the
    HellaSwag accuracy), from a resumed step whose loss is near 3 nats, not ln(50257)."""
    lines = []
    for step in range(first, first + steps):
        if step % 250 == 0 or step == first + steps - 1:
            lines.append(f"{step} val {3.3 - 0.0001 * (step - first):.4f}")
            if hella:
                lines.append(f"{step} hella {0.30 + 0.00001 * (step - first):.4f}")
        lines.append(f"{step} train {3.1 - 0.00005 * (step - first) + 0.05 * ((step * 7) % 5 - 2) / 2:.6f}")
    path.write_text("\n".join(lines) + "\n")


def test_a_resumed_build_nanogpt_log_with_a_hellaswag_eval_is_pretraining(tmp_path):
    """A build-nanogpt log that starts at a resumed step (loss ~3.1, so no ln(vocab) start) with its `hella` eval
    every 250 steps: the HellaSwag benchmark of the nanoGPT-family pre-training loop says pre-training."""
    (tmp_path / "log").mkdir()
    _nanogpt_log(tmp_path / "log" / "log.txt", 19072, 1500)
    profile = forensics.analyze(tmp_path, check_checkpoints=False).run_profile.to_dict()
    assert profile["objective"] == "pretrain"
    assert profile["method"] == "unknown"  # a continuation: the log does not show random weights


def test_the_same_log_without_a_hellaswag_eval_does_not_say_pretraining(tmp_path):
    """The same train/val lines with no `hella` line: nothing in them names the objective."""
    (tmp_path / "log").mkdir()
    _nanogpt_log(tmp_path / "log" / "log.txt", 19072, 1500, hella=False)
    assert forensics.analyze(tmp_path, check_checkpoints=False).run_profile.to_dict()["objective"] == "unknown"


# ---- (3) a W&B folder of several attempts of one job --------------------------------------------------------------


def _wandb_run(root, stamp, run_id, start, end, last_step, lr=2e-4, output_dir="out", finished=False):
    """A W&B run folder as an online run leaves it beside the HF Trainer (files/config.yaml with W&B's own
    `_wandb.start_time`, files/wandb-summary.json with the last value of each metric and `_timestamp`)."""
    files = root / "wandb" / f"run-{stamp}-{run_id}" / "files"
    files.mkdir(parents=True)
    config = {"learning_rate": lr, "num_train_epochs": 3, "per_device_train_batch_size": 8, "seed": 42,
              "output_dir": output_dir, "run_name": output_dir, "logging_steps": 25}
    text = ("wandb_version: 1\n\n_wandb:\n  desc: null\n  value:\n    python_version: 3.12.3\n    cli_version: 0.16.6\n"
            f"    framework: huggingface\n    start_time: {start}\n")
    text += "".join(f"{key}:\n  desc: null\n  value: {value}\n" for key, value in config.items())
    (files / "config.yaml").write_text(text)
    summary = {"train/loss": 0.5 + 1.0 / (1 + last_step / 100), "train/learning_rate": lr / 2,
               "train/epoch": 3.0 * last_step / 900, "train/global_step": last_step, "_timestamp": end,
               "_runtime": end - start, "_step": last_step // 25}
    if finished:
        summary.update({"train_runtime": end - start, "train_loss": 0.9, "total_flos": 1e17})
    (files / "wandb-summary.json").write_text(json.dumps(summary))


def test_a_wandb_folder_of_attempts_of_one_job_is_judged_on_the_last_one_that_finished(tmp_path):
    """Three W&B runs and nothing else: two attempts that stopped (one renamed its output folder) and, begun after
    both ended, the one that finished at the furthest step: that one is analyzed, the others named in a note
    (before: SeveralRuns, no verdict)."""
    _wandb_run(tmp_path, "20240430_104212", "aaaa1111", 1714441332.0, 1714442433.7, 100)
    _wandb_run(tmp_path, "20240430_111132", "bbbb2222", 1714443092.0, 1714612829.4, 600)
    _wandb_run(tmp_path, "20240502_104635", "cccc3333", 1714614395.0, 1714870029.8, 900, output_dir="out-2",
               finished=True)
    a = forensics.analyze(tmp_path, check_checkpoints=False)
    assert sorted(_losses(tmp_path)) == [900]
    note = next(s.reason for s in a.skipped if "earlier attempts" in s.reason)
    assert "aaaa1111" in note and "bbbb2222" in note and "cccc3333" in note


def test_a_wandb_sweep_is_still_several_runs(tmp_path):
    """The same runs with another learning rate in the last one (a sweep, not a retry): no run is picked."""
    _wandb_run(tmp_path, "20240430_104212", "aaaa1111", 1714441332.0, 1714442433.7, 100)
    _wandb_run(tmp_path, "20240430_111132", "bbbb2222", 1714443092.0, 1714612829.4, 600)
    _wandb_run(tmp_path, "20240502_104635", "cccc3333", 1714614395.0, 1714870029.8, 900, lr=1e-4, finished=True)
    with pytest.raises(SeveralRuns):
        forensics.analyze(tmp_path, check_checkpoints=False)


def test_overlapping_wandb_runs_of_one_config_are_still_several_runs(tmp_path):
    """Runs of one config that ran at the same time (one a rank, or two jobs at once): no run is picked."""
    _wandb_run(tmp_path, "20240430_111132", "bbbb2222", 1714443092.0, 1714612829.4, 600)
    _wandb_run(tmp_path, "20240430_111140", "cccc3333", 1714443100.0, 1714870029.8, 900, finished=True)
    with pytest.raises(SeveralRuns):
        forensics.analyze(tmp_path, check_checkpoints=False)
