"""Tests of the readers of MaxText, fairseq, Keras, EasyLM, t5x, DeepSpeed-Chat, PaddleNLP, mlx-lm, ... logs.

Formats found in the frameworks' own source (fmt3 sweep): MaxText, fairseq, fairseq2, Keras, the transformers
`*_no_trainer.py` examples, EasyLM, t5x, DeepSpeed-Chat, NeMo-Aligner, trlx, TRL's 0.x PPOTrainer, PaddleNLP,
ColossalAI, ms-swift 2.x and mlx-lm. Each run below is built as that framework's code prints or writes it (the source
file and line in each docstring; commits: maxtext e591f30 (older form 30c0d0d), fairseq 3d262bb, fairseq2 027bdeb,
keras 3422977, EasyLM fe5b2c3, t5x cc342d4, DeepSpeedExamples 83757d9, NeMo-Aligner af2b3bd, trlx 3340c2f,
ColossalAI 4f9953b, ms-swift d1e9962 (2.x), mlx-lm d78bf58 (and bdb77da^ for the older lines)). A failing test is a
reader gap; a passing one records coverage (at most one per framework)."""
from __future__ import annotations

import json
import math
import pprint

import pytest

from support.format_runs import analyze_logs, assert_broken_at, assert_healthy_loss, losses, write_file

# --- builders: what each framework prints / writes (30 logged steps, loss 2.5 -> 1.2, NaN from step 25) ---


def gn(s, l):
    return float("nan") if l != l else 1.5 - s * 0.02


def lr(s):
    return 1e-4 * (1 - s / 40)


def maxtext_log(nan_at=None):
    out = ["I0822 10:00:00.000000 140001 pyconfig.py:300] Config param dtype: bfloat16",
           "I0822 10:00:00.000000 140001 pyconfig.py:300] Config param model_name: llama2-7b",
           "I0822 10:00:01.000000 140001 max_utils.py:523] number parameters: 6.738 billion"]
    for s, l in enumerate(losses(nan_at), 1):
        out.append(f"I0822 10:00:{s:02d}.000000 140001 metric_logger.py:230] completed step: {s}, seconds: 0.512, "
                   f"TFLOP/s/device: 180.123, Tokens/s/device: 3949.842, total_weights: 1572864, loss: {l:.3f}, "
                   f"lm_loss: {l:.3f}, perplexity: {math.exp(l) if l == l else l:.3f}")
        if s % 10 == 0:
            e = 2.4 - s * 0.03
            out.append(f"I0822 10:00:{s:02d}.500000 140001 metric_logger.py:258] Completed eval after train step {s}, "
                       f"loss={e:.3f}, perplexity={math.exp(e):.3f}, total_weights=65536, avg_z_loss=0.000")
    return "\n".join(out) + "\n"


def fairseq_log(nan_at=None):
    out = ["2024-03-01 10:00:00 | INFO | fairseq_cli.train | task: LanguageModelingTask",
           "2024-03-01 10:00:00 | INFO | fairseq_cli.train | model: TransformerLanguageModel",
           "2024-03-01 10:00:00 | INFO | fairseq_cli.train | criterion: CrossEntropyCriterion",
           "2024-03-01 10:00:00 | INFO | fairseq_cli.train | num. shared model params: 19,107,840 "
           "(num. trained: 19,107,840)",
           "2024-03-01 10:00:01 | INFO | fairseq.trainer | begin training epoch 1"]
    for s, l in enumerate(losses(nan_at), 1):
        ep = 1 + (s - 1) // 10
        i = (s - 1) % 10 + 1
        l = l / math.log(2)  # fairseq prints bits (ppl = 2^loss): the reader gives nats, losses() back
        ppl = 2 ** l if l == l else l
        out.append(f"2024-03-01 10:00:{s:02d} | INFO | train_inner | epoch {ep:03d}:     {i:2d} / 10 loss={l:.3f}, "
                   f"ppl={ppl:.2f}, wps=20000, ups=2.5, wpb=8192, bsz=16, num_updates={s}, lr={lr(s):g}, "
                   f"gnorm={gn(s, l):.3f}, loss_scale=128, train_wall=4, gb_free=10.1, wall={s * 4}")
        if s % 10 == 0:
            e = (2.4 - s * 0.03) / math.log(2)
            out.append(f"2024-03-01 10:00:{s:02d} | INFO | valid | epoch {ep:03d} | valid on 'valid' subset | "
                       f"loss {e:.3f} | ppl {2 ** e:.2f} | wps 50000 | wpb 8000 | bsz 15.6 | num_updates {s}")
            out.append(f"2024-03-01 10:00:{s:02d} | INFO | train | epoch {ep:03d} | loss {l:.3f} | ppl {ppl:.2f} | "
                       f"wps 20000 | ups 2.5 | wpb 8192 | bsz 16 | num_updates {s} | lr {lr(s):g} | "
                       f"gnorm {gn(s, l):.3f} | loss_scale 128 | train_wall 40 | gb_free 10.1 | wall {s * 4}")
    return "\n".join(out) + "\n"


