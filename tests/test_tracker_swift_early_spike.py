"""Real-shaped run folders the tool misread: a W&B run dated by the script's own counter, a console whose last line
lacks only its newline, an ms-swift console's command echo and model summary, a from-scratch run that overshoots the
uniform guess in its first steps, and a DeepSpeed fp16 run whose LR lags its schedule.

Each case is written the way the real program writes it (nanoGPT's `wandb.log` rows and console lines, ms-swift's
console, DeepSpeed's args), with a healthy run of the same shape where the rule must not fire.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forensics.analysis import analyze
from forensics.ingest import wandb, wandb_files
from tests.support.wandb_log import framed, record

# --- 1. a W&B history row dated by its own counter -------------------------------------------------

EVAL_EVERY = 250


def _nanogpt_history(pb, evals: int) -> list:
    """nanoGPT's train.py: `wandb.log({"iter": iter_num, "train/loss": ..., "val/loss": ..., "lr": ..., "mfu": ...})`
    at each evaluation; W&B adds `_step` 0, 1, 2 ... (one a `wandb.log` call)."""
    rows = []
    for i in range(evals):
        train = 1.0 + 3.29 * math.exp(-i / 1.5)
        items = {"iter": i * EVAL_EVERY, "train/loss": train, "val/loss": train + 0.1 * (i > 0), "lr": 1e-3,
                 "mfu": 8.8, "_timestamp": 1696024422.0 + 20 * i, "_step": i}
        rows.append(record(history=pb.HistoryRecord(
            item=[pb.HistoryItem(key=k, value_json=repr(v)) for k, v in items.items()])))
    return rows


def _nanogpt_config(pb) -> bytes:
    config = pb.ConfigRecord(update=[pb.ConfigItem(key="init_from", value_json='"scratch"'),
                                     pb.ConfigItem(key="dtype", value_json='"bfloat16"'),
                                     pb.ConfigItem(key="block_size", value_json="256"),
                                     pb.ConfigItem(key="eval_interval", value_json=str(EVAL_EVERY))])
    return record(run=pb.RunRecord(run_id="abc", project="shakespeare-char", config=config))


def _nanogpt_console(evals: int) -> str:
    """nanoGPT's console as W&B's files/output.log captures it: eval lines and `iter N: loss X` every 10 iterations."""
    lines = []
    for it in range(0, (evals - 1) * EVAL_EVERY + 1, 10):
        loss = 1.0 + 3.26 * math.exp(-it / EVAL_EVERY / 1.5)
        if it % EVAL_EVERY == 0:
            lines.append(f"step {it}: train loss {loss + 0.03:.4f}, val loss {loss + 0.1:.4f}")
        lines.append(f"iter {it}: loss {loss:.4f}, time 41.90ms, mfu 8.86%")
    return "\n".join(lines)


def _nanogpt_run_folder(tmp_path: Path, evals: int = 9) -> Path:
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")
    run = tmp_path / "wandb" / "run-20230929_145323-abc"
    (run / "files").mkdir(parents=True)
    (run / "run-abc.wandb").write_bytes(framed([_nanogpt_config(pb), *_nanogpt_history(pb, evals)]))
    (run / "files" / "output.log").write_text(_nanogpt_console(evals) + "\n")
    return run


def test_a_wandb_row_is_dated_by_its_own_iter_key_not_by_wandbs_row_counter(tmp_path):
    run = _nanogpt_run_folder(tmp_path)
    frame = wandb.read(run / "run-abc.wandb").frame
    assert sorted(frame["step"].unique()) == [i * EVAL_EVERY for i in range(9)]
    assert "iter" not in set(frame["metric"])


def test_a_nanogpt_wandb_log_beside_its_console_is_one_run_and_keeps_its_config(tmp_path):
    _nanogpt_run_folder(tmp_path, evals=29)  # W&B rows 0..28 meet console iterations 0, 10, 20 if dated by _step
    a = analyze(tmp_path)
    assert not [s for s in a.skipped if "two runs" in s.reason]
    profile = a.run_profile.to_dict()
    assert (profile["method"], profile["objective"], profile["precision"]) == ("full", "pretrain", "bf16")


def test_a_wandb_history_without_its_own_counter_keeps_wandbs_step(tmp_path):
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")
    # `iter` only in some rows (a script that logs it at evaluations alone) dates nothing: _step stays the step
    rows = [record(history=pb.HistoryRecord(item=[pb.HistoryItem(key="loss", value_json=str(3.0 - i / 10)),
                                                  *([pb.HistoryItem(key="iter", value_json=str(100 * i))] if i % 2 else []),
                                                  pb.HistoryItem(key="_step", value_json=str(i))]))
            for i in range(4)]
    path = tmp_path / "run-x.wandb"
    path.write_bytes(framed(rows))
    assert wandb.read(path).frame.query("metric == 'loss'")["step"].tolist() == [0, 1, 2, 3]


def test_a_wandb_summary_is_dated_by_its_own_iter_key(tmp_path):
    files = tmp_path / "wandb" / "run-20230929_145323-abc" / "files"
    files.mkdir(parents=True)
    (files / "wandb-summary.json").write_text('{"iter": 7000, "train/loss": 0.98, "val/loss": 1.49, "lr": 0.0001, '
                                              '"_timestamp": 1696024856.4, "_runtime": 452.9, "_step": 28}')

    frame = wandb_files.read(files.parent).frame
    assert set(frame["step"]) == {7000} and "iter" not in set(frame["metric"])


# --- 2. a console's last line without its newline ------------------------------------------------

def _console_folder(tmp_path: Path, last_line: str) -> Path:
    """nanoGPT's console as `python train.py > train.log` leaves it when the file was copied before the final newline."""
    lines = [f"iter {it}: loss {4.2 - it / 400:.4f}, time 41.90ms, mfu 8.86%" for it in range(0, 1000, 10)]
    (tmp_path / "train.log").write_text("\n".join(lines + [last_line]))
    return tmp_path


