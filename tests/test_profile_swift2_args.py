"""Tests of the run profile from an ms-swift 2 sft_args.json (profile/).

From the day-11 reading fixes of consoles and run records (a reviewer's built runs, /tmp/rev8 of that day).

* ms-swift 2.x writes its arguments as `sft_args.json` (swift/llm/sft.py: `zip([args, training_args],
  ['sft_args.json', 'training_args.json'])`), not `args.json`: it is read as ms-swift's record, and its `dtype`
  (which select_dtype turned into the fp16/bf16 flags) says the precision where the flags are not in it."""
from __future__ import annotations

import json
import math

import numpy as np

import forensics


_TOTAL, _EVERY = 300, 5


def _healthy_losses(until: int = _TOTAL) -> dict[int, float]:
    rng = np.random.default_rng(1)
    return {s: round(2.6 * math.exp(-s / 150) + 0.6 + float(rng.normal(0, 0.03)), 4)
            for s in range(_EVERY, until + 1, _EVERY)}


def _swift2_run(folder, args: dict):
    """An ms-swift 2.x output folder: logging.jsonl (its dicts with `global_step/max_steps`) and sft_args.json."""
    folder.mkdir()
    rows = [{"loss": loss, "grad_norm": 1.0, "learning_rate": 1e-4, "epoch": round(step / 100, 2),
             "global_step/max_steps": f"{step}/{_TOTAL}", "percentage": f"{100 * step / _TOTAL:.2f}%",
             "elapsed_time": "1m", "remaining_time": "10m", "memory(GiB)": 20.1, "train_speed(iter/s)": 0.5}
            for step, loss in _healthy_losses().items()]
    (folder / "logging.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (folder / "sft_args.json").write_text(json.dumps(args, indent=2))
    return forensics.analyze(folder).run_profile.to_dict()


def test_swift2_sft_args_json_gives_the_method_and_the_precision_its_dtype_names(tmp_path):
    profile = _swift2_run(tmp_path / "run", {"model_type": "qwen-7b-chat", "model_id_or_path": "qwen/Qwen-7B-Chat",
                                             "sft_type": "lora", "dtype": "bf16", "lora_rank": 8,
                                             "logging_steps": _EVERY})
    assert profile["framework"] == "swift"
    assert profile["method"] == "lora"
    assert profile["precision"] == "bf16"


def test_swift2_flags_in_the_record_win_over_its_dtype(tmp_path):
    """A full fine-tune asked for fp16: ms-swift 2.x keeps the weights in fp32 (`dtype` fp32) and trains with fp16
    mixed precision (fp16 True): the flags, not the dtype, say the precision."""
    profile = _swift2_run(tmp_path / "run", {"model_type": "qwen-7b-chat", "sft_type": "full", "dtype": "fp32",
                                             "fp16": True, "bf16": False, "logging_steps": _EVERY})
    assert profile["method"] == "full"
    assert profile["precision"] == "fp16"
