"""Find what a run left on disk: which files of which kind are where. Read-only.

`discover(path)` walks a run folder once (or takes a single file) and sorts what it finds
into a `RunLayout`. It opens no file except to sniff the first bytes of text logs and JSON
files whose name does not say what they are.
"""
from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .errors import NotARunDirectory, os_reason
from .findings import Skipped
from .decoding import as_utf8, decode_text, sniffed_encoding
from .launch_command import holds_one_launch
from .run_signs import is_training_console, run_signs
from .metric_names import JSON_LINE_EPOCH_KEY, JSON_LINE_STEP_KEYS, is_metrics_table_header

# Folders that never hold a run's logs and can be huge.
# MLflow's `.trash` holds deleted experiments.
_SKIP_DIRS = {".git", "__pycache__", ".ipynb_checkpoints", "node_modules", ".venv", "venv", ".cache", ".trash"}

_TB_EVENT = re.compile(r"^events\.out\.tfevents\.")
_TEXT_LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".md"}
# A project's documents: a README quoting some lines of an earlier run is not this run's log (read when named).
_DOCUMENT = re.compile(r"(?i)^(?:readme|changelog|changes|license|contributing|history)(?:[._-].*)?$")
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
_SNIFF_BYTES = 1 << 16


# The RunLayout lists of log files, in the order they are read, and then every list of files.
LOG_KINDS = ("trainer_states", "tensorboard", "llamafactory_logs", "swift_logs", "jsonl_logs", "json_histories",
             "csv_logs", "dvclive_logs", "text_logs", "notebooks",
             "wandb_logs", "wandb_folders", "mlflow_runs", "mlflow_dbs")
FILE_KINDS = LOG_KINDS + ("config_files", "weight_files")


@dataclass
class RunLayout:
    """The files of one run, by kind. Paths are absolute; lists are sorted.

    Fields:
        root: the folder analyzed (or the folder of the single file given).
        trainer_states: every trainer_state.json (root and checkpoints).
        tensorboard: every TensorBoard event file, at any depth.
        llamafactory_logs, swift_logs, jsonl_logs: the JSONL training logs by flavour.
        json_histories: a training history a script dumped as JSON (`json.dump(trainer.state.log_history, f)`, a
            summary with a `history` list of log entries), Ludwig's training_statistics.json.
        csv_logs: CSV metric tables (Lightning's / LitGPT's metrics.csv, a script's own table).
        dvclive_logs: DVCLive folders (`dvclive/`: one `plots/metrics/<name>.tsv` a metric, read together).
        text_logs: captured stdout / log files that contain training log lines.
        notebooks: Jupyter notebooks (.ipynb) whose cell outputs show a training run (a Colab or Kaggle run).
        wandb_logs: every W&B run log (`run-<id>.wandb`), online or offline run.
        wandb_folders: W&B run folders without a `.wandb` log (deleted, or not copied): their
            `files/wandb-summary.json` and `files/config.yaml` are what is left of the run; or such a
            `files/` folder on its own (wandb-summary.json, config.yaml, output.log side by side).
        mlflow_runs: the run folders of MLflow file stores (`mlruns/<experiment>/<run_id>/`).
        mlflow_dbs: SQLite files (`mlflow.db`, ...): MLflow SQL stores, or some other program's database.
        weight_files: every file that may hold model weights (grouped into checkpoints later).
        config_files: training_args.bin, config.json, adapter_config.json, DeepSpeed configs,
            args.json (sft_args.json), training_args.yaml, scaler.pt, wandb-metadata.json (the command line), DeepSpeed optimizer states, README.md (a PEFT
            model card says the quantization the adapter was trained on), other YAML files (LLaMA-Factory's
            and axolotl's run configurations, read by their keys), a JSON file of LLaMA-Factory's arguments
            under any name (`is_llamafactory_args`).
        skipped: what could not be looked at (no permission, symlink loop, ...).
        quiet_texts, quiet_notebooks: text files and notebooks with no training log line, looked at again for signs
            that a run was started there (`run_signs`) where nothing else of a run is found.
    """

    root: Path
    trainer_states: list[Path] = field(default_factory=list)
    tensorboard: list[Path] = field(default_factory=list)
    llamafactory_logs: list[Path] = field(default_factory=list)
    swift_logs: list[Path] = field(default_factory=list)
    jsonl_logs: list[Path] = field(default_factory=list)
    json_histories: list[Path] = field(default_factory=list)
    csv_logs: list[Path] = field(default_factory=list)
    dvclive_logs: list[Path] = field(default_factory=list)
    text_logs: list[Path] = field(default_factory=list)
    notebooks: list[Path] = field(default_factory=list)
    wandb_logs: list[Path] = field(default_factory=list)
    wandb_folders: list[Path] = field(default_factory=list)
    mlflow_runs: list[Path] = field(default_factory=list)
    mlflow_dbs: list[Path] = field(default_factory=list)
    weight_files: list[Path] = field(default_factory=list)
    config_files: list[Path] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    quiet_texts: list[Path] = field(default_factory=list)
    quiet_notebooks: list[Path] = field(default_factory=list)

    @property
    def log_files(self) -> list[Path]:
        return [path for kind in LOG_KINDS for path in getattr(self, kind)]

    def is_empty(self) -> bool:
        return not (self.log_files or self.weight_files)

    def sort(self) -> None:
        for name in FILE_KINDS:
            setattr(self, name, sorted(set(getattr(self, name))))


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
        layout.text_logs += [p for p in quiet if _holds(p, layout, _a_training_console, together=True)]
        quiet = sorted(layout.quiet_notebooks)[:_QUIET_LOOKED_AT]
        layout.notebooks += [p for p in quiet if _holds_whole(p, layout, _a_training_console)]
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
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not _wandb_link(dirpath, d))
        _note_folders_named_as_weights(dirpath, dirnames, layout)
        _note_tracker_folder(Path(dirpath), dirnames, filenames, layout)
        for name in sorted(filenames):
            if not _tracker_own_file(dirpath, name) and _regular_file(Path(dirpath) / name, layout):
                _classify(Path(dirpath) / name, layout, explicit=False)


