"""The gradient accumulation a console states (ingest.accumulation_said, read into the run's config as
`gradient_accumulation_steps` where no config file gives it): the HF Trainer's start-up banner and a script's own
logger line in the same words (Jinyeop3110_Post_Training_Protein_LLM). Prose that names accumulation without the
`=` / `:` of a stated value is not read."""
from __future__ import annotations

from forensics.ingest.accumulation_said import KEY, accumulation_said
from support.format_runs import analyze_logs, write_file

_TRAINER_BANNER = ("***** Running training *****\n  Num examples = 2,000\n  Num Epochs = 1\n"
                   "  Instantaneous batch size per device = 4\n  Gradient Accumulation steps = 4\n"
                   "  Total optimization steps = 125\n")
_SCRIPT_LINE = "[2026-02-25 15:51:44,972][src.training.sft_trainer][INFO] -   Gradient accumulation steps: 8\n"


def _dicts() -> str:
    return "".join(str({"loss": round(2.5 - 0.04 * k, 4), "learning_rate": 1e-4, "epoch": round(k / 30, 2)}) + "\n"
                   for k in range(1, 31))


def test_the_trainers_banner_and_a_scripts_line_state_the_accumulation():
    assert accumulation_said(_TRAINER_BANNER)[KEY] == 4
    assert accumulation_said(_SCRIPT_LINE)[KEY] == 8
    assert "Gradient accumulation steps: 8" in accumulation_said(_SCRIPT_LINE)[f"{KEY}_line"]


def test_prose_about_accumulation_is_no_statement():
    assert accumulation_said("we raised the gradient accumulation steps to 8 after the OOM\n") == {}


def test_a_consoles_stated_accumulation_reaches_the_runs_config(tmp_path):
    a = analyze_logs(write_file(tmp_path, "train.log", _TRAINER_BANNER + _dicts()))
    assert a.config.get("gradient_accumulation_steps") == 4
