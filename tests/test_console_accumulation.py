"""The gradient accumulation a console states (ingest.accumulation_said, read into the run's config as
`console.gradient_accumulation_steps`, apart from a config file's: the ratio tests read it, the doubt of an unknown
release does not): the HF Trainer's start-up banner and a script's own
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


def test_a_consoles_stated_accumulation_reaches_the_runs_config_under_its_own_key(tmp_path):
    a = analyze_logs(write_file(tmp_path, "train.log", _TRAINER_BANNER + _dicts()))
    assert a.config.get("console.gradient_accumulation_steps") == 4


_LLAMA_CONFIG = ('Model config LlamaConfig {\n  "architectures": [\n    "LlamaForCausalLM"\n  ],\n'
                 '  "hidden_size": 2048,\n'
                 '  "model_type": "llama",\n  "num_hidden_layers": 22,\n  "torch_dtype": "bfloat16",\n'
                 '  "vocab_size": 32000\n}\n')


def _high_start_run(accumulation: int) -> str:
    # review 29b: a 32,000-token vocabulary (uniform guess ln 32000 = 10.4) and a first loss of 23.2, no eval loss
    banner = _TRAINER_BANNER.replace("Gradient Accumulation steps = 4", f"Gradient Accumulation steps = {accumulation}")
    return _LLAMA_CONFIG + banner + "".join(
        str({"loss": round(22.0 * 0.985 ** s + 1.2, 4), "grad_norm": 3.0, "learning_rate": 1e-4,
             "epoch": round(s / 300, 2)}) + "\n" for s in range(10, 301, 10))


def test_a_consoles_accumulation_does_not_excuse_a_start_above_the_guess_without_the_ratio(tmp_path):
    # the release is unknown: dividing by the banner's 8 on that doubt alone would excuse every such HF console; only
    # a training loss at 8x the eval loss (the ratio test) says it was summed
    for accumulation in (1, 8):
        a = analyze_logs(write_file(tmp_path / str(accumulation), "train.log", _high_start_run(accumulation)))
        assert a.status == "warning" and a.first_incident.kind == "start_above_uniform_guess", accumulation


def test_the_reports_configuration_table_still_shows_a_consoles_accumulation(tmp_path):
    from forensics.report.tables import config_rows
    a = analyze_logs(write_file(tmp_path, "train.log", _TRAINER_BANNER + _dicts()))
    assert {"key": "console.gradient_accumulation_steps", "value": "4"}.items() <= next(
        row for row in config_rows(a.config) if row["key"] == "console.gradient_accumulation_steps").items()
