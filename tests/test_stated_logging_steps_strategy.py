"""Tests of the logging interval the console reader takes from a run's stated settings
(ingest/stdout.py): logging_strategy, an infinite logging_steps, a resumed W&B run's summary step.

From the day-11 review, second batch."""
from __future__ import annotations

import json

import forensics


_ARGS = ("Training/evaluation parameters TrainingArguments(\noutput_dir=out,\nlearning_rate=2e-05,\n"
         "logging_steps={every},\nlogging_strategy=IntervalStrategy.{strategy},\nlogging_first_step=False,\n"
         "num_train_epochs=6,\nper_device_train_batch_size=8,\nfp16=True,\n)\n")


def _dicts(losses, epochs):
    """The Trainer's printed dict lines (no step in them), one per loss, with their epochs."""
    return "".join(str({"loss": loss, "grad_norm": 1.2, "learning_rate": 2e-05, "epoch": epoch}) + "\n"
                   for loss, epoch in zip(losses, epochs))


def _console(tmp_path, text, name="train.log"):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / name).write_text(text)
    return forensics.analyze(folder)


_PER_EPOCH_NAN = ([2.1, 1.6, 1.3, float("nan"), float("nan"), float("nan")], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])


def test_printed_logging_steps_under_the_epoch_strategy_does_not_number_the_per_epoch_dicts(tmp_path):
    """TrainingArguments prints logging_steps=500 under logging_strategy epoch: the NaN of the 4th epoch is not
    placed at step 2000."""
    analysis = _console(tmp_path, _ARGS.format(every=500, strategy="EPOCH") + _dicts(*_PER_EPOCH_NAN))
    assert analysis.first_incident.kind in ("nonfinite_metric", "nonfinite_loss")
    assert analysis.first_incident.step == 4


def test_a_command_lines_logging_steps_under_the_epoch_strategy_does_not_number_the_dicts(tmp_path):
    command = "python train.py --model_name_or_path gpt2 --logging_strategy epoch --logging_steps 10 --fp16\n"
    analysis = _console(tmp_path, command + _dicts(*_PER_EPOCH_NAN))
    assert analysis.first_incident.step == 4


def test_printed_logging_steps_under_the_steps_strategy_still_numbers_the_dicts(tmp_path):
    losses = [2.1, 1.9, 1.7, 1.5, float("nan"), float("nan")]
    epochs = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    analysis = _console(tmp_path, _ARGS.format(every=50, strategy="STEPS") + _dicts(losses, epochs))
    assert analysis.first_incident.step == 250


def test_an_infinite_logging_steps_on_the_command_line_is_no_interval_and_no_crash(tmp_path):
    command = "python train.py --model_name_or_path gpt2 --logging_steps inf --fp16\n"
    analysis = _console(tmp_path, command + _dicts(*_PER_EPOCH_NAN))
    assert analysis.first_incident.step == 4


def _wandb_console(tmp_path, losses, epochs, global_step):
    """A W&B run folder holding the console copy (files/output.log) and the summary's last logged step."""
    files = tmp_path / "run" / "wandb" / "run-20250101_000000-abcd1234" / "files"
    files.mkdir(parents=True)
    (files / "output.log").write_text(_dicts(losses, epochs))
    (files / "wandb-summary.json").write_text(json.dumps({"train/global_step": global_step,
                                                          "train/epoch": epochs[-1]}))
    (files / "config.yaml").write_text("learning_rate:\n  value: 2e-05\n")
    return forensics.analyze(tmp_path / "run")


def _falling_then_nan(n, nan_from):
    return [round(2.0 - 1.0 * i / n, 4) if i < nan_from else float("nan") for i in range(n)]


def test_a_resumed_runs_summary_step_over_its_dicts_is_no_logging_interval(tmp_path):
    """Resumed after epoch 1 (epochs 1.01 ... 2.0, 100 dicts, global_step 2000): 2000 / 100 would put the dicts
    20 apart from step 20, the NaN of epoch 1.5 at 1000, though the run was at step 1500 there."""
    epochs = [round(1 + (i + 1) / 100, 2) for i in range(100)]
    analysis = _wandb_console(tmp_path, _falling_then_nan(100, 49), epochs, 2000)
    assert analysis.first_incident.step != 1000


def test_a_fresh_runs_summary_step_over_its_dicts_still_numbers_them(tmp_path):
    """From the start (epochs 0.01 ... 1.0, 100 dicts, global_step 1000): 10 steps apart, the NaN of the 50th dict
    at step 500."""
    epochs = [round((i + 1) / 100, 2) for i in range(100)]
    analysis = _wandb_console(tmp_path, _falling_then_nan(100, 49), epochs, 1000)
    assert analysis.first_incident.step == 500
