"""TensorBoard reader on files written by torch's SummaryWriter (the writer HF uses)."""
from __future__ import annotations

import math
import struct

import numpy as np
import pytest

pytest.importorskip("torch")
from torch.utils.tensorboard import SummaryWriter  # noqa: E402

from forensics.errors import UnreadableFile  # noqa: E402
from forensics.ingest import tensorboard  # noqa: E402
from forensics.ingest._tfrecord import masked_crc32c  # noqa: E402
from forensics.timeline import build_timeline  # noqa: E402


def _write(logdir, steps=range(1, 21), new_style=False, double=False, scale=1.0):
    writer = SummaryWriter(str(logdir))
    for step in steps:
        writer.add_scalar("train/loss", scale * 3.4 / step, step, new_style=new_style, double_precision=double)
        writer.add_scalar("train/grad_norm", float("nan") if step == 7 else scale * step, step, new_style=new_style)
        writer.add_scalar("train/learning_rate", scale * 2e-5, step, new_style=new_style)
    writer.close()
    return next(logdir.glob("events.out.tfevents.*"))


def _series(frame, metric):
    rows = frame[frame["metric"] == metric]
    return rows["step"].tolist(), rows["value"].to_numpy()


def test_simple_value_scalars_come_back_as_float32_with_nan(tmp_path):
    rec = tensorboard.read(_write(tmp_path))
    steps, loss = _series(rec.frame, "loss")
    assert steps == list(range(1, 21))
    assert np.array_equal(loss, np.float32([3.4 / s for s in range(1, 21)]).astype(np.float64))
    _, grad = _series(rec.frame, "grad_norm")
    assert math.isnan(grad[6]) and grad[5] == 6.0
    assert set(rec.frame["metric"]) == {"loss", "grad_norm", "learning_rate"}
    assert rec.frame["wall_time"].notna().all()
    assert rec.format == "tensorboard" and not rec.warnings


def test_tensor_form_float_and_double(tmp_path):
    rec = tensorboard.read(_write(tmp_path / "f", new_style=True))
    _, loss = _series(rec.frame, "loss")
    assert np.array_equal(loss, np.float32([3.4 / s for s in range(1, 21)]).astype(np.float64))
    rec = tensorboard.read(_write(tmp_path / "d", new_style=True, double=True))
    _, loss = _series(rec.frame, "loss")
    assert np.array_equal(loss, np.array([3.4 / s for s in range(1, 21)]))  # double keeps every bit


def test_nonfinite_and_negative_zero_and_step_zero_kept(tmp_path):
    writer = SummaryWriter(str(tmp_path))
    for step, value in enumerate([float("inf"), float("-inf"), -0.0, float("nan"), 1e30]):
        writer.add_scalar("train/loss", value, step)
    writer.close()
    rec = tensorboard.read(next(tmp_path.glob("events.*")))
    assert rec.frame["step"].tolist() == [0, 1, 2, 3, 4]
    v = rec.frame["value"].to_numpy()
    assert v[0] == math.inf and v[1] == -math.inf and v[2] == 0.0 and math.copysign(1, v[2]) == -1
    assert math.isnan(v[3]) and v[4] == float(np.float32(1e30))


def test_text_summaries_go_to_texts(tmp_path):
    writer = SummaryWriter(str(tmp_path))
    writer.add_text("args", '{\n  "learning_rate": 0.0003\n}')
    writer.add_text("model_config", '{"torch_dtype": "float16"}')
    writer.add_text("notes", "héllo")
    writer.add_scalar("train/loss", 1.0, 1)
    writer.close()
    rec = tensorboard.read(next(tmp_path.glob("events.*")))
    assert rec.texts == {"args": '{\n  "learning_rate": 0.0003\n}', "model_config": '{"torch_dtype": "float16"}',
                         "notes": "héllo"}
    assert rec.frame["metric"].tolist() == ["loss"]


