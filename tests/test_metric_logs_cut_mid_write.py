"""A metric log read while its run still writes it (or left by a writer that was stopped) ends inside its last entry.
For each format the tool reads, a real-shaped file (a corpus run's own, or one the real library wrote) is cut at
several bytes inside its last entry - just after it starts, in its middle, inside its last number (`1.2` of a `1.25`),
one byte before its end - and read: every complete entry before the cut is read, as it is read from the file cut
where the last entry starts; no value comes from the cut entry; and one line says the file was cut (the console
readers' own rule for a cut last line is tested in test_console_older_readers_cut_last_line). The whole file is read
as before, without a word of a cut (the guards)."""
from __future__ import annotations

import json
import pprint
import re
import shutil
import struct
from pathlib import Path

import pytest

from forensics.errors import UnreadableFile
from forensics.ingest import (csv_metrics, json_history, jsonl, llamafactory, loss_number_files, mlflow_files, stdout,
                              swift, tensorboard, trainer_state)

REAL = Path(__file__).parent / "realworld"
CUT_WORDS = re.compile(r"\bcut\b")


def _rows(records) -> list[tuple]:
    frame = records.frame
    return sorted(zip(frame.step.tolist(), frame.metric.tolist(), [repr(v) for v in frame.value.tolist()]))


