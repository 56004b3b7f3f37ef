"""Tests of the PaddleNLP / paddle.distributed readers: per-rank logs, lines, arguments.

From the day-9 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AQ1 /
AQ3).

* paddle.distributed.launch's per-rank consoles, `workerlog.0` and `workerlog.n0.c0` (no .log suffix), are run logs
  (micelvrice/GDAP-paddle llm/log/workerlog.0); PaddleNLP's Trainer lines `loss: X, learning_rate: Y, global_step: N,
  ...` are put at their global_step, and its printed arguments (`lora : True`, `bf16 : True`, the `paddlenlp commit
  id` line) say the method, the precision and the framework."""
from __future__ import annotations

import forensics
from forensics.ingest import stdout
from forensics.discover.run import discover


def _metric(frame, name: str) -> list[tuple[int, float]]:
    rows = frame[frame["metric"] == name]
    return list(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


# ---- PaddleNLP: per-rank console names, global_step, printed arguments -----------------------------------------

_ESC = "\x1b"


def _paddle_debug(stamp: str, key: str, value: str) -> str:
    return f"{_ESC}[35m[{stamp}] [   DEBUG]{_ESC}[0m - {key:<30}: {value}{_ESC}[0m\n"


def _paddlenlp_console(every: int = 1, lora: str = "True", bf16: str = "True", steps: int = 24) -> str:
    stamp = "2024-12-31 16:43:30,887"
    lines = [f"{_ESC}[35m[{stamp}] [   DEBUG]{_ESC}[0m - {'=' * 60}{_ESC}[0m\n",
             f"{_ESC}[35m[{stamp}] [   DEBUG]{_ESC}[0m -      Model Configuration Arguments      {_ESC}[0m\n",
             _paddle_debug(stamp, "paddle commit id", "396a3f594f154081b444a3ab40e7f28d89c32521"),
             _paddle_debug(stamp, "paddlenlp commit id", "79695ccd747b5a6b18bdec65503aacd419ca9a46.dirty"),
             _paddle_debug(stamp, "lora", lora),
             _paddle_debug(stamp, "lora_rank", "8"),
             _paddle_debug(stamp, "prefix_tuning", "False"),
             _paddle_debug(stamp, "weight_quantize_algo", "None"),
             f"{_ESC}[35m[{stamp}] [   DEBUG]{_ESC}[0m -     Training Configuration Arguments    {_ESC}[0m\n",
             _paddle_debug(stamp, "bf16", bf16),
             _paddle_debug(stamp, "fp16", "False"),
             _paddle_debug(stamp, "learning_rate", "0.0003")]
    for i in range(1, steps + 1):
        step = i * every
        loss = 5.0 * 0.93 ** i + 0.8
        lines.append(f"{_ESC}[32m[2024-12-31 16:43:{i:02d},902] [    INFO]{_ESC}[0m - loss: {loss:.8f}, learning_rate: "
                     f"{1e-5 * min(step, 30):.4g}, global_step: {step}, current_memory_allocated: 3.365605115890503, "
                     f"current_memory_reserved: 16.908264875411987, max_memory_allocated: 15.545772790908813, "
                     f"max_memory_reserved: 16.908264875411987, interval_runtime: 8.9984, "
                     f"interval_samples_per_second: 0.4445, interval_steps_per_second: 0.1111, "
                     f"ppl: 157.46987025543132, progress_or_epoch: {step / 377:.4f}{_ESC}[0m\n")
    return "".join(lines)


def test_paddle_launch_per_rank_logs_are_run_logs(tmp_path):
    for name in ("workerlog.0", "workerlog.n0.c0"):
        run = tmp_path / name.replace(".", "_")
        (run / "log").mkdir(parents=True)
        (run / "log" / name).write_text(_paddlenlp_console(), encoding="utf-8")
        layout = discover(run)
        assert [p.name for p in layout.text_logs] == [name]
        assert forensics.analyze(run).status in ("healthy", "warning", "broken")


def test_a_file_merely_named_like_a_worker_stays_unread(tmp_path):
    (tmp_path / "workerlog.cfg").write_text(_paddlenlp_console(), encoding="utf-8")
    assert discover(tmp_path).text_logs == []


def test_paddlenlp_lines_are_put_at_their_global_step(tmp_path):
    path = tmp_path / "train.log"
    path.write_text(_paddlenlp_console(every=5), encoding="utf-8")
    records = stdout.read(path)
    losses = _metric(records.frame, "loss")
    assert [step for step, _ in losses] == list(range(5, 121, 5))
    assert "global_step" not in set(records.frame["metric"])
    assert records.meta.get("step_inferred") is None


def test_a_line_of_pairs_without_global_step_is_still_numbered_in_file_order(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(f"loss: {2.0 - 0.01 * i:.4f}, grad_norm: 1.2, learning_rate: 1e-4\n" for i in range(40)),
                    encoding="utf-8")
    records = stdout.read(path)
    assert [step for step, _ in _metric(records.frame, "loss")] == list(range(1, 41))
    assert records.meta.get("step_inferred")


def test_paddlenlp_printed_arguments_give_the_profile(tmp_path):
    (tmp_path / "train.log").write_text(_paddlenlp_console(), encoding="utf-8")
    profile = forensics.analyze(tmp_path).run_profile.to_dict()
    assert (profile["method"], profile["precision"], profile["framework"]) == ("lora", "bf16", "paddlenlp")


def test_paddlenlp_arguments_with_no_adapter_and_no_half_precision_say_full_fp32(tmp_path):
    (tmp_path / "train.log").write_text(_paddlenlp_console(lora="False", bf16="False"), encoding="utf-8")
    profile = forensics.analyze(tmp_path).run_profile.to_dict()
    assert (profile["method"], profile["precision"], profile["framework"]) == ("full", "fp32", "paddlenlp")
