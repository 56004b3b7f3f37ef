"""A warm-started EncoderDecoderModel whose first logged loss is lower than its decoder can score before training
(fx-lowfloor).

synkathairo_journal-article-summarizer: a BERT2BERT from bert-base-uncased twice, its decoder's cross-attention new
(config.json); the loss is 0.2851 at step 2, the mean of its first two updates, so the untrained model scored at most
0.57 nats a token at step 1 on abstracts it had never seen: the decoder sees its targets (decoder_input_ids equal to
the labels, no longer shifted since transformers 4.12). The guards: a BERT2BERT started honestly near ln V
(zanuura's bert-tiny, 9.25 at step 10), a late first point (Vanh253333's 0.715 at step 2000), a low start of a model
whose decoder was trained with its cross-attention (a T5, templated answers), and a real healthy fine-tune whose
first loss is 0.034 (google-gemini_gemma-cookbook).
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from forensics import analyze
from forensics.analyzers.fresh_cross_attention import detect_start_under_a_fresh_decoder

CORPUS = Path(__file__).parent / "realworld"
PARTS = "encoder bert-base-uncased, decoder bert-base-uncased"
SYNKATHAIRO = [0.2851, 0.4964, 0.4215, 0.1672, 0.1361, 0.1660, 0.0531, 0.0563, 0.1168, 0.0435, 0.0838, 0.0175,
               0.0275, 0.0329, 0.0181, 0.0389]


def _loss(values, first_step: int = 2, every: int = 2) -> dict:
    steps = range(first_step, first_step + every * len(values), every)
    return {"loss": pd.Series(values, index=list(steps), dtype="float64")}


def test_a_bert2bert_that_starts_under_a_nat_shows_no_learning():
    found = detect_start_under_a_fresh_decoder(_loss(SYNKATHAIRO), PARTS)
    assert [(f.kind, f.severity, f.step, f.end_step) for f in found] == [("no_learning_evidence", "warning", 2, 32)]
    assert abs(found[0].evidence["step_one_at_most"] - 0.5702) < 1e-9
    assert "decoder_input_ids" in found[0].message and "eval" in found[0].message


def test_a_bert2bert_that_starts_near_the_uniform_guess_is_left_alone():
    assert detect_start_under_a_fresh_decoder(_loss([9.2481, 8.91, 8.75, 4.14], 10, 10), PARTS) == []


def test_a_low_first_point_after_many_updates_bounds_nothing():
    # (Vanh253333_cp: 0.715 at step 2000, the mean of 2000 updates: step 1 could have been anywhere under 1430 nats)
    assert detect_start_under_a_fresh_decoder(_loss([0.715, 0.002, 0.0004], 2000, 2000), PARTS) == []


def test_a_low_start_of_a_model_not_warm_started_from_two_checkpoints_is_left_alone():
    # (a T5 or a decoder-only model was trained with what it reads: a templated task can start this low)
    assert detect_start_under_a_fresh_decoder(_loss(SYNKATHAIRO), None) == []


def test_synkathairos_bert2bert_is_a_warning_for_its_start():
    a = analyze(CORPUS / "synkathairo_journal-article-summarizer", check_checkpoints=False)
    assert a.status == "warning"
    assert [(f.kind, f.step) for f in a.findings if "step_one_at_most" in f.evidence] == [("no_learning_evidence", 2)]


def test_an_honest_bert2bert_start_and_a_healthy_low_start_are_not_read_this_way():
    for case in ("zanuura_Bert2Bert_Summarization_Liputan6", "google-gemini_gemma-cookbook"):
        a = analyze(CORPUS / case, check_checkpoints=False)
        assert not [f for f in a.findings if "step_one_at_most" in f.evidence], case
    assert analyze(CORPUS / "google-gemini_gemma-cookbook", check_checkpoints=False).status == "healthy"


def test_a_first_point_whose_step_the_reader_inferred_bounds_nothing():
    # a printed dict numbered by its place in the file is not the k-th update: its step says nothing of how many
    # updates its mean covers
    assert detect_start_under_a_fresh_decoder(_loss(SYNKATHAIRO), PARTS, steps_counted=False) == []


def test_a_first_point_at_a_whole_epoch_or_later_bounds_nothing():
    # steps numbered by epoch (a table of epoch means): the first point is the mean over a pass, not over k updates
    metrics = {**_loss(SYNKATHAIRO[:4], 1, 1), "epoch": pd.Series([1.0, 2.0, 3.0, 4.0], index=[1, 2, 3, 4])}
    assert detect_start_under_a_fresh_decoder(metrics, PARTS) == []
    metrics["epoch"] = pd.Series([0.1, 0.2, 0.3, 0.4], index=[1, 2, 3, 4])  # (the guard: under an epoch, it fires)
    assert [f.kind for f in detect_start_under_a_fresh_decoder(metrics, PARTS)] == ["no_learning_evidence"]


def test_a_bert2bert_console_of_printed_dicts_without_steps_is_not_read_this_way(tmp_path):
    # the Trainer's printed dicts carry no step: numbered by their place, the first at 1 (a 0.95 there bounded the
    # first update at 0.95 although the dict logged every 500 updates)
    cfg = {"architectures": ["EncoderDecoderModel"], "model_type": "encoder-decoder", "is_encoder_decoder": True,
           "encoder": {"_name_or_path": "bert-base-uncased", "model_type": "bert", "vocab_size": 30522},
           "decoder": {"_name_or_path": "bert-base-uncased", "model_type": "bert", "vocab_size": 30522,
                       "is_decoder": True, "add_cross_attention": True}}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    losses = [0.95, 0.80, 0.72, 0.66, 0.61, 0.57, 0.54, 0.51, 0.49, 0.47]
    (tmp_path / "train.log").write_text("".join(
        str({"loss": loss, "grad_norm": 2.0, "learning_rate": 5e-5 * (1 - i / 10), "epoch": round((i + 1) / 10, 2)})
        + "\n" for i, loss in enumerate(losses)))
    a = analyze(tmp_path, check_checkpoints=False)
    assert not [f for f in a.findings if "step_one_at_most" in f.evidence]
