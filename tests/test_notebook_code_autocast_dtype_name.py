"""An autocast whose dtype is a name the code binds (session 31, fx-as117): netra-ai-lab_Netra-NMT's
scripts/training/09_train_student.py sets `amp_dtype = torch.bfloat16` in main() and trains under
`torch.amp.autocast("cuda", dtype=amp_dtype)` in the function it hands it to - the name is bound to one dtype only,
so the loop trains in bfloat16. A name bound to a choice (nanoGPT's `ptdtype = {...}[dtype]`) or to two dtypes
stays unsaid.

Each test fails on the code before its change where it asserts a precision; the guards pass on both."""
from __future__ import annotations

import json
from pathlib import Path

import forensics

REALWORLD = Path(__file__).parent / "realworld"

_LOOP = '''
import json
import torch
from pathlib import Path

LOG_FILE = Path("results") / "train_log.jsonl"

def train_epoch(model, loader, opt, amp_dtype):
    for step, (x, y) in enumerate(loader):
        with torch.amp.autocast("cuda", dtype=amp_dtype):
            loss = model(x, y)
        loss.backward()
        opt.step()
        with LOG_FILE.open("a") as f:
            f.write(json.dumps({{"step": step, "loss": loss.item()}}) + "\\n")

def main():
    model = torch.nn.Transformer()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    {binding}
    train_epoch(model, [], opt, amp_dtype)
'''


def _profile(folder, binding: str):
    (folder / "results").mkdir(parents=True)
    rows = "".join(json.dumps({"step": 50 * (i + 1), "loss": 7.0 - 0.1 * i}) + "\n" for i in range(40))
    (folder / "results" / "train_log.jsonl").write_text(rows)
    (folder / "scripts").mkdir()
    (folder / "scripts" / "train.py").write_text(_LOOP.format(binding=binding))
    return forensics.analyze(folder).run_profile


def test_an_autocast_dtype_named_by_a_variable_bound_to_bfloat16_gives_bf16(tmp_path):
    profile = _profile(tmp_path / "run", "amp_dtype = torch.bfloat16")
    assert profile.precision == "bf16"
    assert "scripts/train.py (the script that writes train_log.jsonl)" in profile.evidence["precision"]


def test_a_variable_bound_to_float16_gives_fp16(tmp_path):
    assert _profile(tmp_path / "run", "amp_dtype = torch.float16").precision == "fp16"


def test_a_variable_bound_to_a_choice_of_dtypes_stays_unsaid(tmp_path):
    # nanoGPT's `ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]`
    binding = "amp_dtype = {'bfloat16': torch.bfloat16, 'float16': torch.float16}[CFG_DTYPE]"
    assert _profile(tmp_path / "run", binding).precision == "unknown"


def test_a_variable_bound_to_two_dtypes_stays_unsaid(tmp_path):
    binding = ("amp_dtype = torch.bfloat16\n"
               "    if not torch.cuda.is_bf16_supported():\n        amp_dtype = torch.float16")
    assert _profile(tmp_path / "run", binding).precision == "unknown"


def test_a_variable_also_bound_by_unpacking_stays_unsaid(tmp_path):
    binding = "amp_dtype = torch.bfloat16\n    amp_dtype, device = torch.float16, 'cuda'"
    assert _profile(tmp_path / "run", binding).precision == "unknown"


def test_the_corpus_nmt_script_binding_amp_dtype_to_bfloat16_gives_bf16():
    # netra-ai-lab_Netra-NMT: main() binds amp_dtype = torch.bfloat16, train_one_epoch runs under autocast(amp_dtype)
    profile = forensics.analyze(REALWORLD / "netra-ai-lab_Netra-NMT").run_profile
    assert (profile.method, profile.precision) == ("full", "bf16")


def test_the_corpus_nanogpt_notebook_choosing_ptdtype_stays_unsaid():
    # rkaunismaa_KarpathyNanoGPT: `ptdtype = {...}[dtype]` picks one of three dtypes by a setting: not told here
    assert forensics.analyze(REALWORLD / "rkaunismaa_KarpathyNanoGPT").run_profile.precision == "unknown"
