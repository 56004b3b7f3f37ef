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