def _cut_notes(folder: Path) -> list[str]:
    return [s.reason for s in analyze(folder).skipped if "cut mid-write" in s.reason]


def test_a_complete_last_line_without_its_newline_is_not_called_cut(tmp_path):
    folder = _console_folder(tmp_path, "iter 1000: loss 1.7000, time 4639.50ms, mfu 7.90%")
    assert _cut_notes(folder) == []
    a = analyze(folder)
    assert a.timeline.frame.query("metric == 'mfu_pct' and step == 1000")["value"].tolist() == [7.9]


@pytest.mark.parametrize("cut_line", ["iter 1000: loss 1.7000, time 4639.50ms, mfu 7.9",
                                      "iter 1000: loss 1.7000, time 4639.50ms, mf",
                                      "iter 1000: loss 1.7000, time 46"])
def test_a_last_line_cut_mid_write_is_still_called_cut(tmp_path, cut_line):
    assert len(_cut_notes(_console_folder(tmp_path, cut_line))) == 1


# --- 3. an ms-swift console: the echoed command and the model summary --------------------------------

def _swift_console(tmp_path: Path, train_type: str, torch_dtype: str, params: str) -> Path:
    """`swift sft ...` typed at a shell (its `> ` continuation prompts echoed), then ms-swift's log as it writes it."""
    command = ["swift sft \\", "    --model Qwen/Qwen3-4B-Instruct-2507 \\", f"    --train_type {train_type} \\",
               "    --dataset './train.jsonl' \\", f"    --torch_dtype {torch_dtype} \\", "    --learning_rate 1e-4 \\",
               "    --output_dir output"]
    lines = [command[0], *("> " + line for line in command[1:]), "",
             f"[INFO:swift] model_parameter_info: PeftModelForCausalLM: {params} Params (16.5151M Trainable [0.4089%]),"
             " 0.0001M Buffers.",
             "{'loss': 0.95332909, 'grad_norm': 2.68535495, 'learning_rate': 0.0001, 'token_acc': 0.82803897, "
             "'epoch': 0.84, 'global_step/max_steps': '1/2', 'percentage': '50.00%', 'elapsed_time': '10s', "
             "'remaining_time': '10s', 'memory(GiB)': 9.78, 'train_speed(iter/s)': 0.093831}",
             "{'train_runtime': 12.743, 'train_samples_per_second': 1.491, 'train_steps_per_second': 0.157, "
             "'train_loss': 0.87286359, 'token_acc': 0.891258, 'epoch': 1.0, 'global_step/max_steps': '2/2', "
             "'percentage': '100.00%', 'elapsed_time': '12s', 'remaining_time': '0s', 'memory(GiB)': 9.78, "
             "'train_speed(iter/s)': 0.157085}",
             "[INFO:swift] last_model_checkpoint: /workspace/output/v1-20250927-221821/checkpoint-2"]
    (tmp_path / "sft.log").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_an_ms_swift_console_gives_method_precision_and_size_from_its_command_and_model_summary(tmp_path):
    profile = analyze(_swift_console(tmp_path, "lora", "bfloat16", "4038.9832M")).run_profile.to_dict()
    assert (profile["method"], profile["precision"], profile["framework"]) == ("lora", "bf16", "swift")
    assert profile["model_params"] == 4_038_983_200


