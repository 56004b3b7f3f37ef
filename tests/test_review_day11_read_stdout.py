"""Day 11 reading fixes of consoles and run records (a reviewer's built runs, /tmp/rev8 of that day).

* A tqdm capture whose carriage returns were deleted holds each dict on one line after the bar redraws since the last
  one: the reading just before the dict dates it, not the previous line's last reading (every incident was one
  logging interval early).
* ms-swift 2.x writes its arguments as `sft_args.json` (swift/llm/sft.py: `zip([args, training_args],
  ['sft_args.json', 'training_args.json'])`), not `args.json`: it is read as ms-swift's record, and its `dtype`
  (which select_dtype turned into the fp16/bf16 flags) says the precision where the flags are not in it.
"""
from __future__ import annotations

import io
import json
import math

import numpy as np
import tqdm

import forensics
from forensics.ingest import stdout

_TOTAL, _EVERY = 300, 5


def _trainer_console(losses: dict[int, float], total: int = _TOTAL) -> str:
    """What the HF Trainer prints to a console: its tqdm bar moved on each step, then at each logging step the
    ProgressCallback's dict written through `tqdm.write` (the real writer, so the bar's clear and redraw are real)."""
    buf = io.StringIO()
    bar = tqdm.tqdm(total=total, file=buf, mininterval=0, ncols=100)
    rng = np.random.default_rng(0)
    for step in range(1, max(losses) + 1):
        bar.update(1)
        if step in losses:
            pairs = {"loss": losses[step], "grad_norm": round(float(rng.uniform(0.8, 1.4)), 4),
                     "learning_rate": 2e-4 * (1 - step / total), "epoch": round(step / 100, 2)}
            tqdm.tqdm.write(str(pairs), file=buf)
    return buf.getvalue()


def _healthy_losses(until: int = _TOTAL) -> dict[int, float]:
    rng = np.random.default_rng(1)
    return {s: round(2.6 * math.exp(-s / 150) + 0.6 + float(rng.normal(0, 0.03)), 4)
            for s in range(_EVERY, until + 1, _EVERY)}


def _loss_steps(text: str, tmp_path) -> list[int]:
    path = tmp_path / "train.log"
    path.write_text(text)
    frame = stdout.read(path).frame
    return frame[frame["metric"] == "loss"]["step"].astype(int).tolist()


def test_dict_after_its_own_bar_on_a_line_without_carriage_returns_is_dated_by_that_bar(tmp_path):
    losses = _healthy_losses(until=125)
    losses[125] = float("nan")  # a run killed after its loss went NaN at step 125
    text = _trainer_console(losses).replace("\r", "")
    assert _loss_steps(text, tmp_path) == list(range(_EVERY, 130, _EVERY))
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "broken"
    assert analysis.first_incident.kind in ("nonfinite_metric", "nonfinite_loss")
    assert analysis.first_incident.step == 125


def test_a_healthy_capture_reads_the_same_with_or_without_its_carriage_returns(tmp_path):
    text = _trainer_console(_healthy_losses())
    kept, stripped = tmp_path / "kept", tmp_path / "stripped"
    kept.mkdir()
    stripped.mkdir()
    expected = list(range(_EVERY, _TOTAL + 1, _EVERY))
    assert _loss_steps(text, kept) == expected
    assert _loss_steps(text.replace("\r", ""), stripped) == expected
    assert forensics.analyze(stripped).status == "healthy"


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
