"""Tests of the readers of trackers' and loggers' local files: DVCLive, CSVLoggers, W&B, TensorBoard, MLflow.

Experiment trackers' and loggers' local files (fmt10 sweep): what DVCLive, Keras' and fastai's CSVLogger,
Lightning's CSVLogger, W&B, TensorBoard and MLflow leave in a run's output folder, read from their sources (file and
line in each docstring; commits: dvclive 51a21507, keras as stored in keras-team/keras, fastai 1678d7ff; transformers
5.24.0, lightning 2.6.6, wandb 0.31.0, mlflow 3.17.2 and torch.utils.tensorboard as installed, which write the files
themselves where used). A failing test is a reader gap; a passing one records coverage (at most one per framework).
Broken copies have the framework's own spelling of NaN from the 25th logged step on."""
from __future__ import annotations

import csv
import io
import json
import math

from support.format_runs import N, analyze_logs, assert_broken_at, assert_healthy_loss, losses, write_file

NAN_AT = 25


# --- DVCLive -----------------------------------------------------------------------------------------------------


def _dvclive_tsv(rows: list[tuple[int, str, object]]) -> dict[str, str]:
    """dvclive src/dvclive/plots/metric.py:33-47 (Metric.dump): one TSV a metric at
    `<dir>/plots/metrics/<name>.tsv`, a `step<TAB><basename of name>` header and csv.DictWriter rows
    (delimiter TAB, lineterminator os.linesep); live.py:494 writes a NaN / Inf as `str(val)` (`nan`)."""
    files: dict[str, io.StringIO] = {}
    for step, name, val in rows:
        buf = files.get(name)
        if buf is None:
            buf = files[name] = io.StringIO()
            csv.writer(buf, delimiter="\t", lineterminator="\n").writerow(["step", name.rsplit("/", 1)[-1]])
        if not isinstance(val, str) and (math.isnan(val) or math.isinf(val)):
            val = str(val)
        csv.writer(buf, delimiter="\t", lineterminator="\n").writerow([step, val])
    return {f"dvclive/plots/metrics/{name}.tsv": buf.getvalue() for name, buf in files.items()}


def _hf_dvclive_name(key: str) -> str:
    """dvclive src/dvclive/utils.py:70-72 (standardize_metric_name, "dvclive.huggingface"): `train_` / `eval_` ->
    `train/` / `eval/`; the Trainer's `loss`, `grad_norm`, `learning_rate` keep their names."""
    for split in ("train", "eval"):
        key = key.replace(f"{split}_", f"{split}/")
    return key


def _hf_dvclive_run(folder, nan_at=None):
    """transformers integration_utils.py DVCLiveCallback.on_log: every logged key through
    standardize_metric_name, then `live.next_step()` (one DVCLive step an on_log call, train and eval alike, from 0);
    setup logs `args.to_dict()` to dvclive/params.yaml; make_summary (live.py:861-876) writes dvclive/metrics.json.
    Returns the DVCLive step of the `nan_at`-th training log."""
    rows, step, nan_step, summary = [], 0, None, {}
    for i, v in enumerate(losses(nan_at), start=1):
        logs = {"loss": v, "grad_norm": math.nan if nan_at and i >= nan_at else 1.0 - i * 0.01,
                "learning_rate": 2e-5 * (1 - i / 40), "epoch": i / N}
        if nan_at and i == nan_at:
            nan_step = step
        rows += [(step, _hf_dvclive_name(k), x) for k, x in logs.items()]
        step += 1
        if i % 10 == 0:
            ev = {"eval_loss": 2.6 - 0.04 * i, "eval_runtime": 3.2, "eval_samples_per_second": 40.1,
                  "eval_steps_per_second": 5.0, "epoch": i / N}
            rows += [(step, _hf_dvclive_name(k), x) for k, x in ev.items()]
            step += 1
    for name, text in _dvclive_tsv(rows).items():
        write_file(folder, name, text)
    for _, name, val in rows:
        node = summary
        *parents, leaf = name.split("/")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = str(val) if isinstance(val, float) and math.isnan(val) else val
    summary["step"] = step
    write_file(folder, "dvclive/metrics.json", json.dumps(summary, indent=4) + "\n")
    write_file(folder, "dvclive/params.yaml", "output_dir: out\noverwrite_output_dir: false\ndo_train: false\n"
               "per_device_train_batch_size: 8\nlearning_rate: 2.0e-05\nnum_train_epochs: 1\nlogging_steps: 1\n"
               "bf16: true\nfp16: false\nreport_to:\n- dvclive\n")
    write_file(folder, "dvclive/dvc.yaml", "metrics:\n- metrics.json\nplots:\n- plots/metrics:\n    x: step\n")
    return nan_step


