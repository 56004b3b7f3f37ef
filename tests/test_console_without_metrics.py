"""A console of a training run that logged no metric: read for what it can say, not refused as 'not a run'.

Real runs leave such files: a DPO loop that ran out of GPU memory on its third micro-batch (a config print, PEFT's
banner, a tqdm bar, the traceback), a script whose log says only that trainings started and finished, a GRPO
trainer whose settings were printed as a dict before it was stopped by hand. None of them shows that the run
learned: a warning saying so, and how the run ended where a traceback says it; never healthy, never exit 2.
A text that is no training console (one sentence about training, an app's traceback) is still no run.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

import forensics
from forensics.cli import cli
from forensics.errors import NotARunDirectory
from forensics.discover.run_signs import final_exception, is_training_console, run_signs

OOM_CONSOLE = """Modèle: Qwen/Qwen3-1.7B
Configuration LoRA: r=16, alpha=32
trainable params: 17,432,576 || all params: 1,738,007,552 || trainable%: 1.0030
Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.60s/it]
  0%|          | 0/196835 [00:00<?, ?it/s]\r  0%|          | 3/196835 [00:03<61:10:59,  1.12s/it]Traceback (most recent call last):
  File "scripts/05_train_dpo_final_prod.py", line 212, in <module>
    loss = compute_loss(policy, reference, batch)
  File "scripts/05_train_dpo_final_prod.py", line 120, in compute_loss
    rejected = policy(**batch["rejected"]).logits
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total capacity of 14.74 GiB
"""

LIFECYCLE = "".join(
    f"2024-09-1{d} 0{d}:00:00,000 - INFO - Starting DPO fine-tuning for model type llama3\n"
    f"2024-09-1{d} 0{d}:00:05,000 - INFO - Starting training\n"
    f"2024-09-1{d} 0{d}:30:00,000 - INFO - DPO fine-tuning completed in 0:29:55\n" for d in range(1, 4))

SETTINGS_THEN_STOPPED = """2025-06-24 14:10:01 - Configuration: {'num_iterations': 3, 'group_size': 2, 'learning_rate': 1e-06, 'max_new_tokens': 5}
2025-06-24 14:10:30 - Loading Qwen/Qwen2-VL-7B-Instruct
2025-06-24 14:19:39 - Training interrupted by user
"""


def _folder(tmp_path, name: str, text: str):
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_a_console_that_crashed_before_its_first_metric_is_a_warning_naming_the_crash(tmp_path):
    a = forensics.analyze(_folder(tmp_path, "dpo_train.log", OOM_CONSOLE))
    assert a.status == "warning"
    assert a.first_incident.kind == "run_crashed"
    assert "OutOfMemoryError" in a.first_incident.message and "before it logged a single metric" in \
        a.first_incident.message
    assert "no_learning_evidence" in {f.kind for f in a.findings}


def test_the_cli_reads_it_with_exit_0_not_exit_2(tmp_path):
    result = CliRunner().invoke(cli, ["analyze", str(_folder(tmp_path, "dpo_train.log", OOM_CONSOLE))])
    assert result.exit_code == 0, result.output
    assert "WARNING" in result.output


def test_a_log_that_says_only_that_trainings_started_and_finished_shows_no_learning(tmp_path):
    a = forensics.analyze(_folder(tmp_path, "dpo_training.log", LIFECYCLE))
    assert a.status == "warning"
    assert a.first_incident.kind == "no_learning_evidence"


def test_an_rl_run_whose_settings_were_printed_as_a_dict_is_not_healthy(tmp_path):
    a = forensics.analyze(_folder(tmp_path, "grpo_training.log", SETTINGS_THEN_STOPPED))
    assert a.status == "warning", [f.message for f in a.findings]
    assert a.first_incident.kind == "no_learning_evidence"
    assert "no reward" in a.first_incident.message


def test_one_sentence_about_training_is_no_run(tmp_path):
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_folder(tmp_path, "notes.txt", "We started training on Monday; see the wiki.\n"))


def test_an_apps_traceback_and_progress_bar_are_no_training_console(tmp_path):
    text = ("100%|##########| 10/10 [00:01<00:00,  9.1it/s]\nTraceback (most recent call last):\n"
            '  File "app.py", line 3, in <module>\nValueError: bad input\n')
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_folder(tmp_path, "app.log", text))


def test_a_quiet_console_beside_a_real_log_is_left_unread(tmp_path):
    _folder(tmp_path, "dpo_train.log", OOM_CONSOLE)
    (tmp_path / "train.log").write_text("".join(
        f"{{'loss': {2.0 - s / 100:.4f}, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': {s / 100}}}\n"
        for s in range(1, 60)))
    a = forensics.analyze(tmp_path)
    assert "run_crashed" not in {f.kind for f in a.findings}
    assert all("dpo_train.log" not in str(s) for s in a.timeline.frame["source"].unique())


def test_signs_of_a_run_need_two_kinds_one_of_them_in_words():
    assert is_training_console(run_signs(OOM_CONSOLE.encode()))
    assert not is_training_console(run_signs(b"Traceback (most recent call last):\nValueError: x\n"))
    assert not is_training_console(run_signs(b"Starting training now\n"))


def test_the_exception_of_the_last_traceback_is_named():
    assert final_exception(OOM_CONSOLE).startswith("torch.OutOfMemoryError: CUDA out of memory")
    assert final_exception("Traceback (most recent call last):\n  File \"x.py\"\nKeyboardInterrupt\n") == \
        "KeyboardInterrupt"
    assert final_exception("no traceback here\n") is None


def _notebook(tmp_path, outputs: list[str]):
    import json
    cells = [{"cell_type": "code", "source": ["!llamafactory-cli train qwen_lora.yaml\n"], "metadata": {},
              "execution_count": 1, "outputs": [{"output_type": "stream", "name": "stdout", "text": text}
                                                for text in outputs]}]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "workflow.ipynb").write_text(json.dumps(nb))
    return tmp_path


def test_a_notebook_whose_training_cell_crashed_before_its_first_metric_is_read(tmp_path):
    a = forensics.analyze(_notebook(tmp_path, [OOM_CONSOLE]))
    assert a.status == "warning" and a.first_incident.kind == "run_crashed"
    assert a.run_profile.method == "lora"  # the PEFT banner in its output


def test_a_notebook_with_no_training_console_is_still_no_run(tmp_path):
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_notebook(tmp_path, ["Traceback (most recent call last):\nValueError: x\n"]))


def test_an_ms_swift_log_that_holds_only_its_closing_summary_is_a_run_that_logged_no_step(tmp_path):
    import json
    summary = {"train_dataset": "145.3±65.0, min=50, max=1446, size=653160",
               "model_parameter_info": "PeftModelForCausalLM: 5791.0098M Params (19.7263M Trainable [0.3406%]), "
                                       "0.0019M Buffers.", "last_model_checkpoint": None, "best_model_checkpoint": None,
               "best_metric": None, "global_step": 0, "log_history": [], "memory": 0}
    (tmp_path / "logging.jsonl").write_text(json.dumps(summary) + "\n")
    a = forensics.analyze(tmp_path)
    assert a.status == "warning" and a.first_incident.kind == "no_learning_evidence"
    # (PeftModelForCausalLM with a trainable part: an adapter, whose kind nothing in the log names)
    assert a.run_profile.method == "peft" and a.run_profile.framework == "swift"


def test_an_ms_swift_log_with_no_step_and_no_summary_is_still_unreadable(tmp_path):
    (tmp_path / "logging.jsonl").write_text('{"note": "hello"}\n')
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


# --- review rev17: what is no training console, and a run that finished before its traceback -------------------------

def test_a_note_that_says_training_started_and_is_done_is_no_run(tmp_path):
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_folder(tmp_path, "todo.txt", "- start training on the new data\n- fine-tuning is done\n"))


def test_an_inference_notebooks_zero_trainable_params_is_no_training_sign():
    text = b"Loading checkpoint shards: 100%|##| 2/2\ntrainable params: 0 || all params: 7,000,000 || trainable%: 0.0\n"
    assert not is_training_console(run_signs(text))


def test_a_run_that_finished_training_then_failed_to_upload_did_not_crash_before_a_metric(tmp_path):
    text = ("2024-01-01 10:00:00,000 - INFO - Starting training\n2024-01-01 11:00:00,000 - INFO - Training completed\n"
            "Traceback (most recent call last):\n  File \"train.py\", line 90, in <module>\n"
            "huggingface_hub.errors.HfHubHTTPError: 401 Client Error\n")
    a = forensics.analyze(_folder(tmp_path, "train.log", text))
    assert "run_crashed" not in {f.kind for f in a.findings}
    assert a.status == "warning"


def test_a_notebooks_crash_line_without_pythons_traceback_header_is_named(tmp_path):
    text = OOM_CONSOLE.replace("Traceback (most recent call last):", "")
    a = forensics.analyze(_folder(tmp_path, "dpo_train.log", text))
    assert a.first_incident.kind == "run_crashed" and "OutOfMemoryError" in a.first_incident.message


def test_an_ms_swift_summary_whose_log_history_holds_the_steps_is_read_from_it(tmp_path):
    import json
    history = [{"loss": round(2.0 - s / 500, 4), "grad_norm": 1.0, "learning_rate": 1e-4, "epoch": s / 500, "step": s}
               for s in range(10, 510, 10)]
    summary = {"global_step": 500, "log_history": history, "last_model_checkpoint": "/out/checkpoint-500"}
    (tmp_path / "logging.jsonl").write_text(json.dumps(summary) + "\n")
    a = forensics.analyze(tmp_path)
    assert list(a.timeline.series("loss").index) == list(range(10, 510, 10))
    assert a.status == "healthy"
