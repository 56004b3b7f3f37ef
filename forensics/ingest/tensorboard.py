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
through tensorboard's compiled `event_pb2`, one record at a time.

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

import math
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
from ._tfrecord import ByteViews, frame_records, payload_crc_ok

FORMAT = "tensorboard"
_TEXT_SUFFIX = "/text_summary"
# Summary.Value.metadata of torch's new-style scalar: plugin_data { plugin_name: "scalars" }.
_SCALARS_META = b"\x4a\x0b\x0a\x09\x0a\x07scalars"
# Summary.Value.tensor of a scalar: dtype DT_FLOAT + packed float_val of 4 bytes / DT_DOUBLE + double_val.
_FLOAT_TENSOR = b"\x42\x08\x08\x01\x2a\x04"
_DOUBLE_TENSOR = b"\x42\x0c\x08\x02\x32\x08"


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
            if (m := _EVENT_FILE.match(f.name)) and m["writer"] == ours["writer"] and int(m["time"]) <= int(ours["time"])]
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
    """Decode all payloads: the common scalar shape at once, the rest with event_pb2; tags named as the timeline
    names them (in an `add_scalars` folder, by its split). Returns the frame, the texts, the warnings and the scalar
    tags as the file writes them."""
    fast = _fast_scalars(views, starts, lengths)
    slow_idx = np.flatnonzero(~fast.ok)
    slow = _slow_events(views, starts[slow_idx], lengths[slow_idx], slow_idx)
    record = np.concatenate([fast.record, slow["record"]])
    step = np.concatenate([fast.step, slow["step"]])
    wall = np.concatenate([fast.wall, slow["wall"]])
    value = np.concatenate([fast.value, slow["value"]])
    names = fast.names + [n for n in slow["names"] if n not in fast.names]
    code_of = {n: i for i, n in enumerate(names)}
    codes = np.concatenate([fast.codes, np.array([code_of[t] for t in slow["tags"]], dtype=np.int64)])
    if len(slow["record"]):  # interleave the slow rows back into file order
        order = np.argsort(record, kind="stable")
        step, wall, value, codes = step[order], wall[order], value[order], codes[order]
    metrics = np.array(tracker_metric_names(_add_scalars_tags(names, folder)) or [""], dtype=object)
    frame = pd.DataFrame({
        "step": step.astype(np.int64),
        "metric": metrics[codes] if len(codes) else np.array([], dtype=object),
        "value": value.astype(np.float64),
        "wall_time": wall.astype(np.float64),
    }) if len(codes) else empty_frame()
    return frame, slow["texts"], slow["warnings"], names