def test_large_steps_and_many_tags_keep_file_order(tmp_path):
    writer = SummaryWriter(str(tmp_path))
    expected = []
    for i, step in enumerate([5, 300, 70000, 2**40]):
        for tag in ("train/a", "eval/b", "train/" + "x" * 100):
            writer.add_scalar(tag, float(i), step)
            expected.append((step, tag))
    writer.add_scalar("train/epoch", 1.0, 2**40)  # duplicate (step, tag) as HF's eval logs give
    writer.close()
    rec = tensorboard.read(next(tmp_path.glob("events.*")))
    names = {"train/a": "a", "eval/b": "eval_b", "train/" + "x" * 100: "x" * 100}
    got = list(zip(rec.frame["step"], rec.frame["metric"]))
    assert got[:-1] == [(s, names[t]) for s, t in expected] and got[-1] == (2**40, "epoch")


def _records(path):
    data = path.read_bytes()
    out, pos = [], 0
    while pos < len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        out.append((pos, n))
        pos += n + 16
    return data, out


def test_cut_last_record_is_a_warning_not_an_error(tmp_path):
    path = _write(tmp_path)
    data, recs = _records(path)
    path.write_bytes(data[:-7])
    rec = tensorboard.read(path)
    assert "cut" in rec.warnings[0]
    assert len(rec.frame) == 20 * 3 - 1  # only the last scalar is lost


def test_broken_record_in_the_middle_keeps_what_came_before(tmp_path):
    path = _write(tmp_path)
    data, recs = _records(path)
    pos, _ = recs[31]  # record 0 is file_version; record 31 is step 11's first scalar
    broken = bytearray(data)
    broken[pos + 8] ^= 0xFF  # its length checksum
    path.write_bytes(bytes(broken))
    rec = tensorboard.read(path)
    assert len(rec.frame) == 30 and "checksum" in rec.warnings[0]


def test_payload_checksum_mismatch_stops_there(tmp_path):
    path = _write(tmp_path)
    data, recs = _records(path)
    pos, n = recs[10]
    broken = bytearray(data)
    broken[pos + 12 + n - 1] ^= 0x01  # last payload byte (part of the float)
    path.write_bytes(bytes(broken))
    rec = tensorboard.read(path)
    assert len(rec.frame) == 9 and "checksum" in rec.warnings[0]


def test_event_without_wall_time_is_still_found(tmp_path):
    """An Event whose payload does not start with wall_time is reached by the chain walk."""
    path = _write(tmp_path, steps=range(1, 3))
    data, _ = _records(path)
    # Event{step: 9, summary{value{tag: "train/loss", simple_value: 0.5}}} with no wall_time
    value = b"\x0a\x0atrain/loss\x15" + struct.pack("<f", 0.5)
    payload = b"\x10\x09\x2a" + bytes([len(value) + 2]) + b"\x0a" + bytes([len(value)]) + value
    header = struct.pack("<Q", len(payload))
    record = header + struct.pack("<I", masked_crc32c(header)) + payload + struct.pack("<I", masked_crc32c(payload))
    path.write_bytes(data + record)
    rec = tensorboard.read(path)
    assert rec.frame.iloc[-1][["step", "metric", "value"]].tolist() == [9, "loss", 0.5]
    assert math.isnan(rec.frame.iloc[-1]["wall_time"])


@pytest.mark.parametrize("content", [b"", b"not a tensorboard file at all, just text\n" * 3])
def test_garbage_or_empty_file_is_unreadable(tmp_path, content):
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(content)
    with pytest.raises(UnreadableFile):
        tensorboard.read(path)


def test_several_files_after_a_resume_make_two_segments(tmp_path):
    first = _write(tmp_path / "run1", steps=range(1, 21))
    second = _write(tmp_path / "run2", steps=range(11, 31), scale=2.0)  # the resumed attempt logs other values
    timeline = build_timeline([tensorboard.read(first), tensorboard.read(second)])
    loss = timeline.series("loss")
    assert loss.index.tolist() == list(range(1, 31))
    assert loss[15] == np.float32(2.0 * 3.4 / 15) and loss[5] == np.float32(3.4 / 5)
    assert timeline.frame["abandoned"].sum() == 10 * 3  # steps 11-20 of the first run
