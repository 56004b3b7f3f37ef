"""Tests of the readers on the newest releases' output: LLaMA-Factory v1, ms-swift 4, TRL on transformers 5.

Version drift (fmt9 sweep): what the newest releases of the most used stacks print and write, read from their
newest stored snapshots (source file and line in each docstring; commits: LLaMA-Factory ff6d4d12 (0.9.6.dev0, with
its `v1` trainer), ms-swift 3602360a (4.6.0.dev0), TRL f2cd5771, axolotl 067b021c, transformers 5.24.0 as installed).
A failing test is a reader gap; a passing one records coverage (at most one per framework). Broken copies have the
framework's own spelling of NaN from the 25th logged step on."""
from __future__ import annotations

import json
import math

from support.format_runs import N, analyze_logs, assert_broken_at, assert_healthy_loss, losses, write_file

NAN_AT = 25


def _hf5(logs: dict) -> str:
    """transformers 5.x trainer_callback.py:673-690 (ProgressCallback.on_log): every float written `f"{v:.4g}"`, so
    the printed dict's values are quoted strings (`'loss': '2.345'`, `'loss': 'nan'`); None stays None."""
    return str({k: f"{v:.4g}" if isinstance(v, float) else v for k, v in logs.items()})


# --- LLaMA-Factory v1 trainer -----------------------------------------------------------------------------------


def _llamafactory_v1(nan_at=None):
    """LLaMA-Factory src/llamafactory/v1/core/base_trainer.py:341-352 (logs = epoch, step, loss, grad_norm,
    learning_rate) and src/llamafactory/v1/utils/callbacks/logging_callback.py:56-71 (console `k: v` joined by `, `,
    floats `:.4f`, learning_rate `:.4g`, through src/llamafactory/v1/utils/logging.py:73's
    `[%(levelname)s|%(asctime)s] %(name)s:%(lineno)s >> %(message)s`; the same dict plus total_steps appended to
    <output_dir>/trainer_log.jsonl by json.dumps, NaN as `NaN`)."""
    console, rows = [], []
    for i, v in enumerate(losses(nan_at), start=1):
        bad = nan_at is not None and i >= nan_at
        logs = {"epoch": 0, "step": i, "loss": v, "grad_norm": math.nan if bad else 1.2 - i * 0.01,
                "learning_rate": 2e-5 * (1 - i / 40)}
        shown = {**logs, "step": i, "total_steps": N}
        parts = ", ".join(f"{k}: {x}" if not isinstance(x, float) else f"{k}: {x:.4g}" if k == "learning_rate"
                          else f"{k}: {x:.4f}" for k, x in shown.items())
        if bad:
            console.append(f"[WARNING|2026-08-18 10:00:{i:02d}] llamafactory.v1.core.base_trainer:317 >> "
                           "Gradient norm is not finite: nan")
        console.append(f"[INFO|2026-08-18 10:00:{i:02d}] llamafactory.v1.utils.callbacks.logging_callback:66 >> "
                       f"{parts}")
        rows.append(json.dumps(shown))
    return "\n".join(console) + "\n", "\n".join(rows) + "\n"


def test_llamafactory_v1_logging_callback_console_and_jsonl_are_read(tmp_path):
    """LLaMA-Factory v1 (src/llamafactory/v1/utils/callbacks/logging_callback.py:56-71): console `[INFO|...]
    llamafactory.v1.utils.callbacks.logging_callback:66 >> epoch: 0, step: 10, loss: 2.0517, grad_norm: 1.1000,
    learning_rate: 1.5e-05, total_steps: 30` and trainer_log.jsonl `{"epoch": 0, "step": 10, "loss": ..., "grad_norm":
    ..., "learning_rate": ..., "total_steps": 30}` (not v0's current_steps / lr fields)."""
    console, rows = _llamafactory_v1()
    a = analyze_logs(write_file(tmp_path / "c", "train.log", console))
    assert_healthy_loss(a)
    assert a.run_profile.framework == "llamafactory", a.run_profile
    a = analyze_logs(write_file(tmp_path / "j", "saves/run/trainer_log.jsonl", rows))
    assert_healthy_loss(a)
    console, rows = _llamafactory_v1(NAN_AT)
    assert_broken_at(analyze_logs(write_file(tmp_path / "cb", "train.log", console)), NAN_AT)
    assert_broken_at(analyze_logs(write_file(tmp_path / "jb", "saves/run/trainer_log.jsonl", rows)), NAN_AT)


# --- TRL GRPO under transformers 5 --------------------------------------------------------------------------------