def fairseq_json_log(nan_at=None):
    out = ["2024-03-01 10:00:00 | INFO | fairseq_cli.train | model: TransformerLanguageModel"]
    for s, l in enumerate(losses(nan_at), 1):
        ep = 1 + (s - 1) // 10
        l = l / math.log(2)  # in bits, as above
        d = {"epoch": ep, "update": round(ep - 1 + ((s - 1) % 10 + 1) / 10, 3), "loss": f"{l:.3f}",
             "ppl": f"{2 ** l if l == l else l:.2f}", "wps": "20000", "ups": "2.5", "wpb": "8192", "bsz": "16",
             "num_updates": str(s), "lr": f"{lr(s):g}", "gnorm": f"{gn(s, l):.3f}", "loss_scale": "128",
             "train_wall": "4", "gb_free": "10.1", "wall": str(s * 4)}
        out.append(f"2024-03-01 10:00:{s:02d} | INFO | train_inner | {json.dumps(d)}")
        if s % 10 == 0:
            e = (2.4 - s * 0.03) / math.log(2)
            v = {"epoch": ep, "valid_loss": f"{e:.3f}", "valid_ppl": f"{2 ** e:.2f}", "valid_wps": "50000",
                 "valid_wpb": "8000", "valid_bsz": "15.6", "valid_num_updates": str(s)}
            out.append(f"2024-03-01 10:00:{s:02d} | INFO | valid | {json.dumps(v)}")
    return "\n".join(out) + "\n"


def fairseq2_log(nan_at=None):
    out = ["[Rank 0] 2026-04-10 18:58:00 INFO fairseq2 - Running training on 1 device(s)."]
    for s, l in enumerate(losses(nan_at), 1):
        out.append(f"[Rank 0] 2026-04-10 18:58:{s:02d} INFO fairseq2 - Train Metrics (step {s}) - NLL Loss: {l:g} | "
                   f"Gradient Norm: {gn(s, l):g} | Data Epoch: 1 | Data Time: 0.01s | Compute Time: 0.5s | "
                   f"Lapse Time: 0.52s | Wall Time: {s}s | Learning Rate: {lr(s):g} | Batch Size: 8 | "
                   f"Elements per Batch: 4,096 | Elements per Second: 8,000 | Number of Examples: {8 * s} | "
                   f"Peak Active Device Memory: 12.1GiB")
        if s % 10 == 0:
            e = 2.4 - s * 0.03
            out.append(f"[Rank 0] 2026-04-10 18:58:{s:02d} INFO fairseq2 - Validation Metrics (step {s}) - "
                       f"NLL Loss: {e:g} | Data Time: 0.1s | Compute Time: 1.2s | Wall Time: {s}s | Batch Size: 8")
    return "\n".join(out) + "\n"


def fairseq2_jsonl(nan_at=None):
    out = []
    for s, l in enumerate(losses(nan_at), 1):
        out.append(json.dumps({"Time": f"2026-04-10T18:58:{s:02d}+00:00", "Step": s, "NLL Loss": l,
                               "Gradient Norm": gn(s, l), "Data Epoch": 1, "Learning Rate": lr(s),
                               "Batch Size": 8, "Elements per Batch": 4096}))
    return "\n".join(out) + "\n"


