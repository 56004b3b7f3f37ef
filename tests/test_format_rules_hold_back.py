"""Where the readers and profile rules added for one framework must hold back on another run (found by a review of
the rules): each input is shaped like a real run that is not the framework or objective the rule names."""
from __future__ import annotations

import json
import math

import pytest

from support.format_runs import analyze_logs, losses, write_file
from forensics.ingest import megatron_args
from forensics.ingest.pretrain_lines import ComposerBlock, parse_line
from forensics.metric_names import tracker_metric_names


def test_a_hand_written_iteration_colon_line_is_not_nanotrons(tmp_path):
    """`iteration: N / M | loss: X |` from a hand-written LoRA loop lacks nanotron's lm_loss and consumed_tokens."""
    lines = ["trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622"]
    lines += [f"iteration: {s} / 30 | loss: {loss:.4f} | lr: 2.00e-04 | grad_norm: 0.41 |"
              for s, loss in enumerate(losses(), 1)]
    profile = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n")).run_profile
    assert profile.framework != "nanotron" and profile.objective != "pretrain"


def _state(folder, history, config=None):
    write_file(folder, "trainer_state.json", json.dumps({"global_step": 30, "log_history": history}))
    if config:
        write_file(folder, "config.json", json.dumps(config))
    return folder


def test_finetune_in_a_classifiers_name_or_a_parent_folder_is_not_sft(tmp_path):
    history = [{"step": s, "loss": loss, "epoch": s / 30} for s, loss in enumerate(losses(), 1)]
    classifier = {"architectures": ["BertForSequenceClassification"], "model_type": "bert", "num_labels": 2}
    assert analyze_logs(_state(tmp_path / "bert_finetune_sst2", history, classifier)).run_profile.objective != "sft"
    assert analyze_logs(_state(tmp_path / "finetune" / "run7", history)).run_profile.objective == "unknown"
    assert analyze_logs(_state(tmp_path / "llama_finetune", history)).run_profile.objective == "sft"


def test_alpacafarm_preference_pairs_are_not_instruction_data(tmp_path):
    """A reward model on AlpacaFarm's human preference pairs: its data path names alpaca, its loss starts at ln 2."""
    lines = ["Loading data from data_path=./data/alpaca_human_preference.json (pairs: chosen / rejected)"]
    lines += [str({"loss": round(math.log(2) - s / 1000, 4), "learning_rate": 1e-05, "epoch": s / 30})
              for s in range(1, 31)]
    profile = analyze_logs(write_file(tmp_path, "train.log", "\n".join(lines) + "\n")).run_profile
    assert profile.objective != "sft"


def test_a_metric_null_only_at_some_steps_of_a_step_data_log_is_not_a_nan(tmp_path):
    """verl's file logger writes a NaN as null; a metric logged only every 10th step is null in between, not NaN."""
    rows = [{"step": s, "data": {"train/loss": loss, "train/lr": 1e-5, "val/loss": loss + 0.1 if s % 10 == 0 else None}}
            for s, loss in enumerate(losses(), 1)]
    analysis = analyze_logs(write_file(tmp_path, "run.jsonl", "".join(json.dumps(r) + "\n" for r in rows)))
    assert analysis.status == "healthy" and len(analysis.timeline.series("eval_loss")) == 3


@pytest.mark.parametrize("count", ["inf", "1e30", "nan", "-3"])
def test_a_composer_block_with_an_odd_batch_count_keeps_its_header_step(count):
    block = ComposerBlock()
    for line in ("[batch=7/30]:", f"\t Train time/batch: {count}", "\t Train loss/train/total: 2.1000"):
        block.feed(line)
    assert block.close().step == 7


@pytest.mark.parametrize("updates", ["99999999999999999999999", "\u00b2"])
def test_a_fairseq_valid_line_with_an_odd_update_count_is_no_record(updates):
    assert parse_line(f"valid | epoch 001 | valid on 'valid' subset | loss 2.1 | num_updates {updates}") is None


def test_lightnings_momentum_and_weight_decay_are_not_the_learning_rate():
    assert tracker_metric_names(["lr-AdamW", "lr-AdamW-momentum", "lr-AdamW-weight_decay", "lr-AdamW/pg1"]) == [
        "learning_rate", "lr-AdamW-momentum", "lr-AdamW-weight_decay", "lr-AdamW/pg1"]


def test_gpt_neox_fp16_section_of_type_bfloat16_is_bf16():
    args = megatron_args.parse_block(["-------------------- arguments --------------------",
                                      "  fp16 ............. {'enabled': True, 'type': 'bfloat16'}....updated",
                                      "---------------- end of arguments ----------------"])
    values = megatron_args.config_values(args)
    assert (values.get("fp16"), values.get("bf16")) == (False, True)