def _grpo_logs(nan_at=None):
    """TRL trl/trainer/grpo_trainer.py:3272-3291 (GRPOTrainer.log: each `_metrics` list averaged with NaNs left out,
    None where none is left) with the names of :3183 (`policy_loss`), `completions/*`, `rewards/<fn>/mean`,
    `reward`, `frac_reward_zero_std`, `entropy`, `clip_ratio/*`, `num_tokens`; the Trainer adds loss, grad_norm,
    learning_rate, epoch."""
    out = []
    for i in range(1, N + 1):
        bad = nan_at is not None and i >= nan_at
        r = 0.1 + 0.8 * i / N
        out.append({"loss": math.nan if bad else 0.01 + 0.001 * (i % 3), "grad_norm": math.nan if bad else 0.3,
                    "learning_rate": 1e-6 * (1 - i / 40), "num_tokens": 12000.0 * i,
                    "completions/mean_length": 210.5, "completions/min_length": 50.0,
                    "completions/max_length": 512.0, "completions/clipped_ratio": 0.05,
                    "rewards/accuracy_reward/mean": r, "rewards/accuracy_reward/std": 0.3, "reward": r,
                    "reward_std": 0.3, "frac_reward_zero_std": 0.1, "kl": 0.0, "entropy": 0.5,
                    "clip_ratio/low_mean": 0.0, "clip_ratio/high_mean": 0.0, "clip_ratio/region_mean": 0.0,
                    "policy_loss": None if bad else 0.01, "epoch": i / N})
    return out


def test_trl_grpo_transformers5_quoted_console_is_read_and_a_nan_is_broken(tmp_path):
    """TRL GRPOTrainer (trl/trainer/grpo_trainer.py:3272-3291) printed by transformers 5.x ProgressCallback
    (trainer_callback.py:685-690): `{'loss': '0.011', 'grad_norm': '0.3', ..., 'reward': '0.1267', ...,
    'policy_loss': None, 'epoch': '0.8333'}`. The reward rises: healthy; `'loss': 'nan'` from step 25: broken."""
    def console(nan_at):
        return "\n".join(_hf5(d) for d in _grpo_logs(nan_at)) + "\n"
    a = analyze_logs(write_file(tmp_path / "good", "train.log", console(None)))
    assert len(a.timeline.series("reward")) == N and a.status == "healthy", (a.status, sorted(a.timeline.metrics))
    assert (a.run_profile.framework, a.run_profile.objective) == ("trl", "rl"), a.run_profile
    assert_broken_at(analyze_logs(write_file(tmp_path / "bad", "train.log", console(NAN_AT))), NAN_AT)


# --- ms-swift 4.x -------------------------------------------------------------------------------------------------


def _megatron_swift_logs(nan_at=None):
    """ms-swift swift/megatron/callbacks/print.py:54-70 (PrintCallback.on_log, new in 4.x): the Megatron trainer's
    metrics (swift/megatron/trainers/base.py:695-703: loss, grad_norm, learning_rate) plus `iteration: 'N/M'` (not
    the HF side's `global_step/max_steps`), elapsed_time, remaining_time, memory(GiB), train_speed(s/it); floats
    rounded to 8 places; `str(logs)` to the console through tqdm.write, the dict to <output_dir>/logging.jsonl."""
    out = []
    for i, v in enumerate(losses(nan_at), start=1):
        bad = nan_at is not None and i >= nan_at
        out.append({"loss": round(v, 8), "grad_norm": math.nan if bad else 1.1,
                    "learning_rate": round(1e-4 * (1 - i / 40), 8), "iteration": f"{i}/{N}",
                    "elapsed_time": f"{i}s", "remaining_time": f"{N - i}s", "memory(GiB)": 20.5,
                    "train_speed(s/it)": 0.5})
    return out


def test_megatron_swift4_print_callback_logging_jsonl_is_read(tmp_path):
    """ms-swift 4.x Megatron-SWIFT swift/megatron/callbacks/print.py:30-69: logging.jsonl rows `{"loss": 2.05,
    "grad_norm": 1.1, "learning_rate": 9.5e-05, "iteration": "2/30", "elapsed_time": "2s", ...}` (NaN as `NaN`)."""
    def rows(nan_at):
        return "\n".join(json.dumps(d) for d in _megatron_swift_logs(nan_at)) + "\n"
    a = analyze_logs(write_file(tmp_path / "good", "output/v0-20260101-000000/logging.jsonl", rows(None)))
    assert_healthy_loss(a)
    assert a.run_profile.framework == "swift", a.run_profile
    assert_broken_at(analyze_logs(write_file(tmp_path / "bad", "output/v0-20260101-000000/logging.jsonl",
                                             rows(NAN_AT))), NAN_AT)