def _note_folders_named_as_weights(dirpath: str, dirnames: list[str], layout: RunLayout) -> None:
    """A folder named like a weights file (model.safetensors/) is where a checkpoint's weights were expected: said,
    not passed over in silence (what it holds is still walked)."""
    for name in dirnames:
        if Path(name).suffix.lower() in _WEIGHT_SUFFIXES and not _NOT_WEIGHTS.match(name):
            layout.skipped.append(Skipped(os.path.join(dirpath, name), "a folder named like a weights file, not a "
                                                                       "weights file; not read as weights"))


def _regular_file(path: Path, layout: RunLayout) -> bool:
    """Whether `path` (its link followed) is a regular file; anything else is listed as skipped. A FIFO blocks the
    reader until someone writes to it, a device such as /dev/zero never ends: neither is read."""
    if path.is_file():
        return True
    layout.skipped.append(Skipped(str(path), _not_regular(path)))
    return False


def _not_regular(path: Path) -> str:
    """Why `path` is not read: what it is instead of a regular file."""
    try:
        mode = path.stat().st_mode
    except OSError as err:
        return os_reason(err)
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    return f"{kind}, not a regular file; not read"


# --- experiment trackers' folders ---------------------------------------------------------------

_WANDB_RUN_DIR = re.compile(r"^(offline-)?run-\d{8}_\d{6}-.+$|^latest-run$")


def _wandb_link(dirpath: str, name: str) -> bool:
    """W&B's `latest-run` link (and the `latest-run.<pid>` links it leaves while switching it)
    points at a run folder that is read under its own name: not followed."""
    return name.startswith("latest-run") and os.path.islink(os.path.join(dirpath, name))


def _note_tracker_folder(folder: Path, dirnames: list[str], filenames: list[str], layout: RunLayout) -> None:
    """An MLflow file-store run folder, a W&B run folder whose `.wandb` log is gone, or a DVCLive folder; prunes
    what is read through them (MLflow's metrics/params/tags, W&B's own debug logs, DVCLive's plots)."""
    if "meta.yaml" in filenames and ("metrics" in dirnames or "params" in dirnames):
        layout.mlflow_runs.append(folder)
        dirnames[:] = [d for d in dirnames if d not in ("metrics", "params", "tags")]
    elif _WANDB_RUN_DIR.match(folder.name) and "files" in dirnames:
        if not any(name.endswith(".wandb") for name in filenames):
            layout.wandb_folders.append(folder)
        dirnames[:] = [d for d in dirnames if d not in ("logs", "tmp")]
    elif "wandb-summary.json" in filenames and not _read_through_its_run_folder(folder, layout.root):
        # a W&B run's `files/` folder on its own (copied out of wandb/, or the folder given)
        layout.wandb_folders.append(folder)
    elif "plots" in dirnames and _is_dvclive_folder(folder, filenames):
        layout.dvclive_logs.append(folder)  # its metric files are read together, not as tables of their own
        dirnames[:] = [d for d in dirnames if d != "plots"]


def _is_dvclive_folder(folder: Path, filenames: list[str]) -> bool:
    """DVCLive's layout (dvclive live.py, plots/metric.py): `plots/metrics/` holding TSVs with its header
    (`step<TAB><name>`, older `timestamp<TAB>step<TAB><name>`), in a folder named `dvclive` (its default) or beside
    the `metrics.json` / `dvc.yaml` it writes there."""
    named = folder.name == "dvclive" or "metrics.json" in filenames or "dvc.yaml" in filenames
    first = next((folder / "plots" / "metrics").rglob("*.tsv"), None) if named else None
    return first is not None and _DVCLIVE_HEADER.match(_first_line(first)) is not None


