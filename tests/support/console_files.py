"""A console log written into a run folder."""
from __future__ import annotations


def _mlx_console(folder, head: list[str], rows: list[str]):
    folder.mkdir(parents=True)
    (folder / "train.log").write_text("\n".join(head + rows) + "\n")
    return folder
