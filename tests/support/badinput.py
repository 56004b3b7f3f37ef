"""The bad-input corpus: damaged, cut, hostile and half-written files, made by code.

Every case starts from what a real writer produced (safetensors.numpy.save_file, torch.save,
TensorBoard's SummaryWriter and RecordWriter, json.dumps of a trainer state, HF's printed log
dicts) and then damages it the way a full disk, a killed process or a stranger would.
No binary blob is checked in.

    for case in cases():
        bad = case.make(run)            # writes the bad file into the run folder, returns its path
        re.search(case.expect, reason)  # the one line analyze gives for it

`Case.where` says where that line must appear: "skipped" (analyze's `skipped`), "config" (a
configuration file: analyze's `config_missing`) or "unchecked" (a tensor whose dtype is unknown:
the checkpoint's `unchecked_tensors`). `Case.scan` marks weight files: `forensics scan`
of that one file must exit 2 with one line on stderr.

The run the cases go into is a copy of sample_runs/nan_masked (its own files are only read, to
build damaged copies of them). Every log a case adds carries only the metric `bad_input/probe`
and TensorBoard wall times of 1970, so what was good in the run reads exactly as before.
"""
from __future__ import annotations

import io
import json
import os
import re
import struct
import tempfile
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable

import numpy as np

PROBE_TAG = "bad_input/probe"
PROBE_STEPS = (1, 2, 3, 4, 5)
CKPT = "checkpoint-70"  # a checkpoint folder after the run's last one: the run's own stay untouched
TB_DIR = "runs/bad_input"
TB_NAME = "events.out.tfevents.1000.badhost.1.0"


@dataclass(frozen=True)
class Case:
    """One bad file: `make(run)` writes it and returns its path; `expect` is a regex of its line."""

    id: str
    reader: str
    make: Callable[[Path], Path]
    expect: str
    where: str = "skipped"
    scan: bool = False


# --- real writer output, made once per process -----------------------------------------------

TENSORS = {  # two tensors of 48 bytes each (float32), so overlaps can keep byte counts right
    "model.layers.0.mlp.up_proj.weight": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
    "model.layers.0.mlp.down_proj.weight": np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3),
}


@cache
def safetensors_bytes() -> bytes:
    """A safetensors file of TENSORS as safetensors.numpy.save_file writes it."""
    from safetensors.numpy import save_file

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.safetensors")
        save_file(TENSORS, path, metadata={"format": "pt"})
        return Path(path).read_bytes()


def split_safetensors(raw: bytes) -> tuple[dict, bytes]:
    """(header as a dict, data buffer) of a safetensors file."""
    n = int.from_bytes(raw[:8], "little")
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def join_safetensors(header: dict, data: bytes, length: int | None = None) -> bytes:
    """A safetensors file from a header and a data buffer; `length` overrides the length prefix."""
    text = json.dumps(header).encode()
    return (len(text) if length is None else length).to_bytes(8, "little") + text + data


def with_tensor(header: dict, name: str, **changes) -> dict:
    """A copy of `header` with the fields of one tensor replaced."""
    out = json.loads(json.dumps(header))
    out[name].update(changes)
    return out


@cache
def torch_zip_bytes() -> bytes:
    """A state dict as torch.save writes it (zip format)."""
    import torch

    buf = io.BytesIO()
    torch.save({k: torch.from_numpy(v.copy()) for k, v in TENSORS.items()}, buf)
    return buf.getvalue()


@cache
def event_file_bytes() -> bytes:
    """A TensorBoard event file from SummaryWriter: the file_version record, then one scalar per step."""
    from torch.utils.tensorboard import SummaryWriter

    with tempfile.TemporaryDirectory() as tmp:
        writer = SummaryWriter(tmp)
        for step in PROBE_STEPS:
            writer.add_scalar(PROBE_TAG, step / 10, step, walltime=1000.0 + step)
        writer.close()
        (path,) = Path(tmp).glob("events.out.tfevents.*")
        return path.read_bytes()


def tf_records(raw: bytes) -> list[tuple[int, int]]:
    """(offset of the record, payload length) of every TFRecord in `raw`, walked by its framing."""
    out, pos = [], 0
    while pos + 12 <= len(raw):
        (length,) = struct.unpack_from("<Q", raw, pos)
        out.append((pos, length))
        pos += 16 + length
    return out


