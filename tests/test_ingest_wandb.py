"""W&B run logs (`.wandb`): the framing, the messages, and whole runs the real Trainer reported to W&B offline.

Expected values come from the Trainer's own in-memory log_history (RunFacts.log_history), from messages
serialized by wandb's own protobuf classes, and from the real public folders in tests/trackers_realworld
(PROVENANCE.md there gives the numbers).
"""
from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from forensics.analysis import analyze, load_timeline
from forensics.errors import UnreadableFile
from forensics.ingest import _wandb_log, wandb, wandb_files
from forensics.discover.run import discover
from tests.support.wandb_log import framed, record

REAL = Path(__file__).parent / "trackers_realworld"
OPENAI_RUN = REAL / "openai-curie-doctor-who" / "wandb" / "run-20221220_062129-ft-jxFTOONXtEE9wOuUXnAghvgu"
DEBERTA = REAL / "deberta-medical-hf-wandb" / "wandb"


# --- framing -------------------------------------------------------------------------------------

def test_messages_longer_than_a_block_are_put_back_together_and_block_trailers_skipped():
    messages = [b"a" * 100, b"b" * 70000, b"c" * (_wandb_log.BLOCK - 7 - 7 - 100 - 7 - 3), b"d" * 10, b"e" * 5]
    data = framed(messages)
    read, problems = _wandb_log.messages(data)
    assert read == messages
    assert problems == []


def test_a_damaged_record_costs_its_block_and_nothing_after_it():
    messages = [b"x" * 20000, b"y" * 20000, b"z" * 40000, b"w" * 10]
    data = bytearray(framed(messages))
    data[7 + 7 + 5] ^= 0xFF  # a byte inside the first message
    read, problems = _wandb_log.messages(bytes(data))
    assert b"x" * 20000 not in read
    assert read[-1] == b"w" * 10 and b"z" * 40000 in read
    assert any("damaged record at byte 7" in p for p in problems)


@pytest.mark.parametrize("cut", [3, 7 + 3, 7 + 7 + 50, 7 + 7 + 100 + 7 + 40000])
def test_a_log_cut_mid_write_keeps_every_message_before_the_cut(cut):
    messages = [b"a" * 100, b"b" * 70000]
    data = framed(messages)[:7 + cut] if cut < 7 else framed(messages)[:cut]
    read, problems = _wandb_log.messages(data)
    assert read == [m for m in messages if framed(messages).find(m) + len(m) <= cut]
    assert problems and "cut inside" in problems[0]


def test_a_file_that_is_not_a_run_log_is_named_with_the_reason(tmp_path):
    path = tmp_path / "run-abc.wandb"
    path.write_bytes(b"PK\x03\x04 a zip, not a run log")
    with pytest.raises(UnreadableFile, match="not a W&B run log"):
        wandb.read(path)
    (tmp_path / "empty.wandb").write_bytes(b"")
    with pytest.raises(UnreadableFile, match="too short"):
        wandb.read(tmp_path / "empty.wandb")


# --- the messages, against wandb's own protobuf classes ------------------------------------------