_DVCLIVE_HEADER = re.compile(r"^(?:timestamp\t)?step\t[^\t]+$")


def _first_line(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.readline(_SNIFF_BYTES).decode("utf-8-sig", errors="replace").rstrip("\r\n")
    except OSError:
        return ""


def _read_through_its_run_folder(folder: Path, root: Path) -> bool:
    """A run folder's `files/` below the folder analyzed: read through the run folder (its .wandb log or
    the files themselves), so not twice."""
    return folder != root and folder.name == "files" and bool(_WANDB_RUN_DIR.match(folder.parent.name))


def _tracker_own_file(dirpath: str, name: str) -> bool:
    """W&B's debug logs in `wandb/`: its own diagnostics, never the training's output."""
    return name.startswith("debug") and name.endswith(".log") and os.path.basename(dirpath) == "wandb"


def _classify(path: Path, layout: RunLayout, explicit: bool) -> None:
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
    elif suffix == ".ipynb":
        if explicit or _holds_whole(path, layout, _notebook_hinted):
            layout.notebooks.append(path)
        elif (problem := _notebook_problem(path)) is not None:
            layout.skipped.append(Skipped(str(path), problem))
        else:
            layout.quiet_notebooks.append(path)
    elif (suffix in (".csv", ".tsv") and explicit) or (suffix in _TABLE_SUFFIXES and _is_metrics_table(path, layout)):
        layout.csv_logs.append(path)
    elif _is_config(name) or (not explicit and (name.lower() == "readme.md" or suffix in (".yaml", ".yml"))):
        # a PEFT model card (README.md) says the base's quantization; a YAML file may be the run's configuration
        layout.config_files.append(path)
        if name.lower() == "readme.md" and _holds(path, layout, _readme_log):
            # the Trainer's model card: its `### Training results` table is a log; so are the Trainer's log dicts
            # an author pasted into the README
            layout.text_logs.append(path)
    elif suffix in _WEIGHT_SUFFIXES and not _NOT_WEIGHTS.match(name):
        layout.weight_files.append(path)
    elif name == ".metadata":  # a torch.distributed.checkpoint folder (its .distcp files are read through it)
        layout.weight_files.append(path)
    elif name.endswith(".index.json") and ("safetensors" in name or "pytorch_model" in name):
        layout.weight_files.append(path)
    elif suffix in _TEXT_LOG_SUFFIXES or not suffix or _ROTATED_LOG.search(name) or _RANK_LOG.match(name) or (
            explicit and suffix not in _WEIGHT_SUFFIXES | {".json"}):
        if not _DOCUMENT.match(name) and _holds(path, layout, _json_lines_log, tail=False):
            layout.jsonl_logs.append(path)  # a JSON-lines metrics log under a console's name (DINO's log.txt)
        elif explicit or (not _DOCUMENT.match(name) and _looks_like_training_log(path, layout)):
            layout.text_logs.append(path)
        elif suffix != ".md" and not _DOCUMENT.match(name) and _holds(path, layout, holds_one_launch, tail=False):
            layout.config_files.append(path)  # the run's launch command, kept beside its log (command.txt)
        elif suffix != ".md" and not _DOCUMENT.match(name):
            layout.quiet_texts.append(path)
    elif suffix == ".sh" and not explicit and _holds(path, layout, holds_one_launch, tail=False):
        layout.config_files.append(path)  # a launch script of one command (run.sh)
    elif suffix == ".json" and not name.startswith(_TOKENIZER_FILES) and (
            "loss" in name.lower() or name == _LUDWIG_STATISTICS or _holds(path, layout, _DUMPED_HISTORY.search, tail=False)):
        layout.json_histories.append(path)
    elif suffix == ".json" and not name.startswith(_TOKENIZER_FILES) and _holds(path, layout, is_llamafactory_args,
                                                                                   tail=False):
        layout.config_files.append(path)  # LLaMA-Factory's arguments as JSON, of any name (`run_args.json`)
    elif explicit and suffix == ".json":
        # A JSON file given by name: treat it like a trainer_state.json (it may be renamed).
        layout.trainer_states.append(path)


# A JSON list of log entries with a loss, bare or under a history key (ingest.json_history): its head holds both.
_DUMPED_HISTORY = re.compile(rb'^(?:\xef\xbb\xbf)?\s*(?:(?:\[|\{[^\[]{0,4000}"(?:log_history|history|logs|train_history|'
                             rb'training_history|metrics)"\s*:\s*\[)\s*\{[^\[\]]{0,2000}?"(?:loss|eval_loss)"\s*:\s*[-\d.NI]'
                             rb'|\{\s*"train_step_loss"\s*:\s*\[)')  # (llama-cookbook's metrics_data_*.json)


def is_llamafactory_args(head: bytes) -> bool:
    """Whether a JSON file's head is LLaMA-Factory's arguments (`llamafactory-cli train args.json` takes them so, and a
    script calling its run_exp(args) may save that dict beside the run): an object with its FinetuningArguments'
    `stage` and `finetuning_type`, a pair no other trainer's arguments hold."""
    return (head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") and b'"finetuning_type"' in head
            and b'"stage"' in head)


# Ludwig's record of an experiment's metrics, one value per evaluation period (ingest.json_history)
_LUDWIG_STATISTICS = "training_statistics.json"
# A checkpoint folder's tokenizer files (megabytes each, never a history): not sniffed
_TOKENIZER_FILES = ("tokenizer", "vocab", "special_tokens_map", "added_tokens", "generation_config", "preprocessor_config")
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
}


