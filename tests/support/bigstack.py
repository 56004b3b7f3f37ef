"""What the big-stack fixtures share: run a fixture script of scripts/ once, on a free port."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port nobody listens on now (a fixed one collides with a run still closing, or a neighbour's)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_script(args: list[str], env: dict[str, str], timeout: int = 900) -> None:
    """`python <args>` from the repository root with `env` added; fails the fixture with its stderr tail."""
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1", **env},
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
