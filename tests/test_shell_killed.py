"""A console whose job the shell reports killed (analyzers.crash via ingest.console_facts), and script lines that a
nested tqdm bar's cursor-up left on the bar's own line (ingest.console_text.as_printed).

The case behind both: David-Li0406's MultiGen GPT-2 run (corpus batch AS25), whose nohup.out ends
`./train.sh: line 33: 136834 Killed  CUDA_VISIBLE_DEVICES=... python3 main.py ...` at step 283 of 4,587, each of its
`Step: N | Loss: X` lines printed after an `Iteration: 18%|...| 279/1529 [...]ESC[A` redraw.
"""
from __future__ import annotations

import forensics

_ITERATIONS = 1529


def _bar(n: int) -> str:
    return f"\rIteration:  {100 * n // _ITERATIONS:2d}%|#         | {n}/{_ITERATIONS} [00:43<30:22,  1.21s/it]\x1b[A"


def _steps(first: int, last: int) -> str:
    """A hand-written loop's lines, each printed right after the nested bar's redraw (no newline between them)."""
    return "".join(f"{_bar(s - 1)}[09/10/2021 13:43:23 - INFO - root] Step: {s} | Loss: {9.5 - 5 * s / last:.4f} "
                   f"| Gen loss: {6.8 - 3 * s / last:.4f}\n" for s in range(first, last + 1, 20))


KILLED = (f"{_bar(283)}./train.sh: line 33: 136834 Killed                  CUDA_VISIBLE_DEVICES=${{DEVICE}} python3 "
          "main.py --train_data_file ${ROOT_PATH}/data/train --model_type gpt2 --num_train_epochs 3\n")


def _crashes(tmp_path, text: str) -> list:
    (tmp_path / "nohup.out").write_text(text)
    return [f for f in forensics.analyze(tmp_path).findings if f.kind == "run_crashed"]


def test_a_job_the_shell_reports_killed_is_a_run_that_stopped_there(tmp_path):
    (f,) = _crashes(tmp_path, _steps(20, 280) + KILLED)
    assert (f.severity, f.step) == ("warning", 280)
    assert "line 33: 136834 Killed" in f.evidence["exception"] and "out-of-memory killer" in f.message


def test_the_quoted_command_is_cut_at_a_word(tmp_path):
    (f,) = _crashes(tmp_path, _steps(20, 280) + KILLED)
    assert f.evidence["exception"].endswith("python3 main.py ...)")


def test_a_bare_killed_line_after_the_last_step_is_a_crash_too(tmp_path):
    (f,) = _crashes(tmp_path, _steps(20, 280) + "Killed\n")
    assert f.step == 280


def test_an_earlier_attempt_killed_before_the_run_went_on_is_no_crash(tmp_path):
    assert not _crashes(tmp_path, _steps(20, 140) + KILLED + _steps(160, 280))


def test_prose_about_killed_workers_is_no_crash(tmp_path):
    assert not _crashes(tmp_path, _steps(20, 280) + "INFO: Killed 3 idle data loader workers\n")


def test_a_script_line_after_a_nested_bars_cursor_up_is_dated_by_its_own_step(tmp_path):
    (tmp_path / "nohup.out").write_text(_steps(20, 280))
    frame = forensics.analyze(tmp_path).timeline.frame
    steps = sorted(frame.loc[frame["metric"] == "loss", "step"].astype(int))
    assert steps == list(range(20, 281, 20))  # not 1%, 2%, ... of the Iteration bar the line followed


def test_a_later_command_killed_after_the_trainers_closing_summary_is_no_crash_of_the_training(tmp_path):
    """The script's merge or export step, after training closed (`{'train_runtime': ...}`), killed by the host's OOM
    killer: the training finished; its run did not crash."""
    summary = "{'train_runtime': 812.4, 'train_samples_per_second': 9.8, 'train_loss': 4.1, 'epoch': 1.0}\n"
    assert not _crashes(tmp_path, _steps(20, 280) + summary
                        + "./run.sh: line 12: 48211 Killed                  python merge_and_export.py\n")