# ds_config.json, deepspeed_config.json, ds_z3_config.json, zero2.json, zero_stage3_offload.json ...
_DEEPSPEED_CONFIG = re.compile(r"ds_|deepspeed|zero_?(stage_?)?[0-3]")


def _is_config(name: str) -> bool:
    if name in _CONFIG_NAMES or name.endswith("optim_states.pt"):
        return True
    lowered = name.lower()
    return lowered.endswith(".json") and bool(_DEEPSPEED_CONFIG.search(lowered))


# What a captured stdout of a training run contains: HF dict lines, DeepSpeed overflow lines,
# Megatron / GPT-NeoX / nanotron iteration lines, Composer's `[batch=N/M]:` blocks, OLMo step headers, torchtitan
# step lines, NeMo's Lightning bars, nanochat / autoresearch `step N (P%) | loss:` and `Step N | Validation bpb:`
# lines, nanoGPT's `iter N: loss` / `step N: train loss`, verl's `step:N - name:value` lines, tqdm bars with a loss in
# their postfix, plain `batch: N, ..., loss: X` lines, modded-nanogpt's `step:N/M train_loss:X`, llm.c's `s:N trl:X`
# and build-nanogpt's `N train X` (two of them in a row), torchtune's `1|12|Loss: X` bar, NeMo-RL's
# `  • Loss: X`, transformers' no_trainer examples' `epoch 0: perplexity: P eval_loss: X`, MaxText's `Completed eval
# after train step N, loss=X`, fairseq2's `Train Metrics (step N) - NLL Loss: X`, mlx-lm's `iter train_loss` table,
# clu's `[N] collection=train ...`, EasyR1's `Step N` YAML blocks, the Flax examples' `Step... (N | Loss: X, ...)`,
# simpletransformers' `Epochs 1/3. Running Loss: X: 10%|` bar, H2O LLM Studio's logged `- INFO: train loss: X: 5%|`
# bar, MindFormers' `{ Epoch:[E/N], step:[n/M], loss: X`, OpenNMT-py's `Step N/M; acc: A; ppl: P; xent: X;`,
# lucidrains' `training loss: X` prints (ingest.pretrain_lines).
_LOG_HINT = re.compile(rb"""['"](loss|grad_norm|eval_loss|learning_rate|loss/train|embedding_loss)['"]\s*:|OVERFLOW!"""
                       # the same dict pasted with typographic quotes (\u2018loss\u2019: ...)
                       rb"""|\xe2\x80[\x98\x9c](?:loss|grad_norm|eval_loss|learning_rate)\xe2\x80[\x99\x9d]\s*:"""
                       rb"""|loss scale|\bstep \d+: \{'train/|\{"system/global_step": \d+|iteration:?\s+\d+\s*/\s*\d+\s*\||\[step=\d+|step:\s*\d+\s+loss:|reduced_train_loss="""
                       rb"""|(?:batch|token|sample)=\d+(?:/\d+)?\]:\r?\n\t Train """
                       rb"""|step:?\s+\d+(?:/\d+)?(?:\s+\([\d.]+%\))?\s+\|[\w ]*loss:"""
                       rb"""|Step \d+ \| Validation (?:bpb|loss):|(?:iter \d+: loss|step \d+: train loss) (?:\d|nan|inf)"""
                       rb"""|(?:batch|step|iter):\s*\d+,[^\n]*loss:\s*[-+.\w]"""
                       rb"""|\biter \d+ step \d+ \| loss train: [-+.\dnNiI]"""  # LitGPT's finetune and pretrain
                       rb"""|\bstep:\d+ - [^\n]*(?:loss|score/mean|grad_norm)[^\s:]*:[-+.\w]"""
                       rb"""|\d/\d+ \[[^\]\n]*(?:it/s|s/it),[^\]\n]*loss[\w/]*[ =:]\s*[-+.\dnNiI]"""
                       rb"""|Epoch:?\s*\[\d+/\d+\]\s*\(\d+/\d+\)[^\n]{0,20}?\bloss:\s*[-+.\dnNiI]"""
                       rb"""|(?m:^step:\d+/\d+ (?:train|val)_loss:[-+.\dnNiI])|(?m:^s:\d+ t[re]l:[-+.\dnNiI])"""
                       rb"""|(?m:^\d+ train [-+.\dnNiI][^\n]*\n\d+ train [-+.\dnNiI])"""
                       rb"""|(?m:^\s*\d+ \| loss[ :]\s*[-+.\dnNiI])|(?m:^\d+\|\d+\|Loss: [-+.\dnNiI])"""
                       rb"""|(?m:^\s*iter\s+train_loss\s[^\n]*\n\s*\d+\s+[-+.\dnNiI])"""
                       rb"""|(?m:^Step \d+\n[A-Za-z_][\w@.-]*:\n  [A-Za-z_][\w@.-]*:)"""
                       rb"""|(?m:^Step\.\.\. \(\d+ \| (?:Eval )?Loss: [-+.\dnNiI])"""
                       rb"""|\bEpochs \d+/\d+\. Running Loss: *[-+.\dnNiI][^\n:|]{0,20}: +\d{1,3}%\|"""
                       rb"""|(?m: - INFO: train loss: [-+.\dnNiI][^\n:|]{0,20}: +\d{1,3}%\|)"""
                       # NVIDIA DLLogger's StdOutBackend: `DLL 2020-06-04 01:09:11.569757 - <step> step_loss : 1.07`
                       rb"""|(?m:^DLL (?:[\d-]+[ T][\d:.]+ )?- [^\n]*?[\w.]*loss[\w.]* : [-+.\dnNiI])"""
                       # RWKV-LM's train_log.txt: each launch's head, then its arguments as a dict (`rwkv_args`)
                       rb"""|(?m:^NEW RUN \d{4}-\d\d-\d\d-\d\d-\d\d-\d\d[ \t]*\r?\n\{')"""
                       # the MetricLogger of DeiT / MAE / DETR / DINO / LLaMA-Adapter: `Epoch: [0]  [ 30/13000]  ...`
                       rb"""|Epoch: \[\d+(?:/\d+)?\]  \[ *\d+/\d+\]  [^\n]{0,200}?loss: [-+.\dnNiI]"""
                       # THUNLP-AIPoet's InfoLogger: `epoch: 1, 11/125 8.8%, 6.49s per iter, lr: 0.0003, ...` then losses
                       rb"""|(?m:^epoch: \d+, \d+/\d+ [\d.]+%, [\d.]+ ?s per iter, lr: [^\n]*\n[ \t]+[^\n]*?loss: *[-+.\dnNiI])"""
                       # ParlAI's training report: `time:10s total_exs:2432 epochs:0.04`, then its table's names
                       rb"""|(?m:time:[\d.]+s total_exs:\d+ epochs:[\d.]+[^\n]*\n[ \t]+(?:[\w@/.-]+ +)*loss(?: |$))""")
