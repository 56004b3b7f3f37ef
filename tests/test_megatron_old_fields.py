"""Tests of the pre-training lines reader (ingest/pretrain_lines.py): old Megatron fields.

From the day-8 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AO2 /
AO3).

* Old Megatron-LM's step line, its fields without colons (` iteration N/ M | elapsed time per iteration (ms): T |
  learning rate X | lm loss X | loss scale X |`, THUDM/Chinese-Transformer-XL issue 7), is read field by field; a
  loss scale that fell under DeepSpeed's floor and then rose again is a storm the run came through (warning), not
  a run DeepSpeed stopped."""
from __future__ import annotations

import forensics
from forensics.ingest import stdout
from forensics.ingest.pretrain_lines import parse_line


def _metric(frame, name: str) -> list[tuple[int, float]]:
    rows = frame[frame["metric"] == name]
    return list(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


# ---- old Megatron-LM step lines ----------------------------------------------------------------------------------

_OLD_MEGATRON = [(400, "6.758929E+00", "64.0"), (500, "6.286667E+00", "8.0"), (600, "5.763325E+00", "4.0"),
                 (700, "NAN", "4.0"), (800, "5.193296E+00", "0.1"), (900, "4.792100E+00", "0.1"),
                 (1000, "4.454510E+00", "0.1"), (1100, "4.326191E+00", "0.1"), (1200, "3.978439E+00", "0.2")]


def _old_megatron_line(step: int, loss: str, scale: str) -> str:
    return (f" iteration {step:8d}/    3000 | elapsed time per iteration (ms): 11092.2 | learning rate "
            f"{(6.3 + step / 1000):.3f}E-06 | lm loss {loss} | loss scale {scale} |")


def test_old_megatron_fields_without_a_colon_are_read():
    record = parse_line(_old_megatron_line(500, "6.286667E+00", "8.0"))
    assert record.kind == "megatron" and record.step == 500
    assert dict(record.metrics) == {"iteration_time_ms": 11092.2, "learning_rate": 6.8e-06, "loss": 6.286667,
                                    "loss_scale": 8.0}


def test_an_old_megatron_console_shows_its_loss_its_nan_and_its_loss_scale(tmp_path):
    lines = [_old_megatron_line(*row) for row in _OLD_MEGATRON]
    lines.insert(4, "Warning: NaN or Inf found in input tensor.")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    frame = stdout.read(tmp_path / "train.log").frame
    assert [s for s, _ in _metric(frame, "loss")] == list(range(400, 1300, 100))
    assert [v for _, v in _metric(frame, "loss_scale")][:2] == [64.0, 8.0]
    a = forensics.analyze(tmp_path)
    assert a.run_profile.precision == "fp16"
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "loss_scale_overflow", 500)
    assert any(f.kind == "nonfinite_metric" and f.step == 700 for f in a.findings)


def test_a_forks_line_with_its_own_fields_before_the_iteration_reads_as_before():
    """CPM-2's `epoch 3/ 10 | global iteration N/ M | ...` keeps its epoch: read as a generic line."""
    record = parse_line("epoch   3/ 10 | global iteration     1360/    3402 | learning rate 3e-06 | lm loss 0.699219 | "
                        "loss scale 1024.0 |")
    assert record.kind == "generic" and dict(record.metrics)["epoch"] == 3.0


def test_a_colon_megatron_line_reads_as_before():
    record = parse_line(" iteration      100/    1000 | consumed samples:        12800 | elapsed time per iteration (ms): "
                        "512.3 | learning rate: 1.500E-04 | global batch size:   128 | lm loss: 7.104E+00 | loss scale: "
                        "65536.0 | grad norm: 1.234 | number of skipped iterations:   0 | number of nan iterations:   0 |")
    assert dict(record.metrics)["loss"] == 7.104 and dict(record.metrics)["loss_scale"] == 65536.0
    assert len(record.metrics) == 9