def keras_log(nan_at=None, verbose=1):
    out = []
    for s, l in enumerate(losses(nan_at), 1):
        out.append(f"Epoch {s}/30")
        e = 2.4 - s * 0.03
        lv = f"{l:.4f}"
        if verbose == 1:
            out.append("\x1b[1m100/100\x1b[0m \x1b[32m" + "━" * 20 + "\x1b[0m\x1b[37m\x1b[0m \x1b[1m5s\x1b[0m "
                       f"50ms/step - loss: {lv} - sparse_categorical_accuracy: 0.4500 - val_loss: {e:.4f} - "
                       f"val_sparse_categorical_accuracy: 0.4600")
        else:
            out.append(f"100/100 - 5s - 50ms/step - loss: {lv} - sparse_categorical_accuracy: 0.4500 - "
                       f"val_loss: {e:.4f} - val_sparse_categorical_accuracy: 0.4600")
    return "\n".join(out) + "\n"


def clm_no_trainer_log(nan_at=None, epochs=5):
    out = ["08/22/2026 10:00:00 - INFO - __main__ - ***** Running training *****",
           "08/22/2026 10:00:00 - INFO - __main__ -   Num examples = 2318",
           f"08/22/2026 10:00:00 - INFO - __main__ -   Num Epochs = {epochs}",
           "08/22/2026 10:00:00 - INFO - __main__ -   Instantaneous batch size per device = 8",
           "08/22/2026 10:00:00 - INFO - __main__ -   Total train batch size (w. parallel, distributed & accumulation)"
           " = 8",
           "08/22/2026 10:00:00 - INFO - __main__ -   Gradient Accumulation steps = 1",
           "08/22/2026 10:00:00 - INFO - __main__ -   Total optimization steps = 1450"]
    for ep in range(epochs):
        e = 2.5 - 0.3 * ep
        if nan_at is not None and ep >= nan_at:
            e = float("nan")
        out.append(f"08/22/2026 10:0{ep + 1}:00 - INFO - __main__ - epoch {ep}: perplexity: {math.exp(e)} "
                   f"eval_loss: {e}")
    return "\n".join(out) + "\n"


def easylm_log(nan_at=None):
    out = []
    for s, l in enumerate(losses(nan_at), 1):
        d = {"step": s, "loss": f"array({l:.7g}, dtype=float32)", "accuracy": "array(0.45, dtype=float32)",
             "learning_rate": f"array({lr(s):.7g}, dtype=float32)",
             "gradient_norm": f"array({gn(s, l):.7g}, dtype=float32)", "param_norm": "array(120.5, dtype=float32)",
             "dataset_example_index": 8 * s, "dataset_total_tokens": 16384 * s}
        body = pprint.pformat(d).replace("'array(", "array(").replace("float32)'", "float32)")
        out.append("\n" + body + "\n")
    return "\n".join(out) + "\n"


def t5x_log(nan_at=None):
    out = ["I0421 12:00:00.000000 139 train.py:300] Training for 30 steps."]
    for s, l in enumerate(losses(nan_at), 1):
        vals = {"accuracy": 0.45, "cross_ent_loss": l, "learning_rate": lr(s), "learning_rate/current": lr(s),
                "loss": l, "loss_per_all_target_tokens": l / 100, "timing/seconds": 0.5,
                "timing/steps_per_second": 2.0, "z_loss": 0.0001}
        txt = ", ".join(f"{k}={v:.6g}" for k, v in sorted(vals.items()))
        out.append(f"I0421 12:00:{s:02d}.000000 139 logging_writer.py:48] [{s}] collection=train {txt}")
        if s % 10 == 0:
            e = 2.4 - s * 0.03
            out.append(f"I0421 12:00:{s:02d}.500000 139 logging_writer.py:48] [{s}] collection=training_eval/c4 "
                       f"accuracy=0.46, cross_ent_loss={e:.6g}, loss={e:.6g}, z_loss=0.0001")
    return "\n".join(out) + "\n"