# One line of a framework's own that prose may quote (a notes file with `[1200] collection=train loss=nan`): two needed
_FRAMEWORK_LINE_HINT = re.compile(rb"""Global step \d+: \{|(?m:^\[\d+ \| [\d.]+\] loss=[-+.\dnNiI])"""
                                  rb"""|\bstep=\d+ loss=[-+.\dnNiI][^\n]* tgs \(tokens/gpu/second\)="""
                                  rb"""|(?m:^\s+\xe2\x80\xa2 Loss: [-+.\dnNiI])"""
                                  rb"""|\bepoch \d+: perplexity: [-+.\dnNiI][^\n]* eval_loss: """
                                  rb"""|Completed eval after train step \d+, loss=|Metrics \(step \d+\) - """
                                  rb"""|\] collection=train """
                                  rb"""|\{ Epoch:\[\s*\d+/\s*\d+\], step:\[\s*\d+/\s*\d+\], loss:"""  # MindFormers
                                  rb"""|\bStep \d+(?:/\s*\d+)?; acc:\s*[-+.\w]+; ppl:\s*[-+.\w]+; xent: """  # OpenNMT-py
                                  rb"""|\bEpoch\s*\d+,\s*\d+/\s*\d+; acc:\s*[-+.\w]+; ppl:\s*[-+.\w]+; xent: """  # its 2018 line
                                  rb"""|(?m:^-{3,} ?STEP \d+ ?-{3,}[ \t]*\n[A-Za-z_][\w/.@-]*:\t)"""  # a PPO loop's prints
                                  # the TF PTB word-LM tutorial's running line: `0.083 perplexity: 14566.362 speed: 525 wps`
                                  rb"""|\b\d\.\d{3} perplexity: [\d.]+ speed: \d+ wps"""
                                  # Keras 2.2's fit(verbose=2): `Epoch 1/200`, then ` - 131s - loss: 2.3976` (no n/N)
                                  rb"""|(?m:^Epoch \d+/\d+[ \t]*\n[ \t]*- \d+m?s - loss: [-+.\dnNiI])"""
                                  # TF Estimator's hook line: `INFO:tensorflow:loss = 1.96779, step = 54901 (116.492 sec)`
                                  rb"""|(?m:[:\]\s]loss = [-+.\dnNiI][^\n,]*, (?:global_)?step = \d+(?: \([\d.]+ sec\))?[ \t]*$)"""
                                  # tinygrad's MLPerf line, each value before its name: `    1 93.44 s run, 11.8750 loss, 1e-12 LR`
                                  rb"""|(?m:^[ \t]*\d+ [-+.\deE]+ [A-Za-z][\w ]{0,20}, [-+.\deEnNiI]+ loss, [-+.\deE]+ [A-Za-z])""")
