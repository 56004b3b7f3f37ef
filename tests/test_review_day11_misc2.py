"""Review of day 11, second batch: a notebook session's count-1 cell placed below the cells it then ran; a printed
TrainingArguments' `logging_steps` under `logging_strategy` epoch or 'no' (it states nothing); a `logging_steps`
no run can have (inf); a resumed W&B run's summary step, which is no logging interval."""
from __future__ import annotations

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
