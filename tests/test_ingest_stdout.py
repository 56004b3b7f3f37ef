"""Console-log reader: HF dict lines of 4.x and 5.x, tqdm step inference, DeepSpeed loss-scale lines."""
from __future__ import annotations

import math

import pytest

import forensics
from forensics.ingest import stdout


def _values(frame, metric):
    rows = frame[frame["metric"] == metric]
    return rows["step"].tolist(), rows["value"].tolist()


def _bar(n, total, rate="1.50it/s"):
    return f" {100 * n // total:3d}%|#####     | {n}/{total} [00:10<00:20, {rate}]"


def _hf4(logs):
    """4.x ProgressCallback.on_log: str() of the dict, epoch rounded to 2 decimals."""
    return str(dict(logs, epoch=round(logs["epoch"], 2)))


def _hf5(logs):
    """5.x ProgressCallback.on_log: every float formatted with .4g, so values are quoted strings."""
    return str({k: f"{v:.4g}" if isinstance(v, float) else v for k, v in logs.items()})


def test_hf4_lines_glued_to_tqdm_carriage_returns(tmp_path):
    parts = []
    for step in range(1, 21):
        parts.append("\r" + _bar(step, 20))
        if step % 5 == 0:
            grad = math.nan if step == 15 else 1.2345678806304932
            parts.append("\n" + _hf4({"loss": 0.0 if step == 15 else 1.0 / step, "grad_norm": grad,
                                      "learning_rate": 2e-05, "epoch": step / 20}) + "\n")
        if step == 10:  # an eval bar of another total, then the eval line
            parts += ["\r" + _bar(k, 4) for k in range(1, 5)]
            parts.append("\n" + str({"eval_loss": 0.75, "eval_runtime": 1.2, "epoch": 0.5}) + "\n")
    parts.append("\n" + str({"train_runtime": 40.1, "train_samples_per_second": 3.2,
                             "train_steps_per_second": 0.5, "train_loss": 0.33, "epoch": 1.0}) + "\n")
    path = tmp_path / "train.log"
    path.write_text("".join(parts))
    rec = stdout.read(path)
    steps, loss = _values(rec.frame, "loss")
    assert steps == [5, 10, 15, 20] and loss == [0.2, 0.1, 0.0, 0.05]
    _, grad = _values(rec.frame, "grad_norm")
    assert math.isnan(grad[2]) and grad[0] == 1.2345678806304932
    assert _values(rec.frame, "eval_loss") == ([10], [0.75])
    assert _values(rec.frame, "train_loss") == ([20], [0.33])
    assert "progress bar" in rec.meta["step_inferred"]


def test_hf5_quoted_strings_and_fullwidth_prefix_by_position(tmp_path):
    lines = ["\u3000\u3000some banner {'eos_token': '<|endoftext|>'}"]
    for k in range(1, 5):
        logs = {"loss": 0.0 if k == 3 else 2.0 / k, "grad_norm": math.nan if k == 3 else 0.5,
                "learning_rate": 2e-05, "epoch": k / 4}
        lines.append("\u3000\u3000" + _hf5(logs))
    path = tmp_path / "console.txt"
    path.write_text("\n".join(lines) + "\n")
    rec = stdout.read(path)
    steps, loss = _values(rec.frame, "loss")
    assert steps == [1, 2, 3, 4] and loss == [2.0, 1.0, 0.0, 0.5]
    assert math.isnan(_values(rec.frame, "grad_norm")[1][2])
    assert _values(rec.frame, "learning_rate")[1] == [2e-05] * 4
    assert "position" in rec.meta["step_inferred"]
    assert "eos_token" not in set(rec.frame["metric"])