def _swift_hf_console():
    """ms-swift 4.x swift/trainers/patcher.py:17-29 + :51-56 (ProgressCallbackNew adds global_step/max_steps,
    elapsed_time, remaining_time, memory(GiB), train_speed(s/it), then transformers 5's ProgressCallback prints it)."""
    out = []
    for i, v in enumerate(losses(), start=1):
        out.append(_hf5({"loss": v, "grad_norm": 1.1, "learning_rate": 1e-4 * (1 - i / 40), "token_acc": 0.5 + i / 100,
                         "epoch": round(i / N, 2), "global_step/max_steps": f"{i}/{N}", "elapsed_time": f"{i}s",
                         "remaining_time": f"{N - i}s", "memory(GiB)": 20.5, "train_speed(s/it)": 0.5}))
    return "\n".join(out) + "\n"


def test_swift4_printed_sft_arguments_tuner_type_gives_method(tmp_path):
    """ms-swift 4.x swift/pipelines/base.py:20 logs `args: {args}` at start-up; SftArguments (swift/arguments/
    sft_args.py:124) is a Seq2SeqTrainingArguments, so it prints with TrainingArguments.__str__ (transformers
    training_args.py:1809-1815): `[INFO:swift] args: SftArguments(` then sorted `name=value,` lines, among them
    `tuner_type=lora,` (4.x's name, swift/arguments/base_args/base_args.py:93; `train_type=None,` beside it) and
    `torch_dtype=torch.bfloat16,`. The tool reads the block (precision bf16) but says method `unknown`: the printed
    block goes through config_files.training_args_values, which knows no swift tuner field. Fix:
    ingest/run_config.py read_run_config (the printed_configs.ARGS_KEY branch) or config_files.training_args_values:
    map tuner_type / train_type / sft_type to the method as framework_configs.read_swift_args does for args.json."""
    fields = {"_n_gpu": 1, "bf16": True, "fp16": False, "learning_rate": 0.0001, "lora_rank": 8,
              "model": "Qwen/Qwen2.5-7B-Instruct", "output_dir": "/root/output/v0-20260101-000000",
              "torch_dtype": "torch.bfloat16", "train_type": None, "tuner_type": "lora"}
    block = ("[INFO:swift] args: SftArguments(\n" + "".join(f"{k}={v},\n" for k, v in sorted(fields.items()))
             + ")\n")
    a = analyze_logs(write_file(tmp_path, "train.log", block + _swift_hf_console()))
    assert_healthy_loss(a)
    assert (a.run_profile.framework, a.run_profile.precision) == ("swift", "bf16"), a.run_profile
    assert a.run_profile.method == "lora", a.run_profile


def test_megatron_swift4_one_line_args_give_method_and_precision(tmp_path):
    """ms-swift 4.x Megatron-SWIFT: swift/pipelines/base.py:20 `logger.info(f'args: {args}')` with
    MegatronSftArguments (swift/megatron/arguments/sft_args.py:13, a plain dataclass over MegatronArguments, not a
    TrainingArguments), so the dataclass repr on ONE line: `[INFO:swift] args: MegatronSftArguments(model='Qwen/...',
    torch_dtype=torch.bfloat16, tuner_type='lora', ..., bf16=True, ...)` (tuner_type: megatron_args.py:449). Then the
    PrintCallback dicts (print.py:69). The loss is read, but method and precision say `unknown`: printed_configs.
    training_arguments only knows the multi-line `Xxx(` block. Fix: ingest/printed_configs.py training_arguments
    (read a one-line `args: XxxArguments(k=v, ...)` repr) and the swift tuner-field mapping in run_config."""
    line = ("[INFO:swift] args: MegatronSftArguments(model='Qwen/Qwen2.5-7B-Instruct', model_type='qwen2_5', "
            "torch_dtype=torch.bfloat16, tuner_type='lora', lora_rank=8, micro_batch_size=1, global_batch_size=16, "
            "lr=0.0001, bf16=True, fp16=False, output_dir='/root/output/v0-20260101-000000')\n"
            "[INFO:swift] logging_path: /root/output/v0-20260101-000000/logging.jsonl\n")
    console = "\n".join(str(d) for d in _megatron_swift_logs()) + "\n"
    a = analyze_logs(write_file(tmp_path, "train.log", line + console))
    assert_healthy_loss(a)
    assert a.run_profile.framework == "swift", a.run_profile
    assert (a.run_profile.method, a.run_profile.precision) == ("lora", "bf16"), a.run_profile
