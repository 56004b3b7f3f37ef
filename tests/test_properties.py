"""Property tests of the parsers: whatever the bytes, only our own errors, and memory bounded by the file.

Hypothesis builds safetensors headers, TensorBoard files and trainer_state documents - made up
from scratch, or real writer output (tests/support/badinput.py) with bytes flipped, cut, inserted and
size fields set to absurd values - and checks that each reader either returns or raises a
ForensicsError, and that tracemalloc's peak while reading stays a small multiple of the file
size: a reader that allocated what a size field claims (2**60 bytes) would fail here or die.
"""
from __future__ import annotations

import json
import math
import shutil
import sys
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from forensics.checkpoints.dtypes import DTYPES, Scratch
from forensics.checkpoints.safetensors_file import SafetensorsFile
from forensics.errors import ForensicsError
from forensics.ingest import tensorboard, trainer_state

sys.path.insert(0, str(Path(__file__).parent))
from support import badinput  # noqa: E402

pytest.importorskip("torch")  # the TensorBoard seed file comes from torch's SummaryWriter

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
BASE_BYTES = 1 << 20  # interpreter noise, pandas frames of a few rows, a 4 KB scratch
_DIR = Path(tempfile.mkdtemp(prefix="forensics-props-"))  # hypothesis tests cannot take tmp_path


@pytest.fixture(scope="module", autouse=True)
def _remove_dir():
    yield
    shutil.rmtree(_DIR, ignore_errors=True)


def _write(name: str, data: bytes) -> Path:
    path = _DIR / name
    path.write_bytes(data)
    return path


def _peak_of(read, path: Path) -> int:
    """Run `read(path)`; our errors are an answer, any other exception fails the test. Returns the peak bytes."""
    tracemalloc.start()
    try:
        read(path)
    except ForensicsError:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def _assert_bounded(peak: int, path: Path, per_byte: int) -> None:
    size = path.stat().st_size
    assert peak < BASE_BYTES + per_byte * size, f"peak {peak} bytes reading a {size}-byte file"


# --- mutations of real writer output ------------------------------------------------------------

huge = st.sampled_from([2 ** 31, 2 ** 32 - 1, 2 ** 60, 2 ** 63 - 1, 2 ** 64 - 1, 10 ** 8 + 1])


@st.composite
def mutated(draw, raw: bytes) -> bytes:
    """`raw` with a few flipped bytes, a cut, an insertion or a size field set to a huge value."""
    data = bytearray(raw)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "huge64", "huge32"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif op == "cut":
            del data[at:]
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif op == "huge64":
            data[at:at + 8] = draw(huge).to_bytes(8, "little")
        else:
            data[at:at + 4] = (draw(huge) & 0xFFFFFFFF).to_bytes(4, "little")
    return bytes(data)


# --- safetensors ------------------------------------------------------------------------------------

def read_safetensors(path: Path) -> None:
    """Open the file and read every tensor it claims to the end, in 4 KB chunks."""
    scratch = Scratch(4096)
    with SafetensorsFile(path) as wf:
        for entry in wf.entries:
            if entry.info is not None:
                for bits in wf.chunks(entry, 0, entry.numel, scratch):
                    assert bits.nbytes <= 4096


json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2 ** 70), 2 ** 70), st.floats(), st.text(max_size=8))
json_value = st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)
count = st.one_of(st.integers(0, 64), huge, st.integers(-5, -1), st.booleans(), st.floats(0, 100))
tensor_spec = st.fixed_dictionaries(
    {},
    optional={
        "dtype": st.one_of(st.sampled_from(sorted(DTYPES) + ["Q7", "", "f32", "BF16 "]), json_scalar),
        "shape": st.one_of(st.lists(count, max_size=4), json_value),
        "data_offsets": st.one_of(st.lists(count, min_size=2, max_size=2), st.lists(count, max_size=3), json_value),
    },
)
headers = st.dictionaries(st.text(min_size=1, max_size=12), st.one_of(tensor_spec, json_value), max_size=5)


