"""Find what a run left on disk: which files of which kind are where. Read-only.

`discover(path)` walks a run folder once (or takes a single file) and sorts what it finds
into a `RunLayout`. It opens no file except to sniff the first bytes of text logs and JSON
files whose name does not say what they are (what those bytes show: `log_hints`, `json_hints`).
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..errors import NotARunDirectory, os_reason
from ..findings import Skipped
from ..decoding import decode_text
from .launch_command import holds_one_launch
from .loss_numbers import is_loss_numbers, loss_file_split
from .json_hints import dumped_history, is_llamafactory_args, json_lines_log, printed_history
from .log_hints import a_training_console, log_hinted, notebook_hinted, readme_log
from ..table_headers import (is_metrics_table_header, is_scalar_export_header, is_step_value_header,
                             long_table_columns)
from .csv_header import csv_header, folder_holds_a_loss_series, long_table_names_a_loss
from .run_layout import RunLayout
from .sniff import holds, holds_whole, notebook_problem
from .tracker_folders import note_tracker_folder, tracker_own_file, wandb_link

# Folders that never hold a run's logs and can be huge.
# MLflow's `.trash` holds deleted experiments; `.github` a repository's CI workflows, issue templates and funding file,
# never a run's record or configuration (a workflow's `env: PRECISION: fp16` is not the training's).
_SKIP_DIRS = {".git", ".github", "__pycache__", ".ipynb_checkpoints", "node_modules", ".venv", "venv", ".cache",
              ".trash"}

_TB_EVENT = re.compile(r"^events\.out\.tfevents\.")
_TEXT_LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".md"}
# A project's documents: a README quoting some lines of an earlier run is not this run's log (read when named).
DOCUMENT = re.compile(r"(?i)^(?:readme|changelog|changes|license|contributing|history)(?:[._-].*)?$")
# A metrics table (`step,loss` / `step<TAB>loss` header) in a file of these kinds is read as a table.
_TABLE_SUFFIXES = {".csv", ".tsv", ".log", ".txt", ".out"}
# A captured console saved with no suffix at all (`stdout`, `nohup`, `dpo_train_20260105_1`) is sniffed like a .log
# A log rotated by logrotate or a RotatingFileHandler: `train.log.1`, `nohup.out.2`
_ROTATED_LOG = re.compile(r"(?i)\.(?:log|txt|out)\.\d{1,3}$")
# A launcher's per-rank console: paddle.distributed.launch writes `workerlog.0` (rank 0) and, on several nodes,
# `workerlog.n0.c0` (node 0, card 0), with no .log suffix
_RANK_LOG = re.compile(r"^workerlog\.(?:\d{1,4}|n\d{1,4}\.c\d{1,4})$")
_WEIGHT_SUFFIXES = {".safetensors", ".bin", ".pt", ".pth"}
# .bin/.pt files that are not model weights.
_NOT_WEIGHTS = re.compile(
    r"^(training_args\.bin|finetuning_args\.bin|optimizer\.(pt|bin)|scheduler\.pt|scaler\.pt|rng_state(_\d+)?\.pth|"
    r".*optim_states\.pt|pytorch_model_fsdp\.bin\.metadata)$"
)


def discover(path) -> RunLayout:
    """Sort the files under `path` (a run folder or one file) by kind.

    Raises NotARunDirectory when the path does not exist or holds nothing readable.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "trainer_state.json").write_text("{}")
    >>> [p.name for p in discover(d).trainer_states]
    ['trainer_state.json']
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise NotARunDirectory(path, "no such file or folder")
    if not path.is_dir() and not path.is_file():
        raise NotARunDirectory(path, _not_regular(path))
    if path.is_file():
        layout = RunLayout(root=path.parent.resolve())
        _classify(path.resolve(), layout, explicit=True)
    else:
        layout = RunLayout(root=path.resolve())
        _walk(layout.root, layout)
    if layout.is_empty():  # a console of a run that crashed or stopped before it logged a metric
        quiet = sorted(layout.quiet_texts)[:_QUIET_LOOKED_AT]
        layout.text_logs += [p for p in quiet if holds(p, layout, a_training_console, together=True)]
        quiet = sorted(layout.quiet_notebooks)[:_QUIET_LOOKED_AT]
        layout.notebooks += [p for p in quiet if holds_whole(p, layout, a_training_console)]
    layout.sort()
    return layout