def dschat_sft_log(nan_at=None):
    out = ["***** Running training *****", "***** Evaluating perplexity, Epoch 0/1 *****",
           "ppl: 13.46, loss: 2.6", "Beginning of Epoch 1/1, Total Micro Batches 30"]
    for s, l in enumerate(losses(nan_at), 1):
        out.append(f"Epoch: 0, Step: {s - 1}, Rank: 0, loss = {l}")
        out.append("Model Parameters: 0.125 B, Latency: 0.52s, TFLOPs: 12.30, Samples/sec: 15.38, Time/seq 0.07s, "
                   "Batch Size: 8, Sequence Length: 512")
    e = 1.3 if nan_at is None else float("nan")
    out += ["***** Evaluating perplexity, Epoch 1/1 *****", f"ppl: {math.exp(e)}, loss: {e}",
            "saving the final model ..."]
    return "\n".join(out) + "\n"


def nemo_aligner_sft_log(nan_at=None):
    bars = []
    for s, l in enumerate(losses(nan_at), 1):
        pct = int(100 * s / 30)
        post = f"train_loss={l:.3g}, train_lr={lr(s):.3g}, train_consumed_samples={8 * s}, train_step_time=0.5, " \
               f"train_epoch=1"
        if s % 10 == 0:
            post += f", val_loss={2.4 - s * 0.03:.3g}"
        bars.append(f"Training steps: {pct:3d}%|{'#' * (pct // 10):10s}| {s}/30 [00:{s:02d}<00:{30 - s:02d},  "
                    f"1.00it/s, {post}]")
    return "\r".join(bars) + "\n"


def trlx_sft_log(nan_at=None):
    bars = []
    for s, l in enumerate(losses(nan_at), 1):
        pct = int(100 * s / 30)
        bars.append(f"[loss: {l:.2f}]: {pct:3d}%|{'#' * (pct // 10):10s}| {s}/30 [00:{s:02d}<00:{30 - s:02d},  "
                    f"1.00it/s]")
    return "[RANK 0] Initializing model: gpt2\n[RANK 0] Starting training\n" + "\r".join(bars) + "\n"


def trlx_ppo_log(nan_at=None):
    bars = []
    for s, l in enumerate(losses(nan_at), 1):
        pct = int(100 * s / 30)
        bars.append(f"[loss/total: {l:.2f} | loss/policy: {l / 3:.2f} | loss/value: {l / 2:.2f}]: {pct:3d}%|"
                    f"{'#' * (pct // 10):10s}| {s}/30 [00:{s:02d}<00:{30 - s:02d},  1.00it/s]")
    return "[RANK 0] Initializing model: gpt2\n[RANK 0] Starting training\n" + "\r".join(bars) + "\n"


def paddle_log(nan_at=None):
    out = ["[2024-03-03 18:06:28,000] [    INFO] - ============================================================",
           "[2024-03-03 18:06:28,000] [    INFO] -      Training Configuration Arguments      ",
           "[2024-03-03 18:06:28,001] [    INFO] - bf16                          :True",
           "[2024-03-03 18:06:28,001] [    INFO] - learning_rate                 :0.0001",
           "[2024-03-03 18:06:28,001] [    INFO] - lora                          :True",
           "[2024-03-03 18:06:28,002] [    INFO] - ***** Running training *****"]
    for s, l in enumerate(losses(nan_at), 1):
        out.append(f"[2024-03-03 18:06:{s:02d},568] [    INFO] - loss: {round(l, 8)}, learning_rate: {lr(s):.3e}, "
                   f"global_step: {s}, current_memory_allocated: 7.549170255661011, "
                   f"interval_runtime: 0.1491, interval_samples_per_second: 214.59, "
                   f"interval_steps_per_second: 6.70, progress_or_epoch: {s / 30:.4f}")
    return "\n".join(out) + "\n"


