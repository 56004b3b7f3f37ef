"""The training precision a run's own YAML configuration names by key, where no framework's reader took the file and
nothing else in the run says one: `precision: bf16` in a section (Jinyeop3110_Post_Training_Protein_LLM), Accelerate's
`mixed_precision: bf16` (BenasdTW_LLMTrain), TrainingArguments' `bf16: true` in a script's config.yaml
(readytensor_rt-llm-eng-cert-week3), `fp16: true` / `bf16: false` (satyamshivam13_LoRA_Medical_QA_Finetune). A value
that names no precision (`mixed_precision: no`, `bf16: false` alone, a classifier's `precision: 0.83`), a model's
`dtype`, or keys naming two precisions say none."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import forensics
from support.trainer_state_files import falling_loss_profile
from forensics.ingest.config_precision import precision_keyed, training_pairs

REALWORLD = Path(__file__).parent / "realworld"


@pytest.mark.parametrize("pairs, precision", [
    ([("precision", "bf16")], "bf16"),
    ([("mixed_precision", "bf16"), ("num_processes", 1)], "bf16"),
    ([("fp16", True), ("bf16", False)], "fp16"),
    ([("bf16", True), ("learning_rate", 2e-4)], "bf16"),
    ([("precision", "BF16")], "bf16"),
    ([("precision", "fp32"), ("mixed_precision", False)], "fp32"),
    ([("precision", "16-mixed")], "fp16"),
])
def test_a_key_that_names_the_precision_is_read(pairs, precision):
    assert precision_keyed(pairs)[0] == precision


@pytest.mark.parametrize("pairs", [
    [("mixed_precision", "no")],  # the weights' own dtype left open
    [("bf16", False)],  # says nothing of fp16
    [("dtype", "bfloat16")],  # a model's load dtype (a frozen encoder's), not the training's
    [("precision", 0.83), ("recall", 0.8)],  # a classifier's metric
    [("bf16", True), ("fp16", True)],  # two precisions
    [("precision", "bf16"), ("fp16", True)],
    [("bf16", False), ("precision", "bf16")],  # the run's own flag sets the precision the other key names off
    [("mixed_precision", "fp16"), ("fp16", False)],
    [("PRECISION", "fp16")],  # an environment variable (docker-compose, a CI job), not a training setting
    [("BF16", True)],
    [],
])
def test_no_precision_where_the_keys_name_none_or_two(pairs):
    assert precision_keyed(pairs) is None


_SECTIONED = "model:\n  name: qwen\n  architecture:\n    hidden_size: 4096\nhardware:\n  gpus: 1\n  precision: bf16\n"
_ACCELERATE = "compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nmixed_precision: bf16\nnum_processes: 1\n"


def _run(tmp_path, yaml_text: str | None, args: dict | None = None):
    files = {"config__yaml": yaml_text} if yaml_text is not None else {}
    if args is not None:
        files["args__json"] = json.dumps(args)  # (ms-swift's arguments file)
    return falling_loss_profile(tmp_path, **files)


@pytest.mark.parametrize("yaml_text, words", [(_SECTIONED, "precision: bf16"), (_ACCELERATE, "mixed_precision: bf16")])
def test_the_config_files_key_gives_the_precision_nothing_else_says(tmp_path, yaml_text, words):
    profile = _run(tmp_path, yaml_text)
    assert profile.precision == "bf16", profile.evidence
    assert words in profile.evidence["precision"] and "config.yaml" in profile.evidence["precision"]


@pytest.mark.parametrize("yaml_text", [None, "model:\n  name: qwen\nlearning_rate: 2.0e-4\n",
                                       "compute_environment: LOCAL_MACHINE\nmixed_precision: 'no'\n"])
def test_no_key_no_precision(tmp_path, yaml_text):
    assert _run(tmp_path, yaml_text).precision == "unknown"


def test_the_runs_own_flags_outrank_the_config_file(tmp_path):
    assert _run(tmp_path, _ACCELERATE, {"fp16": True, "bf16": False}).precision == "fp16"


@pytest.mark.parametrize("case, precision", [("readytensor_rt-llm-eng-cert-week3", "bf16"),
                                             ("BenasdTW_LLMTrain", "bf16"),
                                             ("satyamshivam13_LoRA_Medical_QA_Finetune", "fp16")])
def test_real_config_files(case, precision):
    assert forensics.analyze(REALWORLD / case).run_profile.precision == precision


@pytest.mark.parametrize("yaml_text", ["bf16: false\nprecision: bf16\n", "train:\n  bf16: false\n  precision: bf16\n"])
def test_a_flag_set_false_in_the_same_file_outranks_its_precision_key(tmp_path, yaml_text):
    profile = _run(tmp_path, yaml_text)
    assert profile.precision == "unknown", profile.evidence


def test_a_flag_set_false_in_one_file_takes_the_precision_from_another(tmp_path):
    profile = falling_loss_profile(tmp_path, training_args__yaml="bf16: false\nlearning_rate: 0.0002\n",
                                   config__yaml=_SECTIONED)
    assert profile.precision == "unknown", profile.evidence


def test_settings_under_another_stages_section_are_not_the_trainings():
    sectioned = [(("train",), "bf16", True), (("export",), "precision", "fp16"),
                 (("inference", "engine"), "dtype", "x"),
                 (("services", "serve"), "precision", "fp16"), (("quantization",), "precision", "fp16"),
                 (("eval",), "fp16", True), (("env",), "precision", "fp16"), ((), "learning_rate", 2e-4)]
    assert training_pairs(sectioned) == [("bf16", True), ("learning_rate", 2e-4)]


def _profile_with(tmp_path, files: dict[str, str]):
    """The falling-loss run's profile with `files` (path relative to the run folder: text) written beside its log."""
    run = tmp_path / "run"
    for relative, text in files.items():
        (run / relative).parent.mkdir(parents=True, exist_ok=True)
        (run / relative).write_text(text)
    return falling_loss_profile(run)


