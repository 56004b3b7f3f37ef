"""Short logs (three to six points) whose loss plainly fell: the fall must not be read as noise measured from the
same few steps, while a short log that wobbles or stays flat still gets its `no_learning_evidence` warning."""
import pandas as pd

from forensics.config import Thresholds


# ---- a short log whose loss still fell several-fold over late passes, with no eval: memorization ----------------------

from forensics.analyzers.collapse import detect_loss_collapse  # noqa: E402


def _many_epochs(values: list[float], epochs: list[float], evals: list[float] | None = None) -> dict:
    """A loss logged every 100 steps of a 16-step epoch (a hundred-odd examples), its epoch beside it."""
    steps = [100 * (k + 1) for k in range(len(values))]
    run = {"loss": pd.Series(values, index=steps, dtype="float64"),
           "epoch": pd.Series(epochs, index=steps, dtype="float64")}
    if evals is not None:
        run["eval_loss"] = pd.Series(evals, index=steps, dtype="float64")
    return run


def test_a_short_log_falling_several_fold_over_late_passes_to_a_low_loss_is_memorization():
    """Three points at epochs 6, 12 and 18 of a 20-epoch run on a small set: 0.91, 0.27, 0.12 (7.6x over passes that
    only show the model examples it has seen six times and more), no eval loss."""
    found = detect_loss_collapse(_many_epochs([0.91, 0.27, 0.12], [6.0, 12.0, 18.0]), Thresholds())
    assert [(f.kind, f.step) for f in found] == [("memorization", 300)]


def test_a_short_log_that_learned_its_task_over_many_passes_is_not_memorization():
    """The same passes, but the loss ends at 1.05 (a level held-out text reaches), or sits near 0.15 from epoch 6 on
    (a templated task learned early, no fall over the late passes), or an eval loss is logged beside it (overfitting
    judges there)."""
    for run in (_many_epochs([2.10, 1.40, 1.05], [6.0, 12.0, 18.0]),
                _many_epochs([0.16, 0.15, 0.15], [6.0, 12.0, 18.0]),
                _many_epochs([0.91, 0.27, 0.12], [6.0, 12.0, 18.0], evals=[1.2, 1.1, 1.1])):
        assert [f.kind for f in detect_loss_collapse(run, Thresholds())] == []