@SETTINGS
@given(header=headers, data=st.binary(max_size=256),
       length=st.one_of(st.none(), st.integers(0, 2 ** 64 - 1), huge))
@example(header={"w": {"dtype": "F32", "shape": [2 ** 58], "data_offsets": [0, 2 ** 60]}}, data=b"\0" * 16,
         length=None)  # claims a 2**60-byte tensor
@example(header={"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, data=b"\0" * 16,
         length=2 ** 60)  # claims a 2**60-byte header
def test_made_up_safetensors_headers_raise_only_our_errors(header, data, length):
    text = json.dumps(header, allow_nan=True).encode()
    raw = (len(text) if length is None else length).to_bytes(8, "little") + text + data
    path = _write("made_up.safetensors", raw)
    _assert_bounded(_peak_of(read_safetensors, path), path, per_byte=16)


@SETTINGS
@given(raw=mutated(badinput.safetensors_bytes()))
def test_mutated_safetensors_files_raise_only_our_errors(raw):
    path = _write("mutated.safetensors", raw)
    _assert_bounded(_peak_of(read_safetensors, path), path, per_byte=16)


def test_a_header_claiming_a_huge_tensor_is_refused_without_allocating_it():
    header = {"w": {"dtype": "F32", "shape": [2 ** 58], "data_offsets": [0, 2 ** 60]}}
    text = json.dumps(header).encode()
    path = _write("claims_2_60.safetensors", len(text).to_bytes(8, "little") + text + b"\0" * 16)
    with pytest.raises(ForensicsError, match=rf"describes {2 ** 60} data bytes but the file holds 16"):
        read_safetensors(path)
    assert _peak_of(read_safetensors, path) < BASE_BYTES


# --- TensorBoard -----------------------------------------------------------------------------------

def read_events(path: Path) -> None:
    rec = tensorboard.read(path)
    frame = rec.frame
    assert list(frame.columns[:4]) == ["step", "metric", "value", "wall_time"]
    assert frame["step"].dtype == np.int64 and frame["value"].dtype == np.float64


def _event_file_with_text() -> bytes:
    """The probe event file plus a record of another shape (a text summary), so both decoders run."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.compat.proto.tensor_pb2 import TensorProto

    value = summary_pb2.Summary.Value(tag="args/text_summary", tensor=TensorProto(dtype=7, string_val=[b"{}"]))
    value.metadata.plugin_data.plugin_name = "text"
    event = event_pb2.Event(wall_time=1000.0, step=1, summary=summary_pb2.Summary(value=[value]))
    return badinput.event_file_bytes() + badinput.record_bytes(event.SerializeToString())


EVENTS = _event_file_with_text()
N_RECORDS = len(badinput.tf_records(EVENTS))


@SETTINGS
@given(raw=mutated(EVENTS))
@example(raw=badinput.header_claiming(2 ** 60) + EVENTS)
@example(raw=EVENTS[:200] + badinput.header_claiming(2 ** 63 - 1) + EVENTS[200:])
def test_mutated_event_files_raise_only_our_errors(raw):
    path = _write("events.out.tfevents.1.mutated", raw)
    _assert_bounded(_peak_of(read_events, path), path, per_byte=64)


@st.composite
def event_files(draw) -> bytes:
    """Records in valid framing (TensorBoard's RecordWriter) holding made-up payloads, real ones between."""
    real = [EVENTS[at:at + 16 + n] for at, n in badinput.tf_records(EVENTS)]
    out = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            out.append(draw(st.sampled_from(real)))
        else:
            payload = draw(st.one_of(st.binary(max_size=64),
                                     st.binary(max_size=48).map(lambda b: b"\x09" + b"\0" * 8 + b)))
            out.append(badinput.record_bytes(payload))
    return b"".join(out)


@SETTINGS
@given(raw=event_files())
def test_made_up_event_records_raise_only_our_errors(raw):
    path = _write("events.out.tfevents.1.made_up", raw)
    _assert_bounded(_peak_of(read_events, path), path, per_byte=64)


def test_a_record_claiming_a_huge_length_is_not_allocated():
    path = _write("events.out.tfevents.1.huge", badinput.header_claiming(2 ** 60) + b"\0" * 64)
    with pytest.raises(ForensicsError, match=rf"{2 ** 60} bytes announced, 64 present"):
        read_events(path)
    assert _peak_of(read_events, path) < BASE_BYTES


# --- trainer_state.json -------------------------------------------------------------------------------

metric_keys = st.one_of(st.sampled_from(["step", "loss", "grad_norm", "learning_rate", "eval_loss", "epoch",
                                         "train_loss", "total_flos"]), st.text(max_size=8))
metric_values = st.one_of(st.floats(), st.integers(-(2 ** 80), 2 ** 80), st.booleans(), st.none(),
                          st.text(max_size=6), json_value)
entries = st.one_of(st.dictionaries(metric_keys, metric_values, max_size=6), json_value)
states = st.fixed_dictionaries(
    {},
    optional={
        "log_history": st.one_of(st.lists(entries, max_size=12), json_value),
        "global_step": st.one_of(st.integers(-(2 ** 70), 2 ** 70), json_value),
        "logging_steps": st.one_of(st.integers(-(2 ** 70), 2 ** 70), huge, json_value),
        "max_steps": json_value, "best_metric": json_value, "epoch": json_value,
    },
)


def read_state(path: Path) -> None:
    rec = trainer_state.read(path)
    assert rec.frame["step"].dtype == np.int64 and rec.frame["value"].dtype == np.float64
    assert len(rec.frame) <= path.stat().st_size  # at most one row per number written


@SETTINGS
@given(state=states)
@example(state={"logging_steps": 2 ** 62, "log_history": [{"loss": 1.0}] * 3})  # steps from position x huge
@example(state={"log_history": [{"step": 2 ** 70, "loss": math.inf}, {"step": -(2 ** 63), "loss": 1e308}]})
def test_made_up_trainer_states_raise_only_our_errors(state):
    path = _write("trainer_state.json", json.dumps(state, allow_nan=True).encode())
    _assert_bounded(_peak_of(read_state, path), path, per_byte=64)


def _real_state_text() -> bytes:
    history = [{"epoch": s / 60, "grad_norm": 1.0 / s, "learning_rate": 3e-3 * (1 - s / 60), "loss": 4.0 - s / 30,
                "step": s} for s in range(5, 65, 5)]
    history[-2]["grad_norm"] = math.nan
    state = {"global_step": 60, "logging_steps": 5, "max_steps": 60, "log_history": history}
    return (json.dumps(state, indent=2, sort_keys=True) + "\n").encode()  # as TrainerState.save_to_json


@SETTINGS
@given(raw=mutated(_real_state_text()))
def test_mutated_trainer_state_files_raise_only_our_errors(raw):
    path = _write("trainer_state.json", raw)
    _assert_bounded(_peak_of(read_state, path), path, per_byte=64)


def test_the_seed_files_read_cleanly():
    """The unmutated seeds are valid, so the mutations above start from real, readable files."""
    read_safetensors(_write("seed.safetensors", badinput.safetensors_bytes()))
    rec = tensorboard.read(_write("events.out.tfevents.1.seed", EVENTS))
    assert rec.meta["records"] == N_RECORDS and not rec.warnings
    assert rec.frame["value"].tolist() == pytest.approx([s / 10 for s in badinput.PROBE_STEPS])
    assert rec.texts == {"args": "{}"}
    assert trainer_state.read(_write("trainer_state.json", _real_state_text())).frame["step"].max() == 60

