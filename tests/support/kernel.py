"""Running notebooks in a real Jupyter kernel for the tests: this interpreter (`sys.executable`), started from a
kernelspec written to a temporary folder, so no `ipykernel install` is needed and no other Python is picked up."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

KERNEL = "forensics-test-python"


def kernel_manager(folder: Path) -> KernelManager:
    """A KernelManager for a kernelspec in `folder` that runs ipykernel under this interpreter."""
    spec_dir = folder / KERNEL
    spec_dir.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "forensics tests", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return KernelManager(kernel_name=KERNEL, kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(folder)]))


def execute(nb: nbformat.NotebookNode, kernels: Path, cwd: Path, timeout: int = 300) -> nbformat.NotebookNode:
    """Run every cell of `nb` in place in a fresh kernel working in `cwd`; nbclient raises CellExecutionError when a
    cell fails."""
    client = NotebookClient(nb, km=kernel_manager(kernels), kernel_name=KERNEL, timeout=timeout,
                            resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return nb
