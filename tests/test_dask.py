"""--dask: the same JSON from a real Dask scheduler with two worker processes as from a local run.

A LocalCluster (2 single-threaded worker processes) is started once for the module; the commands
get its tcp:// address, as they would a cluster's. The scheduler's task stream shows the work ran
there. An unreachable scheduler is one line and exit 2.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import forensics
from forensics.checkpoints import scan_checkpoint
from forensics.checkpoints.fanout import dask_scheduler
from forensics.cli import cli

distributed = pytest.importorskip("distributed")
SAMPLES = Path(forensics.__file__).parents[1] / "sample_runs"


@pytest.fixture(scope="module")
def scheduler():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    yield cluster.scheduler_address, client
    client.close()
    cluster.close()


def _json(args) -> tuple[int, object]:
    result = CliRunner().invoke(cli, args)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.stdout)


def _without_timings(data):
    """The JSON without what depends on the clock: durations and the report's creation time."""
    if isinstance(data, dict):
        return {k: _without_timings(v) for k, v in data.items() if "seconds" not in k and k not in ("elapsed", "created")}
    if isinstance(data, list):
        return [_without_timings(v) for v in data]
    return data


@pytest.mark.parametrize("command", [
    ["scan", str(SAMPLES / "bf16_sharded" / "checkpoint-20"), "--json"],
    ["analyze", str(SAMPLES / "nan_masked"), "--json"],
    ["bisect", str(SAMPLES / "nan_masked" / "checkpoint-20"), str(SAMPLES / "nan_masked" / "checkpoint-60"), "--json"],
    ["diff", str(SAMPLES / "nan_masked" / "checkpoint-20"), str(SAMPLES / "nan_masked" / "checkpoint-40"), "--json"],
])
def test_same_json_on_the_cluster_as_locally(scheduler, command):
    address, client = scheduler
    local_code, local = _json(command)
    with distributed.get_task_stream(client) as stream:
        dask_code, fanned = _json(command + ["--dask", address])
    assert dask_code == local_code
    assert _without_timings(fanned) == _without_timings(local)
    assert len(stream.data) > 0  # the work ran as tasks on the scheduler's workers


def test_library_block_fans_out_dcp_and_safetensors(scheduler):
    address, client = scheduler
    ckpt = SAMPLES / "bf16_sharded" / "checkpoint-20"
    local = scan_checkpoint(ckpt, workers=1)
    with distributed.get_task_stream(client) as stream, dask_scheduler(address):
        fanned = scan_checkpoint(ckpt)
    assert fanned.drop(columns=["file"]).equals(local.drop(columns=["file"]))
    assert {t["worker"] for t in stream.data} and len(stream.data) >= 2  # one task per shard at least


def test_unreachable_scheduler_is_one_line(tmp_path):
    ckpt = shutil.copytree(SAMPLES / "bf16_sharded" / "checkpoint-20", tmp_path / "c")
    result = CliRunner().invoke(cli, ["scan", str(ckpt), "--dask", "tcp://127.0.0.1:9"])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("forensics: cannot use the Dask scheduler tcp://127.0.0.1:9: ")


def _fails_once(task):
    """Doubles x, but raises the first time it meets each x (a marker file remembers): a lost task."""
    folder, x = task
    marker = Path(folder) / f"tried-{x}"
    if not marker.exists():
        marker.touch()
        raise OSError(f"worker lost while on {x}")
    return 2 * x


def test_a_failed_task_is_retried_and_results_keep_task_order(scheduler, tmp_path):
    from forensics.checkpoints.fanout import map_on_dask

    address, client = scheduler
    seen = []
    with dask_scheduler(address) as own:
        results = map_on_dask(own, _fails_once, [(str(tmp_path), x) for x in range(8)], on_result=seen.append)
    assert results == [2 * x for x in range(8)]  # every task failed once and came back on its retry
    assert sorted(seen) == results and len(list(tmp_path.glob("tried-*"))) == 8


def test_optimizer_state_measured_on_the_cluster_equals_the_local_measure(scheduler, blowup_dense_run):
    from forensics.checkpoints.layout import open_checkpoint
    from forensics.checkpoints.optimizer_stats import read_optimizer_state

    address, client = scheduler
    ref = open_checkpoint(blowup_dense_run[0] / "checkpoint-25")
    local = read_optimizer_state(ref, workers=1)
    with distributed.get_task_stream(client) as stream, dask_scheduler(address):
        remote = read_optimizer_state(ref)
    assert remote.tensors.equals(local.tensors) and remote.blocks.equals(local.blocks)
    assert remote.nonfinite_tensors == local.nonfinite_tensors
    assert any("measure_batch" in str(t.get("key", "")) for t in stream.data)  # it ran as Dask tasks
