"""Tests of the TensorBoard reader: eval and test losses.

From the logs the tool did not read, or read wrongly, found on real runs (day 7)."""
from __future__ import annotations

import math

from support.final_series import _analyze, _series


def test_tensorboard_eval_loss_and_test_loss_are_two_series(tmp_path):
    """A TensorBoard log with `eval/loss` and `test/loss` at the same steps (torch.utils.tensorboard): both were read
    as eval_loss, one series holding two curves (one of each pair lost); the first held-out split is the eval loss,
    the test split its own series, test_loss."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(tmp_path / "runs"))
    for step in range(1, 101):
        writer.add_scalar("train/loss", 3.0 * 0.98 ** step, step)
        if step % 10 == 0:
            writer.add_scalar("eval/loss", 3.1 * 0.985 ** step, step)
            writer.add_scalar("test/loss", 3.3 * 0.985 ** step, step)
    writer.close()
    a = _analyze(tmp_path)
    held, test = _series(a, "eval_loss"), _series(a, "test_loss")
    assert sorted(held) == sorted(test) == list(range(10, 101, 10))
    assert math.isclose(held[50], 3.1 * 0.985 ** 50, rel_tol=1e-6) and math.isclose(test[50], 3.3 * 0.985 ** 50,
                                                                                     rel_tol=1e-6)


def test_tensorboard_test_loss_alone_is_still_the_eval_loss(tmp_path):
    """The torch.utils.tensorboard tutorial's `Loss/train` beside `Loss/test` alone: the test split is the only
    held-out one, so it is the eval loss, as before."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(tmp_path / "runs"))
    for step in range(1, 51):
        writer.add_scalar("Loss/train", 2.0 * 0.98 ** step, step)
        if step % 10 == 0:
            writer.add_scalar("Loss/test", 2.1 * 0.985 ** step, step)
    writer.close()
    assert sorted(_series(_analyze(tmp_path), "eval_loss")) == [10, 20, 30, 40, 50]
