"""Fan the per-file / per-piece scan work out to a Dask cluster: `with dask_scheduler("tcp://host:8786"):`.

Inside the block every pooled unit of work (units.py `map_in_pool`: scan, quick check, bisect
probes, diff) runs as a Dask task on the cluster's workers instead of a local process pool. Tasks
carry paths and element ranges, never bytes: each worker reads the files where they are (a
shared filesystem) and sends back the small per-tensor sums. A task whose worker dies is re-run
by the scheduler, and one that raises is retried twice. `"local"` starts a LocalCluster on this
machine (one single-threaded worker process per core). Results come back in task order, so the
output is the same as a local run's.

`distributed` is the optional extra `forensics[dask]`, imported only here.
"""
from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from typing import Callable

from ..errors import SchedulerUnreachable

_CLIENT = None  # the distributed.Client of the enclosing `dask_scheduler` block, else None
_RETRIES = 2
_CONNECT_TIMEOUT = "5s"


@contextmanager
def dask_scheduler(address: str | None, workers: int | None = None):
    """Run the pooled work of the enclosed calls on the Dask scheduler at `address` (None: locally).

    Raises SchedulerUnreachable when `distributed` is missing or the scheduler cannot be reached.
    """
    global _CLIENT
    if not address:
        yield None
        return
    client, cluster = _connect(address, workers)
    previous, _CLIENT = _CLIENT, client
    try:
        yield client
    finally:
        _CLIENT = previous
        client.close()
        if cluster is not None:
            cluster.close()


def active_client():
    """The Dask client work is fanned out to, or None."""
    return _CLIENT


def _connect(address: str, workers: int | None):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SchedulerUnreachable(address, "the distributed package is not installed "
                                            "(pip install 'forensics[dask]')") from None
    if address == "local":
        # silence_logs: the workers' connection-closed noise at shutdown is not the user's business
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.CRITICAL)
        return Client(cluster), cluster
    try:
        return Client(address, timeout=_CONNECT_TIMEOUT), None
    except (OSError, TimeoutError, ValueError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise SchedulerUnreachable(address, reason[:200]) from None


def map_on_dask(client, fn: Callable, tasks: list, on_result: Callable | None = None,
                stop_if: Callable | None = None) -> list:
    """fn(task) for every task as Dask tasks; results in task order (cancelled ones left out)."""
    from distributed import as_completed

    futures = client.map(fn, tasks, pure=False, retries=_RETRIES)
    order = {f.key: i for i, f in enumerate(futures)}
    done: dict[int, object] = {}
    for future in as_completed(futures):
        if future.cancelled():
            continue
        result = future.result()
        done[order[future.key]] = result
        if on_result:
            on_result(result)
        if stop_if is not None and stop_if(result):
            client.cancel([f for f in futures if not f.done()])
            break
    return [done[i] for i in sorted(done)]