_FRAMEWORK_LINES = 2
# A hand-written loop's line (a step, iter or epoch count, or a bare n/M, then a loss with its number): so loose
# that prose can hold one (`step 30 loss nan, then we switched to bf16`), so a file needs `_LOOSE_LINES` of them.
_LOOSE_HINT = re.compile(rb"""(?i)(?:(?<![\w/])(?:step|iter(?:ation)?|epoch)[ \t]*(?:[:=#][ \t]*)?\[?\d+"""
                         rb"""|\d[ \t]*/[ \t]*\d+)[^\n{]{0,120}?(?:\b|(?<=_)|(?<=entropy))loss[ \t]*(?:[:=][ \t]*)?"""
                         rb"""[-+]?(?:\d|nan|inf)""")  # (a loss named for its criterion: `CrossEntropyLoss: 10.68`)
_LOOSE_LINES = 3
# Unsloth's own loop, unsloth_train: its banner, then a `step, loss` print every logging_steps steps, on a line of its
# own or after the tqdm bar (`...12.12s/it]10, 2.2398`): the banner and `_LOOSE_LINES` prints
_UNSLOTH_TRAIN = b"==((====))==  Unsloth - 2x faster free finetuning"
_UNSLOTH_PRINT = re.compile(rb"(?m)(?:^|(?:it/s|s/it)\])\d{1,12}, [-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|nan|inf)[ \t]*$")
# A loop's once-an-epoch line of its two losses and the perplexity beside them (`Epoch 007: train=1.9021, val=1.9530,
# ppl=7.05`): `_LOOSE_LINES` of them (the reader keeps those whose ppl is exp of a loss)
_EPOCH_LOSSES_HINT = re.compile(rb"""(?i)(?<![\w/])epoch[ \t]*\d+(?:[ \t]*/[ \t]*\d+)?[ \t]*:[ \t]*train(?:ing)?[ \t]*=[ \t]*"""
                                rb"""[-+.\dnNiI][^\n]{0,60}?\bppl[ \t]*=[ \t]*[-+.\dnNiI]""")
# A loss printed as a scalar torch tensor, alone on its line (`tensor(nan, device='cuda:0')`): five in a file.
_PRINTED_TENSOR = re.compile(rb"(?im)^[ \t]*(?:(?:train(?:ing)?[ _])?loss[ \t]*[:=]?[ \t]*)?tensor\([ \t]*[-+]?(?:nan|inf|\d)")
_PRINTED_TENSORS = 5
# lucidrains' scripts print `training loss: 2.48` alone once a batch (after tqdm's bar, when it drew one), back to back
# (a `validation loss: X` print between some): a line prose may hold once, and a sweep's summary once a trial, each
# under its own header, so a file needs `_LOSS_PRINTS` of them each followed at once by the next
_LOSS_PRINT = re.compile(rb"(?m)(?:^|\])training loss: [-+]?(?:\d[\d.eE+-]*|nan|inf)[ \t]*\r?\n"
                         rb"(?=(?:(?:[^\n]*\])?validation loss: [^\n]*\n)?(?:[^\n]*\])?training loss: )")
_LOSS_PRINTS = 9


# The header of the Trainer's notebook progress table (copied as text) or of its model card's results table.
# (the card's table as a web page shows it has its cells separated by spaces: `Training Loss Epoch Step Validation Loss`)
_RESULTS_TABLE = re.compile(rb"(?m)^[ \t|]*(?:Step|Epoch|Training Loss)[ \t]*[\t|][^\n]*(?:Training|Validation) Loss"
                            rb"|^Training Loss (?:Epoch Step|Step Epoch) Validation Loss\b")


# The Trainer's printed log dicts, values as numbers or as strings (`{'loss': '0.5717', 'grad_norm': ...}`)
_LOG_DICT = re.compile(rb"""\{['"]loss['"]: '?[-\d.]""")
_README_DICTS = 3


def _readme_log(chunk: bytes) -> bool:
    """A README that holds a training log: the Trainer's results table, or `_README_DICTS` of its log dicts."""
    return bool(_RESULTS_TABLE.search(chunk)) or _at_least(_LOG_DICT, chunk, _README_DICTS)