def test_logging_steps_estimated_from_the_summary(tmp_path):
    lines = [str({"loss": 1.0, "grad_norm": 1.0, "learning_rate": 1e-5, "epoch": k / 10}) for k in range(1, 11)]
    lines.append(str({"train_runtime": 100.0, "train_samples_per_second": 8.0, "train_steps_per_second": 1.0,
                      "train_loss": 1.0, "epoch": 1.0}))  # 100 steps, 10 train lines: logging_steps 10
    path = tmp_path / "out.log"
    path.write_text("\n".join(lines))
    assert _values(stdout.read(path).frame, "loss")[0] == list(range(10, 101, 10))


def test_a_run_trained_in_chunks_takes_its_logging_steps_from_the_first_chunks_summary(tmp_path):
    """Obychenkov_CSE234-hardneg's shape: RapidFire trains three epochs as three chunks of 20 steps, each printed with
    its own epoch 0.25-1.0, evaluated and closed by its own summary (20 steps: 20 s at 1 step/s), logging_steps 5;
    the learning rate carries on across the chunks. The first summary's 20 steps over the 4 lines before it date the
    lines every 5 steps (over all 12 lines, 20 / 12 is no interval)."""
    lines, lr = [], 2e-4
    for chunk in range(3):
        for k in range(1, 5):
            lr -= 1e-5
            lines.append(str({"loss": 1.0 / (4 * chunk + k), "grad_norm": 1.0, "learning_rate": lr, "epoch": k / 4}))
        lines.append(str({"eval_loss": 0.5 + chunk / 10, "eval_runtime": 2.0, "epoch": 1.0}))
        lines.append(str({"train_runtime": 20.0, "train_samples_per_second": 8.0, "train_steps_per_second": 1.0,
                          "train_loss": 0.5, "epoch": 1.0}))
    path = tmp_path / "training.log"
    path.write_text("\n".join(lines) + "\n")
    frame = stdout.read(path).frame
    assert _values(frame, "loss")[0] == list(range(5, 61, 5))
    assert _values(frame, "eval_loss")[0] == [20, 40, 60]


def test_a_run_stopped_early_spreads_its_lines_over_the_steps_it_reached_not_the_bars_total(tmp_path):
    """tsebaka's reward-model run, by its shape: the bar's first and last states (0/1954, then 829/1954 as the run
    was interrupted), 27 dict lines logged every 30 steps, then a KeyboardInterrupt."""
    lines = ["\r" + _bar(0, 1954) + "\r" + _bar(829, 1954) + "Traceback (most recent call last):"]
    lines += [_hf4({"loss": 0.69 - k / 50, "grad_norm": 0.5, "learning_rate": 1e-6, "epoch": 30 * k / 1954})
              for k in range(1, 28)]
    path = tmp_path / "output.log"
    path.write_text("\n".join(lines + ["KeyboardInterrupt"]) + "\n")
    steps, _ = _values(stdout.read(path).frame, "loss")
    assert steps == list(range(31, 31 * 28, 31))  # 829 / 27 lines: every 31 (30 in truth), not every 72


def test_explicit_steps_webui_and_swift(tmp_path):
    path = tmp_path / "out.log"
    path.write_text("Step:      3 {'loss': 2.4395, 'grad_norm': inf, 'learning_rate': 8e-06, 'epoch': 0.0175}\n"
                    "Step:      7 {'loss': 2.4141, 'grad_norm': -inf, 'learning_rate': 1.6e-05, 'epoch': 0.035}\n"
                    "{'loss': 1.5, 'grad_norm': 3.0, 'global_step/max_steps': '12/100', 'percentage': '12.00%',"
                    " 'elapsed_time': '1m 2s'}\n")
    rec = stdout.read(path)
    assert _values(rec.frame, "loss") == ([3, 7, 12], [2.4395, 2.4141, 1.5])
    assert _values(rec.frame, "grad_norm") == ([3, 7, 12], [math.inf, -math.inf, 3.0])
    assert "step_inferred" not in rec.meta and "percentage" not in set(rec.frame["metric"])


