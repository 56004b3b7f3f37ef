"""Reading gaps found on real runs (batches AQ7-AQ9): each test builds a small log as the real program writes it and
checks that it is read as the run it is."""
from __future__ import annotations

import forensics


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
