"""The run profile's precision (forensics/profile/precision.py) from a console's torch deprecation warning that quotes
the run's own `torch.cuda.amp.autocast()` line.

Run-profile misses across the corpus (fx-profile5)."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics


# torch's deprecation warning quoting the run's own autocast line (PUFAI_GibberishGPT, XIAOXIN-Cyh_XiaoXin-LLM)
_WARNING = ("/workspace/GPT/{file}:518: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.\n  {line}\n")


def _console_run(tmp_path: Path, echoed: str) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    steps = "".join(f"step {i * 10}: loss {2.0 - 0.01 * i:.4f}, lr 3e-4\n" for i in range(40))
    (run / "train.log").write_text("Iteration: 0\n" + echoed + steps)
    return run


@pytest.mark.parametrize("line, precision", [("with torch.cuda.amp.autocast():", "fp16"),
                                             ("with torch.cuda.amp.autocast(dtype=torch.bfloat16):", "bf16")])
def test_the_scripts_autocast_quoted_under_torchs_deprecation_warning_gives_the_precision(tmp_path, line, precision):
    a = forensics.analyze(_console_run(tmp_path, _WARNING.format(file="gpt_train_script.py", line=line)))
    assert a.run_profile.precision == precision
    assert line in a.run_profile.evidence["precision"]


@pytest.mark.parametrize("file, line", [
    ("gpt_train_script.py", "with torch.cuda.amp.autocast(enabled=use_amp):"),  # switched by a variable: unsaid
    (".venv/lib/python3.10/site-packages/somelib/model.py", "with torch.cuda.amp.autocast():")])  # a library's own
def test_an_autocast_the_warning_does_not_pin_on_the_run_leaves_the_precision_unknown(tmp_path, file, line):
    a = forensics.analyze(_console_run(tmp_path, _WARNING.format(file=file, line=line)))
    assert a.run_profile.precision == "unknown"