# The same table as HTML, as Jupyter displays it (a notebook's output, nbconvert's Markdown export): its header cells
# A pandas DataFrame of per-epoch results as its repr prints it (`ingest.dataframe_table`): a header of names, one of
# them a loss, its index named epoch (or step) on the next line or an epoch column, then a row of numbers
_HISTORY_TABLE = re.compile(rb"(?m)^(?=[^\n]*loss)[ \t]+[A-Za-z_][\w \t]*\n(?:epoch|step)[ \t]*\n[ \t]*\d+[ \t]+[-+\d.nN]"
                            rb"|^(?=[^\n]*loss)(?=[^\n]*\b(?:epoch|step)\b)[ \t]*[A-Za-z_][\w \t]*\n[ \t]*\d+[ \t]+[-+\d.nN]")
_TRAINER_TABLE_HTML = re.compile(rb"<th\b[^>]*>\s*(?:Training|Validation)(?:\s|&nbsp;|&#160;)+Loss\s*</th>")


# A hand-written loop's line with no counter at all: a loss (`loss`, or one named for its objective, `rl_loss`) and
# another `name: number` after it (`loss: 1.3741, orth_loss: 0.0015, grad_norm: 1.9062`), `_UNCOUNTED_LINES` of them.
_UNCOUNTED_HINT = re.compile(rb"""(?i)(?:\b|(?<=_))loss[ \t]*[:=][ \t]*[-+]?(?:\d|nan|inf)[^\n]{0,40}?[,|][ \t]*\w+[ \t]*[:=][ \t]*"""
                            rb"""[-+]?(?:\d|nan|inf)""")
_UNCOUNTED_LINES = 5
# What a terminal or a launcher adds to a line (colour codes; torchrun's `[rank0]: `): gone before the hints are
# looked for, as the console reader drops them (some hints are anchored at a line's start)
_ANSI_BYTES = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]")
_LAUNCHER_BYTES = re.compile(rb"(?m)^(?:\d+: )?\[(?:rank|default)\d+\]: ?")
# a log collector's time or task label before every line (`docker logs -t`, `srun --label`), as the reader drops them
_STAMP_BYTES = re.compile(rb"(?m)^(?:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}) |\d{1,4}: )")


def _hinted(chunk: bytes) -> bool:
    """A chunk of a file holds a line of a known training log, or `_LOOSE_LINES` lines of a hand-written loop (or
    `_UNCOUNTED_LINES` of its counter-less lines, `_PRINTED_TENSORS` of its printed loss tensors, or `_LOSS_PRINTS` of
    lucidrains' `training loss: X` prints)."""
    chunk = chunk[3:] if chunk.startswith(b"\xef\xbb\xbf") else chunk
    chunk = _ANSI_BYTES.sub(b"", chunk) if b"\x1b" in chunk else chunk
    chunk = _LAUNCHER_BYTES.sub(b"", chunk) if b"]:" in chunk else chunk
    chunk = _STAMP_BYTES.sub(b"", chunk) if _STAMP_BYTES.match(chunk) else chunk
    # a tqdm bar's carriage returns end lines too (a Windows line end is one line end, not two)
    chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in chunk else chunk
    if _LOG_HINT.search(chunk) or _RESULTS_TABLE.search(chunk) or _TRAINER_TABLE_HTML.search(chunk) or (
            b"loss" in chunk and _HISTORY_TABLE.search(chunk)):
        return True
    return (_at_least(_LOOSE_HINT, chunk, _LOOSE_LINES) or _at_least(_UNCOUNTED_HINT, chunk, _UNCOUNTED_LINES)
            or _at_least(_EPOCH_LOSSES_HINT, chunk, _LOOSE_LINES)
            or _at_least(_FRAMEWORK_LINE_HINT, chunk, _FRAMEWORK_LINES)
            or _at_least(_PRINTED_TENSOR, chunk, _PRINTED_TENSORS) or _at_least(_LOSS_PRINT, chunk, _LOSS_PRINTS)
            or _UNSLOTH_TRAIN in chunk and _at_least(_UNSLOTH_PRINT, chunk, _LOOSE_LINES))


_JSON_LINES_SNIFFED = 20  # lines of a file's head that must each be a JSON object with a step (or epoch)
_LOSS_KEY = re.compile(r"(?i)loss")


def _json_lines_log(chunk: bytes) -> bool:
    """A file that is a JSON-lines metrics log whatever its name (`log.txt`, `train.log`): each of the first
    `_JSON_LINES_SNIFFED` lines of its head (a cut last line aside) a JSON object holding a step key (or an epoch),
    one of them a loss. A console with a JSON line among its prints is not one."""
    lines = [line for line in chunk.split(b"\n") if line.strip()]
    if len(chunk) >= _SNIFF_BYTES and lines:
        lines = lines[:-1]  # the head may end mid-line
    if not lines or not lines[0].lstrip().startswith((b"{", b"\xef\xbb\xbf{")):
        return False
    steps = set(JSON_LINE_STEP_KEYS) | {JSON_LINE_EPOCH_KEY}
    loss = False
    for line in lines[:_JSON_LINES_SNIFFED]:
        try:
            obj = json.loads(line.decode("utf-8-sig"))
        except (ValueError, RecursionError):
            return False
        if not isinstance(obj, dict) or not steps & set(obj):
            return False
        loss = loss or any(_LOSS_KEY.search(str(key)) for key in obj)
    return loss


