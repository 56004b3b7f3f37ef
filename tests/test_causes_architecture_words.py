"""What the causes say of the network (forensics/causes/architecture.py, lr_words.py, too_slow.py): a bare `t5` in a log
file's name is not a T5 network; the T5 sentence is said only where the T5 rows were used; a recurrent network's
range speaks of no LoRA adapters.

From session 22's review findings (fx-review3c)."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from forensics.causes import infer_causes
from forensics.causes.architecture import architecture_of
from forensics.causes.evidence import Facts
from forensics.causes.lr_words import method_sentences, ranges_in_words, run_ranges
from forensics.config import RunConfig, Thresholds
from forensics.findings import Finding
from forensics.ingest import namespace_args

from forensics.profile import RunProfile
from forensics.timeline import LogRecords, build_timeline
from tests.test_causes import by_id, config, timeline


NAN = float("nan")


def _logged_as(source: str):
    frame = pd.DataFrame({"step": pd.Series([1, 2], dtype="int64"), "metric": ["loss", "loss"],
                          "value": pd.Series([2.0, 1.9], dtype="float64"), "wall_time": NAN})
    return build_timeline([LogRecords(source=source, format="console", frame=frame)])


def _facts(cfg=None, tl=None, profile=None) -> Facts:
    return Facts(cfg or RunConfig(), tl if tl is not None else timeline(loss={1: 2.0}), [], [], Thresholds(), profile)


@pytest.mark.parametrize("name", ["run_t5.log", "train_t5.txt", "t5x_pretrain.log", "exp-t5.log"])
def test_a_bare_t5_in_a_log_files_name_is_not_a_t5_network(name):
    assert architecture_of(_facts(tl=_logged_as(name))) is None


@pytest.mark.parametrize("name", ["t5-small_train.log", "t5_base.log", "google_t5-v1_1-base.log", "t5-3b.log",
                                  "flan-t5-large.log", "mt5-base-finetuned.log", "byt5.log", "mt0-large.log"])
def test_a_t5_checkpoint_named_with_its_size_or_family_prefix_in_a_log_files_name_is_a_t5(name):
    found = architecture_of(_facts(tl=_logged_as(name)))
    assert found is not None and found.kind == "t5", found


def test_a_t5_named_as_the_model_still_is_a_t5():
    found = architecture_of(_facts(cfg=config(model__name_or_path="google/t5-v1_1-large")))
    assert found is not None and found.kind == "t5"


def test_the_t5_sentence_is_not_said_where_the_decoder_rows_were_used():
    """A T5's preference objective has no T5 row: the decoder rows judge it, so "its rows are a T5's" is false."""
    facts = _facts(cfg=config(model__model_type="t5"), profile=RunProfile(method="full", objective="preference"))
    ranges = run_ranges(facts)
    assert ranges[0].family == "decoder"
    assert not any("T5-family" in s for s in method_sentences(facts, "full", ranges))


def test_the_t5_sentence_is_said_where_the_t5_rows_were_used():
    facts = _facts(cfg=config(model__model_type="t5"), profile=RunProfile(method="full", objective="sft"))
    ranges = run_ranges(facts)
    assert ranges[0].family == "t5"
    assert any("T5-family" in s for s in method_sentences(facts, "full", ranges))


def _recurrent(tl):
    tl.texts[namespace_args.TEXT_KEY] = json.dumps({"model": "RNN_RELU"})
    return tl


def test_a_recurrent_networks_range_of_unknown_method_speaks_of_no_adapters():
    facts = _facts(tl=_recurrent(timeline(loss={1: 5.0})), profile=RunProfile(method="unknown", objective="sft"))
    ranges = run_ranges(facts)
    words = ranges_in_words("unknown", "sft", ranges) + " ".join(method_sentences(facts, "unknown", ranges))
    assert "recurrent network" in words and "LoRA" not in words and "and adapters" not in words, words
    assert "full fine-tuning" not in words, words


def test_a_recurrent_run_too_slow_is_not_told_of_adapter_recipes():
    steps = range(1, 21)
    tl = _recurrent(timeline(learning_rate={s: 1e-6 for s in steps}, loss={s: 0.693 for s in steps},
                             grad_norm={s: 1.0 for s in steps}))
    found = by_id(infer_causes(config(learning_rate=1e-6), tl,
                               [Finding("never_learned", "error", 1, "never learned", metric="loss")], [],
                               Thresholds(), RunProfile(method="unknown", objective="sft")))
    said = " ".join(found["lr_too_low"].evidence) + found["lr_too_low"].suggestion
    assert "recurrent network" in said and "adapter" not in said.lower() and "LoRA" not in said, said


def test_a_decoder_runs_range_of_unknown_method_still_names_full_and_lora():
    facts = _facts(profile=RunProfile(method="unknown", objective="sft"))
    words = ranges_in_words("unknown", "sft", run_ranges(facts))
    assert "full fine-tuning" in words and "LoRA/QLoRA adapters" in words, words