def test_an_ms_swift_full_fp32_run_is_not_called_lora_or_half_precision(tmp_path):
    profile = analyze(_swift_console(tmp_path, "full", "float32", "494.0327M")).run_profile.to_dict()
    assert profile["method"] == "full" and profile["precision"] not in ("bf16", "fp16")
    assert profile["model_params"] == 494_032_700


def test_too_few_loss_points_names_the_closing_summarys_mean_loss(tmp_path):
    a = analyze(_swift_console(tmp_path, "lora", "bfloat16", "4038.9832M"))
    assert a.first_incident.kind == "no_learning_evidence"
    assert "train_loss 0.8729" in a.first_incident.message


# --- 4. a from-scratch run overshooting the uniform guess in its first steps --------------------------

TITAN_HEAD = ("[titan] 2025-09-11 14:09:19,030 - root - INFO - Building llama2 7B with TransformerModelArgs(dim=4096, "
              "n_layers=6, n_heads=32, n_kv_heads=None, vocab_size=32000, multiple_of=256, norm_eps=1e-05)")


def _titan_console(tmp_path: Path, losses: list[float], grad_norms: list[float]) -> Path:
    """torchtitan's console: the model args it builds from, then `step: N  loss: X  grad_norm: G ...` every step."""
    lines = [TITAN_HEAD] + [f"[titan] 2025-09-11 14:09:{20 + s % 40:02d},000 - root - INFO - step: {s:2d}  loss: {loss:7.4f}"
                            f"  grad_norm: {g:7.4f}  memory:  8.44GiB(13.20%)  tps: 6,697  tflops: 62.15  mfu: 20.84%"
                            for s, (loss, g) in enumerate(zip(losses, grad_norms), start=1)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    return tmp_path


def _falling_from(start: float, n: int) -> list[float]:
    return [start * (0.5 + 0.5 * math.exp(-k / 15)) for k in range(n)]


def test_a_from_scratch_loss_rising_far_above_the_uniform_guess_in_its_first_steps_is_a_spike(tmp_path):
    losses = [10.86, 14.45, 15.20, 11.31, 11.12, 10.19] + _falling_from(9.8, 60)
    grads = [3.2, 41.8, 66.6, 14.1, 38.4, 18.2] + [2.0] * 60
    a = analyze(_titan_console(tmp_path, losses, grads))
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("loss_spike", 2)
    assert "ln 32000" in a.first_incident.message


@pytest.mark.parametrize("head", [[10.40, 10.20, 9.90], [10.38, 10.61, 10.72, 10.45]],
                         ids=["falling from ln V", "a rise of a few percent"])
def test_a_healthy_from_scratch_start_is_no_spike(tmp_path, head):
    losses = head + _falling_from(9.8, 60)
    grads = [3.0, 6.0, 8.0, 5.0][:len(head)] + [2.0] * 60
    a = analyze(_titan_console(tmp_path, losses, grads))
    assert not [f for f in a.findings if f.kind == "loss_spike"]
    assert a.status == "healthy"


def test_a_loss_up_from_ln_v_without_grad_norm_rising_is_no_overshoot():
    from forensics.analyzers.early_overshoot import detect_early_overshoot
    from forensics.config import Thresholds
    steps = range(1, 8)
    metrics = {"loss": pd.Series([10.4, 13.0, 13.2, 10.5, 10.0, 9.6, 9.2], index=steps),
               "grad_norm": pd.Series([3.0, 3.5, 3.1, 2.9, 2.8, 2.5, 2.4], index=steps)}
    assert detect_early_overshoot(metrics, 32000, Thresholds()) == []
    metrics["grad_norm"] = pd.Series([3.0, 30.0, 40.0, 5.0, 2.8, 2.5, 2.4], index=steps)
    assert [f.step for f in detect_early_overshoot(metrics, 32000, Thresholds())] == [2]


@pytest.mark.parametrize("size_line", [
    "[titan] 2025-09-11 14:09:19,553 - root - INFO - Model llama2 7B size: 1,476,448,256 total parameters",
    "[titan] 2025-09-11 14:09:19,553 - root - INFO - \x1b[34mModel llama2 7B \x1b[31msize: 1,476,448,256 total "
    "parameters\x1b[39m"])
def test_torchtitans_model_size_line_gives_the_model_size(tmp_path, size_line):
    _titan_console(tmp_path, _falling_from(10.4, 30), [2.0] * 30)
    log = tmp_path / "train.log"
    log.write_text(size_line + "\n" + log.read_text())
    assert analyze(tmp_path).run_profile.to_dict()["model_params"] == 1_476_448_256


def test_a_titan_console_without_its_size_line_states_no_size(tmp_path):
    assert analyze(_titan_console(tmp_path, _falling_from(10.4, 30), [2.0] * 30)).run_profile.to_dict()["model_params"] is None


# --- 5. a DeepSpeed-style precision section given as the Trainer's flag ---------------------------------

@pytest.mark.parametrize("section, said", [({"enabled": True}, True), ({"enabled": False}, False),
                                           ({"enabled": "auto"}, None)])
def test_an_fp16_flag_given_as_a_deepspeed_section_is_read_by_its_enabled_switch(section, said):
    from forensics.ingest.config_files import training_args_values
    values = training_args_values({"learning_rate": 1e-5, "bf16": False, "fp16": section, "deepspeed": "deepspeed.json"})
    assert values.get("fp16") is said and values["bf16"] is False


# --- 5b. skipped fp16 updates read from the learning rate lagging its linear schedule --------------------

PEAK, TOTAL = 1e-5, 3864
FP16_LINEAR = {"fp16": True, "lr_scheduler_type": "linear", "learning_rate": PEAK, "warmup_steps": 0, "warmup_ratio": 0.0}


def _logged_lr(skipped_by: dict[int, int], every: int = 10, last: int = 3860) -> pd.Series:
    """The HF Trainer's logged rate, float32 as TensorBoard keeps it, on get_linear_schedule_with_warmup (no warm-up)
    whose scheduler missed `skipped_by[s]` steps by step s (DeepSpeed's fp16 overflows skip the scheduler too)."""
    steps = list(range(every, last + 1, every))
    lag = [max([n for s, n in skipped_by.items() if s <= step], default=0) for step in steps]
    return pd.Series(np.float32([PEAK * (1 - (step - k) / TOTAL) for step, k in zip(steps, lag)]).astype("float64"),
                     index=steps)


def test_a_learning_rate_lagging_its_linear_schedule_is_skipped_fp16_updates():
    from forensics.analyzers.lr_lag import detect_skips_from_lr_lag, linear_fp16_schedule
    lr = _logged_lr({10: 10, 20: 17, 1020: 18, 1690: 19, 2490: 20})
    (found,) = detect_skips_from_lr_lag({"learning_rate": lr, "loss": lr * 0 + 0.1}, linear_fp16_schedule(FP16_LINEAR))
    assert (found.kind, found.step, found.evidence["count"]) == ("skipped_steps", 10, 20)


@pytest.mark.parametrize("skipped_by", [{}, {10: 1}, {60: 2}], ids=["on schedule", "logged before the step",
                                                                     "a fresh scaler's two skips"])
def test_a_learning_rate_on_its_schedule_is_no_skipped_update(skipped_by):
    from forensics.analyzers.lr_lag import detect_skips_from_lr_lag, linear_fp16_schedule
    lr = _logged_lr(skipped_by)
    assert detect_skips_from_lr_lag({"learning_rate": lr}, linear_fp16_schedule(FP16_LINEAR)) == []


@pytest.mark.parametrize("change", [{"fp16": False, "bf16": True}, {"warmup_steps": 100},
                                    {"lr_scheduler_type": "cosine"}])
def test_the_lag_is_read_only_on_a_linear_fp16_schedule_without_warm_up(change):
    from forensics.analyzers.lr_lag import linear_fp16_schedule
    assert linear_fp16_schedule({**FP16_LINEAR, **change}) is None


def test_a_log_with_grad_norm_tells_its_skips_there_not_from_the_rate():
    from forensics.analyzers.lr_lag import detect_skips_from_lr_lag, linear_fp16_schedule
    lr = _logged_lr({10: 10, 20: 17})
    metrics = {"learning_rate": lr, "grad_norm": lr * 0 + 1.0}
    assert detect_skips_from_lr_lag(metrics, linear_fp16_schedule(FP16_LINEAR)) == []
