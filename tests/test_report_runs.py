"""Hand-made Analysis objects for the report tests (a broken run, a healthy one, a hostile one); no tests here.

Numbers come from simple formulas stated here, so tests can derive what the report must show.
The timeline goes through the real `build_timeline`; findings and checkpoint results are made
by hand because the report only renders them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from forensics.analysis import Analysis
from forensics.bisection import BisectResult
from forensics.checkpoints.types import STATS_COLUMNS, CheckpointInfo, CheckpointRef
from forensics.config import RunConfig
from forensics.findings import Cause, Finding, Skipped, sort_findings
from forensics.discover.run_layout import RunLayout
from forensics.timeline import LogRecords, build_timeline

XSS_SCRIPT = "<script>alert(1)</script>"
XSS_IMG = '"><img src=x onerror=alert(1)>'
HOSTILE = XSS_SCRIPT + XSS_IMG

LOG_EVERY = 10
LAST_STEP = 400
SPIKE_STEP = 300          # grad_norm x50
NAN_FROM = 320            # grad_norm NaN and loss logged as 0.0 (HF's filter) from here on
RESUME_FROM = 200         # the first attempt logged to 250, the resume restarted at 200
FIRST_ATTEMPT_END = 250
N_LAYERS = 12
BAD_LAYERS = (9, 10, 11)  # NaN in checkpoint-400


def steps(start=LOG_EVERY, stop=LAST_STEP):
    return np.arange(start, stop + 1, LOG_EVERY)


def loss_at(step):
    return 2.5 * np.exp(-np.asarray(step) / 200.0) + 0.5


def grad_norm_at(step):
    step = np.asarray(step)
    g = 1.0 + 0.001 * step
    g = np.where(step == SPIKE_STEP, 50.0 * g, g)
    return np.where(step >= NAN_FROM, np.nan, g)


def lr_at(step):
    return np.minimum(np.asarray(step) / 100.0, 1.0) * 3e-4


def _frame(step, metrics: dict, wall0: float) -> pd.DataFrame:
    rows = [{"step": int(s), "metric": m, "value": float(v[i]), "wall_time": wall0 + float(s)}
            for i, s in enumerate(step) for m, v in metrics.items()]
    return pd.DataFrame(rows).astype({"step": "int64", "value": "float64", "wall_time": "float64"})


def broken_records(extra_metric: str | None = None) -> list[LogRecords]:
    """Two TensorBoard files: an attempt to step 250 (its 200-250 abandoned) and the resume from 200."""
    first = steps(LOG_EVERY, FIRST_ATTEMPT_END)
    # The abandoned attempt logged a slightly higher loss, so it is not merged with the resume's points.
    first_metrics = {"loss": loss_at(first) + 0.3, "grad_norm": grad_norm_at(first), "learning_rate": lr_at(first)}
    second = steps(RESUME_FROM, LAST_STEP)
    loss = np.where(second >= NAN_FROM, 0.0, loss_at(second))
    second_metrics = {"loss": loss, "grad_norm": grad_norm_at(second), "learning_rate": lr_at(second)}
    if extra_metric:
        second_metrics[extra_metric] = loss_at(second)
    return [
        LogRecords("/runs/demo/runs/a/events.out.tfevents.1", "tensorboard", _frame(first, first_metrics, 1e9)),
        LogRecords("/runs/demo/runs/b/events.out.tfevents.2", "tensorboard", _frame(second, second_metrics, 2e9)),
    ]


def broken_findings(metric_name: str = "grad_norm") -> list[Finding]:
    spike = Finding("grad_norm_spike", "warning", SPIKE_STEP, "grad_norm jumped to 50x its median.",
                    metric=metric_name, evidence={"factor": 50.0})
    nan = Finding("nonfinite_metric", "error", NAN_FROM, f"{metric_name} is NaN from step {NAN_FROM}.",
                  metric=metric_name, caused_by=spike.key)
    masked = Finding("masked_nan_loss", "error", NAN_FROM, "loss logged as 0.0 next to a NaN grad_norm.",
                     end_step=LAST_STEP, metric="loss", caused_by=nan.key)
    weights = Finding("nonfinite_weights", "error", LAST_STEP, "checkpoint-400 holds NaN weights.",
                      caused_by=masked.key)
    old = Finding("loss_spike", "warning", 230, "loss spiked in an attempt a resume replaced.",
                  metric="loss", abandoned=True)
    return sort_findings([spike, nan, masked, weights, old])


def block_name(i: int) -> str:
    return f"model.layers.{i}"


def stats_frame(bad_layers=(), names_suffix: str = "") -> pd.DataFrame:
    """Per-tensor stats: two tensors per layer, absmax 0.1*(layer+1); NaN counts in `bad_layers`."""
    rows = []
    for i in range(N_LAYERS):
        for part in ("self_attn.q_proj.weight", "mlp.down_proj.weight"):
            bad = i in bad_layers
            rows.append({"name": f"{block_name(i)}.{part}{names_suffix}", "block": block_name(i),
                         "dtype": "BF16", "shape": "[16, 16]", "numel": 256, "n_nan": 7 if bad else 0,
                         "n_inf": 0, "absmax": 0.1 * (i + 1), "l2": 1.0, "mean": 0.0, "std": 0.1,
                         "zero_frac": 0.0, "fp16_headroom": 65504 / (0.1 * (i + 1)), "file": "model.safetensors"})
    return pd.DataFrame(rows, columns=STATS_COLUMNS)


def ref(name: str, step: int | None, root: str = "/runs/demo") -> CheckpointRef:
    path = Path(root) / name
    return CheckpointRef(name, step, path, (path / "model.safetensors",))


def broken_checkpoints(bad_name: str = "checkpoint-400", suffix: str = "") -> list[CheckpointInfo]:
    bad_stats = stats_frame(BAD_LAYERS, suffix)
    bad_tensors = bad_stats.loc[bad_stats["n_nan"] > 0, "name"].tolist()
    return [
        CheckpointInfo(ref("checkpoint-100", 100), "ok"),
        CheckpointInfo(ref("checkpoint-200", 200), "ok"),
        CheckpointInfo(ref("checkpoint-300", 300), "ok", stats=stats_frame(), full_scan=True),
        CheckpointInfo(ref("checkpoint-350", 350), "unreadable", reason="header offsets past the end of file"),
        CheckpointInfo(ref(bad_name, 400), "nonfinite", nonfinite_tensors=bad_tensors,
                       nonfinite_blocks=[block_name(i) for i in BAD_LAYERS], stats=bad_stats, full_scan=True),
    ]


def layout(root="/runs/demo", extra: str = "") -> RunLayout:
    r = Path(root)
    return RunLayout(root=r, tensorboard=[r / "runs/a/events.out.tfevents.1", r / "runs/b/events.out.tfevents.2"],
                     trainer_states=[r / f"checkpoint-300{extra}/trainer_state.json"],
                     weight_files=[r / "checkpoint-300/model.safetensors", r / "checkpoint-400/model.safetensors"])


def first_incident(findings: list[Finding]) -> Finding:
    return next(f for f in findings if f.kind == "grad_norm_spike")


def broken_analysis(causes: bool = True) -> Analysis:
    findings = broken_findings()
    config = RunConfig()
    config.add("learning_rate", 3e-4, "/runs/demo/training_args.bin")
    config.missing.append("DeepSpeed config")
    cause = Cause("lr_too_high", "likely", ["peak learning_rate 3e-4 (training_args.bin)"],
                  "lower the learning rate to 1e-5, warm up, clip at 1.0", title="Learning rate too high")
    return Analysis(
        path=Path("/runs/demo"), status="broken", findings=findings, first_incident=first_incident(findings),
        timeline=build_timeline(broken_records()), checkpoints=broken_checkpoints(), config=config,
        causes=[cause] if causes else [],
        skipped=[Skipped("/runs/demo/runs/c/events.out.tfevents.3", "truncated record"),
                 Skipped("/runs/demo/stdout.log", "not UTF-8")],
        layout=layout(),
    )


def healthy_analysis() -> Analysis:
    s = steps()
    rec = LogRecords("/runs/ok/trainer_state.json", "trainer_state",
                     _frame(s, {"loss": loss_at(s), "grad_norm": 1.0 + 0.001 * s, "learning_rate": lr_at(s)}, 1e9))
    return Analysis(path=Path("/runs/ok"), status="healthy", findings=[], first_incident=None,
                    timeline=build_timeline([rec]),
                    checkpoints=[CheckpointInfo(ref("checkpoint-400", 400, "/runs/ok"), "ok")])


def hostile_analysis() -> Analysis:
    """The broken run with the payloads in a metric name, tensor names, paths, a checkpoint name and messages."""
    root = f"/runs/{HOSTILE}"
    findings = broken_findings(metric_name=HOSTILE)
    # A checkpoint name that is broken mathtext too: matplotlib must draw it literally, not fail on it.
    checkpoints = broken_checkpoints(bad_name=f"ckpt-{HOSTILE}-$\\frac{{$-400", suffix=HOSTILE)
    config = RunConfig()
    config.add("learning_rate", HOSTILE, f"{root}/args.json")
    config.missing.append(HOSTILE)
    return Analysis(
        path=Path(root), status="broken", findings=findings, first_incident=first_incident(findings),
        timeline=build_timeline(broken_records(extra_metric=HOSTILE)), checkpoints=checkpoints, config=config,
        causes=[Cause(HOSTILE, "possible", [HOSTILE], HOSTILE, title=HOSTILE)],
        skipped=[Skipped(f"{root}/events.out.tfevents.{HOSTILE}", f"bad tag {HOSTILE}")],
        layout=layout(root, extra=HOSTILE),
    )


def bisect_result(analysis: Analysis | None = None) -> BisectResult:
    analysis = analysis or broken_analysis()
    cks = {c.name: c for c in analysis.checkpoints}
    first_bad = analysis.first_bad_checkpoint
    changes = pd.DataFrame({
        "tensor": first_bad.stats["name"], "block": first_bad.stats["block"],
        "rel_change": np.where(first_bad.stats["n_nan"] > 0, np.nan, 0.01 * np.arange(len(first_bad.stats))),
    })
    window_findings = [f for f in analysis.findings if 300 <= f.step <= 400 and not f.abandoned]
    return BisectResult(
        last_good=cks["checkpoint-300"].ref, first_bad=first_bad,
        probed=[(cks["checkpoint-200"].ref, "ok"), (cks["checkpoint-350"].ref, "unreadable"),
                (cks["checkpoint-300"].ref, "ok"), (first_bad.ref, "bad")],
        window=(300, 400), changes=changes, findings=window_findings,
        candidates=[c.ref for c in analysis.checkpoints],
    )
