"""Several launches appended to one captured console (`nohup ... >> train.log`, `tee -a`): a line the launcher or
the script prints once per launch (`ingest.launch_banners`), where the rows after it start over, begins a new attempt;
the last launch is the run judged (VERDICTS: the final segment), the others earlier attempts. One launch, a resume and
a loop that announces each epoch are left as they were."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import forensics
from forensics.ingest import stdout
from forensics.ingest.launch_banners import banner_key
from forensics.ingest.printed_configs import is_hyperparameter_dict
from forensics.timeline import LogRecords, build_timeline

CORPUS = Path(__file__).parent / "realworld"
_CMD = ("[2024-04-11 {t},658] [INFO] [runner.py:568:main] cmd = /usr/bin/python -u -m deepspeed.launcher.launch "
        "--world_info=eyJsb2NhbGhvc3QiOiBbMF19 --master_port=29500 pretrain_clm.py --config_name my_model/config.json "
        "--learning_rate 1e-4 --warmup_steps 5000 --logging_steps 5 {extra}")


def _launch(t: str, losses: list[float], lrs: list[float], epochs: list[float], extra: str = "",
            resume: str = "None") -> list[str]:
    """One DeepSpeed launch of an HF Trainer script: the launcher's cmd line, the printed TrainingArguments' resume
    field, the Trainer's header and one dict a logging interval."""
    lines = [_CMD.format(t=t, extra=extra), f"resume_from_checkpoint={resume},", "***** Running training *****"]
    return lines + [f"{{'loss': {loss}, 'grad_norm': 0.9, 'learning_rate': {lr}, 'epoch': {epoch}}}"
                    for loss, lr, epoch in zip(losses, lrs, epochs)]


_WARMUP = [1.89e-05, 2.70e-05, 3.18e-05, 3.52e-05, 3.79e-05, 4.01e-05]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def _loss_steps(records) -> list[int]:
    frame = records.frame
    return frame.loc[frame["metric"] == "loss", "step"].tolist()


def _two_deepspeed_launches(tmp_path: Path) -> Path:
    # launch 1 stops inside the epoch's first hundredth (every dict at the printed epoch 0.0); launch 2 is the same
    # script from scratch, the same seed: its first losses are launch 1's, its learning rate warms up again
    first = _launch("20:25:16", [10.6353, 9.8939, 9.6058, 8.9], _WARMUP[:4], [0.0] * 4)
    second = _launch("22:32:01", [10.6353, 9.8939, 9.6058, 8.9, 8.1, 7.7], _WARMUP, [0.0] * 6)
    return _write(tmp_path / "train.log", first + ["[2024-04-11 20:31:00,000] [INFO] checkpoint saved"] + second)


def test_a_relaunch_under_the_deepspeed_launcher_is_numbered_from_its_own_start(tmp_path):
    records = stdout.read(_two_deepspeed_launches(tmp_path))
    assert _loss_steps(records) == [5, 10, 15, 20] + [5, 10, 15, 20, 25, 30]
    assert any("2 launches" in note for note in records.notes)


def test_the_last_launch_is_judged_and_its_first_loss_is_no_spike(tmp_path):
    _two_deepspeed_launches(tmp_path)
    analysis = forensics.analyze(tmp_path)
    final = analysis.timeline.final()
    assert final.loc[final["metric"] == "loss", "value"].tolist() == [10.6353, 9.8939, 9.6058, 8.9, 8.1, 7.7]
    assert not [f for f in analysis.findings if f.kind in ("loss_spike", "lr_anomaly")]


def test_a_resume_under_the_deepspeed_launcher_goes_on_from_its_checkpoint(tmp_path):
    # the second launch resumes: its epoch and its learning rate go on from the checkpoint's, no warm-up again
    decay = [9.9e-05, 9.8e-05, 9.7e-05, 9.6e-05]
    first = _launch("20:25:16", [3.1, 3.0, 2.9, 2.8], decay, [0.40, 0.41, 0.42, 0.43])
    second = _launch("22:32:01", [2.85, 2.75, 2.7], [9.65e-05, 9.55e-05, 9.5e-05], [0.42, 0.43, 0.44],
                     extra="--resume_from_checkpoint output/checkpoint-60", resume="output/checkpoint-60")
    records = stdout.read(_write(tmp_path / "train.log", first + second))
    assert not any("launches" in note for note in records.notes)
    assert all(np.diff(_loss_steps(records)) > 0)


