"""Session 25, fx-profile9: OpenNMT-py logs `Loading checkpoint from X` where -train_from names one, then builds the
model (`[... INFO] Building model...`, the NMTModel printed after it) on those weights or, with none, on random ones:
every weight trained, method full (kmilink_OpenNMT-Indonesia-Bima). The objective is left alone: a translation model
from scratch learns a translation, no pre-training. Every synthetic run is written under a folder named `run`."""
from __future__ import annotations

from pathlib import Path

import forensics

CORPUS = Path(__file__).parent / "realworld"
_HEAD = ("[2025-09-21 08:38:44,655 INFO]  * src vocab size = 3728\n"
         "[2025-09-21 08:38:44,657 INFO] Building model...\n"
         "[2025-09-21 08:38:44,808 INFO] NMTModel(\n  (encoder): TransformerEncoder(\n  )\n)\n"
         "[2025-09-21 08:38:44,810 INFO] * number of parameters: 10240656\n")


def _onmt_run(tmp_path: Path, head: str) -> Path:
    steps = "".join(f"[2025-09-21 08:39:{i:02d},816 INFO] Step {50 * i}/ 2000; acc:  {20 + i:.2f}; ppl: "
                    f"{900 / i:.2f}; xent: {6.8 - 0.12 * i:.2f}; lr: 0.00020; 4466/6179 tok/s;     {30 * i} sec\n"
                    for i in range(1, 16))
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "train.log").write_text(head + steps)
    return folder


def test_an_opennmt_model_built_with_no_checkpoint_loaded_is_trained_in_full(tmp_path: Path):
    profile = forensics.analyze(_onmt_run(tmp_path, _HEAD)).run_profile
    assert profile.method == "full" and "Building model" in profile.evidence["method"]
    assert profile.objective == "unknown"


def test_an_opennmt_model_built_on_a_loaded_checkpoint_says_no_method(tmp_path: Path):
    loaded = "[2025-09-21 08:38:40,000 INFO] Loading checkpoint from models/base_step_20000.pt\n" + _HEAD
    assert forensics.analyze(_onmt_run(tmp_path, loaded)).run_profile.method == "unknown"


def test_building_model_in_another_tools_log_says_no_method(tmp_path: Path):
    """The words alone (no OpenNMT logger prefix, no NMTModel printed) are no OpenNMT build."""
    other = "Building model...\nModel(\n)\n"
    assert forensics.analyze(_onmt_run(tmp_path, other)).run_profile.method == "unknown"


def test_kmilink_method_is_full():
    profile = forensics.analyze(CORPUS / "kmilink_OpenNMT-Indonesia-Bima").run_profile
    assert profile.method == "full"
