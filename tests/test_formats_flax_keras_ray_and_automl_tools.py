"""Tests of the readers of Flax, Keras TensorBoard, Ray, Ludwig, simpletransformers, H2O, Gaudi and AutoTrain output.

Formats found in the frameworks' own source (fmt7 sweep): Hugging Face's Flax examples, Keras' TensorBoard callback,
Ray Train / Tune result folders, Ludwig, simpletransformers, H2O LLM Studio, optimum-habana's GaudiTrainer and
AutoTrain Advanced. Each run below is built as that code prints or writes it (the source file and line in each
docstring; commits: transformers 00e12e7, keras 3422977, ray 07b9953, ludwig 5d19f3e, simpletransformers 03a3789,
h2o-llmstudio a4971c1, optimum-habana 1d8504c, autotrain-advanced b5c98fb). A failing test is a reader gap; a passing
one records coverage (at most one per framework)."""
from __future__ import annotations

import csv
import io
import json
import math

import pytest

from support.format_runs import N, analyze_logs, assert_broken_at, assert_healthy_loss, losses, write_file


# --- Hugging Face Flax examples (transformers/examples/flax) ---------------------------------------------------------


def flax_console(folder, nan_at=None):
    """run_clm_flax.py:801-803 prints `Step... ({cur_step} | Loss: {loss}, Learning Rate: {lr})` every logging_steps
    (a jax scalar printed with str(): `2.4812345`, `nan`), and :826 its eval line
    `Step... ({cur_step} | Eval Loss: {loss} | Eval Perplexity: {ppl})` (epochs.write, i.e. tqdm.write to stdout)."""
    lines = []
    for i, v in enumerate(losses(nan_at), 1):
        lines.append(f"Step... ({i * 10} | Loss: {v:.7g}, Learning Rate: {5e-5 * (1 - i / 40):.9g})")
        if i % 10 == 0:
            lines.append(f"Step... ({i * 10} | Eval Loss: {v + 0.1:.7g} | Eval Perplexity: {math.exp(v + 0.1):.7g})")
    return write_file(folder, "train.log", "\n".join(lines) + "\n")


def test_flax_clm_console_step_loss_line_is_read(tmp_path):
    """transformers examples/flax/language-modeling/run_clm_flax.py:801-803 (`Step... (N | Loss: X, Learning Rate:
    Y)`; the same form in run_mlm_flax.py, run_t5_mlm_flax.py, run_summarization_flax.py): today `nothing readable`."""
    assert_healthy_loss(analyze_logs(flax_console(tmp_path / "ok")))
    assert_broken_at(analyze_logs(flax_console(tmp_path / "nan", nan_at=25)), 250)


def flax_tensorboard(folder, nan_at=None):
    """run_clm_flax.py write_train_metric (:248-256): `train_time`, then `train_<key>` for each step's metrics
    (`train_loss`, `train_learning_rate`) at step - len(vals) + i + 1; write_eval_metric: `eval_loss`,
    `eval_perplexity`. flax.metrics.tensorboard.SummaryWriter writes TF2 tensor summaries (new_style)."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(folder))
    for i, v in enumerate(losses(nan_at), 1):
        writer.add_scalar("train_time", 2.0 * i, i, new_style=True)
        writer.add_scalar("train_loss", v, i, new_style=True)
        writer.add_scalar("train_learning_rate", 5e-5 * (1 - i / 40), i, new_style=True)
        if i % 10 == 0:
            writer.add_scalar("eval_loss", v + 0.1, i, new_style=True)
            writer.add_scalar("eval_perplexity", math.exp(v + 0.1), i, new_style=True)
    writer.close()
    return folder


def test_flax_tensorboard_train_loss_tags_are_read(tmp_path):
    """Coverage: the Flax examples' TensorBoard tags (`train_loss`, `eval_loss`) are read."""
    pytest.importorskip("torch")
    assert_healthy_loss(analyze_logs(flax_tensorboard(tmp_path / "ok")))
    assert_broken_at(analyze_logs(flax_tensorboard(tmp_path / "nan", nan_at=25)), 25)


# --- Keras TensorBoard callback ----------------------------------------------------------------------------------


