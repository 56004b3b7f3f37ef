"""training_args.bin and other torch pickles are read without running anything (FORMATS.md section 5)."""
from __future__ import annotations

import os
import pickle
import zipfile

import pytest

from forensics.errors import UnreadableFile
from forensics.ingest.training_args import read_training_args
from forensics.torchpickle import TensorPlaceholder, safe_unpickle_torch_file

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def training_args():
    return transformers.TrainingArguments(
        output_dir="/tmp/unused-forensics-out", learning_rate=3e-4, max_grad_norm=0.0, fp16=True,
        lr_scheduler_type="cosine", warmup_steps=0.05, gradient_accumulation_steps=4,
        per_device_train_batch_size=2, optim="adamw_torch", report_to=[], logging_nan_inf_filter=True,
    )


def _assert_fields(d: dict) -> None:
    assert d["__class__"] == "transformers.training_args.TrainingArguments"
    assert d["learning_rate"] == 3e-4
    assert d["max_grad_norm"] == 0.0
    assert d["fp16"] is True and d["bf16"] is False
    assert d["lr_scheduler_type"] == "cosine"  # an enum, recovered as its value
    assert d["optim"] == "adamw_torch"
    assert d["warmup_steps"] == 0.05
    assert d["gradient_accumulation_steps"] == 4
    assert d["per_device_train_batch_size"] == 2
    assert d["logging_nan_inf_filter"] is True
    assert d["deepspeed"] is None


def test_reads_zip_format_training_args(tmp_path, training_args):
    path = tmp_path / "training_args.bin"
    torch.save(training_args, path)
    assert zipfile.is_zipfile(path)
    _assert_fields(read_training_args(path))


def test_reads_legacy_format_training_args(tmp_path, training_args):
    path = tmp_path / "training_args.bin"
    torch.save(training_args, path, _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(path)
    _assert_fields(read_training_args(path))


def test_deepspeed_path_is_kept(tmp_path, training_args):
    training_args.deepspeed = "configs/ds_z2.json"  # set after init: DeepSpeed itself is not installed here
    try:
        path = tmp_path / "training_args.bin"
        torch.save(training_args, path)
        assert read_training_args(path)["deepspeed"] == "configs/ds_z2.json"
    finally:
        training_args.deepspeed = None


def test_scaler_state_and_tensors_as_placeholders(tmp_path):
    path = tmp_path / "model_states.pt"
    torch.save({"module": {"w": torch.ones(3, 2, dtype=torch.float16)}, "skipped_steps": 7, "global_steps": 40}, path)
    content = safe_unpickle_torch_file(path)
    assert content["skipped_steps"] == 7 and content["global_steps"] == 40
    tensor = content["module"]["w"]
    assert isinstance(tensor, TensorPlaceholder) and tensor.shape == (3, 2) and "Half" in tensor.dtype


class _Marker:
    """Pickles as a call that would create a marker file if the pickle were executed."""

    def __init__(self, how, marker):
        self.how, self.marker = how, str(marker)

    def __reduce__(self):
        if self.how == "os.system":
            return (os.system, (f"touch {self.marker}",))
        if self.how == "exec":
            return (exec, (f"open({self.marker!r}, 'w').close()",))
        if self.how == "eval":
            return (eval, (f"open({self.marker!r}, 'w')",))
        if self.how == "open":
            return (open, (self.marker, "w"))
        if self.how == "import":
            return (__import__, ("this",))
        raise ValueError(self.how)


@pytest.mark.parametrize("how", ["os.system", "exec", "eval", "open"])
@pytest.mark.parametrize("container", ["zip", "legacy", "plain"])
def test_malicious_pickle_runs_nothing(tmp_path, how, container):
    marker = tmp_path / "marker"
    payload = {"learning_rate": 1e-5, "evil": _Marker(how, marker)}
    path = tmp_path / "training_args.bin"
    if container == "plain":
        with open(path, "wb") as fh:
            pickle.dump(payload, fh, protocol=2)
    else:
        torch.save(payload, path, _use_new_zipfile_serialization=(container == "zip"))
    assert not marker.exists()
    content = safe_unpickle_torch_file(path)
    assert not marker.exists()
    assert content["learning_rate"] == 1e-5  # read as data: the call was recorded, never made


def test_stub_never_imports_modules(tmp_path):
    import sys
    path = tmp_path / "x.pkl"
    with open(path, "wb") as fh:
        fh.write(b"\x80\x02cforensics_not_a_module_xyz\nThing\nq\x00)\x81q\x01}q\x02X\x01\x00\x00\x00aq\x03K\x01sb.")
    content = safe_unpickle_torch_file(path)
    assert content == {"a": 1, "__class__": "forensics_not_a_module_xyz.Thing"}
    assert "forensics_not_a_module_xyz" not in sys.modules


@pytest.mark.parametrize("data, why", [
    (b"", "ran out of input"),
    (b"\x80\x02}q\x00(X\x01", "truncated"),
    (b"PK\x03\x04garbage-not-a-zip", "damaged zip archive"),
])
def test_garbage_is_unreadable(tmp_path, data, why):
    path = tmp_path / "training_args.bin"
    path.write_bytes(data)
    with pytest.raises(UnreadableFile) as err:
        read_training_args(path)
    assert err.value.path == str(path)
    assert why in err.value.reason.lower()


def test_zip_without_data_pkl_is_unreadable(tmp_path):
    path = tmp_path / "training_args.bin"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/version", "3")
    with pytest.raises(UnreadableFile, match="data.pkl"):
        read_training_args(path)


def test_plain_value_is_not_training_args(tmp_path):
    path = tmp_path / "training_args.bin"
    torch.save({"scale": 2.0}, path)
    with pytest.raises(UnreadableFile, match="TrainingArguments"):
        read_training_args(path)


def test_the_payload_would_run_under_plain_pickle(tmp_path):
    """Control: the same payload does create the marker when unpickled the ordinary way."""
    marker = tmp_path / "marker"
    data = pickle.dumps({"evil": _Marker("open", marker)}, protocol=2)
    pickle.loads(data)
    assert marker.exists()
