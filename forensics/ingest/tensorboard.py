"""Reader of TensorBoard event files (`events.out.tfevents.*`): every scalar, never downsampled.

`read(path)` returns one LogRecords: every scalar point in file order (step, canonical metric,
value, wall_time; NaN/Inf kept), both the `simple_value` form that HF's TensorBoardCallback
writes and the tensor form (`new_style=True`, TF2 summaries: float, double, half and integer
values), plus the text summaries in `texts` (`args/text_summary` -> texts["args"],
`model_config/text_summary` -> texts["model_config"], other text tags under their own name).

How it is fast (a 1M-scalar file is the benchmark in bench/ingest.py): the whole file is read
once, the record framing is found with numpy (see `_tfrecord`), and the common event shape -
one Summary.Value holding a tag and a float (`simple_value`, or a scalar float/double tensor with
the `scalars` plugin metadata) - is decoded for all records at once by checking its fixed field
bytes. Every other record (text, histograms, several values in one event, TF2 layouts) goes
through tensorboard's compiled `event_pb2`, one record at a time (both in `_tb_events`).

Keras' TensorBoard callback (`<log_dir>/train`, `<log_dir>/validation`): `epoch_loss` is the loss (eval_loss in
`validation/`) at its epoch numbered from 1, or `batch_loss` the loss where it logs batches (`_keras_callback_names`).

torch's `add_scalars("loss", {"train": .., "val": ..})` folders (`loss_train/`, `loss_val/`, each with the tag `loss`):
the loss and the eval loss by the folder's split (`_add_scalars_tags`).

A tag's per-epoch counter (its step restarting each epoch) is read as one continuous count, and a tag logged at the
epoch index beside a per-step training loss is placed on the training steps by wall time (see `event_step_axes`).

Megatron's tags and NeMo's Lightning names map onto the timeline's (`tracker_metric_names`: `lm loss`
-> loss, `grad-norm` -> grad_norm, `loss-scale` -> loss_scale, `reduced_train_loss` -> loss, the torch tutorial's
`Loss/train`, Lightning's `train_loss_step` and `lr-AdamW`, GPT-NeoX's `train/lm_loss`, OpenNMT-py's `train/xent` or a
per-step `train_loss` -> loss where no other loss is logged, OpenNMT-py's `valid/xent` -> eval_loss, ...);
Megatron's `<tag> vs samples` twins (the same values against consumed samples) are left out, and
a loss scale of 1.0 throughout (bf16/fp32: no scaler) is not kept (see `_frames`).

Checks: every record's length CRC and payload CRC are verified. A cut last record (a run still
being written) or a broken record in the middle ends the read with a note in
`warnings`; what came before is kept. A file with no readable record at all raises
UnreadableFile.
"""
from __future__ import annotations

import mmap
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import UnreadableFile
from ..metric_names import keras_metric_name, loss_of_split, tracker_metric_names
from ..timeline import LogRecords, empty_frame
from ._filetime import file_mtime
from ._frames import without_other_axis_twins, without_unit_loss_scale
from .event_step_axes import one_step_axis
from .running_means import frame_per_step
from ._tb_events import decode_events
from ._tfrecord import ByteViews, frame_records, payload_crc_ok

FORMAT = "tensorboard"


def read(path: Path) -> LogRecords:
    """Every scalar and text summary of one event file (see the module docstring).

    Returns a LogRecords with format "tensorboard"; `meta["records"]` counts the records read and
    `warnings` says why the read stopped early, when it did. Raises UnreadableFile when
    not a single record can be read.
    """
    path = Path(path)
    views = ByteViews.of_file(path)
    if not views.size:
        raise UnreadableFile(path, "empty file: no TensorBoard record in it")
    framing = frame_records(views)
    warnings = list(framing.warnings)
    starts, lengths = framing.starts, framing.lengths
    crc_ok = payload_crc_ok(views, starts, lengths)
    if not crc_ok.all():
        first_bad = int(np.argmin(crc_ok))
        warnings.append(f"record {first_bad} (byte {int(starts[first_bad]) - 12}) fails its checksum; "
                        f"kept the {first_bad} records before it")
        starts, lengths = starts[:first_bad], lengths[:first_bad]
    if not len(starts):
        reason = warnings[0] if warnings else "no TensorBoard record found"
        raise UnreadableFile(path, f"not a readable TensorBoard event file: {reason}")
    columns, texts, slow_warnings, tags = _decode(views, starts, lengths, _split_folder(path))
    columns, notes = _keras_callback_names(columns, path)
    columns = without_unit_loss_scale(without_other_axis_twins(columns))
    columns, axis_notes = one_step_axis(columns)
    notes += axis_notes
    warnings += slow_warnings
    meta = {"records": int(len(starts))}
    if hf_trainer_callback_tags(tags):
        meta["hf_callback_tags"] = True
    return LogRecords(source=str(path), format=FORMAT, frame=columns, texts=texts, meta=meta,
                      mtime=file_mtime(path), warnings=tuple(warnings), notes=notes)