def record_bytes(payload: bytes) -> bytes:
    """One TFRecord around `payload`, framed by TensorBoard's own RecordWriter (both CRCs right)."""
    from tensorboard.summary.writer.record_writer import RecordWriter

    buf = io.BytesIO()
    RecordWriter(buf).write(payload)
    return buf.getvalue()


def header_claiming(length: int) -> bytes:
    """A TFRecord header announcing `length` payload bytes, with a correct length checksum."""
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    head = struct.pack("<Q", length)
    return head + struct.pack("<I", masked_crc32c(head))


def trainer_state_text(run: Path) -> str:
    """The run's trainer_state.json written again as TrainerState.save_to_json does."""
    state = json.loads((run / "trainer_state.json").read_text())
    return json.dumps(state, indent=2, sort_keys=True) + "\n"


def probe_lines(key: str = "step") -> list[str]:
    """JSON-lines log entries (json.dumps) holding only the probe metric."""
    return [json.dumps({key: s, "probe": s / 10}) for s in PROBE_STEPS]


def printed_history(run: Path) -> bytes:
    """The run's own log_history as HF prints it on the console (Python dict repr), with explicit steps."""
    history = json.loads((run / "trainer_state.json").read_text())["log_history"]
    lines = [f"Step: {e['step']} {({k: v for k, v in e.items() if k != 'step'})!r}" for e in history]
    return ("\n".join(lines) + "\n").encode()


# --- writing a case's file ---------------------------------------------------------------------

def _put(run: Path, rel: str, data: bytes) -> Path:
    path = run / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _writes(rel: str, data: Callable[[Path], bytes]) -> Callable[[Path], Path]:
    return lambda run: _put(run, rel, data(run))


# --- safetensors --------------------------------------------------------------------------------

ST = f"{CKPT}/model.safetensors"
UP, DOWN = list(TENSORS)


def _st(data: Callable[[], bytes]) -> Callable[[Path], Path]:
    return _writes(ST, lambda run: data())


def _st_header_len() -> int:
    return int.from_bytes(safetensors_bytes()[:8], "little")


def _st_data_len() -> int:
    return len(split_safetensors(safetensors_bytes())[1])


def _st_offsets_of(name: str) -> list[int]:
    return split_safetensors(safetensors_bytes())[0][name]["data_offsets"]


def _st_changed(name: str, **changes) -> bytes:
    header, data = split_safetensors(safetensors_bytes())
    return join_safetensors(with_tensor(header, name, **changes), data)


def _st_garbage_header() -> bytes:
    raw = safetensors_bytes()
    n = _st_header_len()
    return raw[:8] + b"\xff" * n + raw[8 + n:]


def _st_not_json_header() -> bytes:
    raw = safetensors_bytes()
    n = _st_header_len()
    return raw[:8] + b"{" + b"x" * (n - 1) + raw[8 + n:]


GROW_COLUMNS = 1024


def _by_offset() -> tuple[str, str]:
    """The two tensor names in data-buffer order."""
    header = split_safetensors(safetensors_bytes())[0]
    first, second = sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][0])
    return first, second


def _st_past_eof() -> bytes:
    """The last tensor grown by GROW_COLUMNS float32 columns: its offsets end that many bytes past the data."""
    header, data = split_safetensors(safetensors_bytes())
    last = _by_offset()[1]
    begin, end = header[last]["data_offsets"]
    rows, cols = header[last]["shape"]
    grown = with_tensor(header, last, shape=[rows, cols + GROW_COLUMNS],
                        data_offsets=[begin, end + rows * GROW_COLUMNS * 4])
    return join_safetensors(grown, data)


def _st_overlap() -> bytes:
    """The second tensor moved 8 bytes back, over the first one's tail (byte counts still right)."""
    header, data = split_safetensors(safetensors_bytes())
    second = _by_offset()[1]
    begin, end = header[second]["data_offsets"]
    return join_safetensors(with_tensor(header, second, data_offsets=[begin - 8, end - 8]), data)