def test_one_launch_console_is_one_run(tmp_path):
    lines = _launch("20:25:16", [10.6, 9.9, 9.6, 8.9, 8.1], _WARMUP[:5], [0.0] * 5)
    records = stdout.read(_write(tmp_path / "train.log", lines))
    assert _loss_steps(records) == [5, 10, 15, 20, 25]
    assert not any("launches" in note for note in records.notes)


def _session(stamp: str, losses: list[float], banner: str = "Starting training session") -> list[str]:
    """One session of a hand-written loop logging through Python's logging: its start-up line, then `Step N: loss`."""
    lines = [f"2025-09-27 {stamp},100 - INFO - {banner}", f"2025-09-27 {stamp},200 - INFO - Using device: cuda"]
    return lines + [f"2025-09-27 {stamp},{300 + k} - INFO - Step {100 * k}: loss = {loss:.4f}, lr = 0.000600"
                    for k, loss in enumerate(losses)]


def test_a_script_start_line_printed_again_starts_a_new_attempt_whatever_its_loss(tmp_path):
    # jtaylor-eng_attention_experiments: a session of another model opening at 10.56 after one that climbed to 419
    # read as the same run going on (10.56 is nearer 419 than the log's first 240 on a log scale: a new epoch)
    lines = (_session("21:50:00", [240.0, 42.4, 17.6, 419.2]) + _session("22:10:00", [10.56, 7.03, 6.37])
             + _session("22:40:00", [10.55]))
    records = stdout.read(_write(tmp_path / "log.txt", lines))
    assert _loss_steps(records) == [0, 100, 200, 300, 0, 100, 200, 0]


def test_the_last_session_stands_however_few_points_it_logged(tmp_path):
    # the file ends with a session that logged its step 0 only: that is the run as it ended, not the longer one before
    lines = (_session("21:50:00", [240.0, 42.4, 17.6, 419.2]) + _session("22:10:00", [10.56, 7.03, 6.37])
             + _session("22:40:00", [10.55]))
    _write(tmp_path / "log.txt", lines)
    analysis = forensics.analyze(tmp_path)
    assert analysis.timeline.series("loss").to_dict() == {0: 10.55}
    assert (analysis.first_incident.kind, analysis.first_incident.step) == ("no_learning_evidence", 0)


def test_a_counter_restarting_without_the_start_line_again_is_a_new_epoch(tmp_path):
    # one session whose counter restarts each epoch, the loss going on: numbered on, as before
    lines = _session("21:50:00", [4.2, 3.1, 2.6, 2.4]) + [
        f"2025-09-27 21:55:00,{300 + k} - INFO - Step {100 * k}: loss = {loss:.4f}, lr = 0.000600"
        for k, loss in enumerate([2.3, 2.2, 2.1])]
    records = stdout.read(_write(tmp_path / "log.txt", lines))
    assert _loss_steps(records) == [0, 100, 200, 300, 400, 500, 600]


def test_a_loop_that_announces_each_epoch_is_no_relaunch(tmp_path):
    # `Starting training epoch N` names its epoch: not the same start-up line twice
    lines = (_session("21:50:00", [4.2, 3.1, 2.6, 2.4], banner="Starting training epoch 1")
             + _session("21:55:00", [2.3, 2.2, 2.1], banner="Starting training epoch 2"))
    records = stdout.read(_write(tmp_path / "log.txt", lines))
    assert _loss_steps(records) == [0, 100, 200, 300, 400, 500, 600]


