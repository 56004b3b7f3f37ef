"""bisect and checkpoints that cannot be read: every one in the range is named with why, those the search stepped over
included; a window "last good -> first bad" that spans one says so; and a folder counts as holding checkpoints only
where a weight file opens (a random blob named .bin is none).

Checkpoints are written with safetensors' own writer (support.checkpoint_files); a cut one is the file's first bytes,
as a copy or a save interrupted mid-write leaves it.
"""
from __future__ import annotations

import pytest

from support.checkpoint_files import checkpoint_series
from forensics.bisection import bisect_checkpoints as bisect
from forensics.checkpoints import open_checkpoint
from forensics.errors import NoCheckpoints
from forensics.report.html import render_bisect_html
from forensics.report.text import bisect_text

STEPS = [100, 200, 300, 400, 500]


def _cut(folder) -> None:
    """The checkpoint's weights cut to their first half: the header reads, the data is short."""
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])


def _unread_names(result) -> list[str]:
    return [ref.name for ref, _ in result.unread]


def test_a_cut_checkpoint_the_search_steps_over_is_named_not_read(tmp_path):
    folders = checkpoint_series(tmp_path, STEPS[:3], poison_from=None)
    _cut(folders[1])  # the newest is good: the search probes only it, never the middle one
    result = bisect(folders[0], folders[-1], workers=1)
    assert result.last_good.name == "checkpoint-300" and result.first_bad is None
    assert "checkpoint-200" not in [ref.name for ref, _ in result.probed]
    assert _unread_names(result) == ["checkpoint-200"] and "truncated" in result.unread[0][1]
    assert "not read checkpoint-200: model.safetensors: truncated" in bisect_text(result.to_dict())


def test_a_window_across_an_unread_checkpoint_says_it_was_not_read(tmp_path):
    folders = checkpoint_series(tmp_path, STEPS, poison_from=400)
    _cut(folders[2])  # checkpoint-300, probed first between the ends, left out
    result = bisect(folders[0], folders[-1], workers=1)
    assert (result.last_good.name, result.first_bad.name) == ("checkpoint-200", "checkpoint-400")
    assert [ref.name for ref in result.unread_in_window()] == ["checkpoint-300"]
    text = bisect_text(result.to_dict())
    assert "between checkpoint-200 and checkpoint-400 lie checkpoint-300, not read" in text
    page = render_bisect_html(result)
    assert 'id="unread-table"' in page and "could not be read: the damage may have begun there" in page


def test_an_unread_checkpoint_outside_the_window_is_named_but_not_in_it(tmp_path):
    folders = checkpoint_series(tmp_path, STEPS, poison_from=500)
    _cut(folders[1])  # checkpoint-200: before the last good checkpoint-400
    result = bisect(folders[0], folders[-1], workers=1)
    assert (result.last_good.name, result.first_bad.name) == ("checkpoint-400", "checkpoint-500")
    assert _unread_names(result) == ["checkpoint-200"] and result.unread_in_window() == []
    assert "lie checkpoint-200" not in bisect_text(result.to_dict())


def test_every_checkpoint_readable_lists_none_not_read(tmp_path):
    folders = checkpoint_series(tmp_path, STEPS, poison_from=400)
    result = bisect(folders[0], folders[-1], workers=1)
    assert (result.last_good.name, result.first_bad.name) == ("checkpoint-300", "checkpoint-400")
    assert result.unread == [] and result.to_dict()["unread"] == []
    assert "not read" not in bisect_text(result.to_dict())


def test_a_folder_holding_only_a_random_blob_has_no_checkpoint_inside(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "blob.bin").write_bytes(bytes(range(7, 107)))
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(NoCheckpoints) as err:
        open_checkpoint(tmp_path)
    assert "checkpoint inside" not in str(err.value)
    assert "no weight file that the checkpoint readers accept (sub/blob.bin:" in str(err.value)


def test_a_folder_holding_a_real_checkpoint_names_it(tmp_path):
    checkpoint_series(tmp_path / "run", [100], poison_from=None)
    (tmp_path / "run" / "sub").mkdir()
    (tmp_path / "run" / "sub" / "blob.bin").write_bytes(bytes(range(7, 107)))
    with pytest.raises(NoCheckpoints, match=r"but 1 checkpoint inside \(checkpoint-100\); name one of them"):
        open_checkpoint(tmp_path / "run")
