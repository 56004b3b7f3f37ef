"""TensorBoard event records decoded into scalar rows and texts, for `tensorboard.read`.

The common event shape - one Summary.Value holding a tag and a float (`simple_value`, or a scalar float/double
tensor with the `scalars` plugin metadata) - is decoded for all records at once by checking its fixed field bytes
(`_fast_scalars`). Every other record (text, histograms, several values in one event, TF2 layouts) goes through
tensorboard's compiled `event_pb2`, one record at a time (`_slow_events`). What the tags mean is the reader's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._tfrecord import ByteViews

_TEXT_SUFFIX = "/text_summary"
# Summary.Value.metadata of torch's new-style scalar: plugin_data { plugin_name: "scalars" }.
_SCALARS_META = b"\x4a\x0b\x0a\x09\x0a\x07scalars"
# Summary.Value.tensor of a scalar: dtype DT_FLOAT + packed float_val of 4 bytes / DT_DOUBLE + double_val.
_FLOAT_TENSOR = b"\x42\x08\x08\x01\x2a\x04"
_DOUBLE_TENSOR = b"\x42\x0c\x08\x02\x32\x08"


@dataclass(frozen=True)
class ScalarEvents:
    """Every scalar of the records decoded, in file order: step, wall time, value and the code of its tag (an index
    into `names`, the tags as the file writes them, in first-seen order); the text summaries by tag (`/text_summary`
    cut off); why a record was skipped."""

    step: np.ndarray
    wall: np.ndarray
    value: np.ndarray
    codes: np.ndarray
    names: list[str]
    texts: dict[str, str]
    warnings: list[str]


def decode_events(views: ByteViews, starts: np.ndarray, lengths: np.ndarray) -> ScalarEvents:
    """Decode all payloads: the common scalar shape at once, the rest with event_pb2, the rows back in file order."""
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
    return ScalarEvents(step, wall, value, codes, names, slow["texts"], slow["warnings"])


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