def test_dvclive_hf_callback_loss_tsv_is_read_and_eval_loss_tsv_is_not_the_loss(tmp_path):
    """transformers' DVCLiveCallback (integration_utils.py on_log) through dvclive src/dvclive/plots/metric.py:33-47:
    dvclive/plots/metrics/loss.tsv `step\\tloss` / `0\\t2.48`, and eval/loss.tsv whose header is ALSO
    `step\\tloss` (the basename), beside grad_norm.tsv `step\\tgrad_norm`, learning_rate.tsv; the eval rows are
    the held-out loss (eval_loss), not more training loss points."""
    _hf_dvclive_run(tmp_path)
    a = analyze_logs(tmp_path)
    assert_healthy_loss(a)
    assert "eval_loss" in a.timeline.metrics, sorted(a.timeline.metrics)
    assert "grad_norm" in a.timeline.metrics and "learning_rate" in a.timeline.metrics, sorted(a.timeline.metrics)


def test_dvclive_hf_callback_nan_loss_tsv_is_broken_at_its_step(tmp_path):
    """dvclive live.py:494 (`val = str(val)` for NaN): loss.tsv row `26\\tnan` (the 25th training log, at DVCLive step
    26 since the two evals before it took steps of their own)."""
    step = _hf_dvclive_run(tmp_path, NAN_AT)
    assert_broken_at(analyze_logs(tmp_path), step)


def test_dvclive_hf_callback_params_yaml_gives_precision(tmp_path):
    """transformers DVCLiveCallback.setup: `self.live.log_params(args.to_dict())` -> dvclive/params.yaml (ruamel
    dump, `bf16: true`, `report_to: [dvclive]`): the run's TrainingArguments."""
    _hf_dvclive_run(tmp_path)
    a = analyze_logs(tmp_path)
    assert a.run_profile.precision == "bf16", a.run_profile


def _lightning_dvclive_run(folder, nan_at=None):
    """dvclive src/dvclive/fabric.py:74-97 (DVCLiveLogger.log_metrics, step = trainer step) with
    utils.py:80-91 (standardize_metric_name, "dvclive.lightning"): `train_loss_step` -> `train/step/loss`,
    `train_loss_epoch` -> `train/epoch/loss`, `val_loss` -> `val/loss`, LearningRateMonitor's `lr-AdamW` kept."""
    rows = []
    for i, v in enumerate(losses(nan_at), start=1):
        rows += [(i, "train/step/loss", v), (i, "lr-AdamW", 1e-4 * (1 - i / 40))]
        if i % 10 == 0:
            rows += [(i, "val/loss", 2.6 - 0.04 * i), (i, "train/epoch/loss", v + 0.1), (i, "epoch", i // 10 - 1)]
    for name, text in _dvclive_tsv(rows).items():
        write_file(folder, name, text)


def test_dvclive_lightning_logger_train_step_loss_is_the_loss(tmp_path):
    """dvclive src/dvclive/utils.py:80-91 (Lightning names): `self.log("train_loss", loss, on_step=True,
    on_epoch=True)` is written to dvclive/plots/metrics/train/step/loss.tsv (`step\\tloss`), its epoch mean to
    train/epoch/loss.tsv (`step\\tloss` too) and val_loss to val/loss.tsv (`step\\tloss`): only the first is the
    per-step training loss."""
    _lightning_dvclive_run(tmp_path)
    a = analyze_logs(tmp_path)
    assert_healthy_loss(a)
    assert "eval_loss" in a.timeline.metrics, sorted(a.timeline.metrics)
    _lightning_dvclive_run(tmp_path / "b", NAN_AT)
    assert_broken_at(analyze_logs(tmp_path / "b"), NAN_AT)


# --- Keras CSVLogger ---------------------------------------------------------------------------------------------


def _keras_csv(nan_at=None, validation=True, sep=","):
    """keras src/callbacks/csv_logger.py:58-103 (CSVLogger.on_epoch_end): keys sorted, `epoch` (from 0) first,
    csv.excel dialect (`\\r\\n` line ends); without validation keys it adds `val_<key>` columns filled with `NA`."""
    buf = io.StringIO()
    keys = ["accuracy", "learning_rate", "loss"]
    keys = keys + [f"val_{k}" for k in keys] if not validation else ["accuracy", "learning_rate", "loss",
                                                                         "val_accuracy", "val_loss"]
    w = csv.DictWriter(buf, fieldnames=["epoch"] + keys, delimiter=sep)
    w.writeheader()
    for e, v in enumerate(losses(nan_at)):
        logs = {"accuracy": 0.3 + e * 0.02, "learning_rate": 0.001, "loss": v}
        if validation:
            logs.update(val_accuracy=0.3 + e * 0.018, val_loss=v + 0.1)
        w.writerow({"epoch": e, **{k: logs.get(k, "NA") for k in keys}})
    return buf.getvalue()


def test_keras_csv_logger_training_log_is_read(tmp_path):
    """keras src/callbacks/csv_logger.py:58-103: `training.log` (the docstring's name) `epoch,accuracy,learning_rate,
    loss,val_accuracy,val_loss` then `0,0.3,0.001,2.48,0.3,2.58` (CRLF); NaN as `nan`."""
    a = analyze_logs(write_file(tmp_path / "h", "training.log", _keras_csv()))
    assert_healthy_loss(a)
    assert "eval_loss" in a.timeline.metrics, sorted(a.timeline.metrics)
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "training.log", _keras_csv(NAN_AT))), NAN_AT)


