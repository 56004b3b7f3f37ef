"""Day 9 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AQ1 / AQ3).

* paddle.distributed.launch's per-rank consoles, `workerlog.0` and `workerlog.n0.c0` (no .log suffix), are run logs
  (micelvrice/GDAP-paddle llm/log/workerlog.0); PaddleNLP's Trainer lines `loss: X, learning_rate: Y, global_step: N,
  ...` are put at their global_step, and its printed arguments (`lora : True`, `bf16 : True`, the `paddlenlp commit
  id` line) say the method, the precision and the framework.
* apex amp's `Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to X` (and the older `Gradient
  overflow.  Skipping step, reducing loss scale to X`) are overflows at the script's own step line, and say fp16
  (NVIDIA/DeepLearningExamples issue 252); a scale collapse while the loss is already NaN is caused by that NaN.
* NVIDIA DLLogger's console lines (`DLL <time> - Training Epoch: 0 Training Iteration: N  average_loss : X  step_loss :
  Y  learning_rate : Z`, `DLL <time> - PARAMETER loss_scale : X`, DeepLearningExamples issue 543) are read: the step
  lines at their iteration, each PARAMETER loss_scale line an overflow the scaler skipped, at the step line.
* torchtune's bar `1|N|Loss: X: ... | n/M [...]`, redrawn once the step is done (its n then one ahead), is read once per
  step at the description's N (shanshanwangcsc/torchtune-gpu-benchmark: 512 points, not 1023 over steps 1-513); its
  resolved config's instruction dataset (`torchtune.datasets.alpaca_cleaned_dataset`) says sft.
"""
from __future__ import annotations


import forensics
from forensics.ingest import stdout
from forensics.ingest.pretrain_lines import parse_line
from forensics.run import discover


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


# ---- apex amp's gradient-overflow lines --------------------------------------------------------------------------

_BAR = "Iteration:  51%|\u2588\u2588\u2588\u2588\u2588\u258f    | {n}/11037 [31:18<28:47,  3.10it/s]"


def _apex_console(loss: str, scaler: str = "loss scaler 0 ", steps: range = range(330, 340),
                  scale: float = 65536.0) -> str:
    """NVIDIA's BERT script: its `Step:N ...` line, then the micro-batch bar with apex's overflow line glued to it."""
    lines, n = [], 5000
    for step in steps:
        lines.append(f"Step:{step} Average Loss = {loss} Step Loss = {loss} LR 0.006")
        n += 64
        scale /= 2
        lines.append(_BAR.format(n=n) + f"Rank 0 :: Gradient overflow.  Skipping step, {scaler}reducing loss scale to "
                     f"{scale!r}")
    return "\n".join(lines) + "\n"


def test_apex_overflow_lines_are_overflows_at_the_scripts_step(tmp_path):
    for scaler in ("loss scaler 0 ", ""):
        path = tmp_path / f"apex{len(scaler)}.log"
        path.write_text(_apex_console("1.5", scaler), encoding="utf-8")
        frame = stdout.read(path).frame
        # each at the step line after it (printed once the optimizer step is over), the last at the last step line;
        # never at the micro-batch bar's count (5064 ...)
        assert sorted({step for step, _ in _metric(frame, "overflow")}) == list(range(331, 340))
        assert _metric(frame, "loss_scale")[0] == (331, 32768.0)


def test_apex_overflow_lines_say_fp16(tmp_path):
    (tmp_path / "train.log").write_text(_apex_console("1.5"), encoding="utf-8")
    assert forensics.analyze(tmp_path).run_profile.to_dict()["precision"] == "fp16"


def test_a_scale_collapse_while_the_loss_is_nan_is_caused_by_the_nan(tmp_path):
    (tmp_path / "train.log").write_text(_apex_console("nan", steps=range(338, 339), scale=7.3e-12) * 4, encoding="utf-8")
    a = forensics.analyze(tmp_path)
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("nonfinite_metric", 338)


def test_a_scale_collapse_with_a_finite_loss_stays_the_first_incident(tmp_path):
    (tmp_path / "train.log").write_text(_apex_console("1.5", steps=range(300, 360)), encoding="utf-8")
    a = forensics.analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "loss_scale_overflow"


def test_a_bar_with_a_deepspeed_overflow_still_dates_it_by_the_bar(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(f" {i * 10}%|##   | {i}/10 [00:0{i}<00:09,  1.00it/s]\n"
                            f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768\n"
                            for i in (3,)), encoding="utf-8")
    assert [step for step, _ in _metric(stdout.read(path).frame, "overflow")] == [4]


# ---- NVIDIA DLLogger -----------------------------------------------------------------------------------------------

def _dll(second: int, rest: str) -> str:
    return f"DLL 2020-06-04 01:{second // 60:02d}:{second % 60:02d}.355678 - {rest}\n"


