"""The run profile's precision from the `dtype` a nanoGPT console prints among its settings (forensics/ingest/
console_lines/nanogpt.py, `printed_dtype`): nanoGPT's train.py autocasts to that dtype on a GPU, float16 with a
GradScaler. From corpus batch AS102 (yuki-nyaa_myGPT prints its hyperparameters, `dtype = bfloat16` among them)."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics

CORPUS = Path(__file__).parent / "realworld"
_STEPS = "".join(f"iter {i}: loss {10.9 - 0.05 * i:.4f}, time 1650.00ms, mfu 17.20%\n" for i in range(30))


def _precision(tmp_path: Path, settings: str) -> str:
    (tmp_path / "training.log").write_text("-----Hyperparameters-----\n" + settings + "-----Hyperparameters End-----\n"
                                           + _STEPS)
    return forensics.analyze(tmp_path).run_profile.precision


@pytest.mark.parametrize("line, precision", [("dtype = bfloat16\n", "bf16"), ("dtype = 'float16'\n", "fp16"),
                                             ("Overriding: dtype = float32\n", "fp32")])
def test_the_printed_dtype_of_a_nanogpt_console_is_its_precision(tmp_path, line, precision):
    assert _precision(tmp_path, "device = cuda\n" + line) == precision


@pytest.mark.parametrize("settings", [
    "device = cpu\ndtype = bfloat16\n",  # no autocast on a CPU: train.py's ctx is a nullcontext there
    "dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'\n",
    "torch_dtype = bfloat16\n"])  # another setting's name
def test_a_dtype_the_run_did_not_train_in_or_cannot_say_leaves_the_precision_unknown(tmp_path, settings):
    assert _precision(tmp_path, settings) == "unknown"


def test_a_dtype_line_in_a_console_of_no_nanogpt_steps_is_not_read(tmp_path):
    lines = "dtype = bfloat16\n" + "".join(f"step {i} | loss {3.0 - 0.01 * i:.3f}\n" for i in range(30))
    (tmp_path / "train.log").write_text(lines)
    assert forensics.analyze(tmp_path).run_profile.precision == "unknown"


def test_the_gpt2_console_that_prints_its_hyperparameters_is_bf16():
    assert forensics.analyze(CORPUS / "yuki-nyaa_myGPT").run_profile.precision == "bf16"
