"""Tests of loss files of numbers only (ingest.loss_number_files), a history table under a `#` header and an
Unsloth banner without its art (ingest.banners).

Corpus batch AS62 found unread: loss files of numbers only that only their NAME says are losses (JulesBelveze_text-
summarizer's losses.txt, Salman313ali_LLM_from_scratch's train_losses.txt / val_losses.txt, Max-An_poemGen's
loss_log.txt, HAOzj_GEC's train_loss.txt / val_loss.txt), a history table whose header starts with `#`
(danis-b_YodaGPT), and an Unsloth training banner pasted without its art, beside a loading banner's `Bfloat16 = TRUE`
(hussien_MedQA)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest import loss_number_files
from forensics.ingest.banners import find_banners
from forensics.discover.log_hints import log_hinted
from forensics.discover.loss_numbers import loss_columns, loss_file_split
from forensics.discover.run import discover

CORPUS = Path(__file__).parent / "realworld"


def _falling(n: int, start: float = 4.0, end: float = 1.5) -> list[float]:
    return [end + (start - end) * math.exp(-i / (n / 5)) for i in range(n)]


# --- loss files of numbers only -------------------------------------------------------------------------------------

def test_a_bare_number_train_and_val_file_pair_is_read_as_loss_and_eval_loss_by_line(tmp_path):
    train, held_out = _falling(40), [v + 0.05 for v in _falling(40)]
    (tmp_path / "train_losses.txt").write_text("".join(f"{v}\n" for v in train))
    (tmp_path / "val_losses.txt").write_text("".join(f"{v}\n" for v in held_out))
    layout = discover(tmp_path)
    assert [p.name for p in layout.loss_number_files] == ["train_losses.txt", "val_losses.txt"]
    a = forensics.analyze(tmp_path)
    assert a.timeline.series("loss").tolist() == pytest.approx(train)
    assert a.timeline.series("eval_loss").index.tolist() == list(range(1, 41))
    assert a.status == "healthy"


def test_a_counter_and_value_file_joined_by_an_underscore_is_read_at_its_counter(tmp_path):
    (tmp_path / "val_loss.txt").write_text("".join(f"{i}_{v}\n" for i, v in enumerate(_falling(20), start=1)))
    rec = loss_number_files.read(tmp_path / "val_loss.txt")
    assert rec.frame["metric"].unique().tolist() == ["eval_loss"]
    assert rec.frame["step"].tolist() == list(range(1, 21))


def test_a_headerless_train_eval_epoch_file_names_the_two_floats_and_takes_the_counter_as_step(tmp_path):
    rows = [f"{t}\t{e}\t{i}\n" for i, (t, e) in enumerate(zip(_falling(12), _falling(12, 3.0, 2.0)))]
    (tmp_path / "losses.txt").write_text("".join(rows))
    rec = loss_number_files.read(tmp_path / "losses.txt")
    assert sorted(rec.frame["metric"].unique()) == ["eval_loss", "loss"]
    assert rec.frame.loc[rec.frame["metric"] == "eval_loss", "value"].iloc[0] == pytest.approx(3.0)
    assert rec.frame["step"].max() == 11


def test_a_counter_that_starts_again_is_a_second_launch_the_timeline_reads_as_the_final_one(tmp_path):
    first, second = _falling(10, 6.0, 4.0), _falling(30, 4.0, 3.5)
    lines = [f"{i},{v:.4f}" for i, v in enumerate(first, start=1)] + [f"{i},{v:.4f}" for i, v in enumerate(second, 1)]
    (tmp_path / "loss_log.txt").write_text("\n".join(lines))  # no line end after the last line
    a = forensics.analyze(tmp_path)
    assert a.timeline.series("loss").iloc[0] == pytest.approx(4.0)
    assert len(a.timeline.series("loss")) == 30


def test_the_file_name_must_say_loss(tmp_path):
    (tmp_path / "values.txt").write_text("".join(f"{v}\n" for v in _falling(20)))
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


def test_a_loss_named_file_with_words_or_mixed_widths_is_not_a_loss_number_file(tmp_path):
    (tmp_path / "loss.txt").write_text("epoch 1 loss 2.3\nepoch 2 loss 2.1\nepoch 3 loss 1.9\n")
    (tmp_path / "val_loss.txt").write_text("1.5\n1,1.4\n1.3 1.2 1.1 1.0\n")
    assert discover(tmp_path).loss_number_files == []


def test_which_names_and_columns_are_taken():
    assert [loss_file_split(n) for n in ("losses.txt", "val_loss.txt", "trainloss.log", "closs.txt", "a.json")] == [
        "", "eval", "train", None, None]
    assert loss_columns([("2.0", "1.0"), ("1.5", "0.9"), ("1.2", "0.8")], "train") is None  # two losses, one split
    assert loss_columns([("1",), ("2",), ("3",)], "") is None  # a counter alone


@pytest.mark.parametrize("case, status, first", [
    ("JulesBelveze_text-summarizer", "warning", "overfitting"),
    ("Salman313ali_LLM_from_scratch", "healthy", None),
    ("Max-An_poemGen", "healthy", None),
    ("HAOzj_GEC", "healthy", None),
])
def test_the_corpus_loss_number_files_are_read(case, status, first):
    a = forensics.analyze(CORPUS / case)
    assert (a.status, a.first_incident.kind if a.first_incident else None) == (status, first)


# --- a history table's header behind a comment mark -----------------------------------------------------------------

def test_a_history_table_whose_header_starts_with_a_comment_mark_is_read(tmp_path):
    rows = [f"{i} {t} {t + 0.02}" for i, t in enumerate(_falling(30, 4.3, 1.2))]
    (tmp_path / "losses.txt").write_text("#epoch train_loss val_loss\n" + "\n".join(rows) + "\n")
    assert log_hinted((tmp_path / "losses.txt").read_bytes())
    a = forensics.analyze(tmp_path)
    assert len(a.timeline.series("eval_loss")) == 30 and a.status == "healthy"


def test_the_yoda_losses_table_is_healthy():
    assert forensics.analyze(CORPUS / "danis-b_YodaGPT").status == "healthy"


# --- Unsloth's banner without its art -------------------------------------------------------------------------------

_TRAINING_BANNER = [
    "Unsloth - 2x faster free finetuning | Num GPUs used = 1",
    "   \\\\   /|    Num examples = 7,225 | Num Epochs = 5 | Total steps = 500",
    "O^O/ \\_/ \\    Batch size per device = 4 | Gradient accumulation steps = 16",
    "\\        /    Data Parallel GPUs = 1 | Total batch size (4 x 16 x 1) = 64",
    ' "-____-"     Trainable parameters = 64,225,280 of 14,832,532,480 (0.43% trained)',
]


def test_an_unsloth_training_banner_without_its_art_gives_the_trainable_and_total_counts():
    (banner,) = find_banners(_TRAINING_BANNER)
    assert (banner.kind, banner.trainable_params, banner.all_params) == ("unsloth", 64_225_280, 14_832_532_480)


def test_the_artless_first_line_alone_is_no_banner():
    assert find_banners(["Unsloth - 2x faster free finetuning | Num GPUs used = 1", "Step 10 loss 2.1"]) == ()


def _unsloth_console(tmp_path, bf16_line: str) -> Path:
    loading = ["==((====))==  Unsloth 2025.7.4: Fast Qwen3 patching. Transformers: 4.53.2.",
               "   \\\\   /|    NVIDIA A100-SXM4-40GB. Num GPUs = 1. Max memory: 39.557 GB. Platform: Linux.",
               "O^O/ \\_/ \\    Torch: 2.6.0+cu124. CUDA: 8.0. CUDA Toolkit: 12.4. Triton: 3.2.0",
               f"\\        /    {bf16_line}. FA [Xformers = 0.0.29.post3. FA2 = False]",
               ' "-____-"     Free license: http://github.com/unslothai/unsloth']
    table = ["Step\tTraining Loss"] + [f"{10 * i}\t{v:.6f}" for i, v in enumerate(_falling(30, 2.9, 1.0), start=1)]
    path = tmp_path / "train_output.txt"
    path.write_text("\n".join(loading + _TRAINING_BANNER + table) + "\n")
    return path


def test_an_unsloth_console_with_bfloat16_true_is_profiled_bf16_lora_with_the_model_size(tmp_path):
    profile = forensics.analyze(_unsloth_console(tmp_path, "Bfloat16 = TRUE")).run_profile
    assert (profile.precision, profile.method, profile.model_params) == ("bf16", "lora", 14_832_532_480)


def test_an_unsloth_console_with_bfloat16_false_says_no_precision(tmp_path):
    assert forensics.analyze(_unsloth_console(tmp_path, "Bfloat16 = FALSE")).run_profile.precision == "unknown"