def test_dllogger_step_lines_are_read_at_their_iteration():
    line = _dll(0, "Training Epoch: 0 Training Iteration: 2933  average_loss : nan  step_loss : 1.0703125  "
                   "learning_rate : 0.003161792362931437").rstrip("\n")
    record = parse_line(line)
    assert (record.kind, record.step) == ("dllogger", 2933)
    values = dict(record.metrics)
    assert values["loss"] == 1.0703125 and values["learning_rate"] == 0.003161792362931437
    assert values["loss_avg"] != values["loss_avg"]  # the running average, NaN
    assert parse_line("DLL 2021-01-01 10:00:00.1 - (0, 100) loss : 2.5  lr : 0.001 ").step == 100
    assert parse_line("DLL 2021-01-01 10:00:00.1 - () e2e_train_time : 100.0 final_loss : 1.5 ") is None


def test_dllogger_parameter_loss_scale_lines_are_overflows_at_the_step_line(tmp_path):
    scale, lines = 2.0 ** -35, []
    for k in range(12):
        lines.append(_dll(k * 26, f"PARAMETER loss_scale : {scale!r} "))
        scale /= 2
    lines.append(_dll(12 * 26, "Training Epoch: 0 Training Iteration: 2933  average_loss : nan  step_loss : 1.0703125"
                                "  learning_rate : 0.003161792362931437"))
    (tmp_path / "train.log").write_text("".join(lines), encoding="utf-8")
    a = forensics.analyze(tmp_path)
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("loss_scale_overflow", 2933)
    assert a.run_profile.to_dict()["precision"] == "fp16"


def test_dllogger_training_that_goes_well_stays_healthy(tmp_path):
    lines = [_dll(0, "PARAMETER seed : 42 ")]
    for i in range(1, 61):
        lines.append(_dll(i, f"Training Epoch: 0 Training Iteration: {i * 10}  average_loss : {8 * 0.97 ** i + 1.5:.4f}"
                             f"  step_loss : {8 * 0.97 ** i + 1.5:.4f}  learning_rate : 0.006"))
    (tmp_path / "train.log").write_text("".join(lines), encoding="utf-8")
    a = forensics.analyze(tmp_path)
    assert a.status == "healthy", [f.message for f in a.findings]
    assert [step for step, _ in _metric(a.timeline.frame, "loss")][:2] == [10, 20]
    assert a.run_profile.to_dict()["precision"] == "unknown"


# ---- torchtune's bar ------------------------------------------------------------------------------------------------

def _torchtune_console(steps: int = 40, dataset: str = "torchtune.datasets.alpaca_cleaned_dataset") -> str:
    head = ("INFO:torchtune.utils._logging:Running LoRAFinetuneRecipeSingleDevice with resolved config:\n\n"
            f"batch_size: 6\ndataset:\n  _component_: {dataset}\n  packed: true\ndtype: bf16\n"
            "model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\n  lora_rank: 64\n\n"
            "INFO:torchtune.utils._logging:Model is initialized with precision torch.bfloat16.\n")
    bar, shown = [], "  0%|          | 0/{M} [00:00<?, ?it/s]".format(M=steps)
    for n in range(1, steps + 1):
        loss = 1.0 + 1.0 * 0.9 ** n + 0.02 * (n % 3)
        done = f"{n * 100 // steps:3d}%|#         | {n}/{steps} [00:{n:02d}<00:10,  1.30it/s]"
        desc = f"1|{n}|Loss: {loss!r}:"
        bar.append(desc + f"{(n - 1) * 100 // steps:3d}%|#         | {n - 1}/{steps} [00:{n:02d}<00:10,  1.30it/s]")
        bar.append(desc + done)
    return head + shown + "\r" + "\r".join(bar) + "\n"


def test_torchtune_bar_losses_are_read_once_at_their_own_step(tmp_path):
    path = tmp_path / "job.out"
    path.write_text(_torchtune_console(), encoding="utf-8")
    losses = _metric(stdout.read(path).frame, "loss")
    assert [step for step, _ in losses] == list(range(1, 41))
    assert losses[0][1] == round(1.0 + 0.9 + 0.02, 4)


def test_torchtune_instruction_dataset_says_sft(tmp_path):
    (tmp_path / "job.out").write_text(_torchtune_console(), encoding="utf-8")
    profile = forensics.analyze(tmp_path).run_profile.to_dict()
    assert (profile["objective"], profile["framework"], profile["method"]) == ("sft", "torchtune", "lora")


def test_torchtune_text_completion_dataset_says_no_sft(tmp_path):
    (tmp_path / "job.out").write_text(_torchtune_console(dataset="torchtune.datasets.text_completion_dataset"),
                                      encoding="utf-8")
    assert forensics.analyze(tmp_path).run_profile.to_dict()["objective"] != "sft"


