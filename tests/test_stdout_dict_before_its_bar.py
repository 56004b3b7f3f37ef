"""Tests of the console reader's dating: a dict printed before its bar moves.

From the reading gaps found on real runs (batches AQ7-AQ9)."""
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
