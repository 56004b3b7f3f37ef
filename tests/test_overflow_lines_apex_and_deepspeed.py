"""Tests of the fp16 overflow lines of apex and DeepSpeed consoles.

From the day-9 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AQ1 /
AQ3).

* apex amp's `Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to X` (and the older `Gradient
  overflow.  Skipping step, reducing loss scale to X`) are overflows at the script's own step line, and say fp16
  (NVIDIA/DeepLearningExamples issue 252); a scale collapse while the loss is already NaN is caused by that NaN."""
from __future__ import annotations

import forensics
from forensics.ingest import stdout


def _metric(frame, name: str) -> list[tuple[int, float]]:
    rows = frame[frame["metric"] == name]
    return list(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


# ---- apex amp's gradient-overflow lines --------------------------------------------------------------------------

_BAR = "Iteration:  51%|\u2588\u2588\u2588\u2588\u2588\u258f    | {n}/11037 [31:18<28:47,  3.10it/s]"


def _apex_console(loss: str, scaler: str = "loss scaler 0 ", steps: range = range(330, 340),
                  scale: float = 65536.0) -> str:
    """NVIDIA's BERT script: its `Step:N ...` line, then the micro-batch bar with apex's overflow line glued to it."""
    lines, n = [], 5000
    for step in steps:
        lines.append(f"Step:{step} Average Loss = {loss} Step Loss = {loss} LR 0.006")
        n += 64
        scale /= 2
        lines.append(_BAR.format(n=n) + f"Rank 0 :: Gradient overflow.  Skipping step, {scaler}reducing loss scale to "
                     f"{scale!r}")
    return "\n".join(lines) + "\n"


def test_apex_overflow_lines_are_overflows_at_the_scripts_step(tmp_path):
    for scaler in ("loss scaler 0 ", ""):
        path = tmp_path / f"apex{len(scaler)}.log"
        path.write_text(_apex_console("1.5", scaler), encoding="utf-8")
        frame = stdout.read(path).frame
        # each at the step line after it (printed once the optimizer step is over), the last at the last step line;
        # never at the micro-batch bar's count (5064 ...)
        assert sorted({step for step, _ in _metric(frame, "overflow")}) == list(range(331, 340))
        assert _metric(frame, "loss_scale")[0] == (331, 32768.0)


def test_apex_overflow_lines_say_fp16(tmp_path):
    (tmp_path / "train.log").write_text(_apex_console("1.5"), encoding="utf-8")
    assert forensics.analyze(tmp_path).run_profile.to_dict()["precision"] == "fp16"


def test_a_scale_collapse_while_the_loss_is_nan_is_caused_by_the_nan(tmp_path):
    (tmp_path / "train.log").write_text(_apex_console("nan", steps=range(338, 339), scale=7.3e-12) * 4, encoding="utf-8")
    a = forensics.analyze(tmp_path)
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("nonfinite_metric", 338)


def test_a_scale_collapse_with_a_finite_loss_stays_the_first_incident(tmp_path):
    (tmp_path / "train.log").write_text(_apex_console("1.5", steps=range(300, 360)), encoding="utf-8")
    a = forensics.analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "loss_scale_overflow"


def test_a_bar_with_a_deepspeed_overflow_still_dates_it_by_the_bar(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(f" {i * 10}%|##   | {i}/10 [00:0{i}<00:09,  1.00it/s]\n"
                            f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768\n"
                            for i in (3,)), encoding="utf-8")
    assert [step for step, _ in _metric(stdout.read(path).frame, "overflow")] == [4]