def _walk(root: Path, layout: RunLayout) -> None:
    seen_dirs: set[tuple[int, int]] = set()

    def on_error(err: OSError) -> None:
        layout.skipped.append(Skipped(str(err.filename or root), os_reason(err)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error, followlinks=True):
        try:
            st = os.stat(dirpath)
        except OSError as err:
            on_error(err)
            dirnames[:] = []
            continue
        if (st.st_dev, st.st_ino) in seen_dirs:  # a symlink loop or a second link to a folder
            layout.skipped.append(Skipped(dirpath, "folder already visited (symlink loop?); not read twice"))
            dirnames[:] = []
            continue
        seen_dirs.add((st.st_dev, st.st_ino))
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not wandb_link(dirpath, d))
        _note_folders_named_as_weights(dirpath, dirnames, layout)
        note_tracker_folder(Path(dirpath), dirnames, filenames, layout)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not tracker_own_file(dirpath, name) and (found := _regular_file(path, layout)) is not None:
                if name.endswith(".py") and found.st_size <= _SCRIPT_BYTES:
                    layout.scripts.append(path)  # read for the run's settings where it writes a log (not opened here)
                _classify(path, layout, explicit=False)


# A training script is small: a bigger .py file is generated or vendored code
_SCRIPT_BYTES = 256 * 1024


def _note_folders_named_as_weights(dirpath: str, dirnames: list[str], layout: RunLayout) -> None:
    """A folder named like a weights file (model.safetensors/) is where a checkpoint's weights were expected: said,
    not passed over in silence (what it holds is still walked)."""
    for name in dirnames:
        if Path(name).suffix.lower() in _WEIGHT_SUFFIXES and not _NOT_WEIGHTS.match(name):
            layout.skipped.append(Skipped(os.path.join(dirpath, name), "a folder named like a weights file, not a "
                                                                       "weights file; not read as weights"))


def _regular_file(path: Path, layout: RunLayout) -> os.stat_result | None:
    """The stat of `path` (its link followed) where it is a regular file; anything else is listed as skipped. A FIFO
    blocks the reader until someone writes to it, a device such as /dev/zero never ends: neither is read."""
    try:
        found = path.stat()
    except OSError:
        found = None
    if found is not None and stat.S_ISREG(found.st_mode):
        return found
    layout.skipped.append(Skipped(str(path), _not_regular(path)))
    return None


def _not_regular(path: Path) -> str:
    """Why `path` is not read: what it is instead of a regular file."""
    try:
        mode = path.stat().st_mode
    except OSError as err:
        return os_reason(err)
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    return f"{kind}, not a regular file; not read"


def _classify(path: Path, layout: RunLayout, explicit: bool) -> None:
    """Put `path` in the first of the layout's kinds a step takes it for (`explicit`: the file was named, not found
    on the walk); a step that knows the file but finds nothing in it to read still ends the search."""
    for step in (_named_log, _notebook, _number_file_or_table, _config_file, _weights, _text_log, _launch_script,
                 _json_file):
        if step(path, layout, explicit):
            return


def _named_log(path: Path, layout: RunLayout, explicit: bool) -> bool:
    """A log its name or suffix says: trainer_state.json, TensorBoard's events, W&B's .wandb, an MLflow SQLite store,
    LLaMA-Factory's, ms-swift's or any JSON-lines log."""
    name = path.name
    suffix = path.suffix.lower()
    if name == "trainer_state.json":
        layout.trainer_states.append(path)
    elif _TB_EVENT.match(name):
        layout.tensorboard.append(path)
    elif suffix == ".wandb":
        layout.wandb_logs.append(path)
    elif suffix in _SQLITE_SUFFIXES and _is_sqlite(path, layout):
        layout.mlflow_dbs.append(path)
    elif name == "trainer_log.jsonl" or (name.startswith("trainer_log") and suffix == ".jsonl"):  # a renamed copy
        layout.llamafactory_logs.append(path)
    elif name == "logging.jsonl":
        layout.swift_logs.append(path)
    elif suffix == ".jsonl":
        layout.jsonl_logs.append(path)
    else:
        return False
    return True