@pytest.mark.parametrize("console", ["yunsaijc_Eso-LLaVA/sft.log", "BREKOJI_FT-Data-Ranker-1B-NO.5/training_log.txt",
                                     "CqGao112_CN-Mini-Phi3/ds_pretrain.log"])
def test_a_real_console_of_one_deepspeed_launch_is_not_split(console):
    records = stdout.read(CORPUS / console)
    assert not any("launches" in note for note in records.notes)
    assert all(np.diff(_loss_steps(records)) > 0)


def test_a_deepspeed_optimizer_param_group_printed_in_its_config_is_no_record():
    # `optimizer_params ....... {'lr': 0.0001, 'betas': [0.9, 0.999], 'eps': 1e-08, 'weight_decay': 0.0}`: read as a
    # record its lr was a rate logged at step 0, a schedule that "ran out" at the first logged step
    assert is_hyperparameter_dict(["lr", "betas", "eps", "weight_decay"])


def test_two_launches_of_one_file_that_log_the_same_first_points_keep_them_each():
    # the same seed replays the first steps: two launches' points, not one point seen in two files
    frame = pd.DataFrame({"step": [5, 10, 15, 5, 10], "metric": "loss", "value": [10.6, 9.9, 9.6, 10.6, 9.9],
                          "wall_time": float("nan")})
    timeline = build_timeline([LogRecords("train.log", "stdout", frame)])
    rows = timeline.frame[timeline.frame["metric"] == "loss"]
    assert rows.groupby("segment")["step"].apply(list).tolist() == [[5, 10, 15], [5, 10]]


def test_a_loop_that_prints_the_same_start_line_before_each_epoch_is_one_run(tmp_path):
    # an unnumbered `Starting training...` before each epoch, the step counter starting over each epoch, the loss going
    # on from where the epoch before ended (nearer its last loss than the run's first): epochs of one run, numbered on
    lines, loss = ["Loading data...", "Model has 12.3M parameters"], 5.0
    for _ in range(4):
        lines.append("Starting training...")
        for step in range(100, 1001, 100):
            loss *= 0.97
            lines.append(f"step {step}, loss {loss:.4f}")
    records = stdout.read(_write(tmp_path / "train.log", lines))
    assert _loss_steps(records) == list(range(100, 4001, 100))
    assert not any("launches" in note for note in records.notes)


def test_a_relaunch_whose_loss_is_back_near_its_own_start_is_a_new_attempt(tmp_path):
    # the same start line again, its first loss back near where the launch before it began (4.9 against 5.0) and far
    # from where that launch ended (3.6): the script run again, however near the log's first loss it starts
    lines = (_session("21:50:00", [5.0, 4.3, 3.9, 3.6]) + _session("22:10:00", [4.9, 4.2, 3.8]))
    records = stdout.read(_write(tmp_path / "log.txt", lines))
    assert _loss_steps(records) == [0, 100, 200, 300, 0, 100, 200]


def test_a_start_line_in_capitals_is_a_launch_banner():
    # the quick filter before the phrase test reads the line as the phrase test does, case aside
    assert banner_key("========== START TRAINING ==========") == "========== START TRAINING =========="
    assert banner_key("BEGIN TRAINING") == "BEGIN TRAINING"


def test_a_resume_that_logs_its_redone_steps_again_in_one_file_stands_on_the_later_copies(tmp_path):
    # (guard, review of session 28) a resume from step 400 re-logs 410-500 with the same values: the earlier copies are
    # kept as the first attempt's abandoned tail (those steps were redone), the history judged holds each step once
    rows = [{"step": s, "loss": round(3 * math.exp(-s / 400) + 0.5 + 0.01 * math.sin(s), 4), "learning_rate": 1e-4}
            for s in [*range(10, 510, 10), *range(410, 1010, 10)]]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    a = forensics.analyze(tmp_path)
    assert a.status == "healthy" and not [f for f in a.findings if f.abandoned]
    assert a.timeline.series("loss").index.tolist() == list(range(10, 1010, 10))
    assert [(s.first_step, s.abandoned_from_step) for s in a.timeline.segments] == [(10, 410), (410, None)]