# Keras' TensorBoard callback (keras/src/callbacks/tensorboard.py:215-216, 560-579) writes `<log_dir>/train` and
# `<log_dir>/validation`: `epoch_<name>` at step=epoch (from 0), the held-out logs' `val_` cut off, so `epoch_loss` in
# both folders; with `update_freq` set, also `batch_<name>` at the batch count in `train/`, and in `validation/`
# `evaluation_<name>_vs_iterations` at the optimizer's iteration count (on_test_end): the same axis as the batches.
_KERAS_FOLDERS = {"train": "", "validation": "val_"}
_KERAS_ITERATIONS = re.compile(r"^evaluation_(?P<name>.+)_vs_iterations$")


def _keras_callback_names(frame: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """A Keras callback's event file with the timeline's names: per batch where it logs batches (`batch_loss` ->
    loss; `evaluation_loss_vs_iterations` -> eval_loss), else per epoch (`epoch_loss` -> loss, or eval_loss in
    `validation/`), numbered from 1 as Keras' console numbers its epochs (`Epoch 1/10`,
    ingest.pretrain_lines.KerasEpochs). Where the batches are logged, the `epoch_` values are dropped: they count
    epochs on an axis that counts batches, and would read as a restart at step 1; and the batches' losses and
    accuracies, the epoch's running means Keras hands its callbacks, are read as the batches' own (running_means),
    with a note that says so."""
    split = _KERAS_FOLDERS.get(path.parent.name)
    metrics = set(frame["metric"])
    if split is None or "epoch_loss" not in metrics and "batch_loss" not in metrics:
        return frame, ()
    per_batch = "batch_loss" in metrics if split == "" else (
        "evaluation_loss_vs_iterations" in metrics and _keras_train_logs_batches(path))
    if per_batch and split:
        frame = _keras_epochs_on_iterations(frame)
        return frame.assign(metric=[_keras_batch_name(name, split) for name in frame["metric"]]), ()
    if per_batch:
        frame = frame[~frame["metric"].str.startswith("epoch_")]
        return frame_per_step(frame.assign(metric=[_keras_batch_name(name, split) for name in frame["metric"]]),
                              path.name)
    frame = frame.copy()
    ours = frame["metric"].str.startswith("epoch_")
    frame.loc[ours, "metric"] = [keras_metric_name(split + name[len("epoch_"):]) for name in frame.loc[ours, "metric"]]
    frame.loc[ours, "step"] += 1
    return frame, ()


_EVENT_FILE = re.compile(r"^events\.out\.tfevents\.(?P<time>\d+)\.(?P<writer>.+\.\d+)\.\d+(?:\.v2)?$")


def _keras_train_logs_batches(path: Path) -> bool:
    """Whether the `train/` events beside a `validation/` file log batches (`batch_loss`): the train file of the same
    writer process (host and pid in the name) started last before it. Keras writes its validation events on the
    iteration axis too, so they follow whichever axis the training loss is on."""
    ours = _EVENT_FILE.match(path.name)
    train = path.parent.parent / "train"
    if ours is None or not train.is_dir():
        return False
    same = [(int(m["time"]), f) for f in train.iterdir()
            if (m := _EVENT_FILE.match(f.name)) and m["writer"] == ours["writer"]
            and int(m["time"]) <= int(ours["time"])]
    if not same:
        return False
    try:  # mapped, not read: a train file full of histograms can be gigabytes, and the tag comes with its first batch
        with open(max(same, key=lambda pair: pair[0])[1], "rb") as handle, \
                mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return view.find(b"batch_loss") >= 0
    except (OSError, ValueError):  # (ValueError: an empty file cannot be mapped)
        return False


def _keras_epochs_on_iterations(frame: pd.DataFrame) -> pd.DataFrame:
    """A validation file's `epoch_<name>` rows moved to the iteration axis, where its `evaluation_loss_vs_iterations`
    points say how many iterations an epoch has (the same value at epoch e and at iteration (e + 1) x n, for one n
    over every matched pair); the iteration rows they repeat then dropped. Keras writes fewer iteration points than
    epochs at times (AxiomLM: one of three), so the epochs keep the rest. Without a consistent n, only the iteration
    rows are kept."""
    epochs = frame[frame["metric"] == "epoch_loss"]
    iterations = frame[frame["metric"] == "evaluation_loss_vs_iterations"]
    at_epoch = dict(zip(epochs["value"], epochs["step"]))
    per_epoch = {int(row.step) / (int(at_epoch[row.value]) + 1) for row in iterations.itertuples()
                 if row.value in at_epoch}
    if len(per_epoch) != 1 or not float(next(iter(per_epoch))).is_integer():
        return frame[~frame["metric"].str.startswith("epoch_")]
    n = int(next(iter(per_epoch)))
    moved = frame[frame["metric"].str.startswith("epoch_")].copy()
    moved["step"] = (moved["step"] + 1) * n
    moved["metric"] = "batch_" + moved["metric"].str[len("epoch_"):]
    kept = frame[~frame["metric"].str.startswith(("epoch_", "evaluation_"))]
    return pd.concat([kept, moved]).sort_values("step", kind="stable")


def _keras_batch_name(name: str, split: str) -> str:
    """The timeline's name of a Keras callback's per-batch tag (`batch_loss`, `evaluation_loss_vs_iterations`)."""
    if name.startswith("batch_"):
        return keras_metric_name(split + name[len("batch_"):])
    found = _KERAS_ITERATIONS.match(name)
    return keras_metric_name(split + found["name"]) if found else name


def _decode(views: ByteViews, starts: np.ndarray, lengths: np.ndarray, folder: str):
    """Decode all payloads (`_tb_events`), the tags named as the timeline names them (in an `add_scalars` folder, by
    its split). Returns the frame, the texts, the warnings and the scalar tags as the file writes them."""
    events = decode_events(views, starts, lengths)
    codes = events.codes
    metrics = np.array(tracker_metric_names(_add_scalars_tags(events.names, folder)) or [""], dtype=object)
    frame = pd.DataFrame({
        "step": events.step.astype(np.int64),
        "metric": metrics[codes] if len(codes) else np.array([], dtype=object),
        "value": events.value.astype(np.float64),
        "wall_time": events.wall.astype(np.float64),
    }) if len(codes) else empty_frame()
    return frame, events.texts, events.warnings, events.names


def _split_folder(path: Path) -> str:
    """The event file's folder name where it can name a split: an `add_scalars` folder (`loss_val`), or a writer's own
    `train/` / `val/` folder beside another split's folder (a lone `runs/test/` is a trial run's name, not a
    split's)."""
    folder = path.parent.name
    if folder.lower().startswith(_ADD_SCALARS_LOSS) or not loss_of_split(folder):
        return folder
    try:
        siblings = [p.name for p in path.parent.parent.iterdir() if p.is_dir() and p.name != folder]
    except OSError:
        return ""
    mine = loss_of_split(folder)
    return folder if any(loss_of_split(s) not in (None, mine) for s in siblings) else ""


def _add_scalars_tags(tags: list[str], folder: str) -> list[str]:
    """torch's `add_scalars(main_tag, {"train": v, "val": w})` (torch/utils/tensorboard/writer.py) writes each value
    to its own event file in `<logdir>/<main_tag>_<key>/` under the tag main_tag: a `loss` tag in a `loss_train/`
    folder is the loss, in `loss_val/` (valid, validation, eval, test) the eval loss, read as `loss/<key>`. A script
    with a writer for each split (`SummaryWriter(f"{logdir}/val")`, each `add_scalar("Loss", ...)`) is read the same
    way by its folder's name, where another split's folder sits beside it (`_split_folder`). Any other tag, or a folder
    whose key names no split (`loss_curve/`), keeps its tag."""
    key = folder[len(_ADD_SCALARS_LOSS):] if folder.lower().startswith(_ADD_SCALARS_LOSS) else folder
    if not loss_of_split(key):
        return tags
    return [f"{tag}/{key}" if tag.strip().lower() == "loss" else tag for tag in tags]


_ADD_SCALARS_LOSS = "loss_"

# transformers' TensorBoardCallback (integrations/integration_utils.py, rewrite_logs) writes each logged key as
# `train/<key>`, or `eval/<key>` / `test/<key>` for the eval_ / test_ ones, and the Trainer logs `epoch` and
# `learning_rate` with every training loss: the Trainer's own tag set (TRL's and Axolotl's trainers are Trainers).
_HF_CALLBACK_PREFIXES = ("train/", "eval/", "test/")
_HF_CALLBACK_TRAIN_TAGS = {"train/epoch", "train/learning_rate"}
# ... and train() closes with its summary (train_runtime, train_samples_per_second, ..., train_loss, epoch), the only
# scalars of a run that never reached logging_steps
_HF_CALLBACK_SUMMARY_TAGS = {"train/epoch", "train/train_runtime", "train/train_samples_per_second"}


def hf_trainer_callback_tags(tags: list[str]) -> bool:
    """Whether a file's scalar tags are the Hugging Face Trainer's TensorBoardCallback's (see above)."""
    return (_HF_CALLBACK_TRAIN_TAGS <= set(tags) or _HF_CALLBACK_SUMMARY_TAGS <= set(tags)) \
        and all(tag.startswith(_HF_CALLBACK_PREFIXES) for tag in tags)


