"""The training precision a Markdown report the run wrote beside its metric log names in a field ("| precision | bf16
|", "- **Precision**: FP16") is read where nothing else says one (wu-tian807_mamba2exploration's
logs/training_report.md, Cyberdude441_CyberQwen-AI's logs/TRAINING_COMPLETION_REPORT.md); prose, two precisions, a
field that says more than the precision, a report in a folder that holds no log and the run's own flag set false say
nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from support.trainer_state_files import falling_loss_profile
from forensics.ingest.report_precision import report_precision

REALWORLD = Path(__file__).parent / "realworld"


@pytest.mark.parametrize("text, precision", [
    ("## 训练超参\n\n| 参数 | 值 |\n|------|----|\n| seq_len | 1024 |\n| precision | bf16 |\n", "bf16"),
    ("## Hyperparameters\n- **Epochs**: 3\n- **Precision**: FP16\n", "fp16"),
    ("- **Precision:** bf16\n", "bf16"),
    ("Training precision: fp32\n", "fp32"),
    ("| **Precision** | `bf16` |\n", "bf16"),
])
def test_a_precision_field_is_read(text, precision):
    assert report_precision(text)[0] == precision


@pytest.mark.parametrize("text", [
    "We trained in bf16 mixed precision.\n",  # prose is the README reader's, not a field
    "- **Precision**: bf16 recommended, fp16 on older GPUs\n",  # the field says more than the precision
    "| precision | bf16 |\n| precision | fp16 |\n",  # two runs' rows: which is the log's is not said
    "- Precision: auto\n",  # a setting resolved elsewhere names none
    "- mixed_precision: no\n",
    "# Report\nFinal loss 1.23\n",
])
def test_no_precision_where_no_field_names_one_alone(text):
    assert report_precision(text) is None


def test_a_report_beside_the_log_gives_the_precision(tmp_path):
    profile = falling_loss_profile(tmp_path, training_report__md="| 参数 | 值 |\n|---|---|\n| precision | bf16 |\n")
    assert profile.precision == "bf16", profile.evidence
    assert "training_report.md" in profile.evidence["precision"]


def test_a_report_in_a_folder_without_a_log_says_nothing(tmp_path):
    (tmp_path / "docs").mkdir(parents=True)
    (tmp_path / "docs" / "report.md").write_text("| precision | bf16 |\n")  # another run's, or a plan
    assert falling_loss_profile(tmp_path).precision == "unknown"


def test_a_readme_or_changelog_is_no_report(tmp_path):
    assert falling_loss_profile(tmp_path, CHANGELOG__md="- precision: fp16\n").precision == "unknown"


def test_the_runs_own_flag_set_false_outranks_the_report(tmp_path):
    profile = falling_loss_profile(tmp_path, report__md="- **Precision**: bf16\n",
                                   training_args__yaml="bf16: false\nlearning_rate: 0.0002\n")
    assert profile.precision == "unknown", profile.evidence


@pytest.mark.parametrize("case, precision", [("wu-tian807_mamba2exploration", "bf16"),
                                             ("Cyberdude441_CyberQwen-AI", "fp16")])
def test_real_reports(case, precision):
    assert forensics.analyze(REALWORLD / case).run_profile.precision == precision