def colossal_sft_log(nan_at=None):
    bars = []
    for s, l in enumerate(losses(nan_at), 1):
        pct = int(100 * s / 30)
        bars.append(f"Epoch 1/1: {pct:3d}%|{'#' * (pct // 10):10s}| {s}/30 [00:{s:02d}<00:{30 - s:02d},  "
                    f"1.00it/s, train/loss={l:.3f}]")
    return "\r".join(bars) + "\n"


def swift2_log(nan_at=None):
    out = ["[INFO:swift] Setting args.lazy_tokenize: False",
           "[INFO:swift] SwiftModel: 6755.4267M Params (16.7772M Trainable [0.2484%]), 0.0019M Buffers."]
    for s, l in enumerate(losses(nan_at), 1):
        out.append(f"{{'loss': {round(l, 8)}, 'acc': 0.45, 'grad_norm': {gn(s, l):.4f}, 'learning_rate': {lr(s):.8f},"
                   f" 'epoch': {s / 30:.2f}, 'global_step': {s}}}")
        if s % 10 == 0:
            out.append(f"{{'eval_loss': {2.4 - s * 0.03:.4f}, 'eval_acc': 0.46, 'eval_runtime': 1.2, "
                       f"'eval_samples_per_second': 8.3, 'eval_steps_per_second': 8.3, 'epoch': {s / 30:.2f}, "
                       f"'global_step': {s}}}")
    return "\n".join(out) + "\n"


def swift2_jsonl(nan_at=None):
    out = []
    for s, l in enumerate(losses(nan_at), 1):
        out.append(json.dumps({"loss": l, "acc": 0.45, "grad_norm": gn(s, l), "learning_rate": lr(s),
                               "epoch": round(s / 30, 2), "global_step": s}))
    return "\n".join(out).replace("NaN", "NaN") + "\n"


def mlx_old_log(nan_at=None):
    out = ["Loading pretrained model", "Loading datasets", "Training",
           "Trainable parameters: 0.085% (2.621M/3085.939M)", "Starting training..., iters: 30",
           "Iter 1: Val loss 2.600, Val took 1.234s"]
    for s, l in enumerate(losses(nan_at), 1):
        out.append(f"Iter {s}: Train loss {l:.3f}, Learning Rate {lr(s):.3e}, It/sec 0.512, Tokens/sec 210.345, "
                   f"Trained Tokens {410 * s}, Peak mem 5.321 GB")
        if s % 10 == 0:
            out.append(f"Iter {s}: Val loss {2.4 - s * 0.03:.3f}, Val took 1.234s")
    return "\n".join(out) + "\n"


def mlx_new_log(nan_at=None):
    out = ["Loading pretrained model", "Loading datasets", "Training",
           "Trainable parameters: 0.085% (2.621M/3085.939M)",
           "  iter   train_loss     tok/s     tokens"]
    prev = None
    for s, l in enumerate(losses(nan_at), 1):
        arrow = "▼" if prev is None or l <= prev else "▲"
        prev = l
        out.append(f"  {s:>4}    {l:>5.3f} {arrow}    {210:>5,.0f}    {410 * s / 1000:>5.1f}k")
        if s % 10 == 0:
            out.append(f"  {s:>4}    val {2.4 - s * 0.03:>5.3f}    1.23s")
    return "\n".join(out) + "\n"


# --- MaxText ------------------------------------------------------------------------------------------------

def test_maxtext_completed_step_lines_give_the_loss(tmp_path):
    """src/maxtext/common/metric_logger.py:181-230 (_log_training_metrics): `completed step: N, seconds: ..., loss: X`
    through absl logging."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "a", "train.log", maxtext_log())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "train.log", maxtext_log(25))), 25)


def test_maxtext_completed_eval_line_gives_eval_loss(tmp_path):
    """src/maxtext/common/metric_logger.py:236-258 (_log_eval_metrics): `Completed eval after train step N,
    loss=X, perplexity=Y, total_weights=W, avg_z_loss=Z`."""
    a = analyze_logs(write_file(tmp_path, "train.log", maxtext_log()))
    assert len(a.timeline.series("eval_loss")) == 3


def test_maxtext_config_params_give_framework_and_precision(tmp_path):
    """pyconfig.py:300 (30c0d0d) `Config param dtype: bfloat16`, max_utils.py:523 `number parameters: 6.738 billion`;
    the step lines are MaxText's own."""
    a = analyze_logs(write_file(tmp_path, "train.log", maxtext_log()))
    assert a.run_profile.framework == "maxtext"
    assert a.run_profile.precision == "bf16"


