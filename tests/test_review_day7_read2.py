"""Consoles and run texts the tool did not read, found on real runs (day 7, second batch): each test builds a small
log as the real program prints it and checks that it is read as the run it is."""
from __future__ import annotations

from test_review_day7_read import _analyze, _series


# ---- (1) the MetricLogger console of DeiT / MAE / DETR / DINO / LLaMA-Adapter ------------------------------------------


def _metric_logger_line(epoch, i, total, lr, loss, avg, loss_name="closs", grad=None):
    """`MetricLogger.log_every` (util/misc.py): header, `[{i:>width}/{total}]`, eta, each meter `median (global_avg)`
    (the lr meter formatted `{value:.6f}`), time, data, max mem; fields joined by two spaces, a timestamp before it
    where the script's print is patched (LLaMA-Adapter's builtin print with `[%H:%M:%S.%f]`)."""
    width = len(str(total))
    fields = [f"[17:11:{i % 60:02d}.859398] Epoch: [{epoch}]", f"[{i:>{width}}/{total}]", "eta: 2:17:53",
              f"lr: {lr:.6f}", f"{loss_name}: {loss:.4f} ({avg:.4f})"]
    if grad is not None:
        fields.append(f"grad_norm: {grad:.4f} ({grad * 1.2:.4f})")
    return "  ".join(fields + ["time: 0.6125", "data: 0.0001", "max mem: 20618"])


def test_metric_logger_lines_are_read_as_steps_with_their_smoothed_loss(tmp_path):
    """LLaMA2-Accessory's console (`Epoch: [0]  [N/1504]  lr  closs: median (avg)  grad_norm: median (avg) ...`) over
    two epochs with a falling loss and a `Test:` evaluation after each: the folder was no run at all (NotARunDirectory);
    it is read at step E x M + N, closs as the loss (its window median), lr and grad_norm, the evaluation's last line
    as eval_loss at the last training step, and the run learned."""
    total = 200
    lines = []
    for epoch in range(2):
        for i in list(range(0, total, 20)) + [total - 1]:
            k = epoch * total + i
            lines.append(_metric_logger_line(epoch, i, total, 3e-5, 2.0 - k / 400, 2.1 - k / 500, grad=2.0 - k / 1000))
        for j, (loss, avg) in enumerate(((1.9 - epoch * 0.3, 1.95 - epoch * 0.3), (1.8 - epoch * 0.3, 1.85 - epoch * 0.3))):
            lines.append(f"Test:  [{j * 49:>2}/50]  eta: 0:00:30  closs: {loss:.4f} ({avg:.4f})  time: 0.6000  "
                         f"data: 0.4000  max mem: 20618")
        lines.append(f"Averaged stats: lr: 0.000030  closs: {2.0 - epoch:.4f} ({2.0 - epoch:.4f})")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    loss = _series(a, "loss")
    assert loss[0] == 2.0 and loss[220] == 2.0 - 220 / 400 and loss[399] == 2.0 - 399 / 400
    assert _series(a, "learning_rate")[20] == 3e-5 and _series(a, "grad_norm")[20] == 2.0 - 20 / 1000
    assert _series(a, "eval_loss") == {199: 1.85, 399: 1.55}
    assert a.status == "healthy", [(f.kind, f.step) for f in a.findings]
    assert any("smoothed" in s.reason for s in a.skipped if s.note)


