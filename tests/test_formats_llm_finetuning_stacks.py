"""Tests of the readers of LLM fine-tuning and RL stacks' logs: Megatron, NeMo, LLaMA-Factory, swift, TRL, verl, ...

Formats that LLM training frameworks print or write, rebuilt from their own source (sweep fmt2).

Each test writes, under tmp_path, a small run exactly as the named framework's logging code prints or writes it
(source file, line and commit in the test's docstring) and checks what `forensics.analyze` makes of it: the loss
series read, status healthy, the profile fields the output states; a broken variant (NaN at step 25 in the
framework's own spelling) must be `broken` with its first incident at step 25.

Snapshots read (commit):
  NVIDIA/Megatron-LM d98e8a64ddf3, NVIDIA-NeMo/Megatron-Bridge 067f987df03b, NVIDIA-NeMo/RL 7ea279abfbeb,
  hiyouga/LLaMA-Factory ff6d4d12eeb0, modelscope/ms-swift 3602360a5623, huggingface/trl f2cd57710ae3,
  axolotl-ai-cloud/axolotl 067b021c8b87, unslothai/unsloth 015bdef0d94a, volcengine/verl b178a3cd56f5,
  OpenRLHF/OpenRLHF 3c3be6234e0c.

Tests that pass record coverage (one per framework at most); tests that fail are gaps to fix.
"""
from __future__ import annotations

import json
import math
import pprint

import pytest

import forensics

N = 30
NAN_AT = 25


def _losses(n: int = N, nan_at: int | None = None, lo: float = 1.2, hi: float = 2.5) -> list[float]:
    """A loss falling from `hi` to `lo` over n steps, NaN from `nan_at` on."""
    return [math.nan if nan_at and s >= nan_at else hi - (hi - lo) * (s - 1) / (n - 1) for s in range(1, n + 1)]


