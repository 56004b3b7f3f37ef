"""A console whose training process DeepSpeed's launcher reports killed by a signal (analyzers.crash via
ingest.console_warnings): deepspeed/launcher/launch.py's `sigkill_handler` logs `Killing subprocess <pid>` for each
worker, then `<cmd> exits with return code = <code>`, where the code is the worker's `Popen.returncode`: negative
for a worker a signal ended (-9: SIGKILL, the kernel's out-of-memory killer or a scheduler; the process could print
nothing of it).

The case behind it: jena-shreyas_STIC (corpus batch AS110), a Video-LLaVA LoRA whose nohup log ends
`[launch.py:315:sigkill_handler] Killing subprocess 63948` / `[launch.py:321:sigkill_handler] [...] exits with return
code = -9` right after step 83 of 374, before any save.
"""
from __future__ import annotations

import forensics

_TOTAL = 374
_CMD = ("['/opt/conda/bin/python', '-u', 'train_mem.py', '--local_rank=0', '--deepspeed', 'scripts/zero2.json', "
        "'--lora_enable', 'True', '--save_steps', '1000', '--logging_steps', '1', '--report_to', 'wandb']")


def _steps(first: int, last: int) -> str:
    """The Trainer's bar redraws and its loss dicts, as a nohup capture keeps them (no newline after the bar)."""
    return "".join(f" {100 * s // _TOTAL:2d}%|#         | {s}/{_TOTAL} [0:{s:02d}:00<9:00:00, 146.10s/it]"
                   f"{{'loss': {2.4 - 0.01 * s:.4f}, 'learning_rate': 1.8e-05, 'epoch': {s / _TOTAL:.2f}}}\n"
                   for s in range(first, last + 1))


def _launcher_end(code: int) -> str:
    return ("[2024-07-01 20:55:45,902] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 63948\n"
            f"[2024-07-01 20:55:45,903] [ERROR] [launch.py:321:sigkill_handler] {_CMD} exits with return code = "
            f"{code}\n")


def _crashes(tmp_path, text: str) -> list:
    (tmp_path / "finetune_lora.log").write_text(text)
    return [f for f in forensics.analyze(tmp_path, check_checkpoints=False).findings if f.kind == "run_crashed"]


def test_a_worker_the_launcher_reports_killed_by_sigkill_is_a_run_that_stopped_there(tmp_path):
    (f,) = _crashes(tmp_path, _steps(1, 83) + _launcher_end(-9))
    assert (f.severity, f.step) == ("warning", 83)
    assert "return code = -9" in f.evidence["exception"] and "SIGKILL" in f.evidence["exception"]
    assert "out-of-memory killer" in f.message


def test_a_launch_killed_before_the_run_went_on_is_no_crash(tmp_path):
    """An earlier launch killed, the log then goes on with losses (a relaunch appended to the same file)."""
    assert not _crashes(tmp_path, _steps(1, 40) + _launcher_end(-9) + _steps(41, 83))


def test_a_worker_that_exited_on_its_own_is_no_kill(tmp_path):
    """`exits with return code = 1` is the worker's own error exit: its traceback, not the launcher, says what it was
    (the crash lines read elsewhere); the launcher's line alone makes no crash finding. A finished launch
    (`Process 63948 exits successfully.`) none either."""
    assert not _crashes(tmp_path, _steps(1, 83) + _launcher_end(1))
    assert not _crashes(tmp_path, _steps(1, 83) + "[2024-07-01 20:55:45,903] [INFO] [launch.py:347:main] "
                                                  "Process 63948 exits successfully.\n")


def test_a_kill_after_the_trainers_closing_summary_is_no_crash_of_the_training(tmp_path):
    summary = "{'train_runtime': 812.4, 'train_samples_per_second': 9.8, 'train_loss': 2.1, 'epoch': 1.0}\n"
    assert not _crashes(tmp_path, _steps(1, 83) + summary + _launcher_end(-9))


def test_a_worker_ended_by_ctrl_c_is_no_crash(tmp_path):
    # review 29b: -2 is SIGINT, the owner's Ctrl-C (its KeyboardInterrupt traceback above): an interrupt, no crash
    interrupted = "Traceback (most recent call last):\n  File \"train_mem.py\", line 3\nKeyboardInterrupt\n"
    assert not _crashes(tmp_path, _steps(1, 83) + interrupted + _launcher_end(-2))


def test_a_later_commands_launch_killed_is_no_crash_of_the_training(tmp_path):
    # review 29b: the training ran its 374 steps and saved; the script's next DeepSpeed launch (an evaluation) is the
    # one the launcher reports killed
    later = ("Saving model checkpoint to ./out\n[2024-07-01 21:00:00,000] [INFO] [runner.py:568:main] cmd = "
             "/opt/conda/bin/python -u -m deepspeed.launcher.launch --world_info=eyJsb2NhbGhvc3QiOiBbMF19 "
             "--master_addr=127.0.0.1 --master_port=29500 eval_video.py\n"
             "[2024-07-01 21:00:02,000] [INFO] [launch.py:145:main] WORLD INFO DICT: {'localhost': [0]}\n"
             "Evaluating 1200 videos\n")
    assert not _crashes(tmp_path, _steps(1, _TOTAL) + later + _launcher_end(-9))


def test_the_trainings_own_launch_before_its_losses_still_reads_the_kill(tmp_path):
    # guard: the launcher's `cmd =` and `[launch.py:N:main]` lines that start the training itself come before its losses
    start = ("[2024-07-01 19:00:00,000] [INFO] [runner.py:568:main] cmd = /opt/conda/bin/python -u -m "
             "deepspeed.launcher.launch --world_info=eyJsb2NhbGhvc3QiOiBbMF19 train_mem.py\n"
             "[2024-07-01 19:00:02,000] [INFO] [launch.py:145:main] WORLD INFO DICT: {'localhost': [0]}\n")
    (f,) = _crashes(tmp_path, start + _steps(1, 83) + _launcher_end(-9))
    assert f.step == 83