# --- fastai CSVLogger ---------------------------------------------------------------------------------------------


def _fastai_history(nan_at=None):
    """fastai fastai/callback/progress.py CSVLogger.before_fit / _write_line: `','.join(recorder.metric_names)`
    (`epoch,train_loss,valid_loss,accuracy,time`) then `','.join(str(t) for t in log)` a row, epoch from 0, the
    losses as Python floats, time `mm:ss`."""
    out = ["epoch,train_loss,valid_loss,accuracy,time"]
    for e, v in enumerate(losses(nan_at)):
        out.append(",".join(str(t) for t in [e, v, v + 0.1 if not math.isnan(v) else v, 0.3 + e * 0.02, "00:05"]))
    return "\n".join(out) + "\n"


def test_fastai_csv_logger_history_csv_is_read(tmp_path):
    """fastai fastai/callback/progress.py (CSVLogger, fname='history.csv'): `0,2.48,2.58,0.3,00:05` rows."""
    a = analyze_logs(write_file(tmp_path / "h", "models/history.csv", _fastai_history()))
    assert_healthy_loss(a)
    assert "eval_loss" in a.timeline.metrics, sorted(a.timeline.metrics)
    assert_broken_at(analyze_logs(write_file(tmp_path / "b", "history.csv", _fastai_history(NAN_AT))), NAN_AT)


# --- PyTorch Lightning CSVLogger (written by lightning itself) ----------------------------------------------------