def _at_least(pattern: re.Pattern, chunk: bytes, n: int) -> bool:
    return any(i + 1 >= n for i, _ in enumerate(pattern.finditer(chunk)))


def _is_metrics_table(path: Path, layout: RunLayout) -> bool:
    """A CSV file whose header names a step (or epoch) column and a loss column."""
    try:
        with open(path, "rb") as fh:
            header = fh.readline(_SNIFF_BYTES).decode("utf-8-sig", errors="replace")
    except OSError as err:
        layout.skipped.append(Skipped(str(path), os_reason(err)))
        return False
    return is_metrics_table_header(re.split(r"[,\t]", header.strip()))


def _holds(path: Path, layout: RunLayout, found: Callable[[bytes], bool], tail: bool = True,
           together: bool = False) -> bool:
    """Whether `found` holds for the head or (with `tail`) the tail of a file (`_SNIFF_BYTES` each: logs often start
    with banners; a JSON file's shape is in its head alone), or (`together`) for the head and tail joined: signs that
    belong together may be far apart, a run's start in its head and the traceback that ended it in its tail."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
            encoding, _ = sniffed_encoding(head)  # a UTF-16 console (PowerShell's `>`) is searched as its text
            if found(as_utf8(head, encoding)):
                return True
            size = os.fstat(fh.fileno()).st_size
            if tail and size > _SNIFF_BYTES:
                fh.seek(max(size - _SNIFF_BYTES, _SNIFF_BYTES) // 2 * 2)  # even: a UTF-16 character's first byte
                end = fh.read(_SNIFF_BYTES)
                return found(as_utf8(head + end if together else end, encoding))
    except OSError as err:
        layout.skipped.append(Skipped(str(path), os_reason(err)))
    return False


_QUIET_LOOKED_AT = 200  # a folder of thousands of text files that is no run (a dataset) is not read through


def _a_training_console(chunk: bytes) -> bool:
    return is_training_console(run_signs(chunk))


# A notebook is read whole to be sniffed (its outputs may lie between megabytes of images); a bigger one is skipped
_MAX_NOTEBOOK_BYTES = 256 << 20


def _notebook_hinted(data: bytes) -> bool:
    """A notebook whose cell outputs hold a training log's line or the Trainer's notebook table."""
    if _TRAINER_TABLE_HTML.search(data):
        return True
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # cut mid-write: kept when its raw text shows a line, for its reader to name
        return _hinted(data)
    sheets = notebook.get("worksheets") if isinstance(notebook, dict) else None  # nbformat 3
    cells = notebook.get("cells") if isinstance(notebook, dict) and "cells" in notebook else [
        c for w in sheets if isinstance(w, dict) and isinstance(w.get("cells"), list) for c in w["cells"]] \
        if isinstance(sheets, list) else None
    strings: list[str] = []
    _strings_in([c.get("outputs") for c in cells if isinstance(c, dict)] if isinstance(cells, list) else [], strings)
    return _hinted("\n".join(strings).encode("utf-8", "replace"))


def _notebook_problem(path: Path) -> str | None:
    """Why a notebook that shows no training cannot be read as a notebook (cut, not JSON, cells not a list), or None
    for a whole notebook that simply holds no training (a data-preparation notebook is passed over in silence)."""
    try:
        with open(path, "rb") as fh:
            text, _ = decode_text(fh.read(_MAX_NOTEBOOK_BYTES))
        notebook = json.loads(text)
    except OSError as err:
        return os_reason(err)
    except json.JSONDecodeError as err:
        return f"invalid JSON at line {err.lineno} column {err.colno} ({err.msg}); the notebook may be cut"
    except RecursionError:
        return "JSON nested too deeply; not a Jupyter notebook"
    cells = notebook.get("cells", notebook.get("worksheets")) if isinstance(notebook, dict) else None
    return None if isinstance(cells, list) else "no list of cells; not a Jupyter notebook"


def _strings_in(value, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        out.append("".join(value))  # a notebook's multi-line string: its lines keep their newlines
    elif isinstance(value, list):
        for item in value:
            _strings_in(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _strings_in(item, out)


def _holds_whole(path: Path, layout: RunLayout, found: Callable[[bytes], bool]) -> bool:
    try:
        if os.path.getsize(path) > _MAX_NOTEBOOK_BYTES:
            layout.skipped.append(Skipped(str(path), f"a notebook over {_MAX_NOTEBOOK_BYTES >> 20} MB: not sniffed"))
            return False
        with open(path, "rb") as fh:
            data = fh.read()
        return found(as_utf8(data, sniffed_encoding(data)[0]))
    except OSError as err:
        layout.skipped.append(Skipped(str(path), os_reason(err)))
    return False


def _looks_like_training_log(path: Path, layout: RunLayout) -> bool:
    return _holds(path, layout, _hinted)