def keras_tensorboard(folder, nan_at=None):
    """keras/src/callbacks/tensorboard.py:215-216 (`logs/train`, `logs/validation` writers), _log_epoch_metrics
    (:560-579): `epoch_<name>` for the train logs (with `epoch_learning_rate` from _collect_learning_rate) at
    step=epoch (from 0), the `val_` logs written to the validation writer with the prefix cut, so `epoch_loss` again;
    on_test_end (:423-428): `evaluation_loss_vs_iterations` at the optimizer's iterations."""
    from torch.utils.tensorboard import SummaryWriter

    train = SummaryWriter(str(folder / "logs" / "train"))
    val = SummaryWriter(str(folder / "logs" / "validation"))
    for epoch, v in enumerate(losses(nan_at, n=N + 1)[1:], 1):  # epochs 1..N: nan_at counts from epoch 1
        train.add_scalar("epoch_loss", v, epoch, new_style=True)
        train.add_scalar("epoch_learning_rate", 1e-4, epoch, new_style=True)
        val.add_scalar("epoch_loss", v + 0.1, epoch, new_style=True)
        val.add_scalar("evaluation_loss_vs_iterations", v + 0.1, epoch * 50, new_style=True)
    train.close()
    val.close()
    return folder


def test_keras_tensorboard_epoch_loss_is_the_loss(tmp_path):
    """keras/src/callbacks/tensorboard.py:575 `self.summary.scalar(f"epoch_{name}", value, step=epoch)`: `epoch_loss`
    under logs/train is the training loss (today read as an unknown metric `epoch_loss`: status `warning`,
    no_learning_evidence), and `epoch_loss` under logs/validation (:579) is the held-out loss, not more points of the
    same series."""
    pytest.importorskip("torch")
    a = analyze_logs(keras_tensorboard(tmp_path / "ok"))
    assert "loss" in a.timeline.metrics, sorted(a.timeline.metrics)
    loss = a.timeline.series("loss")
    assert len(loss) == N and loss.iloc[0] > 2.3 and loss.iloc[-1] < 1.3
    assert "eval_loss" in a.timeline.metrics, sorted(a.timeline.metrics)
    assert a.status == "healthy"
    assert_broken_at(analyze_logs(keras_tensorboard(tmp_path / "nan", nan_at=25)), 25)


# --- Ray Train / Tune -------------------------------------------------------------------------------------------


def ray_trial(folder, nan_at=None):
    """ray/train/huggingface/transformers/_transformers_utils.py RayTrainReportCallback.on_save: `metrics =
    state.log_history[-1]` reported with the checkpoint; Tune's JsonLoggerCallback writes one JSON object a line to
    the trial's result.json with its own keys added (training_iteration, time_this_iter_s, config, ...), its
    CSVLoggerCallback the flattened row to progress.csv, and the config to params.json."""
    trial = folder / "TorchTrainer_2024-05-01_10-00-00" / "TorchTrainer_3f2a1_00000_0_2024-05-01_10-00-01"
    rows = []
    for i, v in enumerate(losses(nan_at), 1):
        grad = math.nan if nan_at is not None and i >= nan_at else 0.31
        rows.append({"loss": v, "grad_norm": grad, "learning_rate": 5e-5 * (1 - i / 31), "epoch": round(i / N, 4),
                     "step": i * 10, "timestamp": 1714557600 + 20 * i, "checkpoint_dir_name": f"checkpoint_{i - 1:06d}",
                     "done": False, "training_iteration": i, "trial_id": "3f2a1_00000",
                     "date": "2024-05-01_10-00-01", "time_this_iter_s": 20.1, "time_total_s": 20.1 * i, "pid": 4242,
                     "hostname": "node1", "node_ip": "10.0.0.2", "config": {"train_loop_config": {"lr": 5e-5}},
                     "time_since_restore": 20.1 * i, "iterations_since_restore": i})
    write_file(trial, "result.json", "".join(json.dumps(r) + "\n" for r in rows))
    flat = [{**{k: v for k, v in r.items() if k != "config"}, "config/train_loop_config/lr": 5e-5} for r in rows]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(flat[0]))
    writer.writeheader()
    writer.writerows(flat)
    write_file(trial, "progress.csv", out.getvalue())
    write_file(trial, "params.json", json.dumps({"train_loop_config": {"lr": 5e-5}}, indent=2))
    return folder


def test_ray_tune_trial_folder_is_read(tmp_path):
    """Coverage: a Ray TorchTrainer trial folder (result.json, progress.csv, params.json) around an HF Trainer."""
    assert_healthy_loss(analyze_logs(ray_trial(tmp_path / "ok")))
    assert_broken_at(analyze_logs(ray_trial(tmp_path / "nan", nan_at=25)), 250)


# --- Ludwig ------------------------------------------------------------------------------------------------------