def _lightning_csv(folder, nan_at=None):
    """lightning 2.6.6 src/lightning/fabric/loggers/csv_logs.py (_ExperimentWriter.log_metrics / save: a `step`
    column, keys sorted, empty cells for the other row kind) and pytorch/loggers/csv_logs.py (hparams.yaml), as
    `self.log("train_loss", loss, on_step=True, on_epoch=True)` + `self.log("val_loss", ...)` + LearningRateMonitor
    log them: step = global_step - 1. Returns the row step of the `nan_at`-th training log."""
    from lightning.pytorch.loggers import CSVLogger

    logger = CSVLogger(save_dir=str(folder))
    logger.log_hyperparams({"lr": 1e-4, "precision": "bf16-mixed", "model_name": "gpt2"})
    for i, v in enumerate(losses(nan_at), start=1):
        logger.log_metrics({"train_loss_step": v, "lr-AdamW": 1e-4 * (1 - i / 40), "epoch": (i - 1) // 10}, step=i - 1)
        if i % 10 == 0:
            logger.log_metrics({"val_loss": 2.6 - 0.04 * i, "epoch": (i - 1) // 10}, step=i - 1)
            logger.log_metrics({"train_loss_epoch": v + 0.1, "epoch": (i - 1) // 10}, step=i - 1)
    logger.save()
    logger.finalize("success")
    return NAN_AT - 1


def test_lightning_csv_logger_metrics_csv_is_read(tmp_path):
    """lightning/fabric/loggers/csv_logs.py: lightning_logs/version_0/metrics.csv
    `epoch,lr-AdamW,step,train_loss_epoch,train_loss_step,val_loss` with train / validation / epoch-mean rows apart."""
    _lightning_csv(tmp_path / "h")
    a = analyze_logs(tmp_path / "h")
    assert_healthy_loss(a)
    assert "eval_loss" in a.timeline.metrics and "learning_rate" in a.timeline.metrics, sorted(a.timeline.metrics)
    step = _lightning_csv(tmp_path / "b", NAN_AT)
    assert_broken_at(analyze_logs(tmp_path / "b"), step)


# --- TensorBoard tags ---------------------------------------------------------------------------------------------


def _tb(folder, tags_for_step, n=N, nan_at=None):
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(log_dir=str(folder))
    for i, v in enumerate(losses(nan_at, n), start=1):
        tags_for_step(w, i, v)
    w.close()


def test_tensorboard_bare_capitalised_loss_tag_is_the_loss(tmp_path):
    """torch/utils/tensorboard/writer.py add_scalar: the many scripts that write `writer.add_scalar("Loss", loss,
    step)` (and `"Learning Rate"`) leave the tag `Loss`: canonical_metric keeps `Loss`, no loss read."""
    _tb(tmp_path / "h", lambda w, i, v: (w.add_scalar("Loss", v, i), w.add_scalar("Learning Rate", 1e-4, i)))
    assert_healthy_loss(analyze_logs(tmp_path / "h"))
    _tb(tmp_path / "b", lambda w, i, v: w.add_scalar("Loss", v, i), nan_at=NAN_AT)
    assert_broken_at(analyze_logs(tmp_path / "b"), NAN_AT)


def test_tensorboard_add_scalars_loss_group_train_subfolder_is_the_loss(tmp_path):
    """torch/utils/tensorboard/writer.py add_scalars (main_tag, {"train": .., "val": ..}): each value goes to its own
    event file in `<logdir>/<main_tag>_<key>/` under the tag `<main_tag>` (`loss/` folder names `loss_train`,
    `loss_val`); the train folder's `loss` is the loss, the val folder's the eval loss."""
    _tb(tmp_path / "h", lambda w, i, v: w.add_scalars("loss", {"train": v, "val": v + 0.1}, i))
    a = analyze_logs(tmp_path / "h")
    assert_healthy_loss(a)
    assert "eval_loss" in a.timeline.metrics, sorted(a.timeline.metrics)


def test_tensorboard_losses_group_total_loss_is_the_loss(tmp_path):
    """`losses/total_loss` (TF object-detection style groups copied into LM scripts: `losses/total_loss`,
    `losses/lm_loss`) under torch's SummaryWriter: the group's total is the training loss."""
    _tb(tmp_path / "h", lambda w, i, v: w.add_scalar("losses/total_loss", v, i))
    assert_healthy_loss(analyze_logs(tmp_path / "h"))


# --- W&B (written by wandb itself, offline) -----------------------------------------------------------------------


def _wandb_lightning(folder, monkeypatch, nan_at=None):
    """lightning src/lightning/pytorch/loggers/wandb.py (WandbLogger.experiment: `define_metric("trainer/global_step")`
    and `define_metric("*", step_metric="trainer/global_step", step_sync=True)`; log_metrics:
    `self.experiment.log(dict(metrics, **{"trainer/global_step": step}))`) with `self.log("train_loss", loss)`:
    the W&B keys are `train_loss`, `val_loss`, `lr-AdamW`, `trainer/global_step`."""
    import wandb

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    run = wandb.init(project="p", dir=str(folder), config={"precision": "bf16-mixed"})
    run.define_metric("trainer/global_step")
    run.define_metric("*", step_metric="trainer/global_step", step_sync=True)
    for i, v in enumerate(losses(nan_at), start=1):
        run.log({"train_loss": v, "lr-AdamW": 1e-4, "epoch": 0, "trainer/global_step": i})
        if i % 10 == 0:
            run.log({"val_loss": v + 0.1, "epoch": 0, "trainer/global_step": i})
    run.finish()
    wandb.teardown()  # the process-wide settings (dir=) would otherwise outlive the test and steer later runs


def test_wandb_lightning_logger_train_loss_key_is_the_loss(tmp_path, monkeypatch):
    """Lightning's WandbLogger (lightning/pytorch/loggers/wandb.py log_metrics) logs `self.log("train_loss", ...)` as
    the W&B key `train_loss` at `trainer/global_step`: the only loss of the run (TensorBoard, MLflow and CSV readers
    take a sole `train_loss` as the loss; ingest/wandb.py _history_frame maps keys through canonical_metric only)."""
    _wandb_lightning(tmp_path / "h", monkeypatch)
    a = analyze_logs(tmp_path / "h")
    assert_healthy_loss(a)
    assert "eval_loss" in a.timeline.metrics and "learning_rate" in a.timeline.metrics, sorted(a.timeline.metrics)


# --- MLflow 3.x default store -------------------------------------------------------------------------------------


def test_mlflow3_default_store_run_is_read(tmp_path, monkeypatch):
    """mlflow 3.17.2 with no tracking URI set: the run in the working folder's default store (mlflow.db / mlruns),
    `mlflow.log_metric("train_loss", v, step=i)` as Lightning's MLFlowLogger and scripts log it; NaN logged as
    such."""
    import mlflow

    for sub, nan_at in (("h", None), ("b", NAN_AT)):
        (tmp_path / sub).mkdir()
        monkeypatch.chdir(tmp_path / sub)
        monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
        mlflow.set_tracking_uri(None)
        with mlflow.start_run():
            mlflow.log_params({"precision": "bf16-mixed"})
            for i, v in enumerate(losses(nan_at), start=1):
                mlflow.log_metric("train_loss", v, step=i)
    assert_healthy_loss(analyze_logs(tmp_path / "h"))
    assert_broken_at(analyze_logs(tmp_path / "b"), NAN_AT)
