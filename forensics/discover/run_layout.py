"""`RunLayout`: the files of one run, by kind, as `run.discover` finds them."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..findings import Skipped

# The RunLayout lists of log files, in the order they are read, and then every list of files.
LOG_KINDS = ("trainer_states", "tensorboard", "llamafactory_logs", "swift_logs", "jsonl_logs", "json_histories",
             "csv_logs", "loss_number_files", "dvclive_logs", "text_logs", "notebooks",
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
        loss_number_files: files of numbers only that their name says are losses (`losses.txt`, `val_loss.txt`:
            forensics.loss_numbers).
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
            args.json (sft_args.json), training_args.yaml, scaler.pt, wandb-metadata.json (the command line), DeepSpeed
            optimizer states, README.md (a PEFT model card says the quantization the adapter was trained on), other YAML
            files (LLaMA-Factory's and axolotl's run configurations, read by their keys), a JSON file of LLaMA-Factory's
            arguments under any name (`is_llamafactory_args`).
        skipped: what could not be looked at (no permission, symlink loop, ...).
        quiet_texts, quiet_notebooks: text files and notebooks with no training log line, looked at again for signs
            that a run was started there (`run_signs`) where nothing else of a run is found.
        scripts: the small regular .py files of a run folder (none for a single file given), read where one writes
            a metric log (`ingest.log_writing_script`).
        loss_series_folders: the folders whose `step,value` files were asked whether one is a loss's, and the answer
            (discover's bookkeeping for one walk, no file kind).
    """

    root: Path
    trainer_states: list[Path] = field(default_factory=list)
    tensorboard: list[Path] = field(default_factory=list)
    llamafactory_logs: list[Path] = field(default_factory=list)
    swift_logs: list[Path] = field(default_factory=list)
    jsonl_logs: list[Path] = field(default_factory=list)
    json_histories: list[Path] = field(default_factory=list)
    csv_logs: list[Path] = field(default_factory=list)
    loss_number_files: list[Path] = field(default_factory=list)
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
    scripts: list[Path] = field(default_factory=list)
    # each folder's answer to csv_header.folder_holds_a_loss_series, for this walk only
    loss_series_folders: dict[Path, bool] = field(default_factory=dict, repr=False, compare=False)

    @property
    def log_files(self) -> list[Path]:
        return [path for kind in LOG_KINDS for path in getattr(self, kind)]

    def is_empty(self) -> bool:
        return not (self.log_files or self.weight_files)

    def sort(self) -> None:
        for name in FILE_KINDS:
            setattr(self, name, sorted(set(getattr(self, name))))
        self.scripts = sorted(set(self.scripts))
