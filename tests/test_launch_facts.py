"""Several launches appended to one console (`nohup python train.py >> train.log`): what a launch prints about itself
(its parameter count, its precision, its PEFT banner, its printed arguments) is read from the last launch that printed
it (`ingest.launch_facts`), as the timeline judges the last launch; a fact only an earlier launch printed still stands;
a console of one launch is read as before. A relaunch that loads the run's own checkpoint starts from no trained
base (`profile.model_start`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from forensics.config import RunConfig
from forensics.ingest import stdout
from forensics.ingest.console_facts import console_facts
from forensics.ingest.printed_configs import ARGS_KEY
from forensics.profile.model_start import pretrained_base

CORPUS = Path(__file__).parent / "realworld"


def _session(t: str, params: str | None, dtype: str | None, losses: list[float]) -> list[str]:
    """One launch of an own training loop: its start line (the logger's date changes, the message does not), what it
    prints of its model, its step lines."""
    lines = [f"2025-09-28 {t},100 - INFO - Starting training session"]
    lines += [f"2025-09-28 {t},200 - INFO - Model has: {params} parameters"] if params else []
    lines += [f"2025-09-28 {t},300 - INFO - Model is initialized with precision torch.{dtype}."] if dtype else []
    return lines + [f"2025-09-28 {t},400 - INFO - Step {i * 100}: loss = {loss:.4f}, lr = 0.000100"
                    for i, loss in enumerate(losses)]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_last_launch_s_parameter_count_and_precision_win(tmp_path):
    log = _write(tmp_path / "log.txt", _session("00:25:00", "134183936", "float32", [10.55, 7.1, 6.2])
                 + _session("17:10:26", "109607936", "bfloat16", [10.549, 6.9]))
    meta = stdout.read(log).meta
    assert meta["console_params_said"] == 109_607_936  # the largest count of the file is the earlier launch's
    assert "launch 2 of 2" in meta["console_params_said_line"] and "17:10:26" in meta["console_params_said_line"]
    assert meta["console_precision"] == "bf16"
    assert "launch 2 of 2" in meta["console_precision_line"]


def test_a_relaunch_that_prints_nothing_of_itself_keeps_the_earlier_launch_s_fact(tmp_path):
    log = _write(tmp_path / "log.txt", _session("00:25:00", "109607936", "bfloat16", [10.55, 7.1, 6.2])
                 + _session("17:10:26", None, None, [10.549, 6.9]))
    meta = stdout.read(log).meta
    assert meta["console_params_said"] == 109_607_936
    assert "launch 1 of 2" in meta["console_params_said_line"]
    assert meta["console_precision"] == "bf16"


def test_a_console_of_one_launch_is_read_as_before(tmp_path):
    text = "\n".join(_session("00:25:00", "134183936", "float32", [10.55, 7.1, 6.2])
                     + ["2025-09-28 00:30:00,000 - INFO - Probe head: 798401 parameters"]) + "\n"
    meta = stdout.read(_write(tmp_path / "log.txt", text.splitlines())).meta
    whole = console_facts(text)
    for key in ("console_params_said", "console_params_said_line", "console_precision", "console_precision_line"):
        assert meta[key] == whole[key]
    assert "launch" not in meta["console_params_said_line"]


_CMD = ("[2024-04-11 {t},658] [INFO] [runner.py:568:main] cmd = /usr/bin/python -u -m deepspeed.launcher.launch "
        "--world_info=eyJsb2NhbGhvc3QiOiBbMF19 --master_port=29500 finetune.py --model_name_or_path {model} "
        "--output_dir out --learning_rate {lr}")


def _deepspeed_launch(t: str, model: str, lr: str, all_params: str, losses: list[float]) -> list[str]:
    """One DeepSpeed launch of a PEFT Trainer script: the cmd line, the printed TrainingArguments, PEFT's banner, the
    Trainer's header and its dicts."""
    return [_CMD.format(t=t, model=model, lr=lr), "TrainingArguments(", "_n_gpu=1,", f"learning_rate={lr},",
            "output_dir=out,", ")", f"trainable params: 4,194,304 || all params: {all_params} || trainable%: 0.5",
            "***** Running training *****"] + [
        f"{{'loss': {loss}, 'grad_norm': 0.9, 'learning_rate': {lr}, 'epoch': {0.1 * (i + 1):.1f}}}"
        for i, loss in enumerate(losses)]


def test_the_last_launch_s_banner_and_printed_arguments_come_first(tmp_path):
    log = _write(tmp_path / "train.log", _deepspeed_launch("20:25:16", "Qwen/Qwen2-7B", "0.0002", "7,619,805,184",
                                                           [2.1, 1.9, 1.8])
                 + _deepspeed_launch("22:32:01", "Qwen/Qwen2-1.5B", "0.0001", "1,547,908,608", [2.3, 2.0, 1.7]))
    records = stdout.read(log)
    assert records.banners[0].all_params == 1_547_908_608
    assert records.banners[0].where.endswith("(launch 2 of 2)")
    assert [b.all_params for b in records.banners] == [1_547_908_608, 7_619_805_184]  # the earlier one kept after it
    assert '"learning_rate": 0.0001' in records.texts[ARGS_KEY].replace("1e-04", "0.0001")
    assert "Qwen2-1.5B" in records.texts["command_line"]


def test_each_rank_s_trainer_header_of_one_launch_is_no_launch_of_its_own():
    # a LLaMA-Factory job on 4 ranks: its start-up (PEFT's banner) once, then each rank's `***** Running training *****`
    folder = CORPUS / "chrisindris_LLaMA-Factory-LFS_R0C0F0X1-177486"
    log = next(folder.glob("*.out"))
    records = stdout.read(log)
    assert records.banners and all(b.launch == "" for b in records.banners)
    assert "launch" not in str(records.meta.get("console_precision_line", ""))


def test_the_corpus_console_of_52_sessions_reads_the_last_session_s_count():
    log = CORPUS / "jtaylor-eng_attention_experiments" / "training" / "log.txt"
    meta = stdout.read(log).meta
    assert meta["console_params_said"] == 109_607_936
    assert "17:10:28" in meta["console_params_said_line"]


@pytest.mark.parametrize("model, output_dir, base", [
    ("output_model/checkpoint-14200", "output_model", None),  # the run's own checkpoint: no trained base
    ("./out/checkpoint-500", "out/", None),
    ("Qwen/Qwen2-7B", "output_model", "Qwen/Qwen2-7B"),
    ("output_model2/checkpoint-1", "output_model", "output_model2/checkpoint-1"),  # another folder's
    # a base model kept beside the outputs, not a save of the run's (second review of session 28)
    ("/root/autodl-tmp/Qwen2-7B-Instruct", "/root/autodl-tmp", "/root/autodl-tmp/Qwen2-7B-Instruct"),
    ("models/llama-7b", "./models", "models/llama-7b"),
    ("output_model/sft-final", "output_model", "output_model/sft-final"),  # an SFT save that a DPO run starts from
    ("output_model", "output_model", None),  # the folder's own final save
])
def test_a_launch_that_loads_the_run_s_own_checkpoint_starts_from_no_trained_base(model, output_dir, base):
    config = RunConfig()
    config.add("model.name_or_path", model, "console log's launch command")
    config.add("output_dir", output_dir, "console log's launch command")
    found = pretrained_base(config)
    assert (found[0] if found else None) == base


def test_a_loop_that_prints_its_start_line_before_each_epoch_is_one_launch(tmp_path):
    # one run of steps 10..150 over 3 epochs (`step_numbering`): its start line, printed each epoch, begins no attempt
    lines = ["Total parameters: 919,296", "Using bf16 mixed precision"]
    for epoch in range(3):
        lines += ["Starting training..."] + [f"step {s * 10}, loss {4.0 * 0.95 ** (5 * epoch + s):.4f}"
                                             for s in range(1, 6)]
    records = stdout.read(_write(tmp_path / "train.log", lines))
    assert records.meta["console_n_params"] == 919_296
    assert "launch" not in records.meta["console_n_params_line"]
    assert records.frame[records.frame["metric"] == "loss"]["step"].tolist() == list(range(10, 160, 10))


def _trainer_dicts(lrs: list[float], losses: list[float]) -> list[str]:
    return ["***** Running training *****", "  Num examples = 1,000", "  Num Epochs = 1"] + [
        f"{{'loss': {loss}, 'grad_norm': 0.9, 'learning_rate': {lr}, 'epoch': {0.25 * (i + 1):.2f}}}"
        for i, (lr, loss) in enumerate(zip(lrs, losses))]


def test_sft_then_dpo_in_one_process_is_one_launch(tmp_path):
    # one script: the model counted once, train() of SFT (lr 2e-5 decaying) then of DPO (lr 5e-7): two Trainer
    # headers, the dicts numbered in order as one run (no fresh schedule: `relaunched_dicts`), so one launch
    lines = (["Total parameters: 124,439,808"] + _trainer_dicts([2e-5, 1.5e-5, 1e-5, 5e-6], [2.1, 1.9, 1.8, 1.7])
             + _trainer_dicts([5e-7, 4e-7, 3e-7, 2e-7], [0.69, 0.6, 0.5, 0.45]))
    records = stdout.read(_write(tmp_path / "train.log", lines))
    assert not records.meta.get("launched_attempts")  # the timeline's view: one attempt
    assert records.meta["console_n_params"] == 124_439_808
    assert "launch" not in records.meta["console_n_params_line"]
