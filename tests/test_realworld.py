"""Every real public log in ../shared/realworld/ is discovered, read without a skip, and gives
facts that were read from each file by hand (grep / json.load, not through this tool)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from forensics.ingest import read_logs
from forensics.discover.run import discover
from forensics.timeline import build_timeline

REALWORLD = Path(__file__).parents[1].parent / "shared" / "realworld"
if not REALWORLD.is_dir():
    pytest.skip(f"the real-world corpus is not there ({REALWORLD})", allow_module_level=True)

# case: (format, number of loss points, first loss step, last loss step, (a step, its loss))
FACTS = {
    "gemma-2b-it-lora-prompt-recovery": ("trainer_state", 200, 1, 200, (200, 0.073)),
    "llama2-7b-lora-hr-chatbot": ("trainer_state", 70, 1, 70, (70, 0.1642)),
    "llama2-7b-qlora-kgllm-fp16": ("trainer_state", 120, 1, 120, (120, 0.437)),
    "llama3-8b-unsloth-lora-mobility": ("trainer_state", 3500, 1, 3500, (3500, 1.7666)),
    "llama31-8b-unsloth-lora-60step-a": ("trainer_state", 60, 1, 60, (60, 0.0)),
    "llama31-8b-unsloth-lora-60step-b": ("trainer_state", 60, 1, 60, (60, -0.0001)),
    "mistral-7b-instruct-lora-translator": ("trainer_state", 866, 10, 8660, (8660, 0.1333)),
    "mistral-7b-lora-sft": ("trainer_state", 100, 10, 1000, (1000, 0.0)),
    "phi4-mini-lora-amazon-titles": ("trainer_state", 450, 10, 4500, (4500, 2.7119)),
    "qwen2.5-1.5b-lora-k8s": ("trainer_state", 31, 10, 310, (310, 1.4040685653686524)),
    "qwen3.5-4b-lora-grpo-telelogs": ("trainer_state", 200, 1, 200, (200, 0.0)),
    "t5-small-summarization-3ep": ("trainer_state", 430, 500, 215000, (215000, 1.7423)),
    "tcm-llm-lora-baize-long": ("trainer_state", 6687, 1, 6687, (6687, 0.0889)),
    "tinyllama-1.1b-lora-rpg-multiphase": ("trainer_state", 500, 1, 500, (500, 0.0648)),
    "tinyllama-lora-finetune-with-eval": ("trainer_state", 186, 15, 2790, (2790, 1.025)),
    "wizardlm-13b-qlora-tiny-dataset": ("trainer_state", 100, 10, 1000, (1000, 0.0)),
    "lf-qwen2.5-7b-lora-medical": ("llamafactory", 675, 10, 6750, (6750, 1.5999)),
    "lf-sft-graduate-agent": ("llamafactory", 37, 10, 370, (10, 122.1416)),
    "swift-deepseek-r1-qwen3-8b-lora": ("swift", 44, 1, 430, (1, 20.53074074)),
    # every log line of this old ms-swift file is written twice (5911 loss lines, 2956 steps):
    # one copy of each is read, with one note saying so
    "swift-internvl2-full-ft-long": ("swift", 2956, 1, 14775, (1, 5.04565144)),
    # W&B console capture after step 1500; steps from the tqdm bar (the dict at bar 1503 is
    # trainer_state's step 1503: loss 1.4405)
    "llama3-8b-unsloth-mobility-stdout": ("stdout", 429, 1503, 4000, (1503, 1.4405)),
    # no bar before the dicts: 282 lines, final bar 2820/2820 -> logging_steps 10
    "qwen1.5-0.5b-lora-muice-stdout": ("stdout", 282, 10, 2820, (2820, 0.6449)),
    "llama3.2-1b-webui-training-pro-notes": ("stdout", 171, 3, 683, (683, 2.4082)),
}

WRITTEN_TWICE = {"swift-internvl2-full-ft-long": ["records written twice"]}


def _cases():
    return sorted(p.name for p in REALWORLD.iterdir() if p.is_dir())


def test_every_case_has_facts():
    assert set(_cases()) == set(FACTS), "a new real-world case needs its facts in the table"


@pytest.mark.parametrize("case", _cases())
def test_case_reads_cleanly_with_the_known_facts(case):
    fmt, n_loss, first, last, (step, loss) = FACTS[case]
    layout = discover(REALWORLD / case)
    records, skipped = read_logs(layout)
    assert [s.reason.split(":")[0] for s in skipped] == WRITTEN_TWICE.get(case, []) and layout.skipped == []
    assert [r.format for r in records] == [fmt]
    rec = records[0]
    assert not rec.warnings
    rows = rec.frame[rec.frame["metric"] == "loss"]
    assert len(rows) == n_loss
    assert (int(rows["step"].iloc[0]), int(rows["step"].iloc[-1])) == (first, last)
    at_step = rows.loc[rows["step"] == step, "value"].tolist()
    assert at_step and at_step[0] == loss and math.copysign(1, at_step[0]) == math.copysign(1, loss)
    timeline = build_timeline(records)
    assert len(timeline) and "loss" in timeline.metrics
