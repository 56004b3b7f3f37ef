"""Two kinds of configuration: the run's own (`RunConfig`) and ours (`Thresholds`).

`RunConfig` holds what the run was set up with (learning rate, warm-up, clipping, precision,
DeepSpeed, quantization, adapters), each value with the file that said it, so a report can
quote its evidence and point out where two files disagree.

`Thresholds` holds every number the analyzers and evidence rules judge by, in one place.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Thresholds:
    """Every threshold the detectors use. Override with `dataclasses.replace(Thresholds(), ...)`."""

    # grad_norm spike: robust z-score over a rolling window of earlier steps.
    spike_window: int = 20           # logged points in the baseline window
    spike_min_history: int = 5       # no spike is judged before this many points
    spike_factor: float = 5.0        # value / rolling median must exceed this ...
    spike_mad_z: float = 8.0         # ... and the robust z-score (MAD) this
    spike_recover_factor: float = 2.0  # recovered when back under this x the baseline
    spike_recover_points: int = 3      # ... for this many logged points in a row
    spike_warn_factor: float = 10.0    # a lone spike that recovers is a warning only from this factor up (else info)
    spike_early_factor: float = 20.0   # with fewer than spike_min_history earlier points, only a jump this big counts
    chain_window_points: int = 10      # a spike at most this many logged points before a NaN/collapse is linked to it
    updates_read_budget: int = 256 << 30  # weights read again for the update ratios between checkpoints
    optimizer_read_budget: int = 64 << 30  # over this many bytes of optimizer.pt in all, only key checkpoints' are read
    spike_quiet_loss_factor: float = 20.0  # a recovered grad_norm spike under this x, the loss unmoved, is info
    spike_storm_count: int = 3         # this many spikes, each within spike_storm_gap points of the last, are one storm
    spike_storm_gap: int = 100         # logged points between spikes that still makes them one unstable stretch
    # loss spike / divergence
    loss_spike_factor: float = 3.0   # loss / rolling median above this (and MAD z above spike_mad_z)
    loss_spike_early_factor: float = 3.0  # before spike_min_history points: a loss this many times the first ones
    # ... or, from random weights (the first loss about ln V), this x over both the first loss and ln V, with
    # grad_norm this many times its first value: the optimizer overshooting (`early_overshoot`)
    overshoot_factor: float = 1.2
    overshoot_grad_factor: float = 3.0
    divergence_factor: float = 1.5   # sustained: loss stays above this x its running minimum ...
    divergence_points: int = 5       # ... for this many logged points until the end
    divergence_max_recovery: float = 0.5  # ... and has come back less than this fraction from its peak
    divergence_min_rise: float = 0.1      # ... and ends at least this far (in loss units) above its low
    loss_spike_recover_factor: float = 1.25  # a loss spike is over when loss is back under this x the baseline
    loss_spike_min_rise: float = 0.1  # a loss spike rises at least this far (nats) above its baseline, and at
    # least this fraction of where the log started: less is immaterial however many times a near-zero baseline
    # it is (a memorized loss at 1e-3 touching 0.13 in a run that started at 5)
    # loss collapse
    collapse_abs: float = 1e-3       # loss at or below this counts as (near) zero
    collapse_points: int = 3         # ... for this many logged points in a row
    early_collapse_points: int = 10  # collapse within the first N logged points is "early"
    collapse_window: int = 5         # logged points before the fall that give the level it fell from
    collapse_drop_factor: float = 100.0  # a fall from >= this x collapse_abs in one logging interval is sudden
    memorization_gap_level: float = 0.1  # memorization goes on across brief bumps that stay under this loss
    memorization_level: float = 0.02  # without an eval loss, a training loss this low (after falling 10x) is memorized
    memorization_epochs: float = 5.0  # ... and after this many epochs over the data, already a loss this low:
    memorization_level_many_epochs: float = 0.1
    # a loss too low too soon to be learned: from a language-model level (at least `given_away_start` nats) to
    # `given_away_level` or less before the first epoch ends, under `memorization_level` from there to the end
    given_away_start: float = 1.0
    given_away_level: float = 0.01
    # values a loss cannot take; learning-rate anomalies
    impossible_loss_tolerance: float = 1e-6  # a cross-entropy below -this is impossible (float noise aside)
    lr_jump_factor: float = 10.0     # a logged LR above this x the highest before is outside the schedule
    lr_zero_points: int = 5          # LR exactly 0 for this many points mid-run (and a tenth of the log)
    # never learned: the loss at the random-guess level (ln 2, ln vocab) and nothing moving
    never_learned_points: int = 5       # logged points needed to judge
    never_learned_tolerance: float = 0.005  # within this of ln 2 counts as "at ln 2"
    never_learned_spread: float = 0.03  # a fresh-head loss moving less than this fraction of its level is flat
    never_learned_still: float = 1e-3   # a loss changing by at most this never moved
    # overfitting: the eval loss rising above its best while the training loss falls
    overfit_points: int = 3           # the last this many eval losses ...
    overfit_rise: float = 0.3         # ... all more than this fraction above the best before them
    overfit_steady_rise: float = 0.15  # or: rising at each of the last overfit_points + 1 evals, ending this far above
    # a training loss that is not the eval loss's quantity: this many times it at every evaluation ...
    train_eval_ratio: float = 3.0
    train_eval_gap: float = 0.5       # ... and this many nats above it
    grad_norm_huge: float = 1e3       # a grad_norm at least this at every logged step: the loss is scaled wildly
    # evidence of learning (no "healthy" without it)
    learning_min_points: int = 3      # fewer finite loss points cannot show learning
    learning_min_fall: float = 0.02   # the last tenth's median below the first tenth's by this fraction
    # fp16 / loss scale
    loss_scale_floor: float = 1.0    # DeepSpeed's default min_loss_scale
    overflow_storm_count: int = 5    # this many consecutive overflows is a storm
    scaler_warmup_steps: int = 10    # overflows/skipped steps this close to a (re)start are the scaler calibrating
    skipped_max_run: int = 3         # at most this many non-finite grad_norms in a row can be skipped steps
    fp16_max: float = 65504.0
    fp16_headroom_warn: float = 0.1  # absmax above this fraction of fp16_max is "near the limit"
    # checkpoint judgement
    absmax_bound: float | None = None  # optional extra "bad" criterion for checkpoints
    # cause evidence
    full_ft_lr_high: float = 5e-5    # peak LR above this on full fine-tuning is suspect
    lora_lr_high: float = 1e-3       # ... and above this on LoRA/QLoRA
    late_blocks_fraction: float = 0.25  # damage only in the last quarter of blocks is "late blocks"
    late_blocks_min_blocks: int = 8     # ... judged only on models with at least this many blocks
    early_blocks_fraction: float = 0.1  # damage only in embeddings / the first tenth of blocks is "early blocks"
    warmup_peak_fraction: float = 0.9   # first logged LR at or above this x the peak means no warm-up


# The gradient accumulation a console's banner states, kept apart from a config file's `gradient_accumulation_steps`:
# every HF console prints it, so it never divides a loss on the doubt of an unknown release (causes.logged_loss)
CONSOLE_ACCUMULATION = "console.gradient_accumulation_steps"


# What a reader of a run's configuration looks at first (RunConfig's short views).
KEY_SETTINGS = ("model.model_type", "model.name_or_path", "adapter.peft_type", "quant.load_in_4bit", "learning_rate",
                "lr_scheduler_type", "warmup_steps", "warmup_ratio", "max_grad_norm", "weight_decay", "optim", "fp16",
                "bf16", "per_device_train_batch_size", "gradient_accumulation_steps", CONSOLE_ACCUMULATION,
                "num_train_epochs", "max_steps", "ds.zero_optimization.stage", "ds.fp16.enabled", "ds.bf16.enabled")


@dataclass(frozen=True)
class ConfigValue:
    """One configuration value and the file (and key) it came from."""

    value: Any
    source: str


WHOLE_ARGS_DUMP = 60  # TrainingArguments had 75 fields in 4.9, 114 in 5.x


def _pickled_arguments(source: str, keys: set[str]) -> bool:
    """A training_args.bin that pickles the arguments object itself (its class named): every field it had."""
    return str(source).endswith("training_args.bin") and "training_args_class" in keys


# Where a notebook's code read as arguments is said to come from: a class the code names is no trained model's config
NOTEBOOK_CODE_SOURCE = "the notebook's code (arguments of the cells that ran)"


@dataclass
class RunConfig:
    """The run's configuration as read from its own files, with provenance.

    `values[key]` lists every (value, source) seen for a key, first the most authoritative.
    Keys use the TrainingArguments names where one exists (learning_rate, warmup_steps,
    warmup_ratio, max_grad_norm, fp16, bf16, lr_scheduler_type, ...), plus
    `ds.<dotted key>` for DeepSpeed, `model.<key>` for config.json, `adapter.<key>` for
    adapter_config.json and `quant.<key>` for quantization_config.
    """

    values: dict[str, list[ConfigValue]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # what was looked for and not found / not readable
    unreadable_files: list = field(default_factory=list)  # Skipped: each configuration file that could not be read

    def add(self, key: str, value: Any, source: str) -> None:
        self.values.setdefault(key, []).append(ConfigValue(value, source))

    def put_first(self, key: str, value: Any, source: str) -> None:
        """A value more authoritative than those seen so far (they stay, as conflicts)."""
        self.values.setdefault(key, []).insert(0, ConfigValue(value, source))

    def get(self, key: str, default: Any = None) -> Any:
        seen = self.values.get(key)
        return seen[0].value if seen else default

    def source_of(self, key: str) -> str | None:
        seen = self.values.get(key)
        return seen[0].source if seen else None

    def key_settings(self) -> dict[str, Any]:
        """The settings a reader looks at first (KEY_SETTINGS), those the run's files state, in that order."""
        return {key: self.get(key) for key in KEY_SETTINGS if key in self.values}

    def __repr__(self) -> str:
        """One line: the key settings, then how many keys from how many files (the whole of it: `.values`)."""
        shown = ", ".join(f"{key}={value!r}" for key, value in self.key_settings().items()) or "no key setting"
        return f"<RunConfig {shown}; {len(self.values)} keys from {len(self.sources)} files>"

    __str__ = __repr__

    def _repr_html_(self) -> str:
        """A notebook view: the key settings with the file each came from (values come from files: escaped)."""
        from html import escape

        rows = "".join(f"<tr><td>{escape(key)}</td><td>{escape(repr(value))}</td>"
                       f"<td>{escape(str(self.source_of(key)))}</td></tr>"
                       for key, value in self.key_settings().items())
        return (f"<p><strong>RunConfig</strong>: {len(self.values)} keys from {len(self.sources)} files "
                "(<code>.values</code> holds them all)</p><table><tr><th>setting</th><th>value</th><th>file</th></tr>"
                f"{rows}</table>")

    def whole_training_args(self) -> list[set[str]]:
        """The field names of each source that dumped a whole TrainingArguments (training_args.bin, the TensorBoard
        `args` text, a tracker's config: `WHOLE_ARGS_DUMP` fields or more, per_device_train_batch_size among them;
        a user's YAML holds a few). Which fields a release has dates it (causes.logged_loss, profile). The Trainer's
        training_args.bin, its pickled arguments object (the class named), holds the whole of its release's
        arguments however few they were (31 in transformers 3.0: qwu01_transformers_LM)."""
        by_source: dict[str, set[str]] = {}
        for key, seen in self.values.items():
            for value in seen:
                by_source.setdefault(value.source, set()).add(key)
        return [keys for source, keys in by_source.items() if "per_device_train_batch_size" in keys
                and (len(keys) >= WHOLE_ARGS_DUMP or _pickled_arguments(source, keys))]

    def conflicts(self) -> dict[str, list[ConfigValue]]:
        """Keys whose sources disagree."""
        out = {}
        for key, seen in self.values.items():
            distinct = {repr(v.value) for v in seen}
            if len(distinct) > 1:
                out[key] = seen
        return out