def test_history_config_run_and_metric_messages_read_as_wandbs_own_schema_writes_them(tmp_path):
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")
    config = pb.ConfigRecord(update=[pb.ConfigItem(key="learning_rate", value_json="0.003"),
                                     pb.ConfigItem(nested_key=["bf16"], value_json="true")])
    rows = [pb.HistoryRecord(item=[pb.HistoryItem(nested_key=["train/loss"], value_json=loss),
                                   pb.HistoryItem(key="train/global_step", value_json=str(step)),
                                   pb.HistoryItem(key="_timestamp", value_json="1700000000.5"),
                                   pb.HistoryItem(key="_step", value_json=str(i)),
                                   pb.HistoryItem(key="media", value_json='{"_type": "image-file"}')])
            for i, (step, loss) in enumerate([(10, "2.5"), (20, "NaN"), (30, "Infinity")])]
    messages = [record(run=pb.RunRecord(run_id="abc123", display_name="my-run", project="proj", config=config)),
                record(metric=pb.MetricRecord(glob_name="*", step_metric="train/global_step")),
                *[record(history=row) for row in rows], record(exit=pb.RunExitRecord(exit_code=1))]
    path = tmp_path / "run-abc123" / "run-abc123.wandb"
    path.parent.mkdir()
    path.write_bytes(framed(messages))
    rec = wandb.read(path)
    frame = rec.frame
    assert frame["step"].tolist() == [10, 20, 30] and set(frame["metric"]) == {"loss"}
    assert frame["value"].iloc[0] == 2.5 and math.isnan(frame["value"].iloc[1]) and frame["value"].iloc[2] == math.inf
    assert frame["wall_time"].tolist() == [1700000000.5] * 3
    run = rec.tracker_run
    assert (run.run_id, run.name, run.experiment, run.status) == ("abc123", "my-run", "proj", "failed")
    assert list(rec.texts.values()) == ['{"learning_rate": 0.003, "bf16": true}']


def test_without_a_step_metric_wandbs_own_step_is_the_step(tmp_path):
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")
    rows = [pb.HistoryRecord(item=[pb.HistoryItem(key="loss", value_json=str(3.0 - i)),
                                   pb.HistoryItem(key="_step", value_json=str(i))]) for i in range(3)]
    path = tmp_path / "run-x.wandb"
    path.write_bytes(framed([record(history=r) for r in rows]))
    rec = wandb.read(path)
    assert rec.frame[["step", "value"]].values.tolist() == [[0, 3.0], [1, 2.0], [2, 1.0]]
    assert rec.tracker_run.run_id == "x" and rec.tracker_run.status == "unfinished"  # no exit record yet


# --- a run the real Trainer reported to W&B ------------------------------------------------------

def _wandb_log_of(folder: Path) -> Path:
    (path,) = sorted((folder / "wandb").glob("offline-run-*/run-*.wandb"))
    return path


def _train_entries(facts) -> list[dict]:
    return [e for e in facts.log_history if "loss" in e]


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.slow
def test_every_point_the_trainer_logged_is_in_the_wandb_timeline_with_its_value(tracker_nan_run):
    folder, facts = tracker_nan_run
    timeline = load_timeline(folder / "wandb")
    wide = timeline.wide()
    entries = _train_entries(facts)
    assert sorted(wide.index) == [e["step"] for e in entries]
    for entry in entries:
        for key in ("loss", "grad_norm", "learning_rate", "epoch"):
            assert _same(wide.loc[entry["step"], key], entry[key]), (entry["step"], key)
    assert {s.format for s in timeline.segments} == {"wandb"}


@pytest.mark.slow
def test_wandb_alone_gives_the_first_incident_chain_and_causes_of_the_trainers_own_output(tracker_nan_run):
    folder, facts = tracker_nan_run
    own = analyze(folder / "output", check_checkpoints=False)
    alone = analyze(folder / "wandb")
    assert own.status == alone.status == "broken"
    assert (alone.first_incident.kind, alone.first_incident.step, alone.first_incident.metric) == (
        "nonfinite_metric", facts.first_nonfinite_step, "grad_norm")
    assert [(f.kind, f.step, f.metric, f.caused_by) for f in alone.findings] == [
        (f.kind, f.step, f.metric, f.caused_by) for f in own.findings]
    assert [c.cause for c in alone.causes] == [c.cause for c in own.causes]
    assert alone.run_profile.method == "full" and alone.run_profile.framework == "hf_trainer"