def _notebook(path: Path, layout: RunLayout, explicit: bool) -> bool:
    """A Jupyter notebook: read where it shows training (or was named), else skipped with its problem or kept quiet."""
    if path.suffix.lower() != ".ipynb":
        return False
    if explicit or holds_whole(path, layout, notebook_hinted):
        layout.notebooks.append(path)
    elif (problem := notebook_problem(path)) is not None:
        layout.skipped.append(Skipped(str(path), problem))
    else:
        layout.quiet_notebooks.append(path)
    return True


def _number_file_or_table(path: Path, layout: RunLayout, explicit: bool) -> bool:
    """A file of loss numbers its name names, or a metrics table (a named CSV / TSV, or one whose header says so)."""
    suffix = path.suffix.lower()
    if _is_loss_number_file(path, layout):
        layout.loss_number_files.append(path)
    elif (suffix in (".csv", ".tsv") and explicit) or (suffix in _TABLE_SUFFIXES and _is_metrics_table(path, layout)):
        layout.csv_logs.append(path)
    else:
        return False
    return True


def _config_file(path: Path, layout: RunLayout, explicit: bool) -> bool:
    """A configuration file by its name, or (found on the walk) a README or YAML file that may be one."""
    name = path.name
    suffix = path.suffix.lower()
    if not (_is_config(name) or (not explicit and (name.lower() == "readme.md" or suffix in (".yaml", ".yml")))):
        return False
    # a PEFT model card (README.md) says the base's quantization; a YAML file may be the run's configuration
    layout.config_files.append(path)
    if name.lower() == "readme.md" and holds(path, layout, readme_log):
        # the Trainer's model card: its `### Training results` table is a log; so are the Trainer's log dicts
        # an author pasted into the README
        layout.text_logs.append(path)
    return True


def _weights(path: Path, layout: RunLayout, explicit: bool) -> bool:
    """A weights file, a torch.distributed.checkpoint folder's `.metadata` or a sharded checkpoint's index."""
    name = path.name
    suffix = path.suffix.lower()
    if suffix in _WEIGHT_SUFFIXES and not _NOT_WEIGHTS.match(name):
        layout.weight_files.append(path)
    elif name == ".metadata":  # a torch.distributed.checkpoint folder (its .distcp files are read through it)
        layout.weight_files.append(path)
    elif name.endswith(".index.json") and ("safetensors" in name or "pytorch_model" in name):
        layout.weight_files.append(path)
    else:
        return False
    return True


def _text_log(path: Path, layout: RunLayout, explicit: bool) -> bool:
    """A text file that may be a console (by its suffix, none, a rotated or per-rank log's name, or named): read as
    the history or JSON-lines log it holds, as a console, as a launch command, or kept quiet; a document is not."""
    name = path.name
    suffix = path.suffix.lower()
    if not (suffix in _TEXT_LOG_SUFFIXES or not suffix or _ROTATED_LOG.search(name) or _RANK_LOG.match(name) or (
            explicit and suffix not in _WEIGHT_SUFFIXES | {".json"})):
        return False
    if not DOCUMENT.match(name) and holds(path, layout, printed_history, together=True):
        layout.json_histories.append(path)  # a log_history pprint'ed into a .txt (NguyenTuoc2807_Financial-...)
    elif not DOCUMENT.match(name) and holds(path, layout, json_lines_log, tail=False):
        layout.jsonl_logs.append(path)  # a JSON-lines metrics log under a console's name (DINO's log.txt)
    elif explicit or (not DOCUMENT.match(name) and _looks_like_training_log(path, layout)):
        layout.text_logs.append(path)
    elif suffix != ".md" and not DOCUMENT.match(name) and holds(path, layout, holds_one_launch, tail=False):
        layout.config_files.append(path)  # the run's launch command, kept beside its log (command.txt)
    elif suffix != ".md" and not DOCUMENT.match(name):
        layout.quiet_texts.append(path)
    return True


def _launch_script(path: Path, layout: RunLayout, explicit: bool) -> bool:
    """A launch script of one command (run.sh), found on the walk: a configuration file."""
    if path.suffix.lower() == ".sh" and not explicit and holds(path, layout, holds_one_launch, tail=False):
        layout.config_files.append(path)
        return True
    return False


