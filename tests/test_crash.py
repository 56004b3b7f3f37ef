"""A run a crash stopped (analyzers.crash): the GPU out of memory, a CUDA fault or NCCL after the log's last step."""
from __future__ import annotations

import forensics

OOM = ("Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    loss.backward()\n"
       "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.71 GiB. GPU 0 has a total capacity of "
       "23.68 GiB of which 4.48 GiB is free.\n")


def _dicts(first: int, last: int) -> str:
    return "".join(f"{{'loss': {2.0 - s / 1000:.4f}, 'grad_norm': 1.1, 'learning_rate': 1e-05, 'epoch': {s / 1000:.3f}}}\n"
                   for s in range(first, last + 1, 10))


def test_a_console_that_ends_in_an_out_of_memory_error_says_the_run_stopped_there(tmp_path):
    """Ourboros-Alignment-Team's RWKV reward model learned for 3,720 steps and died of CUDA out of memory."""
    (tmp_path / "output.log").write_text(_dicts(10, 300) + OOM)
    a = forensics.analyze(tmp_path)
    (f,) = [f for f in a.findings if f.kind == "run_crashed"]
    last = int(a.timeline.frame["step"].max())  # (dict lines without a step: numbered by their place)
    assert (f.severity, f.step, f.evidence["out_of_memory"]) == ("warning", last, True)
    assert a.status == "warning" and "gradient checkpointing" in f.message


def test_an_earlier_attempts_crash_an_interrupt_or_a_loggers_error_is_no_crash_of_the_run(tmp_path):
    for text in (_dicts(10, 150) + OOM + _dicts(160, 300),  # a crash a later attempt went on from
                 _dicts(10, 300) + "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyboardInterrupt\n",
                 _dicts(10, 300) + "Traceback (most recent call last):\nswanlab.error.ApiError: upload failed\n"):
        (tmp_path / "output.log").write_text(text)
        assert not [f for f in forensics.analyze(tmp_path).findings if f.kind == "run_crashed"]


def test_tensorboards_nan_or_inf_warning_beside_finite_logged_values_is_a_warning(tmp_path):
    """Kosmasu's Gemma QLoRA notebook (batch AI3): tensorboardX's `NaN or Inf found in input tensor.` once in the
    training cell, every loss of the table finite: a metric the console does not show went non-finite."""
    (tmp_path / "output.log").write_text(_dicts(10, 150) + "WARNING:root:NaN or Inf found in input tensor.\n"
                                         + _dicts(160, 300))
    a = forensics.analyze(tmp_path)
    (f,) = [f for f in a.findings if f.kind == "nonfinite_unlogged"]
    assert (f.severity, f.evidence["warnings"]) == ("warning", 1) and a.status == "warning"


def test_the_warning_beside_a_logged_nan_or_quoted_in_prose_adds_nothing(tmp_path):
    nan_logged = _dicts(10, 150) + "{'loss': 1.8, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.16}\n" \
        + "NaN or Inf found in input tensor.\n" + _dicts(170, 300)
    quoted = _dicts(10, 300) + "# we once saw 'NaN or Inf found in input tensor.' when the LR was too high\n"
    for text in (nan_logged, quoted):
        (tmp_path / "output.log").write_text(text)
        assert not [f for f in forensics.analyze(tmp_path).findings if f.kind == "nonfinite_unlogged"]


def test_the_warning_stands_where_the_runs_records_are_read_from_its_trainer_state():
    """A notebook whose table rows give way to the same run's trainer_state.json beside it (one run read once: the
    notebook's rows are dropped as copies, its facts kept): the console's warning still says a value went non-finite."""
    import pandas as pd

    from forensics.analyzers.crash import detect_unlogged_nonfinite
    from forensics.timeline import LogRecords, build_timeline

    state = pd.DataFrame({"step": [10, 20, 30], "metric": ["loss"] * 3, "value": [2.0, 1.8, 1.7],
                          "wall_time": [float("nan")] * 3})
    empty = state.iloc[:0]
    timeline = build_timeline([LogRecords("outputs/checkpoint-30/trainer_state.json", "trainer_state", state),
                               LogRecords("train.ipynb", "notebook", empty, meta={"console_nonfinite_written": 1})])
    (f,) = detect_unlogged_nonfinite(timeline)
    assert (f.kind, f.step) == ("nonfinite_unlogged", 30)


def test_sampling_from_non_finite_probabilities_after_the_last_step_is_a_crash(tmp_path):
    """karanravindra_omni's GRPO loop: torch.multinomial in generate could not sample after two updates in bf16."""
    (tmp_path / "output.log").write_text(_dicts(10, 100) + "Traceback (most recent call last):\n  File \"x.py\", "
                                         "line 9, in <module>\nRuntimeError: probability tensor contains either `inf`, "
                                         "`nan` or element < 0\n")
    (f,) = [f for f in forensics.analyze(tmp_path).findings if f.kind == "run_crashed"]
    assert "probability tensor" in f.message and not f.evidence["out_of_memory"]
