"""Tests of the readers of MindFormers, OpenNMT-py, LMFlow, x-transformers, NeMo 2.0, W&B offline and XTuner output.

Formats found in the frameworks' own source (fmt8 sweep): MindSpore MindFormers, OpenNMT-py, LMFlow, lucidrains'
scripts (x-transformers), NeMo 2.0's progress printer, W&B offline run folders and XTuner's mmengine console. Each run
below is built as that code prints or writes it (source file and line in each docstring; commits: MindFormers
fd4deebc1, OpenNMT-py 97111d97, LMFlow f3597dba, x-transformers 9252ed7). A failing test is a reader gap; a passing
one records coverage (at most one per framework). Broken copies have the framework's own spelling of NaN from the
25th logged step on."""
from __future__ import annotations

import json
import math

from support.format_runs import N, analyze_logs, assert_broken_at, assert_healthy_loss, losses, write_file

NAN_AT = 25


def _lr(i):
    return 2e-5 * (1 - i / (N + 5))


# --- MindSpore MindFormers --------------------------------------------------------------------------------------


def _mindformers_console(nan_at=None, sink=True):
    """mindformers/core/callback/callback.py:485-506 (MFLossMonitor.print_output_info) with the stdout format of
    mindformers/tools/logger.py:41 (`%(asctime)s - %(name)s[%(filepath)s:%(lineno)d] - %(levelname)s - %(message)s`),
    then the progress line of callback.py:508 (`  %4.1f%% %s %.5f samples/s/p  %s }`). `loss: %5.3f` of a NaN is
    `  nan`; lr is np.array2string of the schedule's value; global_norm a printed Tensor."""
    out = ["2024-06-01 10:00:00,001 - mindformers[mindformers/trainer/base_trainer.py:100] - INFO - .........Build "
           "Network From Config.........."]
    for i, v in enumerate(losses(nan_at), start=1):
        gn = "nan" if nan_at is not None and i >= nan_at else "1.234"
        loss = f"loss: {v:5.3f}" if sink else f"loss:[{v:5.3f}/{v + 0.01:5.3f}]"
        out.append(f"2024-06-01 10:{i // 60:02d}:{i % 60:02d},123 - mindformers[mindformers/core/callback/callback.py:"
                   f"{485 if sink else 490}] - INFO - {{ Epoch:[{1:3d}/{1:3d}], step:[{i:5d}/{N:5d}], {loss}, "
                   f"per_step_time: 345ms, lr: {_lr(i):.4e}, overflow cond: False, loss_scale: 1.0, "
                   f"global_norm: [{gn}], train_throughput_per_npu: 123.456T")
        pct = 100 * i / N
        bar = ('|%%-%ds|' % 50) % (int(50 * pct / 100) * "█")
        out.append(f"2024-06-01 10:{i // 60:02d}:{i % 60:02d},124 - mindformers[mindformers/core/callback/callback.py:"
                   f"508] - INFO -   {pct:4.1f}% {bar} 12.34567 samples/s/p  0:05:00 }}")
    return "\n".join(out) + "\n"


def test_mindformers_loss_monitor_lines_are_read(tmp_path):
    """MindFormers mindformers/core/callback/callback.py:485 (dataset sink mode): `{ Epoch:[  1/  1],
    step:[   10/   30], loss: 2.345, per_step_time: 345ms, lr: ..., overflow cond: False, loss_scale: 1.0,
    global_norm: [1.234]`, written by logger to stdout / output/log/rank_0/info.log."""
    a = analyze_logs(write_file(tmp_path, "output/log/rank_0/info.log", _mindformers_console()))
    assert_healthy_loss(a)


def test_mindformers_loss_monitor_nan_loss_is_broken_at_its_step(tmp_path):
    """MindFormers callback.py:485: `loss:   nan` (`%5.3f` of NaN) and `global_norm: [nan]` from step 25."""
    a = analyze_logs(write_file(tmp_path, "output/log/rank_0/info.log", _mindformers_console(NAN_AT)))
    assert_broken_at(a, NAN_AT)


def test_mindformers_non_sink_loss_pair_is_read(tmp_path):
    """MindFormers callback.py:490 (not sink mode): `loss:[2.345/2.400]`, the step's loss and the running mean."""
    a = analyze_logs(write_file(tmp_path, "output/log/rank_0/info.log", _mindformers_console(sink=False)))
    assert_healthy_loss(a)


# --- OpenNMT-py ----------------------------------------------------------------------------------------------------