def ludwig_run(folder, nan_at=None):
    """ludwig/api.py:545-555 `save_json(training_stats_fn, TrainingStats(...))` (training_stats_fn =
    <output_directory>/training_statistics.json, ludwig/utils/misc_utils.py:137): split -> feature (or `combined`)
    -> metric -> one value per checkpoint (metric_utils.reduce_trainer_metrics_dict), and `evaluation_frequency`; the
    LLM config in model/model_hyperparameters.json (model_type llm, adapter lora, quantization bits 4)."""
    ls = losses(nan_at)
    train = {"combined": {"loss": ls}, "output": {"loss": ls, "next_token_perplexity": [math.exp(v) for v in ls]}}
    held = {"combined": {"loss": [v + 0.1 for v in ls]}, "output": {"loss": [v + 0.1 for v in ls]}}
    stats = {"training": train, "validation": held, "test": held,
             "evaluation_frequency": {"frequency": 1.0, "period": "epoch"}}
    run = folder / "results" / "api_experiment_run"
    write_file(run, "training_statistics.json", json.dumps(stats, indent=4))
    write_file(run, "model/model_hyperparameters.json", json.dumps({
        "model_type": "llm", "base_model": "meta-llama/Llama-2-7b-hf", "adapter": {"type": "lora", "r": 8},
        "quantization": {"bits": 4}, "trainer": {"type": "finetune", "learning_rate": 0.0001, "epochs": N},
        "input_features": [{"name": "instruction", "type": "text"}],
        "output_features": [{"name": "output", "type": "text"}]}, indent=4))
    return folder


def test_ludwig_training_statistics_json_is_read(tmp_path):
    """ludwig/api.py:555 writes training_statistics.json (`{"training": {"combined": {"loss": [...]}, ...}}`): today
    `no training logs or checkpoints found` (run.py never sniffs it; ingest.json_history reads no nested split)."""
    assert_healthy_loss(analyze_logs(ludwig_run(tmp_path / "ok")))
    assert_broken_at(analyze_logs(ludwig_run(tmp_path / "nan", nan_at=25)), 25)


# --- simpletransformers -----------------------------------------------------------------------------------------


def st_scores(folder, nan_at=None):
    """simpletransformers/language_modeling/language_modeling_model.py:1067-1077: `pd.DataFrame(
    training_progress_scores).to_csv(<output_dir>/training_progress_scores.csv, index=False)`, columns from
    _create_training_progress_scores (:1908): global_step, perplexity, eval_loss, train_loss. pandas writes a NaN as an
    empty cell."""
    import pandas as pd

    ls = losses(nan_at)
    frame = pd.DataFrame({"global_step": [i * 10 for i in range(1, N + 1)],
                          "perplexity": [math.exp(v + 0.1) for v in ls], "eval_loss": [v + 0.1 for v in ls],
                          "train_loss": ls})
    (folder / "outputs").mkdir(parents=True)
    frame.to_csv(folder / "outputs" / "training_progress_scores.csv", index=False)
    return folder


def test_simpletransformers_scores_csv_nan_as_empty_cell_is_broken(tmp_path):
    """language_modeling_model.py:1071-1077: pandas' to_csv writes a NaN loss as an empty cell (`250,,,`); today the
    rows are dropped and the run is called healthy with 24 losses. (The healthy copy is read: 30 losses.)"""
    assert_healthy_loss(analyze_logs(st_scores(tmp_path / "ok")))
    assert_broken_at(analyze_logs(st_scores(tmp_path / "nan", nan_at=25)), 250)


def st_console(folder, nan_at=None):
    """language_modeling_model.py:971-974: the tqdm batch bar's description
    `Epochs {epoch_number + 1}/{args.num_train_epochs}. Running Loss: {current_loss:9.4f}` (`      nan` for a NaN),
    one update per step, captured with the bar's carriage returns."""
    parts = []
    for i, v in enumerate(losses(nan_at), 1):
        pct = int(100 * i / N)
        parts.append(f"\rEpochs 1/1. Running Loss: {v:9.4f}: {pct:3d}%|{'█' * (pct // 10):<10}| {i}/{N} "
                     f"[00:{i:02d}<00:{N - i:02d},  1.00it/s]")
    return write_file(folder, "train.log", "Epoch 1 of 1:   0%|          | 0/1 [00:00<?, ?it/s]\n" + "".join(parts) + "\n")


def test_simpletransformers_running_loss_bar_is_read(tmp_path):
    """language_modeling_model.py:973 (the same description in classification / t5 / seq2seq models): a tqdm bar
    whose description, not its postfix, holds the loss: today `nothing readable`."""
    assert_healthy_loss(analyze_logs(st_console(tmp_path / "ok")))
    assert_broken_at(analyze_logs(st_console(tmp_path / "nan", nan_at=25)), 25)


# --- H2O LLM Studio -----------------------------------------------------------------------------------------------


