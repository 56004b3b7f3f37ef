"""Tests of the tracker readers (ingest/tensorboard.py, ingest/wandb.py): which metric is the loss.

Tracker files (TensorBoard, W&B) whose metric names the shared map did not read: each test builds the file with the
library that writes it (torch's SummaryWriter; wandb's own protobuf classes in W&B's framing) and FAILS on the code
before the change it targets (4385ad5)."""
from __future__ import annotations

import pytest

from forensics.ingest import tensorboard, wandb
from tests.support.wandb_log import framed, record


def _series(frame, metric):
    rows = frame[frame["metric"] == metric]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist()))


def _event_file(folder, scalars):
    """One event file written by torch's SummaryWriter: `scalars` is [(tag, value, step), ...] in writing order."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(str(folder))
    for tag, value, step in scalars:
        writer.add_scalar(tag, value, step)
    writer.close()
    (path,) = folder.glob("events.out.tfevents.*")
    return path


def test_a_run_names_loss_is_the_loss_where_no_tag_is_named_loss(tmp_path):
    """A callback's own SummaryWriter that prefixes each scalar with its run's name (`hard/loss`, `hard/accuracy`,
    `hard/perplexity`), two runs in one file: the first run's `<name>/loss` is the loss, the other keeps its tag.
    Before: neither was read as the loss, so the file held no loss at all."""
    scalars = []
    for step in (100, 200, 300):
        scalars += [("easy/accuracy", 0.1, step), ("easy/perplexity", 2.8, step), ("easy/loss", 1.0 - step / 1000, step)]
    for step in (100, 200, 300, 400):
        scalars += [("hard/accuracy", 0.2, step), ("hard/loss", 2.0 - step / 1000, step)]
    frame = tensorboard.read(_event_file(tmp_path / "runs", scalars)).frame
    assert _series(frame, "loss") == pytest.approx({100: 0.9, 200: 0.8, 300: 0.7})
    assert _series(frame, "hard/loss") == pytest.approx({100: 1.9, 200: 1.8, 300: 1.7, 400: 1.6})
    assert _series(frame, "easy/accuracy") == pytest.approx({100: 0.1, 200: 0.1, 300: 0.1})


def test_a_part_of_the_models_loss_under_its_group_is_not_the_loss(tmp_path):
    """An RL critic's `critic/loss` (or a MoE router's `aux/loss`) is the loss of a part trained beside the model:
    not read as the training loss where nothing else is. And a plain `loss` beside a group's loss stays the loss."""
    critic = _event_file(tmp_path / "critic", [("critic/loss", 0.5, s) for s in (1, 2, 3)])
    assert set(tensorboard.read(critic).frame["metric"]) == {"critic/loss"}
    plain = _event_file(tmp_path / "plain", [(t, 1.0, s) for s in (1, 2) for t in ("loss", "hard/loss")])
    assert set(tensorboard.read(plain).frame["metric"]) == {"loss", "hard/loss"}


def test_every_held_out_metric_of_a_wandb_log_is_an_eval_metric(tmp_path):
    """W&B's OpenAI integration (`openai wandb sync`) logs `training_loss`, `training_token_accuracy` every step and
    `validation_loss`, `validation_token_accuracy` at each validation; GPT-NeoX and OpenNMT-py log `validation/<name>`
    and `valid/<name>`. Each held-out metric is `eval_<name>`, as `validation_loss` already was `eval_loss`. Before:
    `validation_token_accuracy`, `validation/lm_loss_acc` and `valid/acc` kept their names, outside the eval series."""
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")

    def row(step, **values):
        items = [pb.HistoryItem(key=key.replace("__", "/"), value_json=str(v)) for key, v in values.items()]
        return record(history=pb.HistoryRecord(item=items + [pb.HistoryItem(key="_step", value_json=str(step))]))

    rows = [row(s, training_loss=2.0 - s / 10, training_token_accuracy=0.5) for s in range(1, 9)]
    rows += [row(8, validation_loss=1.9, validation_token_accuracy=0.48, validation__lm_loss_acc=0.4, valid__acc=0.47)]
    path = tmp_path / "run-x" / "run-x.wandb"
    path.parent.mkdir()
    path.write_bytes(framed(rows))
    frame = wandb.read(path).frame
    assert len(_series(frame, "loss")) == 8 and _series(frame, "training_token_accuracy")[8] == 0.5
    assert (_series(frame, "eval_loss"), _series(frame, "eval_token_accuracy")) == ({8: 1.9}, {8: 0.48})
    assert (_series(frame, "eval_lm_loss_acc"), _series(frame, "eval_acc")) == ({8: 0.4}, {8: 0.47})


def test_a_run_names_loss_in_a_wandb_log_is_the_loss(tmp_path):
    """The same rule for every tracker: a W&B run whose only loss is `<name>/loss` has that loss."""
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")
    rows = [record(history=pb.HistoryRecord(item=[pb.HistoryItem(key="hard/loss", value_json=str(2.0 - s / 10)),
                                                  pb.HistoryItem(key="hard/accuracy", value_json="0.2"),
                                                  pb.HistoryItem(key="_step", value_json=str(s))])) for s in range(3)]
    path = tmp_path / "run-y" / "run-y.wandb"
    path.parent.mkdir()
    path.write_bytes(framed(rows))
    assert _series(wandb.read(path).frame, "loss") == pytest.approx({0: 2.0, 1: 1.9, 2: 1.8})


@pytest.mark.parametrize("last", [0.0, 0.88])
def test_a_loss_at_exactly_0_from_its_first_point_with_no_grad_norm_is_an_ambiguity_not_a_verdict(tmp_path, last):
    """A callback that writes `logs.get("train_loss", 0.0)` every 100 steps logs 0.0 until the Trainer's closing mean
    arrives (0.88 at the last point), and no grad_norm. Every label masked, a NaN hidden by HF's filter and such a
    default all log 0.0 from the start: VERDICTS.md's ambiguity, a warning that says what would tell, whether or not
    the zeros last to the end. Before: `no_learning_signal` ("nothing to learn from (labels all masked?)"), broken
    where the zeros reached the end."""
    import forensics

    steps = range(100, 2100, 100)
    losses = [0.0] * (len(steps) - 1) + [last]
    scalars = [s for step, loss in zip(steps, losses)
               for s in (("run/accuracy", 0.1 + step / 10000, step), ("run/perplexity", 3.0 - step / 2000, step),
                         ("run/loss", loss, step))]
    _event_file(tmp_path / "runs", scalars)
    result = forensics.analyze(tmp_path, check_checkpoints=False)
    assert result.status == "warning"
    assert (result.first_incident.kind, result.first_incident.step) == ("zero_loss_unexplained", 100)
    assert "grad_norm was not logged" in result.first_incident.message