def _split_folder(path: Path) -> str:
    """The event file's folder name where it can name a split: an `add_scalars` folder (`loss_val`), or a writer's own
    `train/` / `val/` folder beside another split's folder (a lone `runs/test/` is a trial run's name, not a split's)."""
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
    way by its folder's name, where another split's folder sits beside it (`_split_folder`). Any other tag, or a folder whose key names no split (`loss_curve/`), keeps its
    tag."""
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


class _FastScalars:
    """The records decoded by the vectorized path: `ok` per record, and one row per ok record."""

    def __init__(self, ok, record, step, wall, value, codes, names):
        self.ok, self.record, self.step, self.wall = ok, record, step, wall
        self.value, self.codes, self.names = value, codes, names


def _fast_scalars(views: ByteViews, starts: np.ndarray, lengths: np.ndarray) -> _FastScalars:
    """Vectorized decode of `Event{wall_time, step, summary{value{tag, scalar}}}` records."""
    u8 = views.u8
    end = starts + lengths
    ok = u8[starts] == 0x09
    wall = views.f64[starts + 1]
    q = starts + 9
    has_step = u8[q] == 0x10
    step, step_len = _varints(views, q + 1)
    step = np.where(has_step, step, 0)
    # Offsets are clipped to the file size: the zero padding after it keeps gathers in bounds and
    # a clipped offset never passes the end-of-record checks below.
    q = np.minimum(np.where(has_step, q + 1 + step_len, q), views.size)
    # summary (field 5) holding exactly one value (field 1) that runs to the record's end
    ok &= (u8[q] == 0x2A) & (u8[q + 1] < 0x80) & (q + 2 + u8[q + 1] == end)
    ok &= (u8[q + 2] == 0x0A) & (u8[q + 3] < 0x80) & (q + 4 + u8[q + 3] == end)
    ok &= (u8[q + 4] == 0x0A) & (u8[q + 5] < 0x80)
    tag_start = q + 6
    tag_len = u8[q + 5].astype(np.int64)
    k = np.minimum(tag_start + tag_len, views.size)
    simple = ok & (u8[k] == 0x15) & (k + 5 == end)
    as_float = ok & _bytes_equal(views, k, _FLOAT_TENSOR) & _bytes_equal(views, k + 10, _SCALARS_META) \
        & (k + 10 + len(_SCALARS_META) == end)
    as_double = ok & _bytes_equal(views, k, _DOUBLE_TENSOR) & _bytes_equal(views, k + 14, _SCALARS_META) \
        & (k + 14 + len(_SCALARS_META) == end)
    # every record's bytes at these offsets are read as floats, most of them no float at all: a signalling-NaN
    # pattern among them raises numpy's "invalid value" warning on the cast, for values the masks then drop
    with np.errstate(invalid="ignore"):
        value = np.where(simple, views.f32[k + 1].astype(np.float64), np.nan)
        value = np.where(as_float, views.f32[k + 6].astype(np.float64), value)
    value = np.where(as_double, views.f64[k + 6], value)
    ok = simple | as_float | as_double
    rec = np.flatnonzero(ok)
    codes, names, same = _tag_codes(views, tag_start[rec], tag_len[rec])
    ok[rec[~same]] = False  # a tag the hash could not tell apart: leave it to the slow path
    rec, codes = rec[same], codes[same]
    return _FastScalars(ok, rec, step[rec], wall[rec], value[rec], codes, names)


def _bytes_equal(views: ByteViews, at: np.ndarray, pattern: bytes) -> np.ndarray:
    """Whether the bytes at each offset are `pattern` (2..16 bytes), by one or two 64-bit loads."""
    at = np.minimum(at, views.size)  # the zero padding after the file keeps every load in bounds
    head = pattern[:8]
    mask = np.uint64((1 << (8 * len(head))) - 1)
    equal = (views.u64[at] & mask) == np.uint64(int.from_bytes(head, "little"))
    if len(pattern) > 8:
        tail = pattern[-8:]  # overlaps the head when shorter than 16: still an exact test
        equal &= views.u64[at + len(pattern) - 8] == np.uint64(int.from_bytes(tail, "little"))
    return equal


def _varints(views: ByteViews, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode the protobuf varint at each offset: (value as int64, byte length 1..10).

    Byte by byte over the shrinking set of varints that go on (steps rarely need over 3 bytes).
    """
    at = np.minimum(at, views.size)
    byte = views.u8[at]
    value = (byte & 0x7F).astype(np.uint64)
    length = np.ones(len(at), dtype=np.int64)
    going = np.flatnonzero(byte >= 0x80)
    for shift in range(7, 70, 7):
        if not len(going):
            break
        byte = views.u8[np.minimum(at[going] + length[going], views.size)]
        value[going] |= (byte & 0x7F).astype(np.uint64) << np.uint64(shift)
        length[going] += 1
        going = going[byte >= 0x80]
    return value.view(np.int64), length