def _json_file(path: Path, layout: RunLayout, explicit: bool) -> bool:
    """A JSON file that is a history (named for a loss, Ludwig's statistics, or shaped as one) or LLaMA-Factory's
    arguments; a JSON file named and none of these is read as a trainer_state.json."""
    name = path.name
    suffix = path.suffix.lower()
    if suffix == ".json" and not name.startswith(_TOKENIZER_FILES) and (
            "loss" in name.lower() or name == _LUDWIG_STATISTICS
            or holds(path, layout, dumped_history, tail=False)):
        layout.json_histories.append(path)
    elif suffix == ".json" and not name.startswith(_TOKENIZER_FILES) and holds(path, layout, is_llamafactory_args,
                                                                                  tail=False):
        layout.config_files.append(path)  # LLaMA-Factory's arguments as JSON, of any name (`run_args.json`)
    elif explicit and suffix == ".json":
        # A JSON file given by name: treat it like a trainer_state.json (it may be renamed).
        layout.trainer_states.append(path)
    else:
        return False
    return True


# Ludwig's record of an experiment's metrics, one value per evaluation period (ingest.json_history)
_LUDWIG_STATISTICS = "training_statistics.json"
# A checkpoint folder's tokenizer files (megabytes each, never a history): not sniffed
_TOKENIZER_FILES = ("tokenizer", "vocab", "special_tokens_map", "added_tokens", "generation_config",
                    "preprocessor_config")
_SQLITE_SUFFIXES = {".db", ".sqlite", ".sqlite3"}
_SQLITE_MAGIC = b"SQLite format 3\x00"


def _is_sqlite(path: Path, layout: RunLayout) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError as err:
        layout.skipped.append(Skipped(str(path), os_reason(err)))
        return False


_CONFIG_NAMES = {
    "training_args.bin", "config.json", "adapter_config.json", "args.json", "training_args.yaml",
    "training_args.yml", "scaler.pt", "wandb-metadata.json",
    "sft_args.json",  # ms-swift 2.x's name for args.json (written in the output folder and each checkpoint)
    # ChatGLM-Efficient-Tuning and early LLaMA-Factory (hiyouga): the FinetuningArguments beside training_args.bin
    "finetuning_args.bin", "finetuning_args.json",
    # AutoTrain Advanced's training_params.json, Ludwig's model/model_hyperparameters.json
    "training_params.json", "model_hyperparameters.json",
    "model_metadata.json",  # a script's own record of its model (AnggaMarcelio's Keras translator: total_params)
}


# ds_config.json, deepspeed_config.json, ds_z3_config.json, zero2.json, zero_stage3_offload.json ...
_DEEPSPEED_CONFIG = re.compile(r"ds_|deepspeed|zero_?(stage_?)?[0-3]")


def _is_config(name: str) -> bool:
    if name in _CONFIG_NAMES or name.endswith("optim_states.pt"):
        return True
    lowered = name.lower()
    return lowered.endswith(".json") and bool(_DEEPSPEED_CONFIG.search(lowered))


def _is_metrics_table(path: Path, layout: RunLayout) -> bool:
    """A CSV file whose header names a step (or epoch) column and a loss column, TensorBoard's scalar export, a
    `step,value` series in a folder that holds a loss's (csv_header.folder_holds_a_loss_series), or a long table
    whose rows name a loss (csv_header.long_table_names_a_loss)."""
    try:
        cells = csv_header(path)
    except OSError as err:
        layout.skipped.append(Skipped(str(path), os_reason(err)))
        return False
    if is_step_value_header(cells):
        return folder_holds_a_loss_series(path.parent, layout.loss_series_folders)
    roles = long_table_columns(cells)
    if roles is not None:  # one row per metric per step: a metrics log where a row's metric is a loss
        return holds(path, layout, lambda chunk: long_table_names_a_loss(chunk, roles["name"]))
    return is_metrics_table_header(cells) or is_scalar_export_header(cells)


def _is_loss_number_file(path: Path, layout: RunLayout) -> bool:
    """A file of numbers only that its name says is a loss (`losses.txt`, `val_loss.txt`): no word in it for
    `log_hints` to find (JulesBelveze_text-summarizer, Salman313ali_LLM_from_scratch, HAOzj_GEC;
    forensics.loss_numbers)."""
    split = loss_file_split(path.name)
    return split is not None and holds(path, layout, lambda head: is_loss_numbers(decode_text(head)[0], split),
                                       tail=False)


_QUIET_LOOKED_AT = 200  # a folder of thousands of text files that is no run (a dataset) is not read through


def _looks_like_training_log(path: Path, layout: RunLayout) -> bool:
    return holds(path, layout, log_hinted)