def test_a_plain_tqdm_bar_with_a_loss_postfix_keeps_the_bars_count(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("\r".join(f"Epoch 0: {n * 5}%|#   | {n}/20 [00:0{n % 10}<00:10,  1.00it/s, loss={2.0 - 0.03 * n:.3f}]"
                              for n in range(1, 21)) + "\n", encoding="utf-8")
    assert [step for step, _ in _metric(stdout.read(path).frame, "loss")] == list(range(1, 21))


# ---- the model card's results table as a web page shows it: cells separated by spaces ----------------------------------

def test_a_space_separated_model_card_table_is_read_as_the_trainers_results(tmp_path):
    import forensics
    run = tmp_path / "run"
    run.mkdir()
    rows = ["Training Loss Epoch Step Validation Loss Rouge1 Rouge2 Gen Len",
            "No log 1.0 1209 3.1603 17.3175 8.3009 18.2"]
    rows += [f"{3.4 - 0.05 * e:.4f} {e + 1:.1f} {1209 * (e + 1)} {3.16 - 0.02 * e:.4f} 17.3 8.3 18.0" for e in range(1, 8)]
    (run / "train.log").write_text("\n".join(rows) + "\n")
    analysis = forensics.analyze(run)
    assert analysis.timeline.series("eval_loss").index.tolist() == [1209 * e for e in range(1, 9)]
    assert len(analysis.timeline.series("loss")) == 7 and "eval_gen_len" in analysis.timeline.metrics
    assert analysis.run_profile.framework == "hf_trainer"


def test_prose_that_starts_like_the_spaced_header_is_no_table():
    from forensics.ingest.results_table import header_columns
    assert header_columns("Training Loss Epoch Step Validation Loss, as the card shows, is what we look at.") is None
    assert header_columns("Step 10 Training Loss 2.3") is None


def test_a_dllogger_arguments_dump_with_a_loss_scale_is_no_overflow(tmp_path):
    import forensics
    lines = [_dll(0, "PARAMETER seed : 42 "), _dll(0, "PARAMETER loss_scale : 65536.0 ")]
    for i in range(1, 61):
        lines.append(_dll(i, f"Training Epoch: 0 Training Iteration: {i * 10}  average_loss : {8 * 0.97 ** i + 1.5:.4f}"
                             f"  step_loss : {8 * 0.97 ** i + 1.5:.4f}  learning_rate : 0.006"))
    (tmp_path / "train.log").write_text("".join(lines), encoding="utf-8")
    a = forensics.analyze(tmp_path)
    assert a.status == "healthy" and a.run_profile.precision == "unknown"


def test_dllogger_iterations_counted_within_each_epoch_are_numbered_on(tmp_path):
    import forensics
    lines = [_dll(k, f"Epoch: {e} Iteration: {i}  train.loss : {6.9 - 0.01 * k:.4f}  train.lr : 0.256 ")
             for k, (e, i) in enumerate(((e, i) for e in range(3) for i in range(10, 510, 10)))]
    (tmp_path / "train.log").write_text("".join(lines), encoding="utf-8")
    loss = forensics.analyze(tmp_path).timeline.series("loss")
    assert len(loss) == 150 and loss.index.is_monotonic_increasing and loss.index[-1] == 1500


def test_a_count_after_a_time_mid_line_is_still_a_step():
    from forensics.ingest.console_lines.hand_written import _bare_count
    assert _bare_count("train 3/10 12:00 loss 2.1").groups() == ("3", "10")
    assert _bare_count("10/30 22:18:02 - INFO - [ 200/735] loss: 1").groups() == ("200", "735")


# ---- a README holding the tail of a Trainer log (string-valued dicts), its finished bar after the summary ----------------

def _readme_tail(folder, whole_run_mean: float):
    folder.mkdir()
    rows = [f"{{'loss': '{0.55 + (0.02 if i % 2 else -0.02):.4f}', 'grad_norm': '0.08', 'learning_rate': "
            f"'{9.4e-6 - i * 6.7e-7:.3e}', 'epoch': '{(160 + 10 * i) / 393.75:.4f}'}}" for i in range(15)]
    rows += [f"{{'train_runtime': '1063', 'train_loss': '{whole_run_mean}', 'epoch': '0.7619'}}",
             "100%|" + "\u2588" * 20 + "| 300/300 [17:42<00:00,  3.54s/it]"]
    (folder / "README.md").write_text("# SQL fine-tune\n\n## Training output\n\n```\n" + "\n".join(rows) + "\n```\n")
    return folder


def test_a_readme_log_tail_is_dated_by_its_epochs_and_its_whole_run_mean_shows_learning(tmp_path):
    import forensics
    analysis = forensics.analyze(_readme_tail(tmp_path / "run", 0.6024))
    assert analysis.timeline.series("loss").index.tolist()[:2] == [160, 170]
    assert analysis.status == "healthy" and analysis.learning.metric == "train_loss"


def test_a_readme_log_tail_whose_whole_run_mean_is_no_higher_shows_no_learning(tmp_path):
    import forensics
    analysis = forensics.analyze(_readme_tail(tmp_path / "run", 0.551))
    assert analysis.first_incident.kind == "no_learning_evidence"
