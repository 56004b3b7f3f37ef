"""Tests of the DLLogger lines reader (ingest/pretrain_lines.py).

From the day-9 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AQ1 /
AQ3).

* NVIDIA DLLogger's console lines (`DLL <time> - Training Epoch: 0 Training Iteration: N  average_loss : X  step_loss :
  Y  learning_rate : Z`, `DLL <time> - PARAMETER loss_scale : X`, DeepLearningExamples issue 543) are read: the step
  lines at their iteration, each PARAMETER loss_scale line an overflow the scaler skipped, at the step line."""
from __future__ import annotations

import forensics
from forensics.ingest.pretrain_lines import parse_line


def _metric(frame, name: str) -> list[tuple[int, float]]:
    rows = frame[frame["metric"] == name]
    return list(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


# ---- NVIDIA DLLogger -----------------------------------------------------------------------------------------------

def _dll(second: int, rest: str) -> str:
    return f"DLL 2020-06-04 01:{second // 60:02d}:{second % 60:02d}.355678 - {rest}\n"


def test_dllogger_step_lines_are_read_at_their_iteration():
    line = _dll(0, "Training Epoch: 0 Training Iteration: 2933  average_loss : nan  step_loss : 1.0703125  "
                   "learning_rate : 0.003161792362931437").rstrip("\n")
    record = parse_line(line)
    assert (record.kind, record.step) == ("dllogger", 2933)
    values = dict(record.metrics)
    assert values["loss"] == 1.0703125 and values["learning_rate"] == 0.003161792362931437
    assert values["loss_avg"] != values["loss_avg"]  # the running average, NaN
    assert parse_line("DLL 2021-01-01 10:00:00.1 - (0, 100) loss : 2.5  lr : 0.001 ").step == 100
    assert parse_line("DLL 2021-01-01 10:00:00.1 - () e2e_train_time : 100.0 final_loss : 1.5 ") is None


def test_dllogger_parameter_loss_scale_lines_are_overflows_at_the_step_line(tmp_path):
    scale, lines = 2.0 ** -35, []
    for k in range(12):
        lines.append(_dll(k * 26, f"PARAMETER loss_scale : {scale!r} "))
        scale /= 2
    lines.append(_dll(12 * 26, "Training Epoch: 0 Training Iteration: 2933  average_loss : nan  step_loss : 1.0703125"
                                "  learning_rate : 0.003161792362931437"))
    (tmp_path / "train.log").write_text("".join(lines), encoding="utf-8")
    a = forensics.analyze(tmp_path)
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("loss_scale_overflow", 2933)
    assert a.run_profile.to_dict()["precision"] == "fp16"


def test_dllogger_training_that_goes_well_stays_healthy(tmp_path):
    lines = [_dll(0, "PARAMETER seed : 42 ")]
    for i in range(1, 61):
        lines.append(_dll(i, f"Training Epoch: 0 Training Iteration: {i * 10}  average_loss : {8 * 0.97 ** i + 1.5:.4f}"
                             f"  step_loss : {8 * 0.97 ** i + 1.5:.4f}  learning_rate : 0.006"))
    (tmp_path / "train.log").write_text("".join(lines), encoding="utf-8")
    a = forensics.analyze(tmp_path)
    assert a.status == "healthy", [f.message for f in a.findings]
    assert [step for step, _ in _metric(a.timeline.frame, "loss")][:2] == [10, 20]
    assert a.run_profile.to_dict()["precision"] == "unknown"


def test_a_dllogger_arguments_dump_with_a_loss_scale_is_no_overflow(tmp_path):
    import forensics
    lines = [_dll(0, "PARAMETER seed : 42 "), _dll(0, "PARAMETER loss_scale : 65536.0 ")]
    for i in range(1, 61):
        lines.append(_dll(i, f"Training Epoch: 0 Training Iteration: {i * 10}  average_loss : {8 * 0.97 ** i + 1.5:.4f}"
                             f"  step_loss : {8 * 0.97 ** i + 1.5:.4f}  learning_rate : 0.006"))
    (tmp_path / "train.log").write_text("".join(lines), encoding="utf-8")
    a = forensics.analyze(tmp_path)
    assert a.status == "healthy" and a.run_profile.precision == "unknown"


def test_dllogger_iterations_counted_within_each_epoch_are_numbered_on(tmp_path):
    import forensics
    lines = [_dll(k, f"Epoch: {e} Iteration: {i}  train.loss : {6.9 - 0.01 * k:.4f}  train.lr : 0.256 ")
             for k, (e, i) in enumerate(((e, i) for e in range(3) for i in range(10, 510, 10)))]
    (tmp_path / "train.log").write_text("".join(lines), encoding="utf-8")
    loss = forensics.analyze(tmp_path).timeline.series("loss")
    assert len(loss) == 150 and loss.index.is_monotonic_increasing and loss.index[-1] == 1500