# --- fairseq ------------------------------------------------------------------------------------------------

def test_fairseq_simple_train_inner_lines_give_the_loss(tmp_path):
    """fairseq/logging/progress_bar.py:276-287 (SimpleProgressBar.log): `epoch 001:     10 / 10 loss=X, ...,
    num_updates=N, lr=..., gnorm=...` under the `train_inner` logger (fairseq_cli/train.py:338)."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "a", "train.log", fairseq_log())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "train.log", fairseq_log(25))), 25)


def test_fairseq_simple_gnorm_and_valid_lines_are_read(tmp_path):
    """progress_bar.py:276-287 prints `gnorm=X` (trainer.py:1526 metrics.log_scalar("gnorm")); progress_bar.py:289-292
    (SimpleProgressBar.print) prints `valid | epoch 001 | valid on 'valid' subset | loss X | ... | num_updates N`
    (fairseq_cli/train.py:532)."""
    a = analyze_logs(write_file(tmp_path, "train.log", fairseq_log()))
    assert "grad_norm" in a.timeline.metrics
    assert len(a.timeline.series("eval_loss")) == 3


def test_fairseq_json_log_gnorm_and_valid_loss_are_named(tmp_path):
    """progress_bar.py:206-228 (JsonProgressBar, --log-format json): `train_inner | {"epoch": 1, ..., "gnorm": "1.2"}`
    and `valid | {"valid_loss": "2.1", ..., "valid_num_updates": "10"}` (print prefixes the tag)."""
    a = analyze_logs(write_file(tmp_path, "train.log", fairseq_json_log()))
    assert "grad_norm" in a.timeline.metrics
    assert len(a.timeline.series("eval_loss")) == 3


# --- fairseq2 -----------------------------------------------------------------------------------------------

def test_fairseq2_train_metrics_lines_give_the_loss(tmp_path):
    """src/fairseq2/metrics/recorders/log.py:57-80 (LogMetricRecorder): `Train Metrics (step N) - NLL Loss: X |
    Gradient Norm: Y | ... | Learning Rate: Z` (display names: recipe/composition/metric_recorders.py:150-172; file
    format: recipe/internal/logging.py:71)."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "a", "logs/rank_0.log", fairseq2_log())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "logs/rank_0.log", fairseq2_log(25))), 25)


def test_fairseq2_metrics_jsonl_is_read(tmp_path):
    """src/fairseq2/metrics/recorders/jsonl.py:88-118 (JsonlMetricRecorder): <output_dir>/metrics/train.jsonl,
    `{"Time": ..., "Step": N, "NLL Loss": X, "Gradient Norm": Y, "Learning Rate": Z}` (display names as keys)."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "a", "metrics/train.jsonl", fairseq2_jsonl())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "metrics/train.jsonl", fairseq2_jsonl(25))), 25)


# --- Keras --------------------------------------------------------------------------------------------------

def test_keras_fit_epoch_lines_give_the_loss(tmp_path):
    """keras/src/callbacks/progbar_logger.py:55 `Epoch E/N`, keras/src/utils/progbar.py:150-205 (verbose=1)
    `100/100 ━━━ 5s 50ms/step - loss: X - val_loss: Y`."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path, "train.log", keras_log())))


def test_keras_nan_loss_epoch_is_broken_at_its_epoch(tmp_path):
    """keras/src/utils/progbar.py:196-201: a NaN mean prints `loss: nan` (`{avg:.4e}`); the run breaks at epoch 25,
    not at the bar's `100/100` count (the tool says warning, step 100, 'an attempt a resume threw away')."""
    assert_broken_at(analyze_logs(write_file(tmp_path, "train.log", keras_log(25))), 25)


# --- transformers / accelerate *_no_trainer.py examples -------------------------------------------------------