@pytest.mark.slow
def test_the_wandb_config_is_the_runs_configuration_with_its_source(tracker_nan_run):
    folder, facts = tracker_nan_run
    config = analyze(folder / "wandb").config
    for key in ("learning_rate", "max_grad_norm", "warmup_steps", "weight_decay", "fp16", "bf16", "lr_scheduler_type"):
        assert config.get(key) == facts.training_args[key], key
        assert config.source_of(key).endswith("(W&B config)")
    assert config.get("model.num_hidden_layers") == facts.spec["num_layers"]
    assert isinstance(config.get("n_params"), int) and config.get("n_params") > 0


@pytest.mark.slow
def test_a_run_log_cut_mid_write_is_read_up_to_the_cut(tracker_nan_run, tmp_path):
    folder, facts = tracker_nan_run
    data = _wandb_log_of(folder).read_bytes()
    full = wandb.read(_wandb_log_of(folder)).frame
    for cut in (len(data) // 3, len(data) // 2, len(data) - 5):
        path = tmp_path / f"run-cut{cut}.wandb"
        path.write_bytes(data[:cut])
        rec = wandb.read(path)
        assert rec.warnings and "cut inside" in rec.warnings[0]
        assert len(rec.frame) < len(full) if cut < len(data) // 2 + 1 else len(rec.frame) <= len(full)
        prefix = full.iloc[:len(rec.frame)]  # rows are in the order logged: what is kept is the start of the run
        assert rec.frame["step"].tolist() == prefix["step"].tolist()
        assert rec.frame["metric"].tolist() == prefix["metric"].tolist()
        assert all(_same(a, b) for a, b in zip(rec.frame["value"], prefix["value"]))


@pytest.mark.slow
def test_the_latest_run_link_is_not_followed_and_wandbs_debug_logs_are_not_read(tracker_nan_run):
    folder, _ = tracker_nan_run
    assert (folder / "wandb" / "latest-run").is_symlink()
    layout = discover(folder / "wandb")
    assert [p.name for p in layout.wandb_logs] == [_wandb_log_of(folder).name]
    assert layout.skipped == [] and layout.text_logs == []


@pytest.mark.slow
def test_a_healthy_run_read_from_wandb_is_healthy(tracker_healthy_run):
    folder, facts = tracker_healthy_run
    result = analyze(folder / "wandb")
    assert result.status == "healthy" == facts.expected_status
    assert len(result.timeline.series("loss")) == len(_train_entries(facts))


# --- real public W&B folders (tests/trackers_realworld/PROVENANCE.md) ----------------------------

def test_a_2022_wandb_log_reads_every_row_of_the_openai_fine_tune():
    rec = wandb.read(OPENAI_RUN / "run-ft-jxFTOONXtEE9wOuUXnAghvgu.wandb")
    loss, evals = rec.frame[rec.frame["metric"] == "loss"], rec.frame[rec.frame["metric"] == "eval_loss"]
    assert loss["step"].tolist() == list(range(1, 552))
    assert len(evals) == 69 and rec.warnings == ()
    assert loss["value"].iloc[-1] == pytest.approx(0.7519598720915472)
    assert rec.tracker_run.experiment == "GPT-3 to Generate Doctor Who Synopses"


def test_the_openai_fine_tune_learned_and_is_not_called_broken():
    result = analyze(OPENAI_RUN)
    assert result.status != "broken"
    assert not [f for f in result.findings if f.severity == "error"]
    assert not [f for f in result.findings if f.kind in ("no_learning_evidence", "never_learned", "divergence")]


def test_noisy_single_batch_validation_is_not_overfitting():
    # 69 single-batch validation losses between 1.04 and 2.34 with no trend: the lowest one is a lucky batch,
    # not a level the model reached (its neighbours sit at about 1.85)
    assert "overfitting" not in [f.kind for f in analyze(OPENAI_RUN).findings]


def test_a_2024_hf_wandb_log_without_history_still_gives_the_runs_config():
    rec = wandb.read(DEBERTA / "run-20241104_054535-2vc9z1td" / "run-2vc9z1td.wandb")
    assert rec.frame.empty and rec.tracker_run.status == "finished"
    layout = discover(DEBERTA / "run-20241104_054535-2vc9z1td")
    from forensics.ingest import read_logs
    from forensics.ingest.run_config import read_run_config
    from forensics.timeline import build_timeline

    config = read_run_config(layout, build_timeline(read_logs(layout)[0]))
    assert (config.get("learning_rate"), config.get("warmup_steps"), config.get("fp16")) == (5e-05, 500, True)
    assert (config.get("model.model_type"), config.get("n_params"), config.get("method")) == ("gemma", 2506172416, "full")


def test_a_run_folder_without_its_log_is_read_from_its_summary_and_config_yaml():
    folder = DEBERTA / "run-20241104_055320-nmrz2w6w"
    assert discover(folder).wandb_folders == [folder.resolve()]
    rec = wandb_files.read(folder)
    point = dict(zip(rec.frame["metric"], rec.frame["value"]))
    assert set(rec.frame["step"]) == {68559}
    assert (point["loss"], point["grad_norm"], point["eval_loss"]) == (1.356, 1.3131214380264282, 1.3627853393554688)
    assert rec.notes and "no .wandb log" in rec.notes[0]
    result = analyze(folder)
    assert result.config.get("learning_rate") == 0.0003
    assert result.config.source_of("learning_rate") == "files/config.yaml (W&B config)"
    assert result.first_incident.kind == "no_learning_evidence"  # one point cannot show learning


def test_config_yaml_with_and_without_desc_lines(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("wandb_version: 1\n\n_wandb:\n  desc: null\n  value:\n    cli_version: 0.13.7\n"
                    "learning_rate:\n  desc: null\n  value: 0.0002\nbf16:\n    value: true\nreport_to:\n    value:\n"
                    "        - wandb\nrun_name:\n    value: my run\n")
    assert wandb_files.read_config_yaml(path) == {"learning_rate": 0.0002, "bf16": True, "run_name": "my run"}


def test_nested_config_yaml_values_are_read_as_their_leaves(tmp_path):
    """W&B writes a mapping value (HF's peft_config, the model's id2label) as nested YAML under `value:`."""
    path = tmp_path / "config.yaml"
    path.write_text("peft_config:\n    value:\n        default:\n            peft_type: LORA\n            r: 16\n"
                    "            target_modules:\n                - q_proj\nid2label:\n    value:\n"
                    '        "0": LABEL_0\nlearning_rate:\n    value: 0.0002\n')
    assert wandb_files.read_config_yaml(path) == {"peft_config": {"peft_type": "LORA", "r": 16},
                                                  "id2label": {"0": "LABEL_0"}, "learning_rate": 0.0002}


def test_a_peft_run_read_from_config_yaml_is_not_called_full():
    """The deberta run's config.yaml holds HF's peft_config (LoRA r 16) and a 4-bit quantization_config;
    dropping the nested peft_config made it look like a whole-model fine-tune."""
    result = analyze(DEBERTA / "run-20241104_055320-nmrz2w6w")
    assert result.run_profile.method == "qlora"
    assert result.config.get("adapter.r") == 16
    assert result.run_profile.evidence["method"].startswith("derived: files/config.yaml (W&B config)")


def test_a_wandb_files_folder_on_its_own_is_a_run(tmp_path):
    """A run's files/ copied out of wandb/ (wandb-summary.json, config.yaml, output.log side by side) or given
    directly; below a run folder it is read through that folder, once."""
    run = DEBERTA / "run-20241104_055320-nmrz2w6w"
    shutil.copytree(run / "files", tmp_path / "copied")
    layout = discover(tmp_path / "copied")
    assert layout.wandb_folders == [(tmp_path / "copied").resolve()]
    rec = wandb_files.read(layout.wandb_folders[0])
    assert set(rec.frame["step"]) == {68559} and rec.texts
    assert discover(run / "files").wandb_folders == [(run / "files").resolve()]
    assert discover(run).wandb_folders == [run.resolve()]  # not its files/ a second time


@pytest.mark.parametrize("dtype, init_from, precision, method", [
    ("float16", "scratch", "fp16", "full"), ("bfloat16", "scratch", "bf16", "full"),
    ("float32", "gpt2-xl", "fp32", "unknown")])
def test_nanogpt_config_gives_precision_and_a_model_trained_from_scratch(tmp_path, dtype, init_from, precision,
                                                                          method):
    """nanoGPT's train.py logs its globals as the W&B config: `dtype` is its autocast dtype, `init_from: scratch`
    a model built from random weights (fine-tuning gpt2-xl says nothing of how much of it was trained)."""
    files = tmp_path / "files"
    files.mkdir()
    config = {"init_from": init_from, "block_size": 256, "dtype": dtype, "learning_rate": 0.001}
    (files / "config.yaml").write_text("".join(f"{k}:\n  desc: null\n  value: {v}\n" for k, v in config.items()))
    (files / "wandb-summary.json").write_text('{"iter": 10, "train/loss": 2.0, "_step": 1}')
    (files / "output.log").write_text("".join(f"iter {i}: loss {3 - i / 10:.4f}, time 263.86ms, mfu 9.31%\n"
                                              for i in range(0, 200, 10)))
    profile = analyze(files).run_profile
    assert (profile.precision, profile.method, profile.framework) == (precision, method, "nanogpt")
    if init_from == "scratch":
        assert profile.objective == "pretrain" and "init_from" in profile.evidence["objective"]


def test_a_copied_latest_run_folder_is_the_same_run_not_a_second_one(tmp_path):
    wandb_dir = tmp_path / "wandb"
    shutil.copytree(OPENAI_RUN, wandb_dir / OPENAI_RUN.name)
    shutil.copytree(OPENAI_RUN, wandb_dir / "latest-run")  # committed to git as a folder, as real repositories do
    result = analyze(tmp_path)
    assert [r.run_id for r in result.timeline.tracker_runs] == ["ft-jxFTOONXtEE9wOuUXnAghvgu"]
    assert len(result.timeline.series("loss")) == 551


@pytest.mark.parametrize("job, objective", [
    ({"object": "fine-tune", "model": "curie", "hyperparams": {"n_epochs": 4, "prompt_loss_weight": 0.1}}, ("sft", None)),
    ({"object": "fine_tuning.job", "model": "gpt-4o-mini-2024-07-18",
      "method": {"type": "dpo", "dpo": {"hyperparameters": {"beta": 0.1}}}}, ("preference", "dpo")),
    ({"object": "fine_tuning.job", "model": "gpt-3.5-turbo-0613", "hyperparameters": {"n_epochs": 3}}, ("sft", None)),
    # not a job's record: HF's TrainingArguments, and a config that merely has an `object` key
    ({"learning_rate": 2e-5, "per_device_train_batch_size": 8}, ("unknown", None)),
    ({"object": "fine-tune", "learning_rate": 2e-5}, ("unknown", None)),
])
def test_an_openai_fine_tuning_job_synced_to_wandb_says_its_objective(job, objective):
    """mdarshad1000_Fine-Tuning-GPTs / sinanuozdemir_oreilly-hands-on-gpt-llm: `openai wandb sync` logs the job object
    as the W&B config; the legacy `fine-tune` (prompt / completion pairs, prompt_loss_weight) was supervised only, and a
    `fine_tuning.job` names its method."""
    from forensics.config import RunConfig
    from forensics.ingest.tracker_config import tracker_config_values
    from forensics.profile import run_profile
    from forensics.timeline import Timeline

    config = RunConfig()
    for key, value in tracker_config_values(job).items():
        config.add(key, value, "files/config.yaml (W&B config)")
    profile = run_profile(None, config, Timeline.empty(), [])
    assert (profile.objective, profile.algorithm) == objective
    if objective[0] != "unknown":
        assert "OpenAI fine-tuning job" in profile.evidence["objective"]
