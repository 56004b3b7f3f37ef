"""No code execution from data: pickles whose __reduce__ would create a marker file.

The payloads call os.system, builtins.exec, builtins.eval and subprocess.call, each written with
pickle (protocols 2 and 4) and with torch.save (zip and legacy formats), and are placed where a
run keeps pickles: a .bin and a .pt weight file, training_args.bin, a DeepSpeed
`*model_states.pt` and `*optim_states.pt`, scaler.pt, optimizer.pt. `analyze`, `scan` and each
reader must read or refuse them with the marker never created; a control test shows that the
same files do create it when loaded the unsafe way, so the absence means something.
"""
from __future__ import annotations

import builtins
import os
import pickle
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import forensics
from forensics.checkpoints.torch_file import TorchFile
from forensics.torchpickle import read_deepspeed_counters
from forensics.cli import cli
from forensics.errors import ForensicsError, UnreadableFile
from forensics import torchpickle
from forensics.ingest import config_files, training_args

torch = pytest.importorskip("torch")

SAMPLE = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
pytestmark = pytest.mark.filterwarnings("ignore:Detected pickle protocol 4:UserWarning")


class Reduce:
    """An object that pickles as the call `fn(*args)`: what a malicious file holds."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def payload(kind: str, marker: Path) -> Reduce:
    return {
        "os_system": Reduce(os.system, f"touch '{marker}'"),
        "exec": Reduce(builtins.exec, f"open({str(marker)!r}, 'w').close()"),
        "eval": Reduce(builtins.eval, f"open({str(marker)!r}, 'w').close()"),
        "subprocess": Reduce(subprocess.call, ["touch", str(marker)]),
    }[kind]


KINDS = ["os_system", "exec", "eval", "subprocess"]
WRITERS = ["pickle2", "pickle4", "torch_zip", "torch_legacy"]


def write(path: Path, obj, writer: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if writer.startswith("pickle"):
        with open(path, "wb") as fh:
            pickle.dump(obj, fh, protocol=int(writer[-1]))
    else:
        torch.save(obj, path, _use_new_zipfile_serialization=writer == "torch_zip")
    return path


# Where a run keeps pickles, and what each holds around the payload.
def hostile_files(run: Path, evil: Reduce, writer: str) -> dict[str, Path]:
    tensor = {"model.layers.0.mlp.up_proj.weight": torch.zeros(2, 2)}
    files = {
        "bin": (run / "checkpoint-70" / "pytorch_model.bin", {**tensor, "evil": evil}),
        "pt": (run / "checkpoint-80" / "model.pt", evil),
        "training_args": (run / "checkpoint-20" / "training_args.bin", evil),
        "model_states": (run / "checkpoint-90" / "global_step90" / "mp_rank_00_model_states.pt",
                         {"module": tensor, "skipped_steps": 3, "global_steps": 90, "evil": evil}),
        "optim_states": (run / "checkpoint-90" / "global_step90" / "zero_pp_rank_0_mp_rank_00_optim_states.pt",
                         {"optimizer_state_dict": evil}),
        "scaler": (run / "checkpoint-60" / "scaler.pt", {"scale": evil}),
        "optimizer": (run / "checkpoint-60" / "optimizer.pt", evil),
    }
    return {name: write(path, obj, writer) for name, (path, obj) in files.items()}


@pytest.fixture
def marker(tmp_path) -> Path:
    path = tmp_path / "MARKER"
    yield path
    assert not path.exists(), "a pickle was executed"


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("kind", KINDS)
def test_analyze_runs_nothing_from_hostile_pickles(kind, writer, tmp_path, marker):
    run = Path(shutil.copytree(SAMPLE, tmp_path / "run"))
    files = hostile_files(run, payload(kind, marker), writer)
    d = forensics.analyze(run, workers=1).to_dict()
    assert not marker.exists()
    skipped = {Path(s["path"]).resolve(): s["reason"] for s in d["skipped"]}
    for name in ("bin", "pt", "model_states"):  # weight files: torch.load(weights_only=True) refuses them
        if name == "model_states" and writer == "torch_zip":
            continue  # read with inert stand-ins for its globals (checkpoints/inert_load.py): nothing ran
        assert "weights_only=True) refused it" in skipped[files[name].resolve()], (name, d["skipped"])
    missing = {line.split(": ", 1)[0]: line for line in d["config_missing"]}
    for name in ("training_args", "scaler"):  # config pickles: read inertly, then refused as not what they claim
        assert str(files[name].relative_to(run)) in missing, (name, d["config_missing"])
    # the optimizer states are read inertly too: the payload is a string there, with nothing to record
    ds = next(c for c in d["checkpoints"] if c["name"] == "checkpoint-90")
    assert ds["extra"]["deepspeed"]["skipped_steps"] == 3  # the counters beside the payload: a safe value
    assert d["first_incident"]["kind"] == "nonfinite_metric"  # the rest of the run was analyzed


@pytest.mark.parametrize("writer", ["pickle4", "torch_zip", "torch_legacy"])
@pytest.mark.parametrize("kind", KINDS)
def test_scan_refuses_a_hostile_weight_file(kind, writer, tmp_path, marker):
    path = write(tmp_path / "pytorch_model.bin", {"w": torch.ones(3), "evil": payload(kind, marker)}, writer)
    result = CliRunner().invoke(cli, ["scan", str(path), "--workers", "1"])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"forensics: {path}: torch.load(weights_only=True) refused it (")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("kind", KINDS)
def test_torch_load_weights_only_refuses_them(kind, writer, tmp_path, marker):
    path = write(tmp_path / "model.pt", {"w": torch.ones(3), "evil": payload(kind, marker)}, writer)
    # a global it does not allow or whose module it blocks, or (protocol 4) the FRAME opcode it does not read
    refusal = (r"Unsupported global: GLOBAL \S+ was not an allowed global|Unsupported operand 149"
               r"|Trying to load unsupported GLOBAL \S+ whose module \S+ is blocked")
    with pytest.raises(pickle.UnpicklingError, match=refusal):
        torch.load(path, weights_only=True)
    with pytest.raises(UnreadableFile, match=rf"refused it \(({refusal})"):
        TorchFile(path)


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("kind", KINDS)
def test_the_inert_unpickler_reads_them_as_plain_data(kind, writer, tmp_path, marker):
    evil = payload(kind, marker)
    path = write(tmp_path / "mp_rank_00_model_states.pt", {"skipped_steps": 2, "global_steps": 7, "evil": evil}, writer)
    value = torchpickle.safe_unpickle_torch_file(path)
    assert value["skipped_steps"] == 2 and value["global_steps"] == 7
    assert _plain(value["evil"])  # the call is data (its arguments), never a result of running it
    assert read_deepspeed_counters(path) == {"skipped_steps": 2, "global_steps": 7}
    for reader in (training_args.read_training_args, config_files.read_optim_states, config_files.read_scaler):
        try:
            _plain(reader(path))
        except ForensicsError:
            pass


def _plain(value) -> bool:
    """True when value is built of str/bytes/numbers/None/lists/dicts only (no object that could act)."""
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    assert isinstance(value, (str, bytes, int, float, bool, type(None))), type(value)
    return True


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("kind", KINDS)
def test_control_the_payloads_do_run_when_loaded_unsafely(kind, writer, tmp_path):
    """The same files create the marker through pickle.load / torch.load(weights_only=False)."""
    control = tmp_path / "CONTROL"
    path = write(tmp_path / "model.pt", {"evil": payload(kind, control)}, writer)
    if writer.startswith("pickle"):
        with open(path, "rb") as fh:
            pickle.load(fh)
    else:
        torch.load(path, weights_only=False)
    assert control.exists()