def lfs_pointer(size: int = 3_856_211) -> bytes:
    """What git leaves in place of an LFS-tracked file when the clone skipped LFS (the spec's three lines)."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{'ab' * 32}\nsize {size}\n".encode()


LFS_REASON = r"a Git LFS pointer of the real 3,856,211-byte file, not the file itself .*`git lfs pull`"


def safetensors_cases() -> list[Case]:
    n, d = _st_header_len(), _st_data_len()
    first, second = _by_offset()
    first_end = _st_offsets_of(first)[1]
    grown = GROW_COLUMNS * 4 * split_safetensors(safetensors_bytes())[0][second]["shape"][0]
    return [
        Case("st_empty", "safetensors", _st(lambda: b""), r"truncated: 0 bytes, too short", scan=True),
        Case("st_lfs_pointer", "safetensors", _st(lfs_pointer), LFS_REASON, scan=True),
        Case("st_cut_in_length", "safetensors", _st(lambda: safetensors_bytes()[:5]),
             r"truncated: 5 bytes, too short", scan=True),
        Case("st_cut_in_header", "safetensors", _st(lambda: safetensors_bytes()[:8 + n // 2]),
             rf"truncated: the header needs {n} bytes but the file ends {n // 2} bytes in", scan=True),
        Case("st_cut_in_data", "safetensors", _st(lambda: safetensors_bytes()[:-10]),
             rf"truncated: the header describes {d} data bytes but the file holds {d - 10} \(10 bytes missing\)",
             scan=True),
        Case("st_wrong_magic", "safetensors", _st(lambda: torch_zip_bytes()),
             r"header length \d+ is over the 100 MB limit", scan=True),
        Case("st_header_over_100mb", "safetensors",
             _st(lambda: (200_000_000).to_bytes(8, "little") + safetensors_bytes()[8:]),
             r"header length 200000000 is over the 100 MB limit", scan=True),
        Case("st_header_past_eof", "safetensors",
             _st(lambda: (len(safetensors_bytes())).to_bytes(8, "little") + safetensors_bytes()[8:]),
             rf"truncated: the header needs {8 + n + d} bytes but the file ends {n + d} bytes in", scan=True),
        Case("st_header_garbage", "safetensors", _st(_st_garbage_header), r"header is not UTF-8", scan=True),
        Case("st_header_not_json", "safetensors", _st(_st_not_json_header), r"header is not valid JSON", scan=True),
        Case("st_header_a_list", "safetensors", _st(lambda: (6).to_bytes(8, "little") + b"[1, 2]"),
             r"header does not start with '\{'", scan=True),
        Case("st_offsets_past_eof", "safetensors", _st(_st_past_eof),
             rf"truncated: the header describes {d + grown} data bytes but the file holds {d} "
             rf"\({grown} bytes missing\)", scan=True),
        Case("st_offsets_overlap", "safetensors", _st(_st_overlap),
             rf"tensor {re.escape(second)} starts at data byte {first_end - 8}, but the tensor before it ends at "
             rf"{first_end}", scan=True),
        Case("st_shape_mismatch", "safetensors", _st(lambda: _st_changed(UP, shape=[3, 5])),
             rf"tensor {re.escape(UP)} of shape \[3, 5\] and dtype F32 needs 60 bytes but its offsets span 48",
             scan=True),
        Case("st_dtype_mismatch", "safetensors", _st(lambda: _st_changed(UP, dtype="F64")),
             rf"tensor {re.escape(UP)} of shape \[3, 4\] and dtype F64 needs 96 bytes but its offsets span 48",
             scan=True),
        Case("st_absurd_shape", "safetensors", _st(lambda: _st_changed(UP, shape=[2 ** 40, 2 ** 40])),
             rf"needs {2 ** 82} bytes but its offsets span 48", scan=True),
        Case("st_offsets_not_numbers", "safetensors", _st(lambda: _st_changed(UP, data_offsets=[True, "48"])),
             rf"tensor '{re.escape(UP)}' has data_offsets \[true|True, '48'\]", scan=True),
        Case("st_unknown_dtype", "safetensors", _st(lambda: _st_changed(UP, dtype="Q7")),
             rf"^{re.escape(UP)}$", where="unchecked"),
    ]


# --- torch files (.bin) -------------------------------------------------------------------------

BIN = f"{CKPT}/pytorch_model.bin"


def _zip_with_garbage_pickle() -> bytes:
    """torch.save's zip with its data.pkl replaced by bytes that are no pickle (valid zip framing)."""
    src = zipfile.ZipFile(io.BytesIO(torch_zip_bytes()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as out:
        for info in src.infolist():
            data = src.read(info)
            out.writestr(info, b"\xfe" * len(data) if info.filename.endswith("data.pkl") else data)
    return buf.getvalue()


def torch_cases() -> list[Case]:
    def bin_(data):
        return _writes(BIN, lambda run: data())

    # the byte torch's unpickler stops at: "v" of the LFS pointer, 0xFE of the garbage
    refused = r"torch\.load\(weights_only=True\) refused it \(Unsupported operand {}\)"
    return [
        Case("bin_empty", "torch", bin_(lambda: b""), r"damaged or truncated torch file \(EOFError\)", scan=True),
        Case("bin_cut", "torch", bin_(lambda: torch_zip_bytes()[: len(torch_zip_bytes()) // 2]),
             r"damaged or truncated torch file \(.*central directory", scan=True),
        Case("bin_wrong_magic", "torch", bin_(lambda: b"version 1 of something else\n"),
             refused.format(ord("v")), scan=True),
        Case("bin_lfs_pointer", "torch", bin_(lfs_pointer), LFS_REASON, scan=True),
        Case("bin_garbage_pickle", "torch", bin_(_zip_with_garbage_pickle), refused.format(0xFE), scan=True),
    ]


# --- TensorBoard ----------------------------------------------------------------------------------

TB = f"{TB_DIR}/{TB_NAME}"


def _tb(data: Callable[[], bytes]) -> Callable[[Path], Path]:
    return _writes(TB, lambda run: data())


def _flip(raw: bytes, at: int) -> bytes:
    return raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1:]


def _tb_third_record() -> tuple[int, int]:
    """(offset, payload length) of the third record: the file_version record, then two scalars before it."""
    return tf_records(event_file_bytes())[3]


def _tb_with_record(index: int, record: bytes) -> bytes:
    """The event file with `record` put in before record `index`."""
    raw = event_file_bytes()
    at = tf_records(raw)[index][0]
    return raw[:at] + record + raw[at:]


def tensorboard_cases() -> list[Case]:
    raw = event_file_bytes()
    size = len(raw)
    last_at, last_len = tf_records(raw)[-1]
    third_at, third_len = _tb_third_record()
    unreadable = r"not a readable TensorBoard event file: "
    return [
        Case("tb_empty", "tensorboard", _tb(lambda: b""), r"empty file: no TensorBoard record"),
        Case("tb_lfs_pointer", "tensorboard", _tb(lfs_pointer), LFS_REASON),
        Case("tb_wrong_magic", "tensorboard", _tb(lambda: safetensors_bytes()),
             unreadable + rf"broken record framing \(length checksum mismatch\) at byte 0 of "
                          rf"{len(safetensors_bytes())}$"),
        Case("tb_cut_in_first_header", "tensorboard", _tb(lambda: event_file_bytes()[:6]),
             unreadable + r"cut record header \(the file ends mid-record\) at byte 0 of 6$"),
        Case("tb_cut_last_record", "tensorboard", _tb(lambda: event_file_bytes()[:-5]),
             rf"partly read: cut last record \({last_len} bytes announced, {last_len - 1} present\) "
             rf"at byte {last_at} of {size - 5}"),
        Case("tb_payload_crc", "tensorboard", _tb(lambda: _flip(event_file_bytes(), third_at + 12 + third_len // 2)),
             rf"partly read: record 3 \(byte {third_at}\) fails its checksum; kept the 3 records before it"),
        Case("tb_length_crc", "tensorboard", _tb(lambda: _flip(event_file_bytes(), third_at)),
             rf"partly read: broken record framing \(length checksum mismatch\) at byte {third_at}"),
        Case("tb_garbage_payload", "tensorboard", _tb(lambda: _tb_with_record(2, record_bytes(b"\xff" * 24))),
             r"partly read: record 2 is not a TensorBoard event; skipped"),
        Case("tb_huge_length_first", "tensorboard", _tb(lambda: header_claiming(2 ** 60) + event_file_bytes()),
             unreadable + rf"cut last record \({2 ** 60} bytes announced, {size} present\) at byte 0 of {size + 12}$"),
        Case("tb_huge_length_inside", "tensorboard", _tb(lambda: _tb_with_record(3, header_claiming(2 ** 60))),
             rf"partly read: cut last record \({2 ** 60} bytes announced, \d+ present\) at byte {third_at}"),
    ]


# --- trainer_state.json -----------------------------------------------------------------------------

def _state(change: Callable[[dict], object]) -> Callable[[Path], Path]:
    """The run's own trainer_state.json replaced by a changed copy of itself (json.dumps)."""
    def make(run: Path) -> Path:
        state = json.loads(trainer_state_text(run))
        return _put(run, "trainer_state.json", json.dumps(change(state), indent=2).encode())
    return make


def _state_text(change: Callable[[str], bytes]) -> Callable[[Path], Path]:
    return lambda run: _put(run, "trainer_state.json", change(trainer_state_text(run)))


def _with_non_objects(state: dict) -> dict:
    state["log_history"] = state["log_history"] + ["a line of text", 42]
    return state


def trainer_state_cases() -> list[Case]:
    invalid = r"invalid JSON at line \d+ column \d+ \(.+\); the file may be cut"
    return [
        Case("ts_lfs_pointer", "trainer_state", _state_text(lambda t: lfs_pointer()), LFS_REASON),
        Case("ts_empty", "trainer_state", _state_text(lambda t: b""),
             r"invalid JSON at line 1 column 1 \(Expecting value\); the file may be cut"),
        Case("ts_cut_tail", "trainer_state", _state_text(lambda t: t[: len(t) // 2].encode()),
             r"partly read: cut mid-write \(the run may still be writing it\): read its [1-9]\d* complete "
             r"log_history entries"),
        Case("ts_not_utf8", "trainer_state",  # a latin-1 path in a string value: replaced, said, the rest read
             _state_text(lambda t: t.encode().replace(b"{", b'{"run_dir": "caf\xe9",', 1)),
             r"partly read: bytes that are not UTF-8 were replaced \(1 line\)$"),
        Case("ts_wrong_format", "trainer_state", _state_text(lambda t: b"log_history:\n- loss: 1.0\n  step: 5\n"),
             invalid),
        Case("ts_top_is_list", "trainer_state", _state(lambda s: s["log_history"]),
             r"expected a JSON object, found list\)?; not a trainer_state\.json"),
        Case("ts_history_not_list", "trainer_state", _state(lambda s: {**s, "log_history": "oops"}),
             r"'log_history' is not a list; not a trainer_state\.json"),
        Case("ts_nested_too_deep", "trainer_state",
             _state_text(lambda t: b'{"log_history": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"),
             r"JSON nested too deeply"),
        Case("ts_entries_not_objects", "trainer_state", _state(_with_non_objects),
             r"partly read: 2 log_history entries are not objects; skipped"),
    ]


# --- JSON-lines logs and console logs ---------------------------------------------------------------

def jsonl_cases() -> list[Case]:
    lines = probe_lines()
    good = "\n".join(lines) + "\n"
    cut_at = len(lines[-1]) // 2
    lf = "\n".join(probe_lines("current_steps")) + "\n"
    bad_byte_at = len(lines[0]) + 1 + 5
    return [
        Case("jsonl_empty", "jsonl", _writes("metrics.jsonl", lambda run: b""),
             r"no JSON object on any line; not a JSON-lines log"),
        Case("jsonl_not_utf8", "jsonl",
             _writes("metrics.jsonl", lambda run: good.encode()[:bad_byte_at] + b"\xff" + good.encode()[bad_byte_at:]),
             r"partly read: bytes that are not UTF-8 were replaced \(1 line\); 1 lines without a step; skipped"),
        Case("jsonl_cut_tail", "jsonl", _writes("metrics.jsonl", lambda run: good[: len(good) - 1 - cut_at].encode()),
             rf"partly read: last line \({len(lines)}\) is cut \(the run may still be writing\); dropped"),
        Case("jsonl_garbage_lines", "jsonl",
             _writes("metrics.jsonl", lambda run: "\n".join([lines[0], "\x00\x01garbage", lines[1], "[1, 2]",
                                                              *lines[2:]]).encode() + b"\n"),
             r"partly read: 2 lines are not JSON objects \(lines 2, 4\); skipped"),
        Case("jsonl_wrong_format", "jsonl", _writes("metrics.jsonl", lambda run: b"step,probe\n1,0.1\n2,0.2\n"),
             r"no JSON object on any line; not a JSON-lines log"),
        Case("llamafactory_cut_tail", "llamafactory",
             _writes("trainer_log.jsonl", lambda run: lf[: len(lf) - 4].encode()),
             rf"partly read: last line \({len(lines)}\) is cut"),
        Case("llamafactory_not_utf8", "llamafactory",
             _writes("trainer_log.jsonl", lambda run: b"\xc3\x28" + lf.encode()),
             r"partly read: bytes that are not UTF-8 were replaced \(1 line\); 1 lines are not JSON objects "
             r"\(lines 1\); skipped"),
        Case("swift_binary", "swift", _writes("logging.jsonl", lambda run: event_file_bytes()),
             r"not UTF-8 text \(byte \d+\)|no JSON object on any line"),
        Case("stdout_not_utf8", "stdout",
             _writes("train.log", lambda run: b"\xff\xfe banner \x80\x81\n" + printed_history(run)),
             r"partly read: bytes that are not UTF-8 were replaced"),
    ]


# --- configuration files ----------------------------------------------------------------------------

def _cut_copy(rel: str) -> Callable[[Path], Path]:
    """The run's own file cut to half its length."""
    def make(run: Path) -> Path:
        data = (run / rel).read_bytes()
        return _put(run, rel, data[: len(data) // 2])
    return make


def config_cases() -> list[Case]:
    return [
        Case("training_args_cut", "training_args", _cut_copy("checkpoint-60/training_args.bin"),
             r"damaged zip archive \(no central directory\); the file may be truncated", where="config"),
        Case("training_args_empty", "training_args", _writes("checkpoint-60/training_args.bin", lambda run: b""),
             r"not a readable pickle \(Ran out of input\)", where="config"),
        Case("training_args_wrong_magic", "training_args",
             _writes("checkpoint-60/training_args.bin", lambda run: (run / "checkpoint-60/config.json").read_bytes()),
             r"JSON text without TrainingArguments' fields \(no output_dir\)", where="config"),
        Case("config_json_cut", "config_json", _cut_copy("checkpoint-60/config.json"),
             r"invalid JSON at line \d+ column \d+", where="config"),
    ]


# --- the file system: loops and half-written checkpoints ---------------------------------------------

def _loop_dir(run: Path) -> Path:
    link = run / "runs" / "loop"
    link.symlink_to("..", target_is_directory=True)
    return link


def _loop_file(run: Path) -> Path:
    link = run / "runs" / "events.out.tfevents.2000.loop.1.0"
    link.symlink_to(link.name)  # points at itself: ELOOP on open
    return link


def _missing_shard(run: Path) -> Path:
    """checkpoint-70 saved as two shards + index as transformers writes it, the second shard not there yet."""
    from safetensors.numpy import save_file

    folder = run / CKPT
    folder.mkdir(parents=True, exist_ok=True)
    names = sorted(TENSORS)
    shards = {name: f"model-0000{i + 1}-of-00002.safetensors" for i, name in enumerate(names)}
    save_file({names[0]: TENSORS[names[0]]}, str(folder / shards[names[0]]), metadata={"format": "pt"})
    index = {"metadata": {"total_size": sum(v.nbytes for v in TENSORS.values())}, "weight_map": shards}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return folder / shards[names[1]]


def filesystem_cases() -> list[Case]:
    return [
        Case("symlink_loop_dir", "discover", _loop_dir, r"folder already visited \(symlink loop\?\); not read twice"),
        Case("symlink_loop_file", "tensorboard", _loop_file, r"too many levels of symbolic links"),
        Case("shard_missing_from_index", "safetensors", _missing_shard, r"no such file or directory"),
    ]


def cases() -> list[Case]:
    """Every case of the corpus (permission cases need another user: see test_bad_input.py)."""
    return (safetensors_cases() + torch_cases() + tensorboard_cases() + trainer_state_cases() + jsonl_cases()
            + config_cases() + filesystem_cases())