def test_deepspeed_overflow_lines_and_progress(tmp_path):
    fmt = "[2024-05-01 12:00:00,123] [INFO] [{where}] {msg}"
    lines = [
        fmt.format(where="loss_scaler.py:183:update_scale",
                   msg="[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768"),
        fmt.format(where="logging.py:96:log_dist", msg="[Rank 0] step=10, skipped=1, lr=[2e-05], mom=[(0.9, 0.999)]"),
        fmt.format(where="stage_1_and_2.py:1800:step",
                   msg="[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                       "Attempted loss scale: 32768.0, reducing to 16384.0"),
        fmt.format(where="fused_optimizer.py:300:step", msg="[deepspeed] fp16 dynamic loss scale overflow! Skipping "
                   "step. Attempted loss scale: 16384, reducing to 8192"),
        fmt.format(where="loss_scaler.py:190:update_scale", msg="[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                   "Attempted loss scale: 8192, but hysteresis is 2. Reducing hysteresis to 1"),
        fmt.format(where="logging.py:96:log_dist", msg="[Rank 0] step=20, skipped=4, lr=[2e-05], mom=[(0.9, 0.999)]"),
        "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
    ]
    path = tmp_path / "ds.log"
    path.write_text("\n".join(lines) + "\n")
    rec = stdout.read(path)
    assert _values(rec.frame, "loss_scale")[1] == [32768.0, 16384.0, 8192.0, 8192.0]
    # each point counts the overflows dated at its step: 3 at step 10 and 1 at 20 are the 4 DeepSpeed's skipped=4 says
    assert _values(rec.frame, "overflow")[1] == [3.0, 3.0, 3.0, 1.0]
    assert _values(rec.frame, "skipped_steps") == ([10, 20], [1.0, 4.0])
    assert _values(rec.frame, "loss_scale_at_minimum") == ([20], [1.0])
    assert _values(rec.frame, "overflow")[0] == [10, 10, 10, 20]  # nearest DeepSpeed progress line


def test_not_utf8_bytes_are_replaced_not_fatal(tmp_path):
    path = tmp_path / "out.log"
    path.write_bytes(b"caf\xe9 \xff\n{'loss': 0.5, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 0.1}\n")
    rec = stdout.read(path)
    assert _values(rec.frame, "loss") == ([1], [0.5]) and "replaced" in rec.warnings[0]


_NOHUP_RUN = """
import json, sys
import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=64, n_positions=32))
data = [{"input_ids": torch.arange(16) % 64, "labels": torch.arange(16) % 64} for _ in range(64)]
args = TrainingArguments(output_dir=sys.argv[1], max_steps=60, logging_steps=5, per_device_train_batch_size=4,
                         learning_rate=1e-3, report_to=[], use_cpu=True, save_strategy="no", disable_tqdm=False,
                         dataloader_num_workers=0)
trainer = Trainer(model=model, args=args, train_dataset=data)
trainer.train()
json.dump(trainer.state.log_history, open(sys.argv[2], "w"))
"""


def test_nohup_capture_of_a_real_trainer_gives_each_dict_its_own_step(tmp_path):
    """`python train.py > nohup.out 2>&1`: stdout (ProgressCallback's tqdm.write of each dict) is
    block-buffered into the file, stderr (the bars) is not, so every dict line lands after the
    last bar 60/60. Each dict keeps the step the Trainer logged it at (its history)."""
    import json
    import os
    import subprocess
    import sys

    pytest.importorskip("transformers")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    log = tmp_path / "nohup.out"
    with open(log, "wb") as out:
        subprocess.run([sys.executable, "-c", _NOHUP_RUN, str(tmp_path / "out"), str(tmp_path / "history.json")],
                       stdout=out, stderr=subprocess.STDOUT, env=env, check=True, timeout=300)
    text = log.read_text()
    assert text.rindex("60/60") < text.index("{'loss'")  # the dicts came after every bar
    history = [e for e in json.loads((tmp_path / "history.json").read_text()) if "loss" in e]
    rec = stdout.read(log)
    steps, loss = _values(rec.frame, "loss")
    assert steps == [e["step"] for e in history] == list(range(5, 61, 5))
    assert loss == pytest.approx([e["loss"] for e in history], rel=1e-3)  # printed with .4g
    assert "ran ahead" in rec.meta["step_inferred"]


def test_buffered_bursts_in_mid_run_are_not_given_the_bar_before_them(tmp_path):
    """The buffer flushing mid-run: three dicts (steps 5, 10, 15) come out after bar 17."""
    parts = []
    pending = []
    for step in range(1, 31):
        parts.append("\r" + _bar(step, 30))
        if step % 5 == 0:
            pending.append(_hf5({"loss": 3.0 - step / 10, "learning_rate": 2e-05, "epoch": step / 30}))
        if step in (17, 30):
            parts.append("\n" + "\n".join(pending) + "\n")
            pending = []
    path = tmp_path / "nohup.out"
    path.write_text("".join(parts))
    steps, loss = _values(stdout.read(path).frame, "loss")
    assert steps == [5, 10, 15, 20, 25, 30]
    assert loss == pytest.approx([3.0 - s / 10 for s in steps])


def test_an_hf_scripts_printed_arguments_model_config_and_trainable_count_give_the_profile(tmp_path):
    """run_clm.py's console (Yali-F/gpt-llama-text-gen): the printed TrainingArguments block (fp16 and bf16 off: fp32),
    the printed model config (a size estimate), and the Trainer's 'Number of trainable parameters' equal to the
    whole model: full fine-tuning of a model of exactly that size. Written here by the real transformers objects."""
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    config = transformers.GPT2Config(n_layer=4, n_embd=256, n_head=4, vocab_size=5000, n_positions=256)
    model = transformers.GPT2LMHeadModel(config)
    args = transformers.TrainingArguments(output_dir=str(tmp_path / "unused"), report_to=[], learning_rate=5e-5,
                                          fp16=False, bf16=False)
    n = model.num_parameters()
    lines = [f"11/22/2023 00:30:45 - INFO - __main__ - Training/evaluation parameters {args}",
             f"[INFO|configuration_utils.py:777] 2023-11-22 00:32:36,470 >> Model config {config}",
             "[INFO|trainer.py:1723] 2023-11-22 00:37:05,889 >> ***** Running training *****",
             "[INFO|trainer.py:1731] 2023-11-22 00:37:05,890 >>   Total optimization steps = 40",
             f"[INFO|trainer.py:1732] 2023-11-22 00:37:05,890 >>   Number of trainable parameters = {n:,}"]
    lines += [f"{{'loss': {4.0 - s / 20:.4f}, 'learning_rate': 5e-05, 'epoch': {s / 40:.2f}}}" for s in range(5, 45, 5)]
    (tmp_path / "run.out").write_text("\n".join(lines) + "\n")
    a = forensics.analyze(tmp_path)
    profile = a.run_profile
    assert (profile.method, profile.model_params, profile.precision) == ("full", n, "fp32"), profile.evidence
    assert a.config.get("learning_rate") == 5e-5 and "printed TrainingArguments" in a.config.source_of("learning_rate")


def test_printed_blocks_that_are_not_whole_are_not_read():
    from forensics.ingest import printed_configs

    assert printed_configs.training_arguments("TrainingArguments(\nlearning_rate=5e-05,\nsome prose here\n)\n") == {}
    assert printed_configs.training_arguments("TrainingArguments(\nlearning_rate=5e-05,\n") == {}  # cut off
    assert printed_configs.training_arguments("SFTConfig(\nlearning_rate=2e-4,\nlr_scheduler_type=SchedulerType.COSINE,\n)\n") \
        == {"learning_rate": 2e-4, "lr_scheduler_type": "cosine", "__class__": "trl.SFTConfig"}
    assert printed_configs.model_config('>> Model config LlamaConfig {\n  "hidden_size": 64,\n') == {}  # cut off


def test_dict_lines_with_numpy_or_torch_scalars_are_read(tmp_path):
    """numpy 2 prints a float64 as `np.float64(0.25)` and a custom loop's dict may hold the loss tensor itself
    (`tensor(2.31, device='cuda:0')`): the value inside is the metric, a NaN tensor included."""
    lines = [str({"loss": f"np.float64({2.0 - s / 10})", "grad_norm": 1.0, "epoch": s / 10}).replace('"', "")
             for s in range(1, 4)]
    lines.append("{'loss': tensor(nan, device='cuda:0', grad_fn=<NllLossBackward0>), 'epoch': 0.4}")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    loss = stdout.read(tmp_path / "train.log").frame.query("metric == 'loss'")["value"].tolist()
    assert loss[:3] == pytest.approx([1.9, 1.8, 1.7]) and math.isnan(loss[3])


def test_out_of_memory_before_a_results_table_copied_as_text_is_no_final_crash(tmp_path):
    """A console where an attempt died of OOM and a later one printed the Trainer's table (copied as text: `Step
    Training Loss`, rows of numbers): the run did not stop at the OOM."""
    table = "Step\tTraining Loss\n" + "".join(f"{10 * i}\t{2.5 - 0.03 * i:.6f}\n" for i in range(1, 41))
    (tmp_path / "train.log").write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
                                        + table)
    a = forensics.analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "run_crashed"]


