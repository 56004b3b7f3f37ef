"""TensorBoard's CSV downloads of a Trainer run (forensics/ingest/scalar_export.py): the Trainer named by their tag set.

TensorBoard's "download CSV" exports of a Trainer run, one tag a file (`run-<run>-tag-<tag>.csv`, each `/` of the tag
written `_`), name the Hugging Face Trainer by the TensorBoardCallback's tag set seen across the files, as the event
file itself would (corpus batch AS74: TurkHukuk_hukukbert)."""
from __future__ import annotations

import math
from pathlib import Path

import forensics
from forensics.ingest import scalar_export

CORPUS = Path(__file__).parent / "realworld"
STEPS = list(range(10, 1010, 10))


def _export(path: Path, values) -> None:
    path.write_text("Wall time,Step,Value\n" + "".join(f"{1.5e9 + s},{s},{v}\n" for s, v in zip(STEPS, values)))


def _trainer_downloads(folder: Path, run: str = ".", tags=("train_loss", "train_grad_norm", "train_learning_rate",
                                                            "train_epoch", "eval_loss (1)")) -> Path:
    """What the dashboard downloads of a TensorBoardCallback run (train/loss, train/learning_rate, train/epoch, ...);
    the browser names a second download of the same name `eval_loss (1).csv`, as in TurkHukuk_hukukbert."""
    series = {"train_loss": [1.2 + 2.0 * math.exp(-s / 200) for s in STEPS],
              "train_grad_norm": [0.6 + 0.05 * math.sin(s) for s in STEPS],
              "train_learning_rate": [5e-5 * (1 - s / 1000) for s in STEPS],
              "train_epoch": [s / 500 for s in STEPS], "eval_loss (1)": [1.1 + 2.0 * math.exp(-s / 200) for s in STEPS],
              "loss": [1.2 + 2.0 * math.exp(-s / 200) for s in STEPS], "lr": [5e-5] * len(STEPS)}
    for tag in tags:
        _export(folder / f"run-{run}-tag-{tag}.csv", series[tag])
    return folder


def test_trainer_callback_downloads_together_name_the_hf_trainer(tmp_path):
    a = forensics.analyze(_trainer_downloads(tmp_path))
    profile = a.run_profile.to_dict()
    assert profile["framework"] == "hf_trainer", profile
    assert "TensorBoardCallback" in profile["evidence"]["framework"], profile["evidence"]
    assert a.status == "healthy"


def test_each_download_of_the_run_says_it_carries_the_callback_tags(tmp_path):
    _trainer_downloads(tmp_path)
    assert scalar_export.read(tmp_path / "run-.-tag-train_loss.csv").meta.get("hf_callback_tags") is True


def test_the_closing_summary_download_is_read_as_train_slash_train_loss_not_train_train_slash_loss():
    assert scalar_export._callback_tag("train_train_loss") == "train/train_loss"
    assert scalar_export._callback_tag("train_learning_rate") == "train/learning_rate"


def test_downloads_of_other_tags_do_not_name_the_trainer(tmp_path):
    """A loop of one's own logging `loss` and `lr`: no callback tag set, no framework from the downloads."""
    a = forensics.analyze(_trainer_downloads(tmp_path, run="train", tags=("loss", "lr")))
    assert a.run_profile.framework == "unknown"
    assert "hf_callback_tags" not in scalar_export.read(tmp_path / "run-train-tag-loss.csv").meta


def test_a_tag_outside_the_callback_prefixes_beside_them_does_not_name_the_trainer(tmp_path):
    """As with an event file (hf_trainer_callback_tags): every tag must carry the callback's train/ eval/ prefixes."""
    _trainer_downloads(tmp_path, tags=("train_loss", "train_learning_rate", "train_epoch", "lr"))
    assert forensics.analyze(tmp_path).run_profile.framework == "unknown"


def test_downloads_of_two_runs_are_not_one_tag_set(tmp_path):
    _trainer_downloads(tmp_path, run="a", tags=("train_loss", "train_epoch"))
    _trainer_downloads(tmp_path, run="b", tags=("train_learning_rate",))
    assert "hf_callback_tags" not in scalar_export.read(tmp_path / "run-a-tag-train_epoch.csv").meta


def test_hand_renamed_exports_say_no_run_and_name_no_framework(tmp_path):
    """`train_epoch.csv` alone (ofrik_Seq2Seq's hand-renamed kind) is not a download name: no run, no tag set."""
    for tag in ("train_loss", "train_learning_rate", "train_epoch"):
        _export(tmp_path / f"{tag}.csv", [1.0] * len(STEPS))
    assert "hf_callback_tags" not in scalar_export.read(tmp_path / "train_epoch.csv").meta


def test_turkhukuk_hukukbert_exports_name_the_hf_trainer():
    assert forensics.analyze(CORPUS / "TurkHukuk_hukukbert").run_profile.framework == "hf_trainer"


def test_a_browser_numbered_second_download_is_read_under_its_tag(tmp_path):
    """The browser names a second download of the same file `run-.-tag-eval_loss (1).csv`: the tag is still
    eval_loss (TurkHukuk_hukukbert's only held-out series), not a metric called `eval_loss (1)`."""
    _trainer_downloads(tmp_path)
    frame = scalar_export.read(tmp_path / "run-.-tag-eval_loss (1).csv").frame
    assert set(frame["metric"]) == {"eval_loss"}


def test_the_real_trainer_downloads_give_the_eval_loss():
    frame = scalar_export.read(CORPUS / "TurkHukuk_hukukbert" / "run-.-tag-eval_loss (1).csv").frame
    assert set(frame["metric"]) == {"eval_loss"} and len(frame) > 0


def test_the_folder_is_listed_once_for_all_the_downloads_of_a_run(tmp_path, monkeypatch):
    """Each download's read asks whether its run's downloads carry the callback's tags: the folder's names are gathered
    once for them all (n downloads read, one listing), not once a file (n listings, n x n names matched)."""
    _trainer_downloads(tmp_path)
    listings = []
    glob = Path.glob
    monkeypatch.setattr(Path, "glob", lambda self, pattern: listings.append(self) or glob(self, pattern))
    downloads = sorted(tmp_path.glob("run-*-tag-*.csv"))
    listings.clear()
    said = [scalar_export.read(p).meta.get("hf_callback_tags") for p in downloads]
    assert said == [True] * len(downloads) and listings == [tmp_path]


def test_a_download_added_after_a_read_is_seen_by_the_next(tmp_path):
    """The folder's names gathered once are gathered again when a download is added there."""
    _trainer_downloads(tmp_path, tags=("train_loss", "train_epoch"))
    assert "hf_callback_tags" not in scalar_export.read(tmp_path / "run-.-tag-train_epoch.csv").meta
    _trainer_downloads(tmp_path, tags=("train_learning_rate",))
    assert scalar_export.read(tmp_path / "run-.-tag-train_epoch.csv").meta.get("hf_callback_tags") is True
