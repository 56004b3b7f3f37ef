"""Tests of the console reader (ingest/stdout.py): dicts dated by a single mid-run bar.

Day 10 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batch AR1).

* A pasted console that kept a single, mid-run reading of the training bar (`| 19/92 [...]` left at the end of the
  first dict line, the other bar lines dropped; dexmal/dexbotic issue 64): the dicts after the first one it dates go
  on from it by the logging interval, instead of all sitting on that one bar's step (11 of 12 points lost).
"""
from __future__ import annotations

from forensics.ingest import stdout


def _losses(text: str, tmp_path) -> dict[int, float]:
    path = tmp_path / "train.log"
    path.write_text(text)
    frame = stdout.read(path).frame
    rows = frame[frame["metric"] == "loss"]
    return dict(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


def _dict(loss: float, lr: float, epoch: float = 0.0) -> str:
    return f"{{'loss': {loss}, 'grad_norm': 250.5, 'learning_rate': {lr}, 'epoch': {epoch}}}"


_LOSSES = [8.33, 8.5, 7.92, 6.91, 6.59, 7.03, 9.06, 7.81]


def test_dicts_after_a_single_mid_run_bar_go_on_from_it(tmp_path):
    lines = [_dict(_LOSSES[0], 0.0) + " " * 80 + "| 19/92 [00:03<00:11,  6.29it/s]"]
    lines += [_dict(loss, 5e-8 * k) for k, loss in enumerate(_LOSSES[1:], start=1)]
    losses = _losses("\n".join(lines) + "\n", tmp_path)
    assert len(losses) == len(_LOSSES), losses
    steps = sorted(losses)
    assert steps[1] == 19 and steps[1:] == list(range(19, 19 + len(_LOSSES) - 1)), steps


def test_a_finished_bar_before_the_dicts_does_not_date_them(tmp_path):
    """A bar at 100% above the dicts (an evaluation's or a previous stage's) is no reading of where they are."""
    bar = "100%|" + "\u2588" * 40 + "| 7/7 [00:01<00:00,  5.00it/s]"
    text = "\n".join([bar] + [_dict(loss, 1e-4, 0.04 * k) for k, loss in enumerate(_LOSSES, start=1)]) + "\n"
    losses = _losses(text, tmp_path)
    assert len(losses) == len(_LOSSES) and min(losses) < 7, losses


def test_dicts_whose_epochs_tell_them_apart_are_dated_by_their_epochs_not_on_from_a_single_bar(tmp_path):
    """A reviewer's paste: the Trainer's banner (1000 steps, 1 epoch), one bar reading at 500/1000, then twelve dicts
    at epochs 0.51-0.62: each is at its epoch x 1000 steps, not numbered on from the bar by a guessed interval."""
    banner = ["***** Running training *****", "  Num examples = 8000", "  Num Epochs = 1",
              "  Total optimization steps = 1000", " 50%|" + "\u2588" * 5 + "     | 500/1000 [10:00<10:00,  1.20s/it]"]
    dicts = [_dict(1.18 - 0.01 * k, 4.9e-5 - 1e-6 * k, round(0.51 + 0.01 * k, 2)) for k in range(12)]
    losses = _losses("\n".join(banner + dicts) + "\n", tmp_path)
    assert sorted(losses) == list(range(510, 630, 10)), sorted(losses)