def _cut_offsets(whole: bytes, last_start: int, last_end: int | None = None) -> list[int]:
    """Bytes inside the last entry (`last_start` to `last_end`, where its closing character or line end is; by default
    the file's end before them) to cut at: just after its start, its middle, inside its last number, one byte before
    its end."""
    last_end = len(whole.rstrip(b" \r\n]}")) if last_end is None else last_end
    numbers = [m.start() + 3 for m in re.finditer(rb"\d\.\d{2,}", whole[last_start:last_end])]  # `1.2` of `1.25`
    inside_number = [last_start + numbers[-1]] if numbers else []
    offsets = {last_start + 1, (last_start + last_end) // 2, last_end - 1, *inside_number}
    return sorted(o for o in offsets if last_start < o < last_end)


def _check_cuts(path: Path, whole: bytes, last_start: int, read, last_end: int | None = None,
                source: Path | None = None) -> None:
    """Cut at `_cut_offsets`: read as the file cut where its last entry starts, and one line says it was cut, of the
    records of `source` (the file by default)."""
    path.write_bytes(whole)
    read_whole = read(path)
    assert not [w for w in read_whole.warnings if CUT_WORDS.search(w)], "the whole file is read without a cut"
    path.write_bytes(whole[:last_start])
    before = _rows(read(path))
    assert before and len(before) < len(_rows(read_whole)), "the entries before the last one hold values"
    for cut in _cut_offsets(whole, last_start, last_end):
        path.write_bytes(whole[:cut])
        records = read(path)
        assert _rows(records) == before, f"cut at byte {cut} of {len(whole)} ({whole[cut - 12:cut]!r})"
        said = [w for w in records.warnings if CUT_WORDS.search(w)]
        assert len(said) == 1 and records.source == str(source or path), (cut, records.warnings)


def _last_line_start(whole: bytes) -> int:
    return whole.rstrip(b"\r\n").rfind(b"\n") + 1


def _repr_digits_end(whole: bytes) -> int:
    """Where the last number's first 8 decimals end: a float's repr is 13 to 17 digits long, so one cut in its last
    digits may be printed as a line before it is and is kept (a value off past its 12th digit, which changes nothing
    read from it); the console readers' shape rule has the same bound. Cuts are tested before it."""
    return list(re.finditer(rb"\d\.\d+", whole))[-1].start() + 10


def _log_history() -> list[dict]:
    """The log_history a LLaMA-Factory LoRA run's Trainer saved (heweidong-ecco_lora-finetune)."""
    return json.loads((REAL / "heweidong-ecco_lora-finetune" / "trainer_state.json").read_text())["log_history"]


def test_a_trainer_state_the_trainer_was_writing_is_read_to_its_last_complete_entry(tmp_path: Path):
    transformers = pytest.importorskip("transformers")
    state = transformers.TrainerState(global_step=60, max_steps=75, log_history=_log_history())
    state.save_to_json(str(tmp_path / "trainer_state.json"))
    whole = (tmp_path / "trainer_state.json").read_bytes()
    last_end = whole.rfind(b"}", 0, whole.find(b'"logging_steps"'))  # the last log_history entry's closing brace
    last_start = whole.rfind(b"{", 0, last_end)
    _check_cuts(tmp_path / "trainer_state.json", whole, last_start, trainer_state.read, last_end)


def test_a_dumped_log_history_cut_inside_its_last_dict_keeps_the_dicts_before_it(tmp_path: Path):
    whole = json.dumps(_log_history(), indent=2).encode()
    _check_cuts(tmp_path / "log_history.json", whole, whole.rfind(b"{"), json_history.read)


def test_a_pprinted_log_history_cut_inside_its_last_dict_keeps_the_dicts_before_it(tmp_path: Path):
    whole = pprint.pformat(_log_history()).encode()
    _check_cuts(tmp_path / "log.txt", whole, whole.rfind(b"{"), json_history.read)


def test_a_json_list_of_losses_cut_inside_its_last_number_drops_that_number(tmp_path: Path):
    whole = (REAL / "jyuno426_sym-math" / "train_losses.json").read_bytes()
    _check_cuts(tmp_path / "train_losses.json", whole, whole.rfind(b",") + 1, json_history.read)


def test_a_python_list_of_losses_cut_inside_its_last_number_drops_that_number_and_says_so(tmp_path: Path):
    whole = (REAL / "ChaiZhi_transformer" / "result" / "train_loss.txt").read_bytes()
    _check_cuts(tmp_path / "train_loss.txt", whole, whole.rfind(b",") + 1, loss_number_files.read)


def test_a_file_of_loss_lines_cut_inside_its_last_line_leaves_it_out_and_says_so(tmp_path: Path):
    whole = (REAL / "danis-b_YodaGPT" / "losses.txt").read_bytes()
    _check_cuts(tmp_path / "losses.txt", whole, _last_line_start(whole), loss_number_files.read,
                _repr_digits_end(whole))


def test_a_keras_history_cut_inside_its_last_list_keeps_the_whole_lists_before_it(tmp_path: Path):
    whole = (REAL / "AlexBella365_FrenchTextGenerator" / "output" / "history.json").read_bytes()
    path = tmp_path / "history.json"
    path.write_bytes(whole)
    lists = json.loads(whole)
    last = list(lists)[-1]
    (tmp_path / "kept.json").write_text(json.dumps({k: v for k, v in lists.items() if k != last}))
    kept = _rows(json_history.read(tmp_path / "kept.json"))
    for cut in _cut_offsets(whole, whole.rfind(b"[") + 1, whole.rfind(b"]")):
        path.write_bytes(whole[:cut])
        records = json_history.read(path)
        assert _rows(records) == kept, cut
        assert [w for w in records.warnings if CUT_WORDS.search(w)] == [
            "cut off before its closing brace: still being written or interrupted; read the "
            f"{len(lists) - 1} whole lists before the cut, '{last}' (cut inside) left out"]


def test_a_keras_history_cut_before_its_closing_brace_keeps_every_list(tmp_path: Path):
    whole = (REAL / "AlexBella365_FrenchTextGenerator" / "output" / "history.json").read_bytes()
    (tmp_path / "history.json").write_bytes(whole.rstrip()[:-1])
    records = json_history.read(tmp_path / "history.json")
    (tmp_path / "whole.json").write_bytes(whole)
    assert _rows(records) == _rows(json_history.read(tmp_path / "whole.json"))
    assert len([w for w in records.warnings if CUT_WORDS.search(w)]) == 1


@pytest.mark.parametrize("case, name, read", [
    ("heweidong-ecco_lora-finetune", "trainer_log.jsonl", llamafactory.read),
    ("hsushuai_ms-swift-scripts", "logging.jsonl", swift.read),
    ("heweidong-ecco_lora-finetune", "trainer_log.jsonl", jsonl.read),
    ("amjadmajid_llm_toaster", "metrics.csv", csv_metrics.read),
])
def test_a_line_a_record_log_cut_inside_its_last_line_leaves_that_line_out_and_says_so(tmp_path: Path, case, name,
                                                                                        read):
    whole = (REAL / case / name).read_bytes()
    _check_cuts(tmp_path / name, whole, _last_line_start(whole), read)


def test_a_tensorboard_scalar_export_cut_inside_its_last_row_leaves_that_row_out_and_says_so(tmp_path: Path):
    whole = (REAL / "TurkHukuk_hukukbert" / "run-.-tag-train_loss.csv").read_bytes()
    _check_cuts(tmp_path / "run-.-tag-train_loss.csv", whole, _last_line_start(whole), csv_metrics.read,
                _repr_digits_end(whole))


def test_a_long_metric_table_cut_inside_its_last_row_leaves_that_row_out_and_says_so(tmp_path: Path):
    rows = [f"{e['step']},{name},{e[name]}\n" for e in _log_history() if "loss" in e
            for name in ("learning_rate", "loss")]
    whole = ("step,metric,value\n" + "".join(rows)).encode()
    _check_cuts(tmp_path / "metrics.csv", whole, _last_line_start(whole), csv_metrics.read, _repr_digits_end(whole))


def test_a_csv_row_cut_inside_its_last_cell_is_not_read_as_a_shorter_number(tmp_path: Path):
    whole = b"step,learning_rate,loss\n10,1e-05,2.0153\n20,1e-05,1.8937\n30,1e-05,1.7874\n40,1e-05,1.6811\n"
    (tmp_path / "metrics.csv").write_bytes(whole[:-3])  # `40,1e-05,1.68`: the loss cut mid-number
    records = csv_metrics.read(tmp_path / "metrics.csv")
    assert 1.68 not in records.frame.value.tolist() and sorted(records.frame.step.unique()) == [10, 20, 30]
    assert len(records.warnings) == 1 and "cut mid-write" in records.warnings[0]


def test_a_csv_whose_last_row_has_no_line_end_but_is_printed_as_the_rows_before_it_is_read_whole(tmp_path: Path):
    (tmp_path / "metrics.csv").write_bytes(b"step,loss\n10,2.0153\n20,1.8937\n30,1.7874")
    records = csv_metrics.read(tmp_path / "metrics.csv")
    assert records.frame.value.tolist()[-1] == 1.7874 and records.warnings == ()


def test_a_tensorboard_event_file_cut_inside_its_last_record_keeps_the_records_before_it(tmp_path: Path):
    summary = pytest.importorskip("torch.utils.tensorboard")
    writer = summary.SummaryWriter(str(tmp_path / "tb"))
    for entry in _log_history():
        if "loss" in entry:
            writer.add_scalar("train/loss", entry["loss"], entry["step"])
    writer.close()
    event_file = next((tmp_path / "tb").glob("events.out.tfevents.*"))
    whole, starts, pos = event_file.read_bytes(), [], 0
    while pos < len(whole):  # TFRecord framing: an 8-byte length, its CRC, the payload, the payload's CRC
        starts.append(pos)
        pos += 16 + struct.unpack("<Q", whole[pos:pos + 8])[0]
    _check_cuts(tmp_path / event_file.name, whole, starts[-1], tensorboard.read)


def test_an_mlflow_metric_file_cut_inside_its_last_line_leaves_that_line_out_and_says_so(tmp_path: Path):
    store = tmp_path / "mlruns"
    shutil.copytree(REAL / "chenmargalit_10X-ML-Engineer" / "mlruns", store)
    metric = next(store.glob("0/*/metrics/eval_loss"))
    whole = metric.read_bytes()
    _check_cuts(metric, whole, _last_line_start(whole), lambda path: mlflow_files.read(path.parent.parent),
                source=metric.parent.parent)


def test_a_console_of_trainer_dicts_cut_inside_its_last_dict_keeps_the_dicts_before_it(tmp_path: Path):
    printed = [{k: v for k, v in e.items() if k != "step"} for e in _log_history() if "loss" in e]
    whole = "".join(f"{entry}\n" for entry in printed).encode()
    path, last_start = tmp_path / "train.log", _last_line_start(whole)
    path.write_bytes(whole[:last_start])
    before = _rows(stdout.read(path))
    for cut in _cut_offsets(whole, last_start):
        path.write_bytes(whole[:cut])
        assert _rows(stdout.read(path)) == before, cut


def test_a_loss_file_whose_last_line_has_no_line_end_but_is_printed_as_the_lines_before_it_is_read_whole(
        tmp_path: Path):
    (tmp_path / "losses.txt").write_bytes(b"0 4.3512 4.3519\n1 2.7307 2.6334\n2 2.3884 2.2864\n3 2.2708 2.1902")
    records = loss_number_files.read(tmp_path / "losses.txt")
    assert records.frame.value.tolist()[-2:] == [2.2708, 2.1902] and records.warnings == ()


def test_a_json_list_broken_inside_but_closed_is_not_read_as_cut(tmp_path: Path):
    (tmp_path / "train_losses.json").write_text("[3.72, 3.59, 3.43,, 3.28, 3.18]")
    with pytest.raises(UnreadableFile, match="invalid JSON"):
        json_history.read(tmp_path / "train_losses.json")


def test_a_csv_whose_last_row_has_no_line_end_and_ends_in_a_word_is_read_whole(tmp_path: Path):
    """Eamon2009_Quadtrix-'s train_loss.csv: its last row `3,4999,5000,0.9307,0.943,367,no` (no line end, a `0.943`
    where the rows before print four decimals) ends in a word, so no number of it can be cut."""
    whole = (REAL / "Eamon2009_Quadtrix-" / "train_loss.csv").read_bytes()
    assert not whole.endswith(b"\n")
    records = csv_metrics.read(REAL / "Eamon2009_Quadtrix-" / "train_loss.csv")
    last_eval = records.frame[records.frame.metric == "eval_loss"].value.tolist()[-1]
    assert last_eval == 0.943 and not [w for w in records.warnings if CUT_WORDS.search(w)]


def test_a_csv_whose_last_learning_rate_is_cut_inside_its_exponent_leaves_that_row_out(tmp_path: Path):
    """`1.62e-0` is what a cut leaves of `1.62e-05`; read, it is a learning rate of 1.62 (a jump of 1e5 and a 'too
    high' cause). Its shape folds the exponent's digits into one, so the exponent's digit count is compared too."""
    rows = "".join(f"{s},{2.5 - s / 1000:.4f},{2e-05 * (1 - s / 1000):.2e}\n" for s in range(10, 200, 10))
    (tmp_path / "metrics.csv").write_text(("step,loss,learning_rate\n" + rows)[:-2])  # `190,2.3100,1.62e-0`
    records = csv_metrics.read(tmp_path / "metrics.csv")
    assert records.frame.value.max() < 3 and sorted(records.frame.step.unique())[-1] == 180
    assert len([w for w in records.warnings if CUT_WORDS.search(w)]) == 1


def test_a_long_last_line_is_looked_at_in_linear_time(tmp_path: Path):
    """The last cell was found by a search that tried every character of a long cell before the last separator
    again: 30,000 characters took about 10 s, a 1 MB line hours."""
    import time
    (tmp_path / "metrics.csv").write_text("step,loss\n10,2.3456\n20,2.1234\n" + "x" * 30000 + ",1")
    started = time.monotonic()
    records = csv_metrics.read(tmp_path / "metrics.csv")
    assert time.monotonic() - started < 2 and sorted(records.frame.step.unique()) == [10, 20]


def test_a_keras_history_cut_in_the_key_of_its_next_list_keeps_the_whole_lists_before_it(tmp_path: Path):
    whole = json.dumps({"loss": [2.31, 2.12, 1.98], "accuracy": [0.31, 0.35, 0.38], "val_loss": [2.2, 2.05, 1.99]})
    at = whole.index('"val_loss"')
    (tmp_path / "kept.json").write_text(whole[:at - 2] + "}")
    kept = _rows(json_history.read(tmp_path / "kept.json"))
    for cut in range(at, whole.index("[", at) + 1):  # inside the key, at its colon, before its list's bracket
        (tmp_path / "history.json").write_text(whole[:cut])
        records = json_history.read(tmp_path / "history.json")
        assert _rows(records) == kept and len([w for w in records.warnings if CUT_WORDS.search(w)]) == 1, cut


def test_a_closed_json_list_with_bytes_after_it_is_not_read_as_cut(tmp_path: Path):
    """NUL bytes after a whole list (a file system's padding after a crash): the list was closed, so nothing of it is
    cut; it stays unreadable as before, not read less its last value under a 'no closing bracket' note."""
    (tmp_path / "train_losses.json").write_text("[2.31, 2.12, 1.98]" + "\x00" * 16)
    with pytest.raises(UnreadableFile):
        json_history.read(tmp_path / "train_losses.json")


def test_a_python_printed_list_of_losses_with_nan_cut_keeps_the_nans(tmp_path: Path):
    """`str(losses)` written into a .json: JSON stops at Python's `nan`, which is no cut; the NaNs, the run's
    divergence, are read up to the real cut, not dropped with every value after them."""
    (tmp_path / "train_losses.json").write_text("[2.31, 2.12, 1.98, nan, nan, nan, 1.5")
    values = json_history.read(tmp_path / "train_losses.json").frame.value.tolist()
    assert values[:3] == [2.31, 2.12, 1.98] and len(values) == 6 and all(v != v for v in values[3:])


def test_appended_keras_histories_the_last_one_cut_are_not_read_as_one_cut_dict(tmp_path: Path):
    """A callback appending `history.history` each epoch: a whole dict, then the next one cut. Read as one dict, the
    second's lists overwrote the first's but for the cut one, whose first-epoch value stayed (said left out)."""
    first = json.dumps({"loss": [2.31], "val_loss": [2.2]})
    second = json.dumps({"loss": [2.31, 2.12], "val_loss": [2.2, 2.05]})
    (tmp_path / "history.json").write_text(first + "\n" + second[:-4])
    with pytest.raises(UnreadableFile):
        json_history.read(tmp_path / "history.json")


def test_a_pprinted_log_history_whose_last_entry_holds_many_metrics_cut_keeps_the_entries_before_it(tmp_path: Path):
    """An evaluation entry of 70 metrics (a harness's per-task scores) cut inside: its commas outnumbered the tries at
    every comma from the end, and the whole history was unreadable; the list's own commas find the entry's start."""
    history = _log_history()
    entries = history + [{**{f"eval_task{i}_acc": 0.5 + i / 1000 for i in range(70)}, "step": history[-1]["step"]}]
    whole = pprint.pformat(entries)
    (tmp_path / "log.txt").write_text(whole[:len(whole) - 40])
    (tmp_path / "whole.txt").write_text(pprint.pformat(history))
    records = json_history.read(tmp_path / "log.txt")
    assert _rows(records) == _rows(json_history.read(tmp_path / "whole.txt"))
    assert len([w for w in records.warnings if CUT_WORDS.search(w)]) == 1


def test_a_one_value_loss_file_with_no_line_end_is_read_as_it_stands(tmp_path: Path):
    """No row before it to compare its printed shape with: nothing says it is cut (the review of session 32 found a
    one-value loss.txt, read before the cut rule, left unreadable by it)."""
    (tmp_path / "loss.txt").write_text("2.4817")
    records = loss_number_files.read(tmp_path / "loss.txt")
    assert _rows(records) and not [w for w in records.warnings if CUT_WORDS.search(w)], records.warnings


def test_a_last_row_of_full_float_reprs_with_no_line_end_is_kept_whatever_its_digit_count(tmp_path: Path):
    """str(float) prints 13 to 17 digits: a last row whose number runs to 12 significant digits or more, with every
    cell of the row before, is whole enough (a cut could take only digits past the 12th); a shorter one is dropped."""
    head = "step,loss\n10,2.0153279600143433\n20,1.8937000497817993\n"
    (tmp_path / "metrics.csv").write_text(head + "30,1.78740003")  # a cut 9 digits in: dropped and said
    cut = csv_metrics.read(tmp_path / "metrics.csv")
    (tmp_path / "whole.csv").write_text(head + "30,1.78740003621")  # 11 decimals, 12 significant digits: kept
    whole = csv_metrics.read(tmp_path / "whole.csv")
    assert len(_rows(whole)) == len(_rows(cut)) + 1 and [w for w in cut.warnings if CUT_WORDS.search(w)]
    assert not [w for w in whole.warnings if CUT_WORDS.search(w)], whole.warnings


@pytest.mark.parametrize("cut_at", ["e-0", ""])
def test_a_full_repr_rate_cut_in_or_before_its_exponent_is_not_read_as_its_mantissa(tmp_path: Path, cut_at: str):
    """A Lightning CSVLogger writes str(float): a rate of 2.978723404255319e-05 cut to `...319e-0` or `...319` has
    12+ significant digits but lost its exponent, and must not be kept as a rate of 2.98 (review 32d)."""
    head = "step,loss,lr\n10,2.0153279600143433,3.0212765957446806e-05\n20,1.8937000497817993,3.0e-05\n"
    (tmp_path / "metrics.csv").write_text(head + "30,1.7874000362157822,2.978723404255319" + cut_at)
    records = csv_metrics.read(tmp_path / "metrics.csv")
    rates = [value for _, metric, value in _rows(records) if metric == "learning_rate"]
    assert all(float(v) < 1e-3 for v in rates), rates
    assert [w for w in records.warnings if CUT_WORDS.search(w)], records.warnings