def _onmt_console(nan_at=None):
    """OpenNMT-py onmt/utils/statistics.py:124-135 (Statistics.output) through onmt/utils/logging.py:16
    (`[%(asctime)s %(levelname)s] %(message)s`); validation from onmt/utils/report_manager.py:154-155. xent is the
    loss (`%2.1f`), ppl = exp(xent); NaN prints `nan`."""
    out = ["[2024-06-01 10:00:00,000 INFO] Missing transforms field for corpus_1 data, set to default: [].",
           "[2024-06-01 10:00:00,100 INFO] Starting training on GPU: [0]",
           "[2024-06-01 10:00:00,200 INFO] Start training loop and validate every 100 steps..."]
    for i, v in enumerate(losses(nan_at), start=1):
        step = 10 * i
        ppl = math.exp(min(v, 100)) if v == v else float("nan")
        out.append(f"[2024-06-01 10:{i // 60:02d}:{i % 60:02d},000 INFO] "
                   + ("Step %s; acc: %2.1f; ppl: %5.1f; xent: %2.1f; lr: %7.5f; sents: %7.0f; bsz: %4.0f/%4.0f/%2.0f; "
                      "%3.0f/%3.0f tok/s; %6.0f sec;")
                   % ("%s/%5d" % ("%2d" % step, 10 * N), 40 + i, ppl, v, 0.001, 3200, 1234, 1345, 32, 12345, 13456,
                      6 * i))
        if i % 10 == 0:
            out.append(f"[2024-06-01 10:{i // 60:02d}:{i % 60:02d},500 INFO] Validation perplexity: {ppl:g}")
            out.append(f"[2024-06-01 10:{i // 60:02d}:{i % 60:02d},501 INFO] Validation accuracy: {40 + i:g}")
    return "\n".join(out) + "\n"


def _assert_xent_series(a):
    """OpenNMT-py's printed xent has one decimal: the loss is read with its 30 points, falling, healthy."""
    assert "loss" in a.timeline.metrics, sorted(a.timeline.metrics)
    loss = a.timeline.series("loss")
    assert len(loss) == N
    assert loss.iloc[0] >= 2.4 and loss.iloc[-1] <= 1.3
    assert a.status == "healthy", (a.status, a.first_incident)


def test_opennmt_step_lines_xent_is_the_loss(tmp_path):
    """OpenNMT-py onmt/utils/statistics.py:125: `Step 10/  300; acc: 41.0; ppl:  11.8; xent: 2.5; lr: 0.00100;
    sents:    3200; bsz: 1234/1345/32; 12345/13456 tok/s;      6 sec;` (the logger's file: -log_file, or stdout)."""
    a = analyze_logs(write_file(tmp_path, "train.log", _onmt_console()))
    _assert_xent_series(a)


def test_opennmt_nan_xent_is_broken_at_its_step(tmp_path):
    """OpenNMT-py statistics.py:125 with `ppl:   nan; xent: nan` from the 25th logged step (step 250)."""
    a = analyze_logs(write_file(tmp_path, "train.log", _onmt_console(NAN_AT)))
    assert_broken_at(a, 10 * NAN_AT)


# --- LMFlow (HF Trainer underneath) ---------------------------------------------------------------------------------


def test_lmflow_finetuner_arguments_banner_gives_precision(tmp_path):
    """LMFlow src/lmflow/pipeline/finetuner.py:103 logs `Training/evaluation parameters FinetunerArguments(...)`
    (a TrainingArguments subclass: HF's multi-line repr) and then trains with transformers' Trainer, whose
    `{'loss': ..., 'grad_norm': ..., 'learning_rate': ..., 'epoch': ...}` dicts go to the console."""
    head = ("06/01/2024 10:00:00 - INFO - lmflow.pipeline.finetuner - Training/evaluation parameters "
            "FinetunerArguments(\n_n_gpu=1,\nbf16=True,\nfp16=False,\nlearning_rate=2e-05,\nlogging_steps=1,\n"
            "output_dir=output_models/finetune,\nper_device_train_batch_size=4,\n)\n")
    body = "".join(f"{{'loss': {v:.4f}, 'grad_norm': 1.23, 'learning_rate': {_lr(i):.4e}, 'epoch': {i / N:.2f}}}\n"
                   for i, v in enumerate(losses(), start=1))
    a = analyze_logs(write_file(tmp_path, "train.log", head + body))
    assert_healthy_loss(a)
    assert a.run_profile.precision == "bf16", a.run_profile


# --- lucidrains' scripts (x-transformers train_enwik8.py and its kin) ----------------------------------------------


def _lucidrains_console(nan_at=None):
    """x-transformers train_enwik8.py / train_belief_state.py:112,121: `print(f'training loss: {loss.item()}')` every
    batch inside `for i in tqdm.tqdm(range(NUM_BATCHES), mininterval=10., desc='training')`, and
    `print(f'validation loss: {loss.item()}')` every VALIDATE_EVERY batches. No step number is printed: the n-th
    `training loss:` line is batch n. A NaN loss prints `nan`."""
    out = []
    for i, v in enumerate(losses(nan_at), start=1):
        out.append(f"training loss: {v!r}")
        if i % 10 == 0:
            out.append(f"validation loss: {v + 0.05!r}")
    return "\n".join(out) + "\n"


def test_lucidrains_training_loss_prints_are_read(tmp_path):
    """x-transformers train_belief_state.py:112 (`training loss: 2.48`, one a batch, 9252ed7)."""
    a = analyze_logs(write_file(tmp_path, "train.log", _lucidrains_console()))
    assert_healthy_loss(a)