def test_metric_logger_loss_flat_in_warm_up_is_no_learning_evidence(tmp_path):
    """LLaMA-Adapter's alpaca fine-tuning console at the start of its warm-up (lr printed 0.000000, closs flat at
    ~1.5): read, and nothing shows learning."""
    lines = [_metric_logger_line(0, i, 13000, 0.0, 1.5 + 0.03 * ((i // 10) % 3), 1.6) for i in range(30, 120, 10)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    assert sorted(_series(a, "loss")) == list(range(30, 120, 10))
    assert a.status == "warning" and a.first_incident.kind == "no_learning_evidence"


# ---- (2) the launch command kept beside the log, or printed in the console ---------------------------------------------

_DICT_LINES = "".join("{'loss': %.4f, 'learning_rate': %.6g, 'epoch': %.2f}\n" % (2.0 - 0.05 * i, 5e-5, 0.01 * i)
                      for i in range(1, 21))


def test_a_command_txt_beside_the_log_gives_the_profile(tmp_path):
    """The Trainer's printed dicts with command.txt beside them (`python src/train_bash.py --stage sft --finetuning_type
    lora ... --fp16`, `\\` continuations): the profile read only the dicts (hf_trainer, the rest unknown); the command
    says lora, sft, llamafactory (its --stage / --finetuning_type pair), fp16."""
    (tmp_path / "train.log").write_text(_DICT_LINES)
    (tmp_path / "command.txt").write_text(
        "CUDA_VISIBLE_DEVICES=0 python src/train_bash.py \\\n    --stage sft \\\n"
        "    --model_name_or_path /data/models/some-llama \\\n    --finetuning_type lora \\\n"
        "    --lora_target q_proj,v_proj \\\n    --learning_rate 5e-5 \\\n    --fp16\n")
    profile = _analyze(tmp_path).run_profile.to_dict()
    assert (profile["method"], profile["objective"], profile["framework"], profile["precision"]) == (
        "lora", "sft", "llamafactory", "fp16"), profile


def test_a_launch_line_in_the_console_gives_the_profile(tmp_path):
    """A console that starts with the command it was run by (`llamafactory-cli train --stage dpo --finetuning_type lora
    --quantization_bit 4 --bf16 ...`): the CLI names the framework, the flags the method (4-bit: QLoRA), objective and
    precision."""
    (tmp_path / "train.log").write_text(
        "$ llamafactory-cli train --stage dpo --model_name_or_path Qwen/Qwen2.5-1.5B-Instruct --finetuning_type lora "
        "--quantization_bit 4 --bf16 --output_dir out\n" + _DICT_LINES)
    profile = _analyze(tmp_path).run_profile.to_dict()
    assert (profile["method"], profile["objective"], profile["framework"], profile["precision"]) == (
        "qlora", "preference", "llamafactory", "bf16"), profile
    assert profile["model_params"] == 1_500_000_000


def test_a_script_of_two_commands_says_nothing(tmp_path):
    """A run.sh holding two launches (an SFT stage, then a DPO stage) does not say which one this log is: not read."""
    (tmp_path / "train.log").write_text(_DICT_LINES)
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython train.py --stage sft --finetuning_type lora --fp16\n"
                                     "python train.py --stage dpo --finetuning_type full --bf16\n")
    profile = _analyze(tmp_path).run_profile.to_dict()
    assert profile["method"] == "unknown" and profile["precision"] == "unknown", profile


# ---- (3) mlx-examples' lora.py console -------------------------------------------------------------------------------


def test_mlx_examples_lora_console_names_mlx_and_lora_but_not_the_packed_size(tmp_path):
    """mlx-examples lora/lora.py (`Total parameters 7411.242M`, `Trainable parameters 2.229M`, `Iter N: Train loss X,
    It/sec Y, Tokens/sec Z`, `Iter N: Val loss X, Val took Ts`, `Iter 100: Saved adapter weights to adapters.npz.`):
    the framework was unknown; it is mlx, the method LoRA (the script trains LoRA adapters only), and the total, a
    4-bit model's packed arrays, is no model size."""
    lines = ["Loading pretrained model", "Total parameters 7411.242M", "Trainable parameters 2.229M",
             "Loading datasets", "Training", "Iter 1: Val loss 3.298, Val took 268.159s"]
    for i in range(10, 210, 10):
        lines.append(f"Iter {i}: Train loss {3.2 - i / 100:.3f}, It/sec 0.108, Tokens/sec 61.375")
        if i % 100 == 0:
            lines.append(f"Iter {i}: Saved adapter weights to adapters.npz.")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    profile = a.run_profile.to_dict()
    assert (profile["framework"], profile["method"], profile["model_params"]) == ("mlx", "lora", None), profile
    assert a.status == "healthy"


# ---- (4) the notebook progress table of a max_steps run on a streaming set --------------------------------------------


def _progress_table_notebook(path, steps, total, epoch_text, losses):
    """A notebook whose training cell shows the Trainer's NotebookProgressCallback display (its progress line
    `[S/S hh:mm:ss, Epoch E/N]` over a `Step | Training Loss` table), as Jupyter saves it (text/html output)."""
    import json
    rows = "".join(f"    <tr>\n      <td>{s}</td>\n      <td>{v:.6f}</td>\n    </tr>\n" for s, v in zip(steps, losses))
    html = ("\n    <div>\n      \n      <progress value='%d' max='%d' style='width:300px; height:20px; vertical-align: "
            "middle;'></progress>\n      [%d/%d 10:09:58, Epoch %s]\n    </div>\n    <table border=\"1\" class=\"dataframe\">\n"
            "  <thead>\n <tr style=\"text-align: left;\">\n      <th>Step</th>\n      <th>Training Loss</th>\n    </tr>\n"
            "  </thead>\n  <tbody>\n%s  </tbody>\n</table><p>" % (total, total, total, total, epoch_text, rows))
    cell = {"cell_type": "code", "execution_count": 7, "metadata": {}, "source": ["trainer.train()"],
            "outputs": [{"output_type": "display_data", "metadata": {},
                         "data": {"text/html": html, "text/plain": ["<IPython.core.display.HTML object>"]}}]}
    path.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}))