def _tag_codes(views: ByteViews, start: np.ndarray, length: np.ndarray):
    """Factorize the tags without making a Python string per record.

    Returns (codes into names, names in first-seen order, same): `same` is False for a record
    whose bytes differ from its group's first tag (a hash collision; practically never).
    """
    if not len(start):
        return np.zeros(0, np.int64), [], np.ones(0, bool)
    width = max(8, -(-int(length.max()) // 8) * 8)
    rows = views.rows(start, width)  # a copy: zeroing the bytes past each tag is safe
    rows[np.arange(width) >= length[:, None]] = 0
    words = rows.view("<u8")
    key = length.astype(np.uint64)
    for j in range(words.shape[1]):
        key = (key * np.uint64(0x100000001B3)) ^ words[:, j]
    codes, uniques = pd.factorize(key)
    first = np.zeros(len(uniques), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)  # first record of each code
    same = (words == words[first[codes]]).all(axis=1) & (length == length[first[codes]])
    names = [bytes(views.raw[s:s + n]).decode("utf-8", "replace")
             for s, n in zip(start[first].tolist(), length[first].tolist())]
    return codes.astype(np.int64), names, same


def _slow_events(views: ByteViews, starts: np.ndarray, lengths: np.ndarray, record_idx: np.ndarray) -> dict:
    """Decode the records of unusual shape with tensorboard's event_pb2."""
    out = {"record": [], "step": [], "wall": [], "value": [], "tags": [], "texts": {}, "warnings": []}
    if len(starts):
        from tensorboard.compat.proto import event_pb2
        from google.protobuf.message import DecodeError
        for rec, s, n in zip(record_idx.tolist(), starts.tolist(), lengths.tolist()):
            try:
                event = event_pb2.Event.FromString(views.raw[s:s + n])
            except DecodeError:
                out["warnings"].append(f"record {rec} is not a TensorBoard event; skipped")
                continue
            _collect_event(event, rec, out)
    out["record"] = np.array(out["record"], dtype=np.int64)
    out["step"] = np.array(out["step"], dtype=np.int64)
    out["wall"] = np.array(out["wall"], dtype=np.float64)
    out["value"] = np.array(out["value"], dtype=np.float64)
    out["names"] = list(dict.fromkeys(out["tags"]))
    return out


def _collect_event(event, rec: int, out: dict) -> None:
    if not event.HasField("summary"):
        return
    for val in event.summary.value:
        kind = val.WhichOneof("value")
        if kind == "simple_value":
            scalar = float(val.simple_value)
        elif kind == "tensor":
            if _is_text(val):
                _keep_text(val, out["texts"])
                continue
            scalar = _tensor_scalar(val.tensor)
            if scalar is None:
                continue
        else:
            continue
        out["record"].append(rec)
        out["step"].append(event.step)
        out["wall"].append(event.wall_time or math.nan)  # proto3 leaves an unset wall_time 0: unknown
        out["value"].append(scalar)
        out["tags"].append(val.tag)


def _is_text(val) -> bool:
    return val.metadata.plugin_data.plugin_name == "text" or val.tensor.dtype == 7  # DT_STRING


def _keep_text(val, texts: dict) -> None:
    if not val.tensor.string_val:
        return
    tag = val.tag[: -len(_TEXT_SUFFIX)] if val.tag.endswith(_TEXT_SUFFIX) else val.tag
    texts[tag] = "\n".join(s.decode("utf-8", "replace") for s in val.tensor.string_val)


# TensorProto dtype -> numpy dtype of tensor_content, for the numeric types a scalar can have.
_DTYPES = {1: "<f4", 2: "<f8", 3: "<i4", 4: "<u1", 5: "<i2", 6: "<i1", 9: "<i8", 10: "?", 14: "<u2",
           17: "<u2", 19: "<f2", 22: "<u4", 23: "<u8"}


def _tensor_scalar(tensor) -> float | None:
    """The value of a one-element numeric tensor, or None (histograms, images, empty)."""
    dims = [d.size for d in tensor.tensor_shape.dim]
    if int(np.prod(dims)) != 1:
        return None
    if tensor.tensor_content:
        dtype = _DTYPES.get(tensor.dtype)
        if dtype is None or len(tensor.tensor_content) != np.dtype(dtype).itemsize:
            return None
        raw = np.frombuffer(tensor.tensor_content, dtype=dtype)
        if tensor.dtype == 14:  # DT_BFLOAT16: the high half of a float32
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        return float(raw[0])
    for name in ("float_val", "double_val", "int_val", "int64_val", "uint32_val", "uint64_val", "bool_val"):
        vals = getattr(tensor, name)
        if len(vals):
            return float(vals[0])
    if len(tensor.half_val):  # float16 / bfloat16 bit patterns stored as int32
        bits = np.array([tensor.half_val[0]], dtype=np.uint16)
        if tensor.dtype == 14:
            return float((bits.astype(np.uint32) << 16).view(np.float32)[0])
        return float(bits.view(np.float16)[0])
    return None