@pytest.mark.parametrize("files", [
    {"docker-compose.yml": "services:\n  app:\n    image: x\n    precision: fp16\n"},  # a container's settings
    {"compose.yaml": "services:\n  app:\n    mixed_precision: fp16\n"},
    {"serve.yaml": "services:\n  serve:\n    environment:\n      PRECISION: fp16\n"},
    {".github/workflows/train.yml": "jobs:\n  smoke:\n    precision: fp16\n"},  # a CI job
    {"config.yaml": "train:\n  lr: 0.0002\nexport:\n  precision: fp16\n"},
    {"config.yaml": "inference:\n  precision: fp16\n"},
    {"config.yaml": "serving:\n  mixed_precision: fp16\n"},
    {"config.yaml": "quantization:\n  precision: fp16\n"},
    {"config.yaml": "eval:\n  fp16: true\n"},
])
def test_no_precision_from_a_yaml_that_is_not_the_trainings_configuration(tmp_path, files):
    profile = _profile_with(tmp_path, files)
    assert profile.precision == "unknown", profile.evidence


@pytest.mark.parametrize("files", [
    {"configs/a_pretrain.yaml": "train:\n  precision: bf16\n", "configs/b_sft.yaml": "train:\n  precision: fp16\n"},
    {"configs/a_sft.yaml": "train:\n  precision: fp16\n", "configs/b_pretrain.yaml": "train:\n  precision: bf16\n"},
    {"a/README.md": "Trained with bf16 mixed precision.\n", "b/README.md": "Trained with fp16 mixed precision.\n"},
])
def test_two_files_that_disagree_say_nothing(tmp_path, files):
    # two stages' configurations (or two READMEs): which is the log's run is not told, the first by name is no answer
    profile = _profile_with(tmp_path, files)
    assert profile.precision == "unknown", profile.evidence


def test_two_files_that_agree_give_their_precision(tmp_path):
    profile = _profile_with(tmp_path, {"configs/a.yaml": "train:\n  precision: bf16\n",
                                       "configs/b.yaml": "train:\n  bf16: true\n"})
    assert profile.precision == "bf16", profile.evidence