def h2o_experiment(folder, nan_at=None):
    """llm_studio/src/utils/logging_utils.py:42-45,66 (`%(asctime)s - %(levelname)s: %(message)s` to
    <output_directory>/logs.log); llm_studio/train.py:231 `Training Epoch: {epoch + 1} / {epochs}`, :241-248 a tqdm
    bar (ascii=True) written through TqdmToLogger, its description set at :380 to `train loss: {mean:.2f}` every 5% of
    an epoch; :129/:135 the validation lines `Validation Perplexity: X`, `Mean validation loss: X`. cfg.yaml beside
    it (lora: true, backbone_dtype, mixed_precision_dtype)."""
    ls = losses(nan_at, n=40)
    out = ["2024-05-01 10:00:00,001 - INFO: Problem Type: text_causal_language_modeling"]
    k = 0
    for epoch in range(2):
        out += [f"2024-05-01 10:00:01,000 - INFO: Training Epoch: {epoch + 1} / 2",
                "2024-05-01 10:00:01,001 - INFO: Evaluation step: 200"]
        for j in range(1, 21):
            v, k = ls[k], k + 1
            n, pct = j * 10, j * 5
            bar = ("#" * (pct // 10)).ljust(10)
            out.append(f"2024-05-01 10:00:{j:02d},100 - INFO: train loss: {v:.2f}: {pct:3d}%|{bar}| {n}/200 "
                       f"[00:{j:02d}<00:10,  1.00it/s]")
        out += [f"2024-05-01 10:01:00,000 - INFO: Mean validation loss: {ls[k - 1] + 0.1:.5f}",
                f"2024-05-01 10:01:00,001 - INFO: Validation Perplexity: {math.exp(ls[k - 1] + 0.1):.5f}"]
    exp = folder / "output" / "user" / "my-exp"
    write_file(exp, "logs.log", "\n".join(out) + "\n")
    write_file(exp, "cfg.yaml", "experiment_name: my-exp\nllm_backbone: h2oai/h2o-danube3-500m-base\n"
               "problem_type: text_causal_language_modeling\narchitecture:\n    backbone_dtype: bfloat16\n"
               "training:\n    epochs: 2\n    learning_rate: 0.0001\n    lora: true\n    lora_r: 4\n"
               "environment:\n    mixed_precision: true\n    mixed_precision_dtype: bfloat16\n")
    return folder


def test_h2o_llmstudio_logs_log_train_loss_bar_is_read(tmp_path):
    """llm_studio/train.py:380 `progress_bar.set_description(f"train loss: {np.mean(losses[-10:]):.2f}")` logged
    through TqdmToLogger into logs.log: today `no training logs or checkpoints found`. Its cfg.yaml says lora: true."""
    a = analyze_logs(h2o_experiment(tmp_path / "ok"))
    assert_healthy_loss(a, n=40)
    assert a.run_profile.method == "lora"
    # the 25th loss is epoch 2's bar at n=50/200 (train.py:375-384 updates the bar by log_update_steps, a new bar each
    # epoch): step 200 + 50, as every epoch bar is numbered on
    assert_broken_at(analyze_logs(h2o_experiment(tmp_path / "nan", nan_at=25)), 250)


# --- optimum-habana GaudiTrainer ----------------------------------------------------------------------------------


def gaudi_console(folder, nan_at=None):
    """optimum/habana/transformers/trainer.py:1629-1650 GaudiTrainer.log adds get_hpu_memory_stats()
    (optimum/habana/utils/misc.py:176-180: `memory_allocated (GB)`, `max_memory_allocated (GB)`,
    `total_memory_available (GB)`) to the Trainer's logged dict, printed as the Trainer prints it."""
    lines = []
    for i, v in enumerate(losses(nan_at), 1):
        grad = math.nan if nan_at is not None and i >= nan_at else 0.31
        lines.append(str({"loss": round(v, 4), "grad_norm": grad, "learning_rate": 5e-05 * (1 - i / 31),
                          "epoch": round(i / N, 2), "memory_allocated (GB)": 13.57,
                          "max_memory_allocated (GB)": 21.02, "total_memory_available (GB)": 94.62}))
    return write_file(folder, "train.log", "\n".join(lines) + "\n")


def test_gaudi_trainer_dict_lines_with_memory_keys_are_read(tmp_path):
    """Coverage: GaudiTrainer's dict lines with the HPU memory keys."""
    assert_healthy_loss(analyze_logs(gaudi_console(tmp_path / "ok")))
    assert_broken_at(analyze_logs(gaudi_console(tmp_path / "nan", nan_at=25)), 25)


# --- AutoTrain Advanced ---------------------------------------------------------------------------------------------


def autotrain_run(folder, nan_at=None):
    """src/autotrain/logging.py:38-43 (loguru `{level: <8} | {time:YYYY-MM-DD HH:mm:ss} | {name}:{function}:{line} -
    {message}`), src/autotrain/trainers/common.py:364-367 LossLoggingCallback.on_log `logger.info(logs)`;
    common.py:247 saves the params to <project_name>/training_params.json (peft, quantization, mixed_precision)."""
    lines = ["INFO     | 2024-05-01 10:00:05 | autotrain.trainers.clm.train_clm_sft:train:39 - creating trainer"]
    for i, v in enumerate(losses(nan_at), 1):
        grad = math.nan if nan_at is not None and i >= nan_at else 0.31
        logs = {"loss": round(v, 4), "grad_norm": grad, "learning_rate": 5e-05 * (1 - i / 31), "epoch": round(i / N, 2)}
        lines.append(f"INFO     | 2024-05-01 10:00:{i:02d} | autotrain.trainers.common:on_log:367 - {logs}")
    write_file(folder, "autotrain.log", "\n".join(lines) + "\n")
    return write_file(folder, "my-proj/training_params.json", json.dumps({
        "model": "meta-llama/Llama-3.2-1B", "project_name": "my-proj", "trainer": "sft", "peft": True,
        "quantization": "int4", "mixed_precision": "bf16", "lr": 5e-5, "epochs": 1, "batch_size": 2, "lora_r": 16,
        "lora_alpha": 32, "logging_steps": 10}, indent=4))


def test_autotrain_loguru_dict_lines_are_read(tmp_path):
    """Coverage: AutoTrain's loguru-prefixed Trainer dicts (common.py:367)."""
    assert_healthy_loss(analyze_logs(autotrain_run(tmp_path / "ok")))
    assert_broken_at(analyze_logs(autotrain_run(tmp_path / "nan", nan_at=25)), 25)


def test_autotrain_training_params_json_gives_method_and_precision(tmp_path):
    """src/autotrain/trainers/common.py:247 writes training_params.json (`"peft": true, "quantization": "int4",
    "mixed_precision": "bf16"`): today method and precision stay `unknown` (run.py does not take the file as a
    configuration)."""
    a = analyze_logs(autotrain_run(tmp_path / "ok"))
    assert a.run_profile.method == "qlora", a.run_profile
    assert a.run_profile.precision == "bf16", a.run_profile


def keras_tensorboard_per_batch(folder, batches=20, epochs=3):
    """keras/src/callbacks/tensorboard.py with `update_freq="batch"`: `batch_loss` at the batch count in logs/train
    beside `epoch_loss` at the epoch (from 0) in the same file; logs/validation holds `epoch_loss` per epoch and
    `evaluation_loss_vs_iterations` at the optimizer's iterations, at times for fewer epochs than it ran (Harshit1234G's
    AxiomLM, tests/realworld: one of three). Writer file names carry the same host and pid, as Keras' do."""
    from torch.utils.tensorboard import SummaryWriter

    train = SummaryWriter(str(folder / "logs" / "train"), filename_suffix="")
    val = SummaryWriter(str(folder / "logs" / "validation"), filename_suffix="")
    for epoch in range(epochs):
        for b in range(1, batches + 1):
            step = epoch * batches + b
            train.add_scalar("batch_loss", 9.9 - 6 * step / (epochs * batches), step, new_style=True)
        train.add_scalar("epoch_loss", 9.0 - 2 * epoch, epoch, new_style=True)
        val.add_scalar("epoch_loss", 5.0 - epoch * 0.5, epoch, new_style=True)
        if epoch == 0:
            val.add_scalar("evaluation_loss_vs_iterations", 5.0, batches, new_style=True)
    train.close()
    val.close()
    return folder


def test_keras_tensorboard_per_batch_loss_and_its_epoch_values_on_one_axis(tmp_path):
    """With batches logged, the `epoch_` values count epochs on an axis that counts batches: read as the loss they
    made a restart at step 1 and left the batches' run abandoned (AxiomLM: only 3 epoch points stood of 22167). The
    training loss is the batches'; the held-out loss of epoch e stands at iteration (e + 1) x batches an epoch."""
    pytest.importorskip("torch")
    a = analyze_logs(keras_tensorboard_per_batch(tmp_path / "run"))
    loss = a.timeline.series("loss")
    assert len(loss) == 60 and loss.index[0] == 1 and loss.iloc[0] > 9.5, loss.head()
    assert list(a.timeline.series("eval_loss").index) == [20, 40, 60]
    assert not a.timeline.frame["abandoned"].any()