def _analyze(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return forensics.analyze(tmp_path, check_checkpoints=False)


def _loss_points(a, metric: str = "loss") -> int:
    wide = a.timeline.wide()
    return int(wide[metric].notna().sum()) if metric in wide else 0


def _assert_broken_at(a, step: int = NAN_AT) -> None:
    assert a.status == "broken", (a.status, a.first_incident)
    assert a.first_incident is not None and a.first_incident.step == step, a.first_incident


# --- Megatron-LM / Megatron-Bridge (covered) ---------------------------------------------------------------------

def _megatron_line(step: int, loss: float, grad_norm: float) -> str:
    line = (f" [2026-08-22 15:22:{step % 60:02d}.123456] iteration {step:8d}/{N:8d} | consumed samples: {step * 256:12d} |"
            f" elapsed time per iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 400.1 |"
            f" learning rate: {3e-4:.6E} | global batch size:   256 |")
    if loss >= 0.0:  # training.py prints a loss only `if avg >= 0.0`: a NaN average leaves the field out
        line += f" lm loss: {loss:.6E} | mtp_1 loss: {loss + 0.1:.6E} |"
    line += f" load_balancing_loss: {1.01:.2f} |"
    line += (f" loss scale: 1.0 | grad norm: {grad_norm:.3f} | number of skipped iterations:   0 |"
             f" number of nan iterations:   0 |")
    return line


def test_megatron_training_log_with_mtp_and_moe_losses_is_read(tmp_path):
    """Megatron-LM megatron/training/training.py:3567-3641 (`training_log`: ` [time] iteration N/ M | ... | lm loss:
    X | ... | loss scale: | grad norm: |`), MTP `f"mtp_{i+1} loss"` (megatron/core/transformer/
    multi_token_prediction.py:628), MoE `f" {k}: {v:.2f} |"` (megatron/core/transformer/moe/moe_logging.py:390).
    Megatron-Bridge src/megatron/bridge/training/utils/train_utils.py:1088-1136 prints the same line. A NaN loss is
    left out of the line (`if avg >= 0.0`) while `grad norm: nan` is printed."""
    good = "\n".join(_megatron_line(s, l, 1.2) for s, l in enumerate(_losses(), 1)) + "\n"
    a = _analyze(tmp_path / "good", {"train.log": good})
    assert _loss_points(a) == N and a.status == "healthy", a.first_incident
    assert a.run_profile.framework == "megatron"
    bad = "\n".join(_megatron_line(s, l, math.nan if s >= NAN_AT else 1.2)
                    for s, l in enumerate(_losses(nan_at=NAN_AT), 1)) + "\n"
    _assert_broken_at(_analyze(tmp_path / "bad", {"train.log": bad}))


# --- NVIDIA NeMo-RL ----------------------------------------------------------------------------------------------

def _nemo_rl_sft_console(nan_at: int | None = None) -> str:
    out = ["=" * 60, "SFT setup complete", "=" * 60, f"\n{'=' * 25} Epoch 1/1 {'=' * 25}"]
    for s, loss in enumerate(_losses(nan_at=nan_at), 1):
        out.append(f"\n{'=' * 25} Step {s}/{N} {'=' * 25}")
        out += ["▶ Preparing batch...", "▶ Taking a training step...",
                "\n📊 Training Results:", f"  • Loss: {loss:.4f}",
                "\n⏱️  Timing:", "  • Total step time: 2.31s", "  • policy_training: 2.00s (86.6%)"]
        if s % 10 == 0:
            out += [f"▶ Starting validation at step {s}...", "\n📊 Validation Results:",
                    f"    • Validation loss: {loss + 0.1:.4f}", "    • Total validation time: 3.00s"]
    return "\n".join(out) + "\n"


def test_nemo_rl_sft_console_training_results_are_read(tmp_path):
    """NeMo-RL nemo_rl/algorithms/sft.py:439 (`f"\\n{'=' * 25} Step {current_step + 1}/{...} {'=' * 25}"`),
    :612-613 (`print("\\n📊 Training Results:")`, `print(f"  • Loss: {float(metrics['loss']):.4f}")`), :365-366
    (`📊 Validation Results:` / `    • Validation loss: {val_loss:.4f}`). grpo.py:3703-3715 prints the same block
    (`  • Loss:`, `  • Avg Reward:`) under `===== Step N/M =====`. The tool finds no training log in it (NotARunDirectory:
    run.py `_LOG_HINT` does not know the block; no reader in ingest/pretrain_lines.py parses it)."""
    a = _analyze(tmp_path / "good", {"sft.log": _nemo_rl_sft_console()})
    assert _loss_points(a) == N and a.status == "healthy"
    _assert_broken_at(_analyze(tmp_path / "bad", {"sft.log": _nemo_rl_sft_console(NAN_AT)}))


# --- LLaMA-Factory (covered) ---------------------------------------------------------------------------------------

def test_llamafactory_dpo_console_is_read_with_its_profile(tmp_path):
    """LLaMA-Factory src/llamafactory/hparams/parser.py:652-655 (`Process rank: ..., compute dtype: torch.bfloat16`),
    model/adapter.py:159 (`Fine-tuning method: LoRA`), model/loader.py:236 (`trainable params: N || all params: N ||
    trainable%: X`); the Trainer's ProgressCallback dict lines with TRL's DPO keys (train/callbacks.py:272-310 writes
    the same to trainer_log.jsonl). NaN printed as `nan`."""
    head = ["[INFO|2026-08-18 19:49:01] llamafactory.hparams.parser:406 >> Process rank: 0, world size: 1, device: "
            "cuda:0, distributed training: False, compute dtype: torch.bfloat16",
            "[INFO|2026-08-18 19:49:05] llamafactory.model.adapter:143 >> Fine-tuning method: LoRA",
            "[INFO|2026-08-18 19:49:06] llamafactory.model.loader:143 >> trainable params: 20,185,088 || "
            "all params: 8,050,446,336 || trainable%: 0.2507",
            "[INFO|trainer.py:2409] 2026-08-18 19:49:07,000 >> ***** Running training *****",
            "[INFO|trainer.py:2411] 2026-08-18 19:49:07,000 >>   Num Epochs = 3",
            "[INFO|trainer.py:2419] 2026-08-18 19:49:07,000 >>   Total optimization steps = 30"]

    def console(nan_at):
        out = list(head)
        for s, loss in enumerate(_losses(nan_at=nan_at, lo=0.3, hi=0.69), 1):
            gn = math.nan if nan_at and s >= nan_at else 1.1
            out.append(f"\r  {int(s / N * 100)}%|███       | {s}/{N} [00:{s:02d}<00:10,  1.2s/it]")
            out.append(str({"loss": loss, "grad_norm": gn, "learning_rate": 1e-05, "rewards/chosen": 0.1,
                            "rewards/rejected": -0.1, "rewards/accuracies": 0.75, "rewards/margins": 0.2,
                            "logps/chosen": -120.5, "logps/rejected": -130.2, "epoch": round(s / 10, 2)}))
        return "\n".join(out) + "\n"

    a = _analyze(tmp_path / "good", {"train.log": console(None)})
    p = a.run_profile
    assert _loss_points(a) == N and a.status == "healthy"
    assert (p.framework, p.method, p.algorithm, p.precision, p.model_params) == (
        "llamafactory", "lora", "dpo", "bf16", 8_050_446_336)
    _assert_broken_at(_analyze(tmp_path / "bad", {"train.log": console(NAN_AT)}))


# --- ms-swift (covered) ----------------------------------------------------------------------------------------------

def test_swift_grpo_logging_jsonl_and_args_json_are_read(tmp_path):
    """ms-swift swift/trainers/patcher.py:17-29 (`add_train_message`: `global_step/max_steps`, elapsed/remaining,
    `memory(GiB)`, `train_speed(s/it)`) and :52-55 (append_to_jsonl to output_dir/logging.jsonl); GRPO keys
    swift/rlhf_trainers/grpo_trainer.py:440-447 (`reward_std`, `rewards/{name}/mean`), :499 (`kl`), :820
    (`completions/mean_length`); args.json from swift/arguments/base_args/base_args.py:303-310."""
    args = {"model": "Qwen/Qwen2.5-7B-Instruct", "train_type": "lora", "torch_dtype": "bfloat16", "bf16": True,
            "rlhf_type": "grpo", "lora_rank": 8, "learning_rate": 1e-6}

    def logging_jsonl(nan_at):
        rows = []
        for s, loss in enumerate(_losses(nan_at=nan_at, lo=0.01, hi=0.05), 1):
            rows.append({"loss": loss, "grad_norm": math.nan if nan_at and s >= nan_at else 0.3, "learning_rate": 1e-6,
                         "completions/mean_length": 300.0, "rewards/AccuracyORM/mean": 0.1 + s / 100,
                         "rewards/AccuracyORM/std": 0.3, "reward": 0.1 + s / 100, "reward_std": 0.3, "kl": 0.001 * s,
                         "epoch": round(s / N, 2), "global_step/max_steps": f"{s}/{N}", "percentage": f"{s / N * 100:.2f}%",
                         "elapsed_time": "10s", "remaining_time": "1m", "memory(GiB)": 20.5, "train_speed(s/it)": 1.2})
        return "\n".join(json.dumps(r) for r in rows) + "\n"

    a = _analyze(tmp_path / "good", {"v0-20260822/logging.jsonl": logging_jsonl(None),
                                     "v0-20260822/args.json": json.dumps(args)})
    p = a.run_profile
    assert _loss_points(a) == N and a.status == "healthy"
    assert (p.framework, p.method, p.objective, p.algorithm, p.precision) == ("swift", "lora", "rl", "grpo", "bf16")
    _assert_broken_at(_analyze(tmp_path / "bad", {"v0-20260822/logging.jsonl": logging_jsonl(NAN_AT),
                                                  "v0-20260822/args.json": json.dumps(args)}))


# --- TRL ----------------------------------------------------------------------------------------------------------

def _trainer_state(rows: list[dict]) -> str:
    return json.dumps({"global_step": N, "max_steps": N, "logging_steps": 1, "epoch": 1.0, "log_history": rows})


def test_trl_grpo_trainer_state_is_read(tmp_path):
    """TRL trl/trainer/grpo_trainer.py:2748-2750 (`reward`, `reward_std`, `frac_reward_zero_std`), :2743-2745
    (`rewards/{name}/mean|std`), :2232 (`completions/mean_length`), :2904 (`kl`); the Trainer adds loss, grad_norm,
    learning_rate, epoch, step to log_history. json.dumps writes NaN as `NaN`."""
    def rows(nan_at):
        out = []
        for s, loss in enumerate(_losses(nan_at=nan_at, lo=0.01, hi=0.05), 1):
            out.append({"loss": loss, "grad_norm": math.nan if nan_at and s >= nan_at else 0.3, "learning_rate": 1e-6,
                        "num_tokens": 1000.0 * s, "completions/mean_length": 300.0, "reward": 0.1 + s / 100,
                        "reward_std": 0.3, "frac_reward_zero_std": 0.1, "rewards/accuracy_reward/mean": 0.1 + s / 100,
                        "rewards/accuracy_reward/std": 0.3, "kl": 0.001 * s, "entropy": 0.5,
                        "clip_ratio/region_mean": 0.0, "epoch": s / N, "step": s})
        return out

    a = _analyze(tmp_path / "good", {"out/trainer_state.json": _trainer_state(rows(None))})
    assert _loss_points(a) == N and a.status == "healthy"
    assert (a.run_profile.framework, a.run_profile.algorithm) == ("trl", "grpo")
    _assert_broken_at(_analyze(tmp_path / "bad", {"out/trainer_state.json": _trainer_state(rows(NAN_AT))}))


def _trl_ppo_rows(nan_at: int | None) -> list[dict]:
    rows = []
    for s, loss in enumerate(_losses(nan_at=nan_at, lo=0.01, hi=0.25), 1):
        bad = nan_at and s >= nan_at
        rows.append({"eps": 10, "objective/kl": math.nan if bad else 0.1 * s, "objective/entropy": 40.0,
                     "objective/non_score_reward": -0.01 * s, "objective/rlhf_reward": 0.5 + s / 100,
                     "objective/scores": 0.5 + s / 100, "policy/approxkl_avg": 0.01, "policy/clipfrac_avg": 0.05,
                     "loss/policy_avg": loss, "loss/value_avg": math.nan if bad else 0.3, "val/clipfrac_avg": 0.01,
                     "policy/entropy_avg": 1.5, "val/ratio": 1.0, "val/ratio_var": 0.0, "val/num_eos_tokens": 8,
                     "lr": 3e-6, "episode": 64 * s, "epoch": s / N, "step": s})
    return rows


def test_trl_ppo_trainer_nan_policy_loss_is_broken(tmp_path):
    """TRL trl/experimental/ppo/ppo_trainer.py:888-909: PPOTrainer logs `loss/policy_avg`, `loss/value_avg`,
    `objective/kl`, `objective/rlhf_reward`, `policy/...`, `val/...`, `lr`, `episode` through `self.log(metrics)`:
    log_history has no `loss` key. With loss/policy_avg, loss/value_avg and objective/kl NaN from step 25 the tool
    says `healthy` with no finding: analyzers/nonfinite.py `is_watched` watches names ending in `loss` or equal to
    `kl`, not `loss/policy_avg`, `loss/value_avg`, `objective/kl` (fix there, or map them in timeline.canonical_metric /
    metric_names)."""
    _assert_broken_at(_analyze(tmp_path, {"out/trainer_state.json": _trainer_state(_trl_ppo_rows(NAN_AT))}))


def test_trl_ppo_trainer_policy_loss_is_the_loss(tmp_path):
    """TRL trl/experimental/ppo/ppo_trainer.py:898 `metrics["loss/policy_avg"]` is PPOTrainer's only policy loss
    (no `loss` key in its log_history): the tool reads no `loss` series for a PPO run (timeline.canonical_metric)."""
    a = _analyze(tmp_path, {"out/trainer_state.json": _trainer_state(_trl_ppo_rows(None))})
    assert _loss_points(a) == N and a.status == "healthy"


# --- axolotl ----------------------------------------------------------------------------------------------------

def test_axolotl_console_says_axolotl(tmp_path):
    """axolotl src/axolotl/logging_config.py:94 (`[%(asctime)s] [%(levelname)s] [%(name)s.%(funcName)s:%(lineno)d]
    [PID:%(process)d] %(message)s`: every line names an `axolotl.` logger) and src/axolotl/core/trainers/base.py:
    742-744 (`memory/max_active (GiB)`, `memory/max_allocated (GiB)`, `memory/device_reserved (GiB)`, axolotl's own
    keys in the Trainer's dict lines, beside `ppl`). The loss is read and the status is right, but the profile says
    framework `hf_trainer` (fix: ingest/stdout.py console_facts + profile.py framework rules)."""
    def console(nan_at):
        out = ["[2026-07-24 14:57:42,000] [INFO] [axolotl.cli.config.load_cfg:244] [PID:123] config:",
               "[2026-07-24 14:57:43,000] [INFO] [axolotl.loaders.model._configure_embedding_dtypes:410] [PID:123] "
               "Converting modules to torch.bfloat16",
               "trainable params: 41,943,040 || all params: 8,072,204,288 || trainable%: 0.5196",
               "[2026-07-24 14:57:45,000] [INFO] [axolotl.train.execute_training:203] [PID:123] Starting trainer..."]
        for s, loss in enumerate(_losses(nan_at=nan_at), 1):
            out.append(f"\r  {int(s / N * 100)}%|███     | {s}/{N} [00:{s:02d}<00:30,  1.02s/it]")
            out.append(str({"loss": loss, "grad_norm": 1.1, "learning_rate": 2e-4,
                            "ppl": round(math.exp(loss), 4) if loss == loss else math.nan,
                            "memory/max_active (GiB)": 20.1, "memory/max_allocated (GiB)": 20.1,
                            "memory/device_reserved (GiB)": 22.0, "epoch": round(s / N, 2)}))
        return "\n".join(out) + "\n"

    a = _analyze(tmp_path / "good", {"train.log": console(None)})
    assert _loss_points(a) == N and a.status == "healthy"
    # (PEFT's count banner shows an adapter; nothing in this console names its kind)
    assert (a.run_profile.framework, a.run_profile.method) == ("axolotl", "peft")
    _assert_broken_at(_analyze(tmp_path / "bad", {"train.log": console(NAN_AT)}))


# --- unsloth --------------------------------------------------------------------------------------------------------

_UNSLOTH_BANNER = r"""==((====))==  Unsloth 2026.8.3: Fast Llama patching. Transformers: 4.57.1.
   \\   /|    NVIDIA A100-SXM4-40GB. Num GPUs = 1. Max memory: 39.557 GB. Platform: Linux.
O^O/ \_/ \    Torch: 2.8.0+cu126. CUDA: 8.0. CUDA Toolkit: 12.6. Triton: 3.4.0
\        /    Bfloat16 = TRUE. FA [Xformers = 0.0.32. FA2 = False]
 "-____-"     Free license: http://github.com/unslothai/unsloth
==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1
   \\   /|    Num examples = 51,760 | Num Epochs = 1 | Total steps = 30
O^O/ \_/ \    Batch size per device = 2 | Gradient accumulation steps = 4
\        /    Data Parallel GPUs = 1 | Total batch size (2 x 4 x 1) = 8
 "-____-"     Trainable parameters = 41,943,040 of 8,072,204,288 (0.52% trained)
"""


def test_unsloth_notebook_step_table_is_read(tmp_path):
    """unsloth unsloth/models/llama.py:2404-2409 (model banner) and :2890-2894 (`==((====))==  Unsloth - 2x faster free
    finetuning | ...`, `Trainable parameters = N of M (P% trained)`), then the notebook's printed `Step\\tTraining Loss`
    table (transformers NotebookProgressCallback), copied as text; NaN printed `nan`."""
    def table(nan_at):
        rows = [f"{s}\t{loss:.6f}" for s, loss in enumerate(_losses(nan_at=nan_at), 1)]
        return _UNSLOTH_BANNER + f"\n [{N}/{N} 05:12, Epoch 0/1]\nStep\tTraining Loss\n" + "\n".join(rows) + "\n"

    a = _analyze(tmp_path / "good", {"notebook_output.txt": table(None)})
    assert _loss_points(a) == N and a.status == "healthy"
    assert (a.run_profile.framework, a.run_profile.method, a.run_profile.model_params) == (
        "unsloth", "lora", 8_072_204_288)
    _assert_broken_at(_analyze(tmp_path / "bad", {"notebook_output.txt": table(NAN_AT)}))


def test_unsloth_buffered_console_with_max_steps_inside_one_epoch_keeps_its_steps(tmp_path):
    """unsloth unsloth/models/llama.py:2891 prints `Num Epochs = 1 | Total steps = 30` for a notebook-style run with
    `max_steps=30` over 51,760 examples (8 a step: one epoch is 6,470 steps), so the Trainer's dict lines carry
    `'epoch': s * 8 / 51760`. Run as a script with stdout redirected (`python train.py > train.log 2>&1`, nohup)
    stdout is block-buffered: the tqdm bars (stderr) all come first, the dicts after. The tool then numbers every
    dict `epoch x 30 steps per epoch` = step 1: one loss point, status `warning` (no_learning_evidence), and a NaN at
    step 25 is not seen. Fix: ingest/stdout.py `_steps_per_epoch` (use Num examples / Total batch size, or give up the
    epoch rule when it puts different epochs on one step) / `_steps_by_rules`. The HF Trainer's own banner
    (`Num Epochs = 1`, `Total optimization steps = 30`) with max_steps goes the same way."""
    def console(nan_at):
        bars = "".join(f"\r  {int(s / N * 100)}%|███     | {s}/{N} [00:{s:02d}<00:30,  1.02s/it]" for s in range(1, N + 1))
        dicts = "".join(str({"loss": round(loss, 4), "grad_norm": 1.1, "learning_rate": 2e-4, "epoch": s * 8 / 51760}) + "\n"
                        for s, loss in enumerate(_losses(nan_at=nan_at), 1))
        return _UNSLOTH_BANNER + bars + "\n" + dicts

    a = _analyze(tmp_path / "good", {"train.log": console(None)})
    assert _loss_points(a) == N and a.status == "healthy", (_loss_points(a), a.first_incident)
    _assert_broken_at(_analyze(tmp_path / "bad", {"train.log": console(NAN_AT)}))


# --- verl -----------------------------------------------------------------------------------------------------------

def _verl_rl_metrics(s: int, loss: float, bad: bool) -> dict:
    return {"training/global_step": s, "training/epoch": 0, "actor/entropy": 0.5, "actor/pg_loss": loss,
            "actor/pg_clipfrac": 0.001, "actor/ppo_kl": 0.0, "actor/grad_norm": math.nan if bad else 0.3,
            "actor/lr": 1e-6, "critic/score/mean": 0.1 + s / 100, "critic/rewards/mean": 0.1 + s / 100,
            "critic/advantages/mean": 0.0, "response_length/mean": 300.0, "timing_s/gen": 10.0, "timing_s/step": 30.0}


def test_verl_console_logger_is_read(tmp_path):
    """verl verl/utils/logger/aggregate_logger.py:26-31 (`concat_dict_to_str`: `step:N - name:pprint.pformat(v) -
    ...`), printed by LocalLogger (tracking backend "console"); SFT names verl/trainer/fsdp_sft_trainer.py:528-530
    (`train/loss`, `train/lr(1e-3)`, `train/time(s)`). NaN printed `nan`."""
    def console(nan_at):
        out = []
        for s, loss in enumerate(_losses(nan_at=nan_at), 1):
            m = {"train/loss": loss, "train/lr(1e-3)": 0.01, "train/time(s)": 1.2}
            out.append(" - ".join([f"step:{s}"] + [f"{k}:{pprint.pformat(v)}" for k, v in m.items()]))
        return "\n".join(out) + "\n"

    a = _analyze(tmp_path / "good", {"train.log": console(None)})
    assert _loss_points(a) == N and a.status == "healthy"
    assert a.run_profile.framework == "verl"
    _assert_broken_at(_analyze(tmp_path / "bad", {"train.log": console(NAN_AT)}))


def _verl_file_logger(nan_at: int | None) -> str:
    """What FileLogger writes: `{"step": N, "data": {...}}`, by orjson, which writes NaN as null."""
    out = []
    for s, loss in enumerate(_losses(nan_at=nan_at, lo=-0.01, hi=0.02), 1):
        m = _verl_rl_metrics(s, loss, bool(nan_at and s >= nan_at))
        m = {k: (None if isinstance(v, float) and v != v else v) for k, v in m.items()}
        out.append(json.dumps({"step": s, "data": m}))
    return "\n".join(out) + "\n"


def test_verl_file_logger_jsonl_metrics_are_read(tmp_path):
    """verl verl/utils/tracking.py:236-252 (FileLogger, tracking backend "file": `data = {"step": step, "data": data}`
    written to $VERL_FILE_LOGGER_ROOT/<project>/<experiment>.jsonl). The metrics are nested under "data": the tool
    reads no metric at all from it (status `warning`, no_learning_evidence at step 0). Fix: ingest/jsonl.py `read` /
    _jsonlines.read_jsonl (take the numbers of a nested `data` object)."""
    a = _analyze(tmp_path, {"verl_grpo_gsm8k/qwen2_7b_grpo.jsonl": _verl_file_logger(None)})
    wide = a.timeline.wide()
    assert "actor/pg_loss" in wide and int(wide["actor/pg_loss"].notna().sum()) == N
    assert a.status == "healthy"


def test_verl_file_logger_null_metric_is_nan(tmp_path):
    """verl verl/utils/tracking.py:252 writes with `orjson.dumps(..., option=orjson.OPT_SERIALIZE_NUMPY)`; orjson
    writes a NaN float as `null`. A run whose actor/pg_loss and actor/grad_norm went NaN at step 25 has `null` there
    from step 25 on: it must read as broken at step 25 (ingest/_jsonlines.py: a null under a metric key of a verl
    file log is the NaN orjson could not write)."""
    _assert_broken_at(_analyze(tmp_path, {"verl_grpo_gsm8k/qwen2_7b_grpo.jsonl": _verl_file_logger(NAN_AT)}))


# --- OpenRLHF -------------------------------------------------------------------------------------------------------

def _tqdm_num(x: float) -> str:
    """tqdm's `format_num` for a postfix value."""
    f = "{0:.3g}".format(x).replace("+0", "+").replace("-0", "-")
    n = str(x)
    return f if len(f) < len(n) else n


def test_openrlhf_sft_gpt_loss_is_the_loss(tmp_path):
    """OpenRLHF openrlhf/trainer/sft_trainer.py:183-194 (`logs_dict = {"gpt_loss": ..., "lr": ..., "grad_norm": ...}`,
    `step_bar.set_postfix(logs_dict)`, bar `Train step of epoch %d`), :199 (`loss_mean`), TensorBoard `train/{k}`
    (:226). `gpt_loss` is the SFT loss; the tool reads it as an unknown metric: no loss series, status `warning`
    (no_learning_evidence). Fix: timeline.canonical_metric / metric_names (gpt_loss -> loss); the TensorBoard tag
    `train/gpt_loss` goes the same way."""
    def console(nan_at):
        out = ["Train epoch:   0%|          | 0/1 [00:00<?, ?it/s]"]
        for s, loss in enumerate(_losses(nan_at=nan_at), 1):
            postfix = {"gpt_loss": loss, "lr": 1e-5, "grad_norm": 1.1, "loss_mean": loss}
            out.append(f"\rTrain step of epoch 0:  {int(s / N * 100)}%|███     | {s}/{N} [00:{s:02d}<00:30,  1.02s/it, "
                       + ", ".join(f"{k}={_tqdm_num(v)}" for k, v in postfix.items()) + "]")
        return "".join(out) + "\n"

    a = _analyze(tmp_path / "good", {"train.log": console(None)})
    assert _loss_points(a) == N and a.status == "healthy", (_loss_points(a), a.first_incident)
    _assert_broken_at(_analyze(tmp_path / "bad", {"train.log": console(NAN_AT)}))


def test_openrlhf_ppo_global_step_status_line_is_read(tmp_path):
    """OpenRLHF openrlhf/trainer/ppo_trainer.py:547 (`logger.info(f"✨ Global step {global_step}: {log_status}")`,
    log_status the step's dict: `policy_loss`, `actor_lr`, `actor_grad_norm`, `kl`, `reward`, `response_length`,
    `timing/...`; openrlhf/trainer/ray/ppo_actor.py:369-381), logger format openrlhf/utils/logging_utils.py:10
    (`%(levelname)s %(asctime)s %(filename)s:%(lineno)d] %(message)s`). The tool finds no training log in it
    (NotARunDirectory): run.py `_LOG_HINT` and ingest/stdout.py `_pairs` (`_LOG_KEYS` has no policy_loss; the step is
    in `Global step N:`, not in the dict)."""
    def console(nan_at):
        out = []
        for s, loss in enumerate(_losses(nan_at=nan_at, lo=0.01, hi=0.05), 1):
            status = {"policy_loss": loss, "actor_lr": 1e-6,
                      "actor_grad_norm": math.nan if nan_at and s >= nan_at else 0.5, "kl": 0.001 * s,
                      "reward": 0.1 + s / 100, "return": 0.1, "response_length": 300.0, "total_length": 500.0,
                      "timing/make_experience": 10.0, "timing/ppo_train": 5.0}
            out.append(f"INFO 08-13 19:25:{s:02d} ppo_trainer.py:547] ✨ Global step {s}: {status}")
        return "\n".join(out) + "\n"

    a = _analyze(tmp_path / "good", {"train.log": console(None)})
    wide = a.timeline.wide()
    assert "policy_loss" in wide or "loss" in wide
    assert a.status == "healthy"
    _assert_broken_at(_analyze(tmp_path / "bad", {"train.log": console(NAN_AT)}))


def test_llamafactory_web_ui_running_log_says_llamafactory(tmp_path):
    """LLaMA-Factory's web UI (src/llamafactory/webui/runner.py) saves the run's console as running_log.txt; one that
    holds only the Trainer's dict lines is still LLaMA-Factory's. The same lines as train.log say hf_trainer at most."""
    lines = "".join(str({"loss": round(loss, 4), "grad_norm": 1.1, "learning_rate": 2e-4, "epoch": round(s / N, 2)})
                    + "\n" for s, loss in enumerate(_losses(), 1))
    assert _analyze(tmp_path / "webui", {"running_log.txt": lines}).run_profile.framework == "llamafactory"
    assert _analyze(tmp_path / "plain", {"train.log": lines}).run_profile.framework != "llamafactory"


def test_nemo_rl_tensorboard_validation_loss_is_the_eval_loss(tmp_path):
    """NeMo-RL nemo_rl/algorithms/sft.py logs its validation loss as `validation/val_loss` (TensorBoard)."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(str(tmp_path / "tb"))
    for s, loss in enumerate(_losses(), 1):
        writer.add_scalar("train/loss", loss, s)
        if s % 10 == 0:
            writer.add_scalar("validation/val_loss", loss + 0.1, s)
    writer.close()
    assert len(forensics.analyze(tmp_path, check_checkpoints=False).timeline.series("eval_loss")) == 3