def test_lucidrains_nan_training_loss_is_broken_at_its_batch(tmp_path):
    """x-transformers train_belief_state.py:112: `training loss: nan` from the 25th batch."""
    a = analyze_logs(write_file(tmp_path, "train.log", _lucidrains_console(NAN_AT)))
    assert_broken_at(a, NAN_AT)


# --- NVIDIA NeMo 2.0 (nemo.lightning ProgressPrinter) ---------------------------------------------------------------


def _nemo2_console(nan_at=None):
    """NeMo 2.0 nemo/lightning/pytorch/callbacks/progress_printer.py (ProgressPrinter.on_train_batch_end /
    format_string): `Training epoch 0, iteration 9/29 | lr: 2e-05 | global_batch_size: 8 | global_step: 9 |
    reduced_train_loss: 2.345 | train_step_timing in s: 0.345` (values with `:.4` unless integral)."""
    out = ["[NeMo I 2024-06-01 10:00:00 nemo_logging:393] Experiments will be logged at /results/nemo_experiments/default"]
    for i, v in enumerate(losses(nan_at), start=1):
        it = i - 1
        metrics = {"lr": _lr(i), "global_batch_size": 8, "global_step": it, "reduced_train_loss": v,
                   "train_step_timing in s": 0.345, "consumed_samples": 8 * i}
        line = f"Training epoch 0, iteration {it}/{N - 1}"
        for k, val in metrics.items():
            val = float(val)
            line += f" | {k}: {int(val)}" if val.is_integer() else f" | {k}: {val:.4}"
        out.append(line)
    return "\n".join(out) + "\n"


def test_nemo2_progress_printer_lines_are_read(tmp_path):
    """NeMo 2.0 / NeMo-Run console: `Training epoch 0, iteration 9/29 | ... | reduced_train_loss: 2.345 | ...`."""
    a = analyze_logs(write_file(tmp_path, "log-nemo.txt", _nemo2_console()))
    assert_healthy_loss(a)


def test_nemo2_progress_printer_nan_loss_is_broken_at_its_step(tmp_path):
    """NeMo 2.0 progress printer: `reduced_train_loss: nan` from global_step 24 (the 25th line)."""
    a = analyze_logs(write_file(tmp_path, "log-nemo.txt", _nemo2_console(NAN_AT)))
    assert a.status == "broken"
    assert a.first_incident is not None and a.first_incident.step in (NAN_AT - 1, NAN_AT), a.first_incident


# --- W&B offline run folder ----------------------------------------------------------------------------------------


def test_wandb_offline_run_output_log_is_read(tmp_path):
    """wandb (sdk) writes `wandb/offline-run-<time>-<id>/files/output.log` (the console) and wandb-summary.json
    beside `run-<id>.wandb`; a folder copied without its .wandb log keeps the console's HF dict lines."""
    files = tmp_path / "wandb" / "offline-run-20240601_100000-abc123" / "files"
    body = "".join(f"{{'loss': {v:.4f}, 'grad_norm': 1.23, 'learning_rate': {_lr(i):.4e}, 'epoch': {i / N:.2f}}}\n"
                   for i, v in enumerate(losses(), start=1))
    write_file(files, "output.log", body)
    write_file(files, "wandb-summary.json", json.dumps({"train/loss": losses()[-1], "train/global_step": N,
                                                         "_step": N, "_runtime": 100}))
    write_file(files, "config.yaml", "_wandb:\n  value:\n    cli_version: 0.17.0\nbf16:\n  value: true\n")
    a = analyze_logs(tmp_path)
    assert_healthy_loss(a)


# --- XTuner (mmengine runner) --------------------------------------------------------------------------------------


def _xtuner_console(nan_at=None):
    """mmengine/runner/log_processor.py (LogProcessor.get_log_after_iter): `Iter(train) [  10/300]  lr: 2.0000e-05
    eta: 0:10:00  time: 1.2345  data_time: 0.0123  memory: 12000  loss: 2.4800  grad_norm: 1.2300`, after the
    logger's `%Y/%m/%d %H:%M:%S - mmengine - INFO - ` prefix. A NaN prints `loss: nan`."""
    out = []
    for i, v in enumerate(losses(nan_at), start=1):
        it = 10 * i
        gn = "nan" if nan_at is not None and i >= nan_at else "1.2300"
        out.append(f"2024/08/27 06:{i // 60:02d}:{i % 60:02d} - mmengine - INFO - Iter(train) [{it:3d}/{10 * N}]  "
                   f"lr: {_lr(i):.4e}  eta: 0:10:00  time: 1.2345  data_time: 0.0123  memory: 12000  "
                   f"loss: {v:.4f}  grad_norm: {gn}")
    return "\n".join(out) + "\n"


def test_xtuner_iter_train_nan_is_broken_at_its_iteration(tmp_path):
    """XTuner's mmengine console (`Iter(train) [ 250/300] ... loss: nan  grad_norm: nan`) from iteration 250."""
    a = analyze_logs(write_file(tmp_path, "20240827_063210/20240827_063210.log", _xtuner_console(NAN_AT)))
    assert_broken_at(a, 10 * NAN_AT)