def test_run_clm_no_trainer_epoch_eval_lines_are_read(tmp_path):
    """examples/pytorch/language-modeling/run_clm_no_trainer.py (transformers): `logger.info(f"epoch {epoch}:
    perplexity: {perplexity} eval_loss: {eval_loss}")` under the examples' `%(asctime)s - %(levelname)s - %(name)s -
    %(message)s` format; the tool finds no training log at all."""
    a = analyze_logs(write_file(tmp_path / "a", "train.log", clm_no_trainer_log()))
    assert len(a.timeline.series("eval_loss")) == 5 and a.status == "healthy"
    assert analyze_logs(write_file(tmp_path / "b", "train.log", clm_no_trainer_log(3))).status == "broken"


# --- EasyLM -------------------------------------------------------------------------------------------------

@pytest.mark.xfail(strict=True, reason="EasyLM's multi-line pprint dicts of jax arrays are not read (a gap left: EasyLM is no longer maintained)")
def test_easylm_pformat_metric_dicts_are_read(tmp_path):
    """EasyLM/models/llama/llama_train.py:237-242: `tqdm.write("\\n" + pprint.pformat(log_metrics) + "\\n")`, a
    multi-line dict of jax.device_get values (`'loss': array(2.3, dtype=float32)`, `'step': 10`)."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "a", "train.log", easylm_log())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "train.log", easylm_log(25))), 25)


# --- t5x ----------------------------------------------------------------------------------------------------

def test_t5x_clu_logging_writer_lines_are_read(tmp_path):
    """t5x/trainer.py:335 (create_default_writer(collection=name)) -> clu LoggingWriter.write_scalars:
    `logging.info("[%d]%s %s", step, " collection=train", "accuracy=0.45, ..., loss=2.3, ...")`."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "a", "train.log", t5x_log())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "train.log", t5x_log(25))), 25)


# --- DeepSpeed-Chat -----------------------------------------------------------------------------------------

def test_dschat_step1_ppl_and_loss_eval_line_gives_eval_loss(tmp_path):
    """applications/DeepSpeed-Chat/training/step1_supervised_finetuning/main.py:352,381 (since f7ff9dd, Oct 2023):
    `ppl: {perplexity}, loss: {eval_loss}` after `***** Evaluating perplexity, Epoch E/N *****`; the reader knows
    only the older `ppl: X` line."""
    a = analyze_logs(write_file(tmp_path, "train.log", dschat_sft_log()))
    assert len(a.timeline.series("eval_loss")) == 2
    assert a.run_profile.framework == "deepspeed"


# --- NeMo-Aligner -------------------------------------------------------------------------------------------

def test_nemo_aligner_train_loss_postfix_is_the_loss(tmp_path):
    """nemo_aligner/algorithms/supervised.py:225,250,275: tqdm `Training steps` bar, metrics renamed `train_{k}` and
    `val_{k}`, `global_pbar.set_postfix(metrics)` -> `train_loss=2.3, train_lr=...`; the tool keeps `train_loss` as
    a metric of its own and the run has no `loss`."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path, "train.log", nemo_aligner_sft_log())))


# --- trlx ---------------------------------------------------------------------------------------------------

@pytest.mark.xfail(strict=True, reason="a loss in a tqdm bar's description, trlx's `[loss: 2.30]:` (a gap left: trlx is archived)")
def test_trlx_loss_in_bar_description_is_read(tmp_path):
    """trlx/trainer/accelerate_base_trainer.py:639-640: `desc = " | ".join(f"{k}: {v:.2f}" ... k.startswith("loss"))`,
    `tbar.set_description(f"[{desc}]")` -> `[loss: 2.30]:  10%|#   | 3/30 [...]` (SFT; PPO: `[loss/total: ... |
    loss/policy: ... | loss/value: ...]`)."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "a", "train.log", trlx_sft_log())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "train.log", trlx_ppo_log(25))), 25)


# --- TRL 0.x PPOTrainer -------------------------------------------------------------------------------------

