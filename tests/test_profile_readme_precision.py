"""The training precision a README states in so many words ("BF16 mixed precision", "| Precision | bf16 |",
`autocast(bfloat16)`) is read where nothing in the run's own files says one (alanyangrice_tiny-gpt,
jiazhe868_nanogpt-seis, ruapotato_NullRoot); a README that names the other half type anywhere, only a word, or the
model card template's HTML comment listing every regime says nothing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import forensics
from support.trainer_state_files import falling_loss_profile
from forensics.ingest.readme_precision import precision_stated

REALWORLD = Path(__file__).parent / "realworld"


@pytest.mark.parametrize("text, precision", [
    ("## Training\n- **BF16 mixed precision** via `torch.amp.autocast`\n", "bf16"),
    ("Trained with mixed precision (fp16) on a T4.\n", "fp16"),
    ("**bf16** autocast halves memory and doubles throughput\n", "bf16"),
    ("Trained with bf16 mixed precision.\n\nWith fp32 master weights and fused AdamW: 0.45 GB\n", "bf16"),
    ("```python\nwith autocast(bfloat16):\n    loss = model(x, y)\n```\n", "bf16"),
    ("| Setting | Value |\n|---|---|\n| Precision | bf16 |\n", "bf16"),
    ("| Precision | fp32 |\n", "fp32"),
    ("使用 BF16 混合精度\n", "bf16"),
])
def test_a_precision_stated_in_so_many_words_is_read(text, precision):
    assert precision_stated(text)[0] == precision


@pytest.mark.parametrize("text", [
    "- GPU: RTX 4060 (bf16 + flash-attention capable)\n",  # a word alone: what the GPU can do
    "- **Training regime:** [More Information Needed] <!--fp32, fp16 mixed precision, bf16 mixed precision, bf16 "
    "non-mixed precision, fp16 non-mixed precision, fp8 mixed precision -->\n",  # the card template's comment
    "BERT: AMP(FP16). DeBERTa: BF16 混合精度 (DeBERTa-v3 does not take FP16)\n",  # two runs, two precisions
    "bf16 mixed precision on the A100, fp16 mixed precision on the T4\n",
    "| Precision | fp32 |\nWe tried bf16 too.\n",
    "# My model\nTrained for 3 epochs.\n",
])
def test_no_precision_where_the_readme_does_not_state_one_alone(text):
    assert precision_stated(text) is None


@pytest.mark.parametrize("text", [
    "Use `--bf16` to enable BF16 mixed precision.\n",
    "Supports bf16 mixed precision.\n",
    "If your GPU supports it, set bf16 mixed precision.\n",
    "We compare BF16 mixed precision against fp32.\n",
    "We recommend bf16 mixed precision; the released model was trained in fp32.\n",
    "**bf16** autocast halves memory and doubles throughput vs fp32\n",  # a comparison
    "Trained with bf16 mixed precision.\n\nThe released model was trained in fp32.\n",  # fp32 said as a regime too
    "| Precision | bf16 |\n\nFull precision training gave the same loss.\n",
])
def test_no_precision_where_the_readme_offers_advises_or_compares_it(text):
    assert precision_stated(text) is None


def test_a_long_run_of_underscores_is_read_in_linear_time():
    """40,000 underscores (a markdown rule or a padded table drawn long) before a stated precision: the old unbounded
    `[*_`]*` mark backtracked quadratically over them (84 s measured for this size on the old pattern, hours at
    1 MiB), the bounded one reads it in ~0.02 s. No timed assert: on the old pattern this test hangs past any
    patience rather than fails, and asserts the same result once done."""
    readme = "_" * 40_000 + "\nTrained with bf16 mixed precision.\n"
    assert precision_stated(readme) == ("bf16", "bf16 mixed precision")


def _run(tmp_path, readme: str | None, args: dict | None = None):
    files = {"README__md": readme} if readme is not None else {}
    if args is not None:
        files["args__json"] = json.dumps(args)  # (ms-swift's arguments file)
    return falling_loss_profile(tmp_path, **files)


def test_the_readme_gives_the_precision_nothing_else_says(tmp_path):
    profile = _run(tmp_path, "# tiny-gpt\n\n- **BF16 mixed precision** via `torch.amp.autocast`\n")
    assert profile.precision == "bf16", profile.evidence
    assert "README.md" in profile.evidence["precision"] and "BF16 mixed precision" in profile.evidence["precision"]


def test_the_runs_own_flag_set_false_outranks_the_readme(tmp_path):
    # review 31's repro: `bf16: false` (fp16 unset) in the run's training_args.yaml beside a README's "bf16 mixed
    # precision" read bf16; the flag TrainingArguments read is the run's, the README's sentence is not
    profile = falling_loss_profile(tmp_path / "yaml", README__md="Trained with bf16 mixed precision.\n",
                                   training_args__yaml="bf16: false\nlearning_rate: 0.0002\n")
    assert profile.precision == "unknown", profile.evidence
    profile = _run(tmp_path / "args", "Trained with bf16 mixed precision.\n", {"bf16": False})
    assert profile.precision == "unknown", profile.evidence


def test_no_readme_no_precision(tmp_path):
    assert _run(tmp_path, None).precision == "unknown"


def test_a_readme_that_names_both_half_types_gives_none(tmp_path):
    assert _run(tmp_path, "bf16 mixed precision on an A100; fp16 on a T4\n").precision == "unknown"


def test_the_runs_own_flags_outrank_the_readme(tmp_path):
    profile = _run(tmp_path, "Trained in bf16 mixed precision.\n", {"fp16": True, "bf16": False})
    assert profile.precision == "fp16", profile.evidence


@pytest.mark.parametrize("case, precision", [("alanyangrice_tiny-gpt", "bf16"), ("jiazhe868_nanogpt-seis", "bf16"),
                                             ("yurihuruitao_CBS5502", "unknown")])
def test_real_readmes(case, precision):
    """yurihuruitao's README gives BERT and RoBERTa AMP(FP16), DeBERTa BF16: which is the log's is not read, so none."""
    assert forensics.analyze(REALWORLD / case).run_profile.precision == precision