def test_passes_from_a_streaming_runs_progress_line_make_a_near_zero_loss_memorization(tmp_path):
    """`[500/500 10:09:58, Epoch 19/9223372036854775807]` (max_steps on a streaming set: 19 passes over the data, the
    total sys.maxsize) over a Step table with no Epoch column, the loss 2.0 -> 0.02 with no evaluation: read as no
    epoch at all, the run was healthy; with 19 passes it is memorization."""
    steps = list(range(25, 525, 25))
    losses = [2.0 * 0.78 ** i for i in range(len(steps))]
    _progress_table_notebook(tmp_path / "finetune.ipynb", steps, 500, "19/9223372036854775807", losses)
    a = _analyze(tmp_path)
    assert _series(a, "epoch")[500] == 19.0
    assert a.status == "warning" and a.first_incident.kind == "memorization", [(f.kind, f.step) for f in a.findings]


# ---- (5) axolotl's training arguments in TensorBoard's args text -------------------------------------------------------


def _tensorboard_run(folder, args):
    """The HF TensorBoardCallback's writing: `add_text("args", args.to_json_string())` and `train/loss` scalars."""
    import json
    from torch.utils.tensorboard import SummaryWriter
    writer = SummaryWriter(log_dir=str(folder))
    writer.add_text("args", json.dumps(args, indent=2))
    for step in range(1, 41):
        writer.add_scalar("train/loss", 2.0 - step * 0.02, step)
        writer.add_scalar("train/learning_rate", 2e-4, step)
    writer.close()


_TRAINING_ARGS = {"output_dir": "./lora-out", "num_train_epochs": 4, "per_device_train_batch_size": 4,
                  "learning_rate": 2e-4, "fp16": True, "bf16": False, "logging_steps": 1, "max_seq_length": 2048}


def test_axolotl_fields_in_the_args_text_name_axolotl_not_trl(tmp_path):
    """axolotl's AxolotlTrainingArguments as the TensorBoard args text (`sample_packing`, `relora_steps`,
    `lr_quadratic_warmup`, ... beside `max_seq_length`): named trl for `max_seq_length`; its own fields name axolotl."""
    _tensorboard_run(tmp_path / "runs" / "Dec12_01-05-00_host", dict(
        _TRAINING_ARGS, sample_packing=False, eval_sample_packing=None, sample_packing_efficiency=1.0,
        relora_steps=None, relora_warmup_steps=None, lr_quadratic_warmup=False, do_bench_eval=False))
    assert _analyze(tmp_path).run_profile.to_dict()["framework"] == "axolotl"


def test_an_sft_config_args_text_is_still_trl(tmp_path):
    """TRL's SFTConfig as the args text (`max_seq_length`, `packing`, `dataset_text_field`): still trl."""
    _tensorboard_run(tmp_path / "runs" / "run1", dict(_TRAINING_ARGS, packing=False, dataset_text_field="text"))
    assert _analyze(tmp_path).run_profile.to_dict()["framework"] == "trl"