def test_a_model_parameter_count_printed_after_its_name_gives_the_size(tmp_path):
    """A script's own `🧠 Model parameters: 124,439,808` line (factoryfist's notebook: the count after its name, not
    at the line's start)."""
    dicts = "".join(f"{{'loss': {2.5 - 0.03 * i}, 'learning_rate': 5e-05, 'epoch': {i / 40:.3f}}}\n" for i in range(40))
    (tmp_path / "train.log").write_text("✅ GPT-2 Model loaded successfully!\n🧠 Model parameters: 124,439,808\n" + dicts)
    assert forensics.analyze(tmp_path).run_profile.model_params == 124439808


def _epoch_bars(train: list[float], val: list[float]) -> str:
    """A hand-written loop's tqdm bars, one a pass, `set_postfix({"Training Loss": ...})` (Ammar-Abdelhady-ai's
    distilgpt2 notebook): a training bar of 40 batches, a validation bar of 10, then its own print of the epoch's
    validation loss."""
    out = []
    for e, (t, v) in enumerate(zip(train, val), 1):
        out.append(f"Training Epoch {e}/{len(train)} Batch Size: 8: 100%|##########| 40/40 [00:07<00:00,  5.17it/s, "
                   f"Training Loss={t}]")
        out.append(f"Validation Epoch {e}/{len(train)}: 100%|##########| 10/10 [00:00<00:00, 17.85it/s, "
                   f"Validation Loss={v - 0.05}]")
        out.append(f"Epoch: {e}, Validation Loss: {v}")
    return "\n".join(out) + "\n"


def test_words_as_a_postfix_key_and_validation_bars_land_on_the_training_steps(tmp_path):
    """`Training Loss=0.365` is a loss (its key two words, capitalised); each epoch's bar carries the steps on (40,
    80, ...); the validation bar and the `Epoch: E, Validation Loss: V` line sit at the step that epoch's training
    reached, not at their own counts of batches or epochs."""
    train = [0.365, 0.319, 0.259, 0.258, 0.167, 0.196, 0.085, 0.074, 0.074, 0.068]
    val = [0.699, 0.761, 0.826, 0.883, 0.927, 0.950, 1.029, 1.006, 1.040, 1.077]
    (tmp_path / "train.log").write_text(_epoch_bars(train, val))
    a = forensics.analyze(tmp_path)
    frame = a.timeline.frame[~a.timeline.frame["abandoned"]]
    assert frame[frame["metric"] == "loss"]["step"].tolist() == [40 * e for e in range(1, 11)]
    assert set(frame[frame["metric"] == "eval_loss"]["step"]) == {40 * e for e in range(1, 11)}
    assert (a.first_incident.kind, a.first_incident.step) == ("overfitting", 80)