def test_trl_ppo_tensorboard_nan_total_loss_is_broken(tmp_path):
    """trl/trainer/ppo_trainer.py (0.4-0.11) record_step_stats / accelerator.log(stats): `ppo/loss/policy`,
    `ppo/loss/value`, `ppo/loss/total`, `env/reward_mean`, `objective/kl`, `ppo/learning_rate` to TensorBoard;
    `ppo/loss/total` NaN from step 25 is read but the run is called healthy."""
    import pytest
    pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter
    writer = SummaryWriter(str(tmp_path / "logs" / "trl"))
    for s, l in enumerate(losses(25), 1):
        for k, v in {"ppo/loss/policy": l / 3, "ppo/loss/value": l / 2, "ppo/loss/total": l,
                     "env/reward_mean": 1 - l / 3, "objective/kl": 0.1, "ppo/learning_rate": 1.41e-5}.items():
            writer.add_scalar(k, v, s)
    writer.close()
    assert_broken_at(analyze_logs(tmp_path), 25)


# --- PaddleNLP ----------------------------------------------------------------------------------------------

def test_paddlenlp_trainer_log_lines_give_the_loss(tmp_path):
    """paddlenlp/trainer/trainer_callback.py (ProgressCallback.on_log): `logger.info(", ".join(f"{k}: {v}" ...))` ->
    `[2024-03-03 18:06:33,568] [    INFO] - loss: 1.08, learning_rate: 4e-08, global_step: 1, ...`."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "a", "train.log", paddle_log())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "train.log", paddle_log(25))), 25)


@pytest.mark.xfail(strict=True, reason="PaddleNLP's printed argument rows are not read for the profile (a gap left; its rows were not checked against source)")
def test_paddlenlp_printed_arguments_give_framework_precision_method(tmp_path):
    """paddlenlp/trainer/training_args.py print_config: `Training Configuration Arguments` then `bf16   :True`,
    `lora   :True` rows under `[    INFO] -`."""
    a = analyze_logs(write_file(tmp_path, "train.log", paddle_log()))
    assert a.run_profile.framework == "paddlenlp"
    assert a.run_profile.precision == "bf16"
    assert a.run_profile.method == "lora"


# --- ColossalAI ---------------------------------------------------------------------------------------------

def test_colossalchat_sft_bar_postfix_gives_the_loss(tmp_path):
    """applications/ColossalChat/coati/trainer/sft.py:127,151: tqdm `Epoch 1/N` bar,
    `step_bar.set_postfix({"train/loss": ...})`."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "a", "train.log", colossal_sft_log())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "train.log", colossal_sft_log(25))), 25)


# --- ms-swift 2.x -------------------------------------------------------------------------------------------

def test_swift2_console_dicts_say_swift(tmp_path):
    """swift/trainers/callback.py:47 (d1e9962, 2.x): `logs['global_step'] = state.global_step` (3.x prints
    `global_step/max_steps`), with `[INFO:swift]` lines; the tool says hf_trainer."""
    a = analyze_logs(write_file(tmp_path, "train.log", swift2_log()))
    assert_healthy_loss(a)
    assert a.run_profile.framework == "swift"


# --- mlx-lm -------------------------------------------------------------------------------------------------

def test_mlx_lm_iter_lines_give_the_loss(tmp_path):
    """mlx_lm/tuner/trainer.py:302-351 (bdb77da^): `Iter N: Train loss X, Learning Rate Y, It/sec ...` and
    `Iter N: Val loss X, Val took Ys`."""
    a = analyze_logs(write_file(tmp_path / "a", "train.log", mlx_old_log()))
    assert_healthy_loss(a)
    assert a.run_profile.framework == "mlx" and a.run_profile.method == "lora"
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "train.log", mlx_old_log(25))), 25)


def test_mlx_lm_train_ui_table_gives_the_loss(tmp_path):
    """mlx_lm/cli_ui.py:189-241 (TrainUI, mlx-lm since bdb77da): header `iter   train_loss     tok/s     tokens`,
    rows `    10    2.300 ▼      210      4.1k`, validation rows `    10    val 2.100    1.23s`."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "a", "train.log", mlx_new_log())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "train.log", mlx_new_log(25))), 25)
