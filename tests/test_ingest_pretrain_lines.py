"""Console logs of the pre-training stacks: Megatron-LM / Megatron-DeepSpeed iteration lines,
OLMo step blocks, torchtitan step lines, and Megatron / NeMo TensorBoard tags.

The excerpts in tests/console_samples/ are real public logs (PROVENANCE.md there); expected
values are read off their lines. Lines built here follow the printing code cited next to them.
"""
from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

import forensics
from forensics.ingest import read_logs, stdout, tensorboard
from forensics.discover.run import discover

SAMPLES = Path(__file__).parent / "console_samples"
FP16_SLURM = SAMPLES / "megatron_gpt2_fp16_slurm.out"
BLOOM = SAMPLES / "bloom_176b_bf16_rank_prefixed.log"


def _series(frame, metric):
    rows = frame[frame["metric"] == metric]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist()))


def _megatron_line(iteration, loss, scale, grad, skipped=0, nan=0, total=1000):
    """One line as Megatron-LM's training_log prints it (megatron/training/training.py: fields
    `key: value |`, lm loss as .6E, loss scale .1f, grad norm .3f, counts as 3d)."""
    fields = [f" iteration {iteration:8d}/{total:8d} |", f" consumed samples: {iteration * 4:12d} |",
              " elapsed time per iteration (ms): 1379.8 |", " learning rate: 1.471E-04 |",
              " global batch size:     4 |"]
    if loss is not None:
        fields.append(f" lm loss: {loss:.6E} |")
    fields.append(f" loss scale: {scale:.1f} |")
    if grad is not None:
        fields.append(f" grad norm: {grad:.3f} |")
    fields += [f" number of skipped iterations: {skipped:3d} |", f" number of nan iterations: {nan:3d} |"]
    return "".join(fields)


def test_megatron_fp16_slurm_log_reads_every_field():
    rec = stdout.read(FP16_SLURM)
    assert rec.console_kinds == ("megatron",)
    assert rec.meta["max_steps"] == 1000 and not rec.warnings
    loss = _series(rec.frame, "loss")
    assert sorted(loss) == list(range(20, 201, 10))  # iteration 10: every step skipped, no lm loss printed
    assert loss[20] == 12.03115 and loss[200] == 7.365868
    assert _series(rec.frame, "skipped_iterations")[10] == 10.0
    assert [_series(rec.frame, "loss_scale")[s] for s in (10, 20, 30, 40)] == [8388608.0, 32768.0, 16384.0, 16384.0]
    grad = _series(rec.frame, "grad_norm")
    assert 10 not in grad and 20 not in grad and grad[30] == 16.999
    assert _series(rec.frame, "eval_loss") == {100: 8.017406, 200: 7.487306}
    assert _series(rec.frame, "eval_ppl")[100] == 3033.3
    assert _series(rec.frame, "learning_rate")[10] == 0.0
    assert _series(rec.frame, "consumed_samples")[200] == 800.0
    assert _series(rec.frame, "nan_iterations")[30] == 0.0


def test_megatron_slurm_out_is_found_and_its_fp16_warmup_is_skipped_updates_not_a_storm(tmp_path):
    """The .out of a Slurm job is discovered as a log; the scaler's warm-up (scale halving from 2**32 over the first
    ~20 iterations, then steady) is updates skipped, a warning the owner should know of (VERDICTS.md), no storm."""
    shutil.copy(FP16_SLURM, tmp_path / "slurm-1809579.out")
    assert [p.name for p in discover(tmp_path).text_logs] == ["slurm-1809579.out"]
    result = forensics.analyze(tmp_path, check_checkpoints=False)
    assert not [f for f in result.findings if f.kind == "loss_scale_overflow"]
    skipped = [f for f in result.findings if f.evidence.get("deepspeed_overflow")]
    assert len(skipped) == 1 and (skipped[0].kind, skipped[0].severity, skipped[0].step) == ("skipped_steps", "warning", 20)
    assert skipped[0].evidence["n_overflows"] == 2
    assert result.status != "broken"


def test_megatron_rank_prefixed_bf16_lines():
    rec = stdout.read(BLOOM)
    assert _series(rec.frame, "loss") == {31214: 2.198845, 31215: 2.220424, 31216: 2.595213,
                                          31217: 2.241558, 31218: 2.345279}
    assert _series(rec.frame, "grad_norm")[31218] == 145.119
    assert _series(rec.frame, "iteration_time_s")[31214] == 106.46
    assert _series(rec.frame, "samples_per_second")[31215] == 19.338
    assert _series(rec.frame, "consumed_tokens")[31214] == 97829879808.0
    assert "loss_scale" not in set(rec.frame["metric"])  # bf16 prints no loss scale


def test_constant_unit_loss_scale_is_no_scaler_but_a_fall_to_one_is_the_floor(tmp_path):
    bf16 = tmp_path / "bf16.log"
    bf16.write_text("\n".join(_megatron_line(i, 6.0 - i / 100, 1.0, 1.5) for i in range(10, 110, 10)) + "\n")
    assert "loss_scale" not in set(stdout.read(bf16).frame["metric"])
    assert not [f for f in forensics.analyze(bf16).findings if f.kind == "loss_scale_overflow"]

    fp16 = tmp_path / "fp16.log"
    scales = [65536.0, 65536.0, 8192.0, 512.0, 16.0, 1.0, 1.0]
    lines = [_megatron_line(10 * (k + 1), 3.0, s, 2.0 if s > 1 else None, skipped=0 if s == 65536.0 else 10)
             for k, s in enumerate(scales)]
    fp16.write_text("\n".join(lines) + "\n")
    overflow = [f for f in forensics.analyze(fp16).findings if f.kind == "loss_scale_overflow"]
    assert len(overflow) == 1 and overflow[0].severity == "error" and overflow[0].evidence["floor_step"] == 60


def test_megatron_nan_loss_is_a_nonfinite_incident(tmp_path):
    """bf16 does not skip an iteration whose loss is NaN: the interval's average prints as NAN."""
    lines = [_megatron_line(i, 5.0 - i / 100, 1.0, 1.2) for i in range(10, 60, 10)]
    lines += [_megatron_line(i, math.nan, 1.0, math.nan) for i in range(60, 90, 10)]
    assert " lm loss: NAN |" in lines[-1] and " grad norm: nan |" in lines[-1]
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    result = forensics.analyze(path)
    assert result.status == "broken"
    assert result.first_incident.kind == "nonfinite_metric" and result.first_incident.step == 60


def test_megatron_log_cut_mid_line_keeps_the_complete_fields(tmp_path):
    text = FP16_SLURM.read_text()
    last = text.rindex(" iteration      200/")
    cut_at = text.index("lm loss:", last) + len("lm loss: 7.36")  # inside the loss value
    path = tmp_path / "slurm-1.out"
    path.write_text(text[:cut_at])
    rec = stdout.read(path)
    assert 200 not in _series(rec.frame, "loss")  # the cut field is not read
    assert _series(rec.frame, "consumed_samples")[200] == 800.0  # the fields before it are
    assert list(rec.warnings) == ["the last line (step 200) is cut mid-write; its complete fields were kept"]
    _, skipped = read_logs(discover(tmp_path))
    assert len(skipped) == 1 and skipped[0].path == str(path) and "step 200" in skipped[0].reason


def test_olmo_step_blocks():
    rec = stdout.read(SAMPLES / "olmo_1b_steps.log")
    assert rec.console_kinds == ("olmo",) and rec.meta["max_steps"] == 739328
    assert _series(rec.frame, "loss") == {1: 11.25, 2: 10.73, 3: 10.64, 4: 10.95, 5: 10.49, 6: 10.07}
    assert _series(rec.frame, "Perplexity")[1] == 76631.0  # thousands commas
    assert _series(rec.frame, "throughput/total_tokens")[6] == 25165824.0


def test_olmo_one_line_form_and_olmo_core_names(tmp_path):
    path = tmp_path / "olmo.log"
    path.write_text("[step=10/100] train/CrossEntropyLoss=2.5 optim/total_grad_norm=0.75\n"
                    "[step=20/100,epoch=0]\n    train/CE loss=2.25\n    optim/total grad norm=nan\n"
                    "    optim/LR (group 0)=0.0003\nsome other line\n")
    rec = stdout.read(path)
    assert _series(rec.frame, "loss") == {10: 2.5, 20: 2.25}
    grad = _series(rec.frame, "grad_norm")
    assert grad[10] == 0.75 and math.isnan(grad[20])
    assert _series(rec.frame, "learning_rate") == {20: 0.0003}


# torchtitan's Color (torchtitan/tools/logging-era utils: `Color.red = "\033[31m"`, ...) as
# MetricsProcessor.log puts it around each field.
_COLOURS = {"step": "\033[31m", "loss": "\033[32m", "grad_norm": "\033[33m", "memory": "\033[36m",
            "tps": "\033[34m", "tflops": "\033[36m", "mfu": "\033[35m"}


def _coloured(line: str) -> str:
    for key, code in _COLOURS.items():
        line = line.replace(f" {key}:", f" {code}{key}:", 1)
    return line.rstrip("\n") + "\033[39m\n"


def test_torchtitan_lines_with_ansi_colours_and_rank_copies(tmp_path):
    path = tmp_path / "titan.log"
    path.write_text("".join(_coloured(line) for line in
                            (SAMPLES / "torchtitan_debug_model_ranks.log").read_text().splitlines(keepends=True)))
    assert "\033[32mloss:" in path.read_text()
    rec = stdout.read(path)
    assert rec.console_kinds == ("torchtitan",)
    assert _series(rec.frame, "loss") == {1: 8.1661, 2: 6.1098, 3: 4.7947, 20: 11.8347}  # step 20 printed twice
    assert _series(rec.frame, "grad_norm")[2] == 4.6416
    assert _series(rec.frame, "tps")[2] == 177138.0
    assert _series(rec.frame, "memory_gib")[20] == 69.83
    assert (rec.frame["step"] == 20).sum() == 6  # one copy of the six fields


def test_resumed_megatron_log_keeps_both_attempts(tmp_path):
    """Rank copies are dropped only within one stretch of a step: a resume that logs step 20
    again after step 30 is a second attempt for the timeline."""
    lines = [_megatron_line(s, 3.0 - s / 100, 1.0, 1.0) for s in (10, 20, 30)]
    lines += [_megatron_line(s, 2.5 - s / 100, 1.0, 1.25) for s in (20, 30, 40)]
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    timeline = forensics.load_timeline(path)
    assert len(timeline.segments) == 2 and timeline.segments[0].abandoned


def test_megatron_and_nemo_tensorboard_tags(tmp_path):
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(str(tmp_path / "megatron"))
    for it in (10, 20, 30):  # megatron/training/training.py training_log: tag at iteration, twin at samples
        for tag, value in (("lm loss", 4.0 - it / 100), ("grad-norm", 1.5), ("loss-scale", 65536.0 / it),
                           ("num-zeros", 3.0), ("params-norm", 250.0), ("skipped-train-samples", 0.0),
                           ("learning-rate", 1e-4)):
            writer.add_scalar(tag, value, it)
            writer.add_scalar(tag + " vs samples", value, it * 512)
    writer.add_scalar("lm loss validation", 3.9, 30)
    writer.close()
    (megatron_file,) = (tmp_path / "megatron").glob("events.out.tfevents.*")
    frame = tensorboard.read(megatron_file).frame
    assert set(frame["step"]) == {10, 20, 30}  # no point on the samples axis
    assert _series(frame, "loss") == pytest.approx({10: 3.9, 20: 3.8, 30: 3.7})
    assert _series(frame, "loss_scale")[30] == pytest.approx(65536.0 / 30)
    assert {"grad_norm", "num_zeros", "params_norm", "skipped_train_samples", "learning_rate", "eval_loss"} \
        <= set(frame["metric"])

    writer = SummaryWriter(str(tmp_path / "nemo"))
    for step in (1, 2, 3):  # NeMo: megatron_gpt_model.py training_step self.log names
        for tag, value in (("reduced_train_loss", 2.0 / step), ("grad_norm", 0.5), ("lr", 3e-4),
                           ("train_step_timing in s", 1.25), ("val_loss", 2.5)):
            writer.add_scalar(tag, value, step)
    writer.close()
    (nemo_file,) = (tmp_path / "nemo").glob("events.out.tfevents.*")
    frame = tensorboard.read(nemo_file).frame
    assert _series(frame, "loss") == pytest.approx({1: 2.0, 2: 1.0, 3: 2.0 / 3})
    assert {"grad_norm", "learning_rate", "train_step_timing", "eval_loss"} <= set(frame["metric"])


def test_unit_loss_scale_in_tensorboard_is_dropped(tmp_path):
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(str(tmp_path))
    for it in (1, 2, 3):
        writer.add_scalar("lm loss", 5.0, it)
        writer.add_scalar("loss-scale", 1.0, it)
    writer.close()
    (path,) = tmp_path.glob("events.out.tfevents.*")
    assert set(tensorboard.read(path).frame["metric"]) == {"loss"}


def test_unsloth_and_peft_banners_are_kept_as_typed_facts(tmp_path):
    train = stdout.read(SAMPLES / "unsloth_train_banner.log")
    (banner,) = train.banners
    assert (banner.kind, banner.trainable_params, banner.all_params) == ("unsloth", 41943040, None)
    assert banner.text.startswith("==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1")
    assert banner.text.endswith("Number of trainable parameters = 41,943,040")

    (load,) = stdout.read(SAMPLES / "unsloth_load_banner.log").banners
    assert load.kind == "unsloth" and "Bfloat16 = TRUE" in load.text and load.trainable_params is None

    (peft,) = stdout.read(SAMPLES / "peft_trainable_line.log").banners
    assert (peft.kind, peft.trainable_params, peft.all_params) == ("peft", 3784704, 467772416)
    assert peft.text == "trainable params: 3,784,704 || all params: 467,772,416 || trainable%: 0.8091"

    # a log holding the banner and training lines: the banner reaches the timeline
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text((SAMPLES / "peft_trainable_line.log").read_text()
                                   + (SAMPLES / "bloom_176b_bf16_rank_prefixed.log").read_text())
    timeline = forensics.load_timeline(run)
    assert [b.kind for b in timeline.banners] == ["peft"] and timeline.banners[0].source == str(run / "train.log")
    assert timeline.console_kinds == ("megatron",)


def test_no_banner_in_an_ordinary_log():
    assert stdout.read(FP16_SLURM).banners == ()


def test_nemo_lightning_bars(tmp_path):
    shutil.copy(SAMPLES / "nemo_lightning_bars.log", tmp_path / "nemo_log_globalrank-0_localrank-0.txt")
    (path,) = discover(tmp_path).text_logs
    rec = stdout.read(path)
    assert rec.console_kinds == ("nemo",)
    # reduced_train_loss, not Lightning's smoothed `loss=7.75`; the step is NeMo's global_step, or
    # for `global_step=2e+3` (3 digits) the bar's 2000 batches - 1
    assert _series(rec.frame, "loss") == {188: 7.56, 189: 7.56, 190: 7.91, 1999: 0.139}
    assert _series(rec.frame, "eval_loss") == {1999: 0.212}
    assert _series(rec.frame, "train_step_timing") == {1999: 68.7}


def test_megatron_deepspeed_overflow_lines_take_the_iteration_they_belong_to():
    rec = stdout.read(SAMPLES / "megatron_deepspeed_104b_overflows.log")
    overflow = _series(rec.frame, "overflow")
    assert sorted(overflow) == [17062, 17063, 17064, 17065, 17067, 17068]
    scale = _series(rec.frame, "loss_scale")
    assert scale[17063] == 524288.0 and scale[17068] == 32768.0
    assert _series(rec.frame, "loss")[17062] == 4.374269
    result = forensics.analyze(SAMPLES / "megatron_deepspeed_104b_overflows.log")
    (finding,) = [f for f in result.findings if "n_overflows" in f.evidence]  # skipped updates (four in a row: no storm)
    assert (finding.kind, finding.step, finding.evidence["n_overflows"]) == ("skipped_steps", 17062, 6)


@pytest.mark.parametrize("prefix", ["0: ", "[rank7]: ", "[lrdn3321:3]: [2025-03-31 05:54:07]"])
def test_megatron_lines_behind_launcher_prefixes(tmp_path, prefix):
    """srun --label (`0: `), torchrun's `[rank7]:` and a host:rank tag with Megatron's timestamp."""
    lines = [line for line in FP16_SLURM.read_text().splitlines() if " iteration " in line]
    path = tmp_path / "job.out"
    path.write_text("".join(prefix + line + "\n" for line in lines))
    assert _series(stdout.read(path).frame, "loss") == _series(stdout.read(FP16_SLURM).frame, "loss")
    assert [p.name for p in discover(tmp_path).text_logs] == ["job.out"]


def test_cli_reads_a_megatron_deepspeed_stdout_instead_of_nothing_readable(tmp_path):
    """Issue 11: a Megatron-DeepSpeed stdout gave "nothing readable", exit 2."""
    import json

    from click.testing import CliRunner

    from forensics.cli import cli

    shutil.copy(SAMPLES / "megatron_deepspeed_104b_overflows.log", tmp_path / "tr8b-104B.out")
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path), "--json"], catch_exceptions=False)
    # Read, not "nothing readable" (exit 2); the excerpt's loss jumps 2.67 -> 4.37 and stays: judged broken.
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.output)
    assert any(f["kind"] == "skipped_steps" and f["evidence"].get("deepspeed_overflow") for f in report["findings"])
    assert report["skipped"] == []


def test_torchtitan_line_with_its_total_and_percentage():
    """A torchtitan fork's `step: N/M = P%` form (a public note's excerpt, find_string hit id 17629747077)."""
    from forensics.ingest.pretrain_lines import parse_line

    line = ("[rank0]:2025-04-01 00:25:47,084 - root - INFO - step: 640/644 = 99.3789%  loss:  6.2116  "
            "memory: 87.04GiB(93.48%)  tps: 52,142  mfu: 3.09%")
    record = parse_line(line)
    assert (record.kind, record.step, record.total) == ("torchtitan", 640, 644)
    assert dict(record.metrics) == {"loss": 6.2116, "memory_gib": 87.04, "tps": 52142.0, "mfu_pct": 3.09}


def test_a_log_that_starts_at_the_scale_floor_keeps_its_scale(tmp_path):
    """Resumed with the fp16 scale already at min_loss_scale 1.0, iterations still skipped: an
    fp16 scaler at its floor (bf16 never skips), so the scale is kept and the floor is found."""
    path = tmp_path / "resumed.log"
    path.write_text("\n".join(_megatron_line(i, 3.0, 1.0, None, skipped=10) for i in range(10, 60, 10)) + "\n")
    assert set(_series(stdout.read(path).frame, "loss_scale").values()) == {1.0}
    overflow = [f for f in forensics.analyze(path).findings if f.kind == "loss_scale_overflow"]
    assert len(overflow) == 1 and overflow[0].severity == "error"


def test_megatron_printed_arguments_are_the_run_config(tmp_path):
    shutil.copy(SAMPLES / "megatron_gpt2_fp16_arguments.out", tmp_path / "slurm-1809579.out")
    result = forensics.analyze(tmp_path, check_checkpoints=False)
    config = result.config
    assert (config.get("fp16"), config.get("bf16")) == (True, False)
    assert config.get("learning_rate") == 0.00015 and config.get("max_grad_norm") == 1.0
    assert config.get("warmup_ratio") == 0.01 and config.get("warmup_steps") is None  # fraction wins in Megatron
    assert config.get("min_loss_scale") == 1.0 and config.get("initial_loss_scale") == 4294967296
    assert config.get("model.num_hidden_layers") == 40 and config.get("lr_scheduler_type") == "cosine"
    assert config.source_of("fp16") == "console log 'arguments' block"
    assert _series(result.timeline.frame, "loss")[200] == 7.365868  # the iteration lines still read


def test_megatron_arguments_and_parameter_count_behind_a_launchers_prefix_are_read(tmp_path):
    """elena-lyulina's SLURM consoles: torchrun and srun put `0: [default0]:` before every line; the arguments block
    gives bf16, and with one tensor and one pipeline rank the count printed for rank (0, 0) is the whole model's.
    With two tensor ranks it is a shard: not the model's size."""
    def console(tp: int) -> str:
        args = [("bf16", "True"), ("lr", "0.0003"), ("pipeline_model_parallel_size", "1"),
                ("tensor_model_parallel_size", str(tp))]
        return "\n".join(["0: [default0]:------------------------ arguments ------------------------"]
                         + [f"0: [default0]:  {k} {'.' * (48 - len(k))} {v}" for k, v in args]
                         + ["0: [default0]:-------------------- end of arguments ---------------------",
                            "0: [default0]: > number of parameters on (tensor, pipeline) model parallel rank (0, 0): "
                            "1040517632"]
                         + [_megatron_line(i, 10.4 - i / 10, 1.0, 1.0) for i in range(1, 16)]) + "\n"
    (tmp_path / "1737333.out").write_text(console(1))
    a = forensics.analyze(tmp_path)
    assert (a.run_profile.precision, a.run_profile.model_params) == ("bf16", 1040517632)
    (tmp_path / "1737333.out").write_text(console(2))
    assert forensics.analyze(tmp_path).run_profile.model_params is None


def test_megatron_deepspeed_pipeline_placeholders_are_not_read_as_values(tmp_path):
    """`loss scale: -1.0` and `grad norm: 0.000` on every line are placeholders, not a scale at
    its floor and a model that does not learn; `lm-loss` is the loss."""
    path = SAMPLES / "megatron_deepspeed_pipeline_placeholders.out"
    frame = stdout.read(path).frame
    assert _series(frame, "loss")[1] == 12.44238 and _series(frame, "loss")[4] == 43.05696
    assert "loss_scale" not in set(frame["metric"]) and "grad_norm" not in set(frame["metric"])
    assert not [f for f in forensics.analyze(path).findings if f.kind == "loss_scale_overflow"]


def test_a_megatron_grad_norm_of_zero_while_the_loss_is_flat_is_kept(tmp_path):
    path = tmp_path / "flat.log"
    path.write_text("\n".join(_megatron_line(i, 2.0, 1.0, 0.0) for i in range(10, 60, 10)) + "\n")
    assert set(_series(stdout.read(path).frame, "grad_norm").values()) == {0.0}


# --- nanochat, autoresearch, nanoGPT and plain key: value consoles ----------------------------------------
# Lines copied from the real-run corpus (tests/realworld/, PROVENANCE.md there) unless said otherwise.
CORPUS = Path(__file__).parent / "realworld"


def _parsed(line):
    from forensics.ingest.pretrain_lines import parse_line

    record = parse_line(line)
    return record.kind, record.step, record.total, dict(record.metrics)


def test_nanochat_base_train_line():
    line = ("step 00000/00100 (0.00%) | loss: 10.396631 | lrm: 0.00 | dt: 16832.11ms | tok/sec: 486 | "
            "bf16_mfu: 0.00 | epoch: 1 pq: 0 rg: 1 | total time: 0.00m")  # kwizzlesurp10 browser_pretrain.log
    assert _parsed(line) == ("nanochat_base", 0, 100, {
        "loss": 10.396631, "lr_multiplier": 0.0, "time_ms": 16832.11, "tokens_per_second": 486.0, "mfu_pct": 0.0,
        "epoch": 1.0, "total_time_min": 0.0})


def test_nanochat_nan_loss_and_eta_are_read():
    line = ("step 00011/00050 (22.00%) | loss: nan | lrm: 0.01 | dt: 1916.82ms | tok/sec: 4,273 | bf16_mfu: 0.00 | "
            "epoch: 1 pq: 0 rg: 1 | total time: 0.03m | eta: 1.2m")  # browser_pretrain_v2.log
    kind, step, total, metrics = _parsed(line)
    assert (kind, step, total) == ("nanochat_base", 11, 50) and math.isnan(metrics.pop("loss"))
    assert metrics == {"lr_multiplier": 0.01, "time_ms": 1916.82, "tokens_per_second": 4273.0, "mfu_pct": 0.0,
                       "epoch": 1.0, "total_time_min": 0.03, "eta_min": 1.2}


def test_nanochat_chat_sft_and_mid_train_lines():
    sft = ("step 00001 (0.00%) | loss: 5.471677 | lrm: 1.00 | dt: 1142.98ms | tok/sec: 111 | mfu: 0.00 | "
           "epoch: 1 | total time: 0.00m")  # sft_run.log
    assert _parsed(sft) == ("nanochat", 1, None, {
        "loss": 5.471677, "lr_multiplier": 1.0, "time_ms": 1142.98, "tokens_per_second": 111.0, "mfu_pct": 0.0,
        "epoch": 1.0, "total_time_min": 0.0})
    mid = ("step 00002 (0.41%) | loss: 1.761283 | lrm: 0.00 | dt: 710.82ms | tok/sec: 737,578 | mfu: 32.55 | "
           "total time: 0.00m")  # jhinpan output.log
    assert _parsed(mid) == ("nanochat", 2, None, {
        "loss": 1.761283, "lr_multiplier": 0.0, "time_ms": 710.82, "tokens_per_second": 737578.0, "mfu_pct": 32.55,
        "total_time_min": 0.0})


def test_nanochat_validation_bpb_is_an_eval_metric_of_its_own():
    assert _parsed("Step 00050 | Validation bpb: 3.162057") == ("nanochat", 50, None, {"eval_bpb": 3.162057})
    kind, step, _, metrics = _parsed("Step 00005 | Validation bpb: nan")  # server_verify.log
    assert (kind, step, list(metrics)) == ("nanochat", 5, ["eval_bpb"]) and math.isnan(metrics["eval_bpb"])
    rec = stdout.read(CORPUS / "jhinpan_nanochat_mid" / "output.log")
    assert _series(rec.frame, "eval_bpb") == {0: 0.6934, 150: 0.5126, 300: 0.4624, 450: 0.4376, 600: 0.424,
                                              750: 0.4167, 765: 0.4158}
    assert "eval_loss" not in set(rec.frame["metric"])
    assert len(_series(rec.frame, "loss")) == 765 and rec.console_kinds == ("nanochat",)


def test_autoresearch_carriage_return_updates_are_lines():
    line = ("step 00035 (94.9%) | loss: 2.962088 | lrm: 0.13 | dt: 11888ms | tok/sec: 44,103 | mfu: 12.1% | "
            "epoch: 1 | remaining: 3s    ")
    assert _parsed(line) == ("autoresearch", 35, None, {
        "loss": 2.962088, "lr_multiplier": 0.13, "time_ms": 11888.0, "tokens_per_second": 44103.0, "mfu_pct": 12.1,
        "epoch": 1.0, "remaining_s": 3.0})
    rec = stdout.read(CORPUS / "alexmorleyfinch_autoresearch-win-rtx" / "run.log")  # 37 updates joined by \r
    loss = _series(rec.frame, "loss")
    assert sorted(loss) == list(range(37)) and loss[0] == 9.010729 and loss[36] == 2.90063
    assert rec.console_kinds == ("autoresearch",) and not rec.warnings
    assert rec.meta["console_precision"] == "bf16" and rec.meta["console_n_params"] == 80937778


def test_nanochat_console_states_its_dtype_and_size():
    rec = stdout.read(CORPUS / "kwizzlesurp10-ctrl_nanochatkwizzle_pretrain" / "browser_pretrain.log")
    assert rec.meta["console_precision"] == "fp32" and rec.meta["console_n_params"] == 6389802
    assert rec.meta["console_n_params_line"] == "total                   : 6,389,802"
    profile = forensics.analyze(CORPUS / "kwizzlesurp10-ctrl_nanochatkwizzle_pretrain").run_profile
    assert (profile.precision, profile.model_params, profile.objective, profile.framework) == (
        "fp32", 6389802, "pretrain", "nanochat")


def test_pipe_step_line_without_a_percentage():
    line = ("step: 00000/19073 | loss: 10.8260 | matrix lr 5.0242e-07 | time: 1160.38ms | tok-sec: 3529.88 | "
            "total time: 1.16s | eta: 368.8m | total tokens: 4,096")  # adeelmahmood run.log
    assert _parsed(line) == ("key_value", 0, 19073, {
        "loss": 10.826, "matrix_lr": 5.0242e-07, "time_ms": 1160.38, "tokens_per_second": 3529.88,
        "total_time_s": 1.16, "eta_min": 368.8, "total_tokens": 4096.0})


def test_nanogpt_iter_and_eval_lines(tmp_path):
    """Built from nanoGPT train.py's prints: f"iter {iter_num}: loss {lossf:.4f}, time {dt*1000:.2f}ms, mfu
    {running_mfu*100:.2f}%" (running_mfu is -1.0 until the fifth iteration) and f"step {iter_num}: train loss
    {losses['train']:.4f}, val loss {losses['val']:.4f}"."""
    assert _parsed("iter 0: loss 10.8765, time 1234.56ms, mfu -100.00%") == (
        "nanogpt", 0, None, {"loss": 10.8765, "time_ms": 1234.56})
    assert _parsed("iter 250: loss 2.1043, time 33.21ms, mfu 12.34%") == (
        "nanogpt", 250, None, {"loss": 2.1043, "time_ms": 33.21, "mfu_pct": 12.34})
    assert _parsed("step 250: train loss 1.9876, val loss 2.0123") == (
        "nanogpt", 250, None, {"train_split_loss": 1.9876, "eval_loss": 2.0123})
    (tmp_path / "train.log").write_text("iter 0: loss 10.8765, time 1234.56ms, mfu -100.00%\n")
    assert [p.name for p in discover(tmp_path).text_logs] == ["train.log"]


def test_plain_key_value_lines_take_the_batch_counter_as_step():
    assert _parsed("ep: 0, batch: 20, time: 9.17, ntokens: 485.20/513, loss: 10.984375") == (
        "key_value", 20, None, {"epoch": 0.0, "time": 9.17, "ntokens": 485.2, "loss": 10.984375})
    rec = stdout.read(CORPUS / "Barber0_LLM-pretrain_fp16" / "train.log")
    assert [s for s, _ in _pairs(rec.frame, "loss")][:9] == [9, 19, 29, 39, 49, 59, 69, 10, 20]  # restarts kept
    # `OVERFLOW! Scale value 4294967296 -> 2147483648`: the step of the first line after it
    assert _series(rec.frame, "overflow") == {9: 1.0} and _series(rec.frame, "loss_scale") == {9: 2147483648.0}


def test_verl_sft_console_line_undoes_the_lr_scale():
    """verl's SFT trainer logs `train/lr(1e-3)` (the LR in units of 1e-3) and `train/time(s)`; its console
    logger prints `step:N - name:value` (a line of jianghoucheng's W&B output.log)."""
    line = ("step:1 - train/loss:0.7249004244804382 - train/lr(1e-3):0.0002702702702702703 - "
            "train/time(s):7.411591291427612")
    kind, step, total, metrics = _parsed(line)
    assert (kind, step, total) == ("verl", 1, None)
    assert metrics == pytest.approx({"loss": 0.7249004244804382, "learning_rate": 2.702702702702703e-07,
                                     "time_s": 7.411591291427612})


def test_verl_rl_console_line_keeps_its_names_and_reads_numpy_scalars():
    """verl's RL trainer metrics, printed by concat_dict_to_str with pprint (numpy 2 scalars print as
    `np.float64(x)`): the actor's grad norm and LR and the reward function's mean score take our names."""
    line = ("step:12 - actor/pg_loss:-0.0123 - actor/grad_norm:np.float64(0.53) - actor/lr:1e-06 - "
            "critic/score/mean:0.25 - val-core/openai/gsm8k/reward/mean@1:0.5 - response_length/mean:nan")
    kind, step, _, metrics = _parsed(line)
    assert (kind, step) == ("verl", 12)
    assert {k: v for k, v in metrics.items() if k != "response_length/mean"} == {
        "actor/pg_loss": -0.0123, "grad_norm": 0.53, "learning_rate": 1e-06, "reward": 0.25,
        "val-core/openai/gsm8k/reward/mean@1": 0.5}
    assert math.isnan(metrics["response_length/mean"])


def test_a_verl_console_log_is_found_and_read(tmp_path):
    from forensics.ingest.pretrain_lines import parse_line

    assert parse_line("step:3 - saving checkpoint to global_step_3") is None
    assert parse_line("step:3 - loss:2.5 - lr:0.001").kind == "key_value"  # no verl name: some other script
    lines = [f"step:{s} - train/loss:{2.0 - s / 100} - train/lr(1e-3):0.01 - train/time(s):6.1" for s in range(1, 6)]
    (tmp_path / "output.log").write_text("Epoch 1/6:  50%|####5| 31/62 [03:21<03:23,  6.58s/it]\n" + "\n".join(lines))
    assert [p.name for p in discover(tmp_path).text_logs] == ["output.log"]
    rec = stdout.read(tmp_path / "output.log")
    assert _series(rec.frame, "learning_rate") == pytest.approx({s: 1e-5 for s in range(1, 6)})
    # the last line has no newline but is printed in the shape of the lines before it: whole, not cut
    assert sorted(_series(rec.frame, "loss")) == [1, 2, 3, 4, 5] and sorted(_series(rec.frame, "time_s")) == [1, 2, 3, 4, 5]
    # cut mid-write (`6.` of `6.1`): only its last field is left out
    (tmp_path / "output.log").write_text("\n".join(lines[:-1] + [lines[-1][:-1]]))
    rec = stdout.read(tmp_path / "output.log")
    assert sorted(_series(rec.frame, "loss")) == [1, 2, 3, 4, 5] and sorted(_series(rec.frame, "time_s")) == [1, 2, 3, 4]


def test_a_tqdm_bar_with_a_loss_postfix_is_a_step_line():
    """A custom loop's bar (Phiwain/LLM sft.log: `set_postfix_str(f"loss {x:.4f}")`) and Lightning's `key=value`
    postfix; a bar without a loss in its postfix is no step line."""
    assert _parsed("SFT:   3%|▎         | 10/375 [02:09<1:13:19, 12.05s/it, loss 6.0530]") == (
        "tqdm_postfix", 10, 375, {"loss": 6.053})
    assert _parsed("Epoch 2: 100%|##########| 15/15 [00:03<00:00,  4.5it/s, loss=0.123, lr=1e-05, v_num=0]") == (
        "tqdm_postfix", 15, 15, {"loss": 0.123, "learning_rate": 1e-05, "epoch": 2.0})
    from forensics.ingest.pretrain_lines import parse_line

    assert parse_line(" 10%|#         | 10/100 [00:10<00:20, 1.50it/s]") is None
    assert parse_line("  5%|5         | 5/100 [00:05<01:35, 1.00it/s, acc=0.5]") is None


def test_a_tqdm_console_keeps_a_postfix_value_where_it_changed_and_numbers_epochs_on(tmp_path):
    redraws = "".join(f"\rSFT:  {n}%|#   | {n}/40 [00:{n:02d}<00:30, 1.00s/it, loss {2.0 - (n // 10) / 10:.4f}]"
                      for n in range(10, 41))
    (tmp_path / "sft.log").write_text("Loading model\n" + redraws + "\nDone\n")
    assert [p.name for p in discover(tmp_path).text_logs] == ["sft.log"]
    assert _series(stdout.read(tmp_path / "sft.log").frame, "loss") == pytest.approx({10: 1.9, 20: 1.8, 30: 1.7, 40: 1.6})
    epochs = "".join(f"\rEpoch {e}: 100%|#| {n}/4 [00:01<00:00, 2.0it/s, loss={1.0 / (4 * e + n):.4f}, v_num=0]"
                     for e in range(3) for n in range(1, 5))
    (tmp_path / "lightning.log").write_text(epochs + "\n")
    assert sorted(_series(stdout.read(tmp_path / "lightning.log").frame, "loss")) == list(range(1, 13))


def test_a_script_that_says_how_many_steps_its_epochs_make_gives_each_loss_its_epoch(tmp_path):
    """Phiwain/LLM's sft.py prints `2000 examples x 3 epochs = 375 steps` and a loss postfix with no epoch: the
    epoch at each loss is step / 125, as the HF Trainer would log it; the rows stay in the log's order."""
    rec = stdout.read(CORPUS / "Phiwain_LLM" / "sft.log")
    epochs = _series(rec.frame, "epoch")
    assert sorted(epochs) == sorted(_series(rec.frame, "loss")) and epochs[60] == pytest.approx(0.48)
    assert rec.meta["epoch_inferred"] == "step / 125 steps per epoch, as the log's plan line states them"
    assert list(rec.frame["step"]) == sorted(rec.frame["step"])  # each epoch beside its loss: no resume is seen
    redraws = "".join(f"\rSFT: {n}%|#| {n}/40 [00:01<00:00, 1.0it/s, loss {2.0 - n / 100:.4f}]" for n in range(1, 41))
    (tmp_path / "plain.log").write_text("Training: 40 steps\n" + redraws + "\n")  # no epochs said: none made up
    assert "epoch" not in set(stdout.read(tmp_path / "plain.log").frame["metric"])
    (tmp_path / "said.log").write_text("Training: 800 examples x 2 epochs = 40 steps\n" + redraws + "\n")
    assert _series(stdout.read(tmp_path / "said.log").frame, "epoch")[30] == pytest.approx(1.5)
    # a plan whose total is not the bar's (micro-batches, another run's plan line), or a fraction, gives no epochs
    for plan in ("2 epochs = 160 training steps (4 micro-batches an update)", "save every 0.5 epochs = 10 steps"):
        (tmp_path / "other.log").write_text(plan + "\n" + redraws + "\n")
        assert "epoch" not in set(stdout.read(tmp_path / "other.log").frame["metric"]), plan
    # a run of token ids is no plan line, and is read in linear time (it was quadratic: minutes for 400 KB)
    ids = '{"input_ids": [' + ",".join(str(128000 + i) for i in range(20000)) + "]}"
    (tmp_path / "ids.log").write_text((ids + "\nEpoch 1/3\n") * 5 + redraws + "\n")
    assert "epoch" not in set(stdout.read(tmp_path / "ids.log").frame["metric"])


def test_a_parameter_summary_all_trainable_is_a_full_run_and_deepspeed_pipeline_lines_give_the_size():
    """torchinfo / Keras-style `Total params` + `Trainable params` lines (dhairyag/ShakespeareGPT-Forge), and
    DeepSpeed's pipeline engine's UNIQUE_PARAMS (liguodongiot/llm-action's pasted Megatron-DeepSpeed console)."""
    from forensics.ingest.banners import find_banners

    (summary,) = find_banners(["Total Parameters: 124,475,904", "Trainable Parameters: 124,475,904",
                               "Non-trainable Parameters: 0"])
    assert (summary.kind, summary.trainable_params, summary.all_params) == ("param_summary", 124475904, 124475904)
    assert find_banners(["Trainable params: 4,194,304", "step 1 | loss 2.0"]) == ()  # no total beside it
    assert find_banners(["trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622"])[0].kind \
        == "peft"
    profile = forensics.analyze(CORPUS / "dhairyag_ShakespeareGPT-Forge").run_profile
    assert (profile.method, profile.model_params) == ("full", 124475904)
    assert "all 124,475,904 parameters trainable" in profile.evidence["method"]
    line = ("[2024-01-01 10:00:00,000] [INFO] [engine.py:138:__init__] RANK=0 STAGE=0 LAYERS=14 [0, 14) "
            "STAGE_PARAMS=336379904 (336.380M) TOTAL_PARAMS=1345523712 (1345.524M) UNIQUE_PARAMS=1345523712 (1345.524M)")
    assert stdout.console_facts(line + "\n")["console_n_params"] == 1345523712


def test_a_script_that_prints_its_model_size_in_params_gives_the_profile_its_size():
    rec = stdout.read(CORPUS / "Phiwain_LLM" / "sft.log")
    assert rec.meta["console_params_said"] == 958950144
    assert rec.meta["console_params_said_line"] == "Modèle chargé: 958,950,144 params (step 21000)"
    assert forensics.analyze(CORPUS / "Phiwain_LLM").run_profile.model_params == 958950144
    crlf = "Loading\r\nModel loaded: 958,950,144 params (step 21000)\r\nstep 1 | loss: 2.0\r\n"
    assert stdout.console_facts(crlf)["console_params_said"] == 958950144
    # a PEFT banner's trainable count, a part of the model, and a step count are not the model's size
    for line in ("trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622",
                 "Embedding params: 12,582,912 params", "Non-trainable params: 1,234,567 params",
                 "num decayed parameter tensors: 50, with 124,354,560 parameters",  # nanoGPT's optimizer groups
                 "transformer: ModuleDict (124,475,904 parameters)",  # a module tree's line
                 "Vision encoder: 303,507,456 params", "Injected LoRA adapters: 4,194,304 params",
                 "Reward model loaded: 1,234,567,890 params", "step 1000000 | params updated"):
        assert "console_params_said" not in stdout.console_facts(line + "\n"), line
    # of a model's parts and its whole, the whole
    facts = stdout.console_facts("Text model: 6,742,609,920 params\nModel: 7,046,117,376 params\n")
    assert facts["console_params_said"] == 7046117376


def test_a_peft_banner_outranks_a_count_a_script_says(tmp_path):
    (tmp_path / "train.log").write_text(
        "Base weights: 3,000,000 params\n"
        "trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622\n"
        + "".join(f"{{'loss': {2 - s / 100}, 'learning_rate': 0.0002, 'epoch': {s / 100}}}\n" for s in range(1, 30)))
    assert forensics.analyze(tmp_path).run_profile.model_params == 6742609920


GENERIC_LINES = {  # a hand-written loop's print, in the shapes such scripts use
    "Epoch 1/3, Step 100/1000, Loss: 2.3456, LR: 1e-4": (100, {"epoch": 1.0, "loss": 2.3456, "learning_rate": 1e-4}),
    "Step 100: loss = 2.3456": (100, {"loss": 2.3456}),
    "[Epoch 1][Step 100] loss: 2.3456": (100, {"epoch": 1.0, "loss": 2.3456}),
    "step 100 | loss 2.3456 | lr 1e-4": (100, {"loss": 2.3456, "learning_rate": 1e-4}),
    "Epoch: 1, Step: 100, Loss: 2.3456": (100, {"epoch": 1.0, "loss": 2.3456}),
    "iter 100 loss 2.3456": (100, {"loss": 2.3456}),
    "2024-01-01 12:00:00 - INFO - Step 100 - loss: 2.3456": (100, {"loss": 2.3456}),
    "Step 100, Train Loss: 2.1, Val Loss: 2.5, grad_norm: 0.8": (100, {"loss": 2.1, "eval_loss": 2.5, "grad_norm": 0.8}),
    "Step 100, Val Loss: 2.5": (100, {"eval_loss": 2.5}),
    "Epoch 0 | iter   1 | loss train: 35.250, val_loss valid: n/a | iter time: 177.845 s": (1, {"epoch": 0.0,
                                                                                            "loss": 35.25}),
}


@pytest.mark.parametrize("line", GENERIC_LINES)
def test_a_hand_written_loops_step_and_loss_line_is_read(line):
    kind, step, _, metrics = _parsed(line)
    assert (kind, step) == ("generic", GENERIC_LINES[line][0])
    assert metrics == pytest.approx(GENERIC_LINES[line][1])


def test_generic_lines_are_found_numbered_on_across_epochs_and_never_taken_from_prose_or_dicts(tmp_path):
    from forensics.ingest.pretrain_lines import parse_line

    for prose in ("At step 3 the loss: it went down", "Next step: lower the learning rate, loss: see above",
                  "{'loss': 0.5, 'step': 10}", "Step 3 of the recipe: measure the loss carefully"):
        assert parse_line(prose) is None, prose
    # a loop whose step counter starts over each epoch (counted from 1): numbered on, the epoch as epochs done
    (tmp_path / "train.log").write_text("".join(f"Epoch {e}/2 | Step {n}/3 | Loss: {3 - e - n / 10:.4f}\n"
                                                for e in (1, 2) for n in (1, 2, 3)))
    assert [p.name for p in discover(tmp_path).text_logs] == ["train.log"]
    frame = stdout.read(tmp_path / "train.log").frame
    assert sorted(_series(frame, "loss")) == [1, 2, 3, 4, 5, 6]
    assert _series(frame, "epoch") == pytest.approx({s: s / 3 for s in range(1, 7)})  # epochs done, as HF logs it
    assert forensics.analyze(tmp_path).status == "healthy"


def test_once_an_epoch_lines_are_read_with_the_epoch_as_their_step(tmp_path):
    assert _parsed("Epoch 15/30 | Loss Train: 0.3456 | Loss Val: 0.4123 | Acc: 85.23%") == (
        "generic_epoch", 15, 30, {"loss": 0.3456, "eval_loss": 0.4123, "accuracy": pytest.approx(0.8523), "epoch": 15.0})
    (tmp_path / "train.log").write_text("".join(
        f"Epoch {e}/12 | Train Loss: {2.0 / e:.4f} | Val Loss: {1.0 + abs(e - 6) / 10:.4f}\n" for e in range(1, 13)))
    frame = stdout.read(tmp_path / "train.log").frame
    assert sorted(_series(frame, "eval_loss")) == list(range(1, 13)) and _series(frame, "epoch")[12] == 12.0
    a = forensics.analyze(tmp_path)
    assert (a.status, a.first_incident.kind) == ("warning", "overfitting")
    # beside step lines, an epoch's summary gives its held-out loss at the epoch's last step, not a second loss
    (tmp_path / "train.log").write_text("".join(
        f"Epoch {e} Step {n} loss {3 - e - n / 100:.4f}\n" for e in (1, 2) for n in (10, 20)) .replace(
        "Epoch 2 Step 10", "Epoch 1 done | Train Loss: 1.0 | Val Loss: 1.5\nEpoch 2 Step 10"))
    frame = stdout.read(tmp_path / "train.log").frame
    assert _series(frame, "eval_loss") == {20: 1.5} and _series(frame, "loss")[20] == pytest.approx(1.8)


def test_a_bare_count_is_the_step_where_no_step_word_is_printed(tmp_path):
    """pytorch/examples word_language_model (ohalon/nlpia2's notes) and a C++ trainer's bar (B4rtekk1/CGPT)."""
    line = "| epoch   2 |   200/ 2983 batches | lr 20.0000 | ms/batch 12.12 | loss  7.64 | ppl  2079.22"
    assert _parsed(line) == ("generic", 200, 2983, {"epoch": 2.0, "learning_rate": 20.0, "loss": 7.64,
                                                    "perplexity": 2079.22})
    assert _parsed("| end of epoch   1 | time: 36.93s | valid loss  5.53 | valid ppl   252.86") == (
        "generic_epoch", 1, None, {"eval_loss": 5.53, "eval_perplexity": 252.86, "epoch": 1.0})
    assert _parsed("Training [===   ] 8.5% 5000/58874 | 4.62 it/s | ETA: 11664.8 s | loss=3.910492 | "
                   "validation_loss=3.908841")[:3] == ("generic", 5000, 58874)
    from forensics.ingest.pretrain_lines import parse_line

    assert parse_line("2024/01/05 12:00 loss: 3.2") is None  # a date is no count
    (tmp_path / "model.md").write_text("".join(
        f"| epoch {e:3d} | {b:5d}/ 600 batches | lr 20.00 | ms/batch 11.6 | loss {8 - e - b / 1000:5.2f} | ppl 99\n"
        for e in (1, 2) for b in (200, 400, 600)) + "| end of epoch   2 | time: 3.1s | valid loss  5.53 | valid ppl 252\n")
    frame = stdout.read(tmp_path / "model.md").frame
    assert sorted(_series(frame, "loss")) == [200, 400, 600, 800, 1000, 1200]  # epoch 2 numbered on by its total
    assert _series(frame, "eval_loss") == {1200: 5.53}


def test_a_tab_separated_step_loss_table_in_a_log_file_is_a_table(tmp_path):
    (tmp_path / "train.log").write_text("step\tloss\n" + "".join(f"{s}\t{1 + 3 * 0.99 ** s:.6f}\n"
                                                                  for s in range(10, 310, 10)))
    layout = discover(tmp_path)
    assert [p.name for p in layout.csv_logs] == ["train.log"] and layout.text_logs == []
    assert forensics.analyze(tmp_path).status == "healthy"
    from forensics.ingest import csv_metrics

    assert len(_series(csv_metrics.read(tmp_path / "train.log").frame, "loss")) == 30


def test_nul_bytes_before_a_line_do_not_hide_it(tmp_path):
    """269652/neuroslm training.log: overwritten while its writer kept appending, so it starts with NUL bytes."""
    (tmp_path / "training.log").write_bytes(b"\x00" * 500 + b"".join(
        f"step {s:5d} | loss {5 - s / 1000:.4f} | lr 3.0e-04\n".encode() for s in range(700, 800, 10)))
    assert min(_series(stdout.read(tmp_path / "training.log").frame, "loss")) == 700


@pytest.mark.parametrize("line, expected", [
    ("step 10 | aux loss 0.0100 | loss 2.5 | lr 1e-4", {"loss": 2.5, "learning_rate": 1e-4}),  # another loss first
    ("Step 3 kl loss 0.01, scaled loss 150000.0, loss 2.3", {"loss": 2.3}),
    ("step 5: test loss 3.9", {"eval_loss": 3.9}), ("Step 3, dev loss 2.0", {"eval_loss": 2.0}),
    ("step 2, val-loss 1.5", {"eval_loss": 1.5}),
    ("Epoch [2/10], Step [100/600], Loss: 0.2345", {"loss": 0.2345, "epoch": 2.0}),  # the PyTorch tutorials' print
    ("Step 100, Loss: tensor(2.3456, device='cuda:0')", {"loss": 2.3456}),
    ("Epoch: 1, Batch 100/600, Loss: 0.5", {"epoch": 1.0, "loss": 0.5}),
    ("iteration 10/100 | loss 2.3", {"loss": 2.3}),  # not Megatron's `key: value |` fields
])
def test_a_hand_written_line_gives_the_training_loss_not_another(line, expected):
    assert _parsed(line)[3] == pytest.approx(expected)


def test_lines_about_the_best_loss_a_decimal_comma_and_notes_are_no_steps(tmp_path):
    from forensics.ingest.pretrain_lines import parse_line

    for line in ("Best loss 0.123 at step 500", "Early stopping at step 800 (best loss: 1.5 at step 500)",
                 "Step 7 Loss: 2,3456"):
        assert parse_line(line) is None, line
    assert _parsed("Epoch 2, step 50, global_step 1050, loss 2.3")[1] == 1050  # the explicit global step
    # a note beside a healthy run's console, with one line that reads like a loop's, changes nothing
    run = tmp_path / "run"
    shutil.copytree(CORPUS / "Tensionteng_twenty-four-point-game", run)
    (run / "NOTES.md").write_text("First attempt (fp16) blew up: step 30 loss nan, then switched to bf16 and reran.\n")
    (run / "README.md").write_text("Qwen3-0.6B, 3 epochs (step 10, loss 1.26; it ended near 0.06).\n")
    assert forensics.analyze(run).status == "healthy"
    # a README quoting a few lines of an earlier run's output is documentation, not this run's log
    (run / "README.md").write_text("Example output:\n" + "".join(f"step {s} | loss {9 - s / 10:.2f}\n"
                                                                  for s in range(10, 60, 10)))
    assert "README.md" not in [p.name for p in discover(run).text_logs]
    assert forensics.analyze(run).status == "healthy"


def test_a_counter_from_0_each_epoch_and_a_nan_on_the_unfinished_last_line(tmp_path):
    (tmp_path / "train.log").write_text("".join(f"epoch {e} step {n} loss {3 - e - n / 1000:.4f}\n"
                                                for e in (0, 1) for n in range(0, 1000, 100)) + "epoch 2 step 0 loss nan")
    frame = stdout.read(tmp_path / "train.log").frame
    assert sorted(_series(frame, "loss")) == list(range(0, 2100, 100))  # epoch 1 from step 1000, epoch 2 from 2000
    assert math.isnan(_series(frame, "loss")[2000])  # a last line without its newline still holds its NaN
    # blanks where a separator may stand are read in linear time (`\s*[:=]?\s*` took 45 s on this line)
    (tmp_path / "blanks.log").write_text("step" + " " * 60000 + "| loss\n" + "at step" + "\n" * 60000 + "loss 2\n")
    assert stdout.read(tmp_path / "blanks.log").frame.empty


def test_a_counter_that_starts_over_without_an_epoch_is_a_new_epoch_where_the_loss_goes_on(tmp_path):
    """`step 100 .. 1000` three times: a new epoch each time where the loss carries on from where it was (numbered
    on, so an early epoch's trouble is not thrown away as an abandoned attempt), a new attempt where it is back at
    the log's first level (a rerun appended to the same file)."""
    (tmp_path / "train.log").write_text("".join(f"step {n} | loss {3.0 * 0.9 ** (e * 10 + n / 100):.4f}\n"
                                                for e in range(3) for n in range(100, 1100, 100)))
    assert sorted(_series(stdout.read(tmp_path / "train.log").frame, "loss")) == list(range(100, 3100, 100))
    (tmp_path / "rerun.log").write_text("".join(f"step {n} | loss {3.0 * 0.9 ** (n / 100):.4f}\n"
                                                for _ in range(2) for n in range(100, 1100, 100)))
    steps_read = stdout.read(tmp_path / "rerun.log").frame.query("metric == 'loss'")["step"].tolist()
    assert steps_read == list(range(100, 1100, 100)) * 2


def test_the_generic_line_test_looks_only_where_a_counter_precedes_a_loss():
    from forensics.ingest.console_lines.hand_written import has_generic_line

    assert has_generic_line("noise\n2024 - INFO - Step 10 - LOSS: 2.0\n")
    assert not has_generic_line("Saving at global_step 100\n{'loss': 2.0, 'step': 100}\nloss went down at step 3\n")


def _pairs(frame, metric):
    rows = frame[frame["metric"] == metric]
    return list(zip(rows["step"].tolist(), rows["value"].tolist()))


def test_a_cut_last_line_loses_only_its_last_field(tmp_path):
    path = tmp_path / "base_train.log"
    path.write_text("step 00000/00100 (0.00%) | loss: 10.396631 | lrm: 0.00 | dt: 16832.11ms\n"
                    "step 00001/00100 (1.00%) | loss: 10.396696 | lrm: 0.0")
    rec = stdout.read(path)
    assert _series(rec.frame, "loss") == {0: 10.396631, 1: 10.396696}
    assert 1 not in _series(rec.frame, "lr_multiplier")
    assert list(rec.warnings) == ["the last line (step 1) is cut mid-write; its complete fields were kept"]


PROSE = """Meeting notes, training plan
At step 3 the loss: it went down, then we stopped to look at it.
step 1: we rewrote the loss function; step 2: we checked the data.
batch: the data, loss: unknown until the next run.
The iter 5: loss of patience after the batch: 4 restarts.
Step 2 | Validation of the results is pending.
Next step: lower the learning rate, loss: see above, epoch: two.
"""


def test_prose_with_step_and_loss_is_no_training_log(tmp_path):
    from forensics.ingest.pretrain_lines import parse_line

    (tmp_path / "notes.txt").write_text(PROSE)
    (tmp_path / "notes.log").write_text(PROSE)
    assert [parse_line(line) for line in PROSE.splitlines()] == [None] * len(PROSE.splitlines())
    assert stdout.read(tmp_path / "notes.log").frame.empty
    assert discover(tmp_path).text_logs == []


def test_tqdm_bars_that_restart_unlabelled_stuck_values_nan_and_long_lines(tmp_path):
    """The review's cases: a bar labelled 'Training' that starts over each epoch is numbered on; a postfix that
    never changes keeps every redraw (a loss stuck at 0.000 is 300 points); `loss=nan` makes the file a log; a
    51 KB line with 'loss' in it is no bar."""
    restart = "".join(f"\rTraining: {n}%|#| {n}/100 [00:01<00:00, 2.0it/s, loss={3.0 - e - n / 1000:.4f}]"
                      for e in range(3) for n in range(1, 101))
    (tmp_path / "restart.log").write_text(restart + "\n")
    assert sorted(_series(stdout.read(tmp_path / "restart.log").frame, "loss")) == list(range(1, 301))
    stuck = "".join(f"\rTraining: {n // 3}%|#| {n}/300 [00:01<00:00, 2.0it/s, loss=0.000]" for n in range(1, 301))
    (tmp_path / "stuck.log").write_text(stuck + "\n")
    assert len(_series(stdout.read(tmp_path / "stuck.log").frame, "loss")) == 300
    nan_dir = tmp_path / "nan"
    nan_dir.mkdir()
    (nan_dir / "train.log").write_text(stuck.replace("loss=0.000", "loss=nan") + "\n")
    assert [p.name for p in discover(nan_dir).text_logs] == ["train.log"]
    # a 51 KB line naming 'loss' but holding no bar (read in about 30 s by an unbounded pattern; see bench/)
    (tmp_path / "long.log").write_text("losses: [" + ", ".join(f"loss {i / 7:.4f}" for i in range(6000)) + "]\n")
    assert stdout.read(tmp_path / "long.log").frame.empty


MLX_LORA = """Loading pretrained model
Loading datasets
Training
Trainable parameters: 0.085% (6.816M/8030.261M)
Starting training..., iters: 600
Iter 1: Val loss 2.910, Val took 3.251s
""" + "".join(f"Iter {i}: Train loss {2.8 - i / 60:.3f}, Learning Rate 1.000e-05, It/sec 0.449, Tokens/sec 362.349, "
              f"Trained Tokens {i * 800}, Peak mem 17.595 GB\n" for i in range(10, 110, 10)) + \
    "Iter 100: Saved adapter weights to adapters/adapters.safetensors and adapters/0000100_adapters.safetensors.\n"


def test_mlx_lm_lora_console_gives_method_framework_and_size(tmp_path):
    """mlx_lm.lora prints its trainable share in millions: an adapter when few are trainable, every weight with
    --fine-tune-type full (the two printed counts are then the same)."""
    from forensics.ingest.banners import find_banners

    (tmp_path / "train.log").write_text(MLX_LORA)
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.method, profile.framework, profile.model_params) == ("lora", "mlx", 8030261000)
    (full,) = find_banners(["Trainable parameters: 100.000% (494.033M/494.033M)"])
    assert (full.kind, full.trainable_params, full.all_params) == ("mlx", 494033000, 494033000)
    assert find_banners(["Trainable parameters: 3 of them"]) == ()


def _uncounted(n: int, loss=lambda i: 2.9 - i / 100, grad=lambda i: 21.0) -> str:
    return "".join(f"[2025-07-07 12:01:{i % 60:02d},174] INFO: [INFO] loss: {loss(i):.4f}, orth_loss: 0.0018, "
                   f"total_loss: {loss(i) + 0.0018:.4f}, grad_norm: {grad(i):.4f}\n" for i in range(n))


def test_loss_lines_that_print_no_step_are_numbered_by_their_order(tmp_path):
    """OddFunction0205/clora-: 9,588 `loss: X, orth_loss: Y, total_loss: Z, grad_norm: G` lines and no counter."""
    (tmp_path / "train.log").write_text(_uncounted(40) + "INFO: [INFO] Eval Metrics: {'eval_loss': 1.327, "
                                        "'eval_runtime': 240.4, 'epoch': 3.0}\n")
    frame = stdout.read(tmp_path / "train.log").frame
    loss = frame[frame["metric"] == "loss"]
    assert list(loss["step"]) == list(range(1, 41)) and loss["value"].iloc[0] == pytest.approx(2.9)
    assert set(frame["metric"]) >= {"loss", "grad_norm", "total_loss", "orth_loss"}
    assert list(frame.loc[frame["metric"] == "eval_loss", "step"]) == [40]  # after the last step line, not at 0


def test_a_stuck_loss_printed_without_a_step_is_every_point_not_one(tmp_path):
    (tmp_path / "train.log").write_text(_uncounted(30, loss=lambda i: 0.0, grad=lambda i: 0.0))
    frame = stdout.read(tmp_path / "train.log").frame
    assert (frame["metric"] == "loss").sum() == 30


def test_few_uncounted_lines_or_an_evaluation_summary_are_not_a_loops_log(tmp_path):
    (tmp_path / "few.log").write_text(_uncounted(5))
    assert "loss" not in set(stdout.read(tmp_path / "few.log").frame["metric"])
    (tmp_path / "eval.log").write_text("".join(f"loss: {1.2 - i / 100:.3f}, accuracy: 0.{50 + i}\n" for i in range(30)))
    assert "loss" not in set(stdout.read(tmp_path / "eval.log").frame["metric"])


def test_unsloths_newer_banner_gives_trainable_and_total_counts():
    from forensics.ingest.banners import find_banners
    block = ["==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1",
             "   \\\\   /|    Num examples = 100 | Num Epochs = 2 | Total steps = 200",
             "O^O/ \\_/ \\    Batch size per device = 1 | Gradient accumulation steps = 1",
             "\\        /    Data Parallel GPUs = 1 | Total batch size (1 x 1 x 1) = 1",
             ' "-____-"     Trainable parameters = 17,596,416 of 511,629,184 (3.44% trained)']
    (banner,) = find_banners(block)
    assert (banner.kind, banner.trainable_params, banner.all_params) == ("unsloth", 17596416, 511629184)


@pytest.mark.parametrize("line, kind, step, metrics", [
    ("step:1/20344 train_loss:22.6211 train_time:81991ms step_avg:nanms", "colon_pairs", 1,
     {"loss": 22.6211, "train_time_ms": 81991.0}),  # modded-nanogpt: a timing not measured yet is no value
    ("step:125/9000 val_loss:6.2335 val_bpb:3.6917 train_time:196726ms step_avg:1710.66ms", "colon_pairs", 125,
     {"eval_loss": 6.2335, "eval_bpb": 3.6917, "train_time_ms": 196726.0, "step_avg_ms": 1710.66}),  # parameter-golf
    ("s:0 trl:11.0116 lr:0.000001 norm:14.96", "llmc", 0, {"loss": 11.0116, "learning_rate": 1e-6, "grad_norm": 14.96}),
    ("s:250 tel:6.1565", "llmc", 250, {"eval_loss": 6.1565}),
    ("s:250 eval:0.2437", "llmc", 250, {"eval_hellaswag": 0.2437}),  # llm.c's HellaSwag accuracy
    ("0 train 10.955010", "step_name_value", 0, {"loss": 10.95501}),  # build-nanogpt's log.txt
    ("250 val 6.2648", "step_name_value", 250, {"eval_loss": 6.2648}),
    ("250 hella 0.2448", "step_name_value", 250, {"eval_hellaswag": 0.2448}),
])
def test_from_scratch_consoles_of_space_separated_name_colon_value_lines_are_read(line, kind, step, metrics):
    from forensics.ingest.pretrain_lines import parse_line

    record = parse_line(line)
    assert (record.kind, record.step, dict(record.metrics)) == (kind, step, metrics)


@pytest.mark.parametrize("line", ["step:100 something else", "s:3 x:abc", "warmup_step:1/20", "200 apples 3",
                                  "step:5/10 lr:0.1 train_time:5ms"])
def test_lines_that_only_look_like_name_colon_value_steps_are_not_read(line):
    from forensics.ingest.pretrain_lines import parse_line

    assert parse_line(line) is None


@pytest.mark.parametrize("case, params", [("AGNDM_build-nanogpt", None), ("SiddanthEmani_GPT-2-124M-CUDA", 124_000_000),
                                          ("newjordan_parameter-golf", 26_829_913)])
def test_nanogpt_family_logs_are_found_and_profiled_as_pre_training_from_scratch(case, params):
    """build-nanogpt's log.txt, llm.c's main.log and parameter-golf's console were 'no training logs' before: each
    is a full model trained from random weights (its loss from about ln(vocabulary)); parameter-golf prints its
    size as `model_params:N`."""
    layout = discover(CORPUS / case)
    assert len(layout.text_logs) == 1
    profile = forensics.analyze(CORPUS / case).run_profile
    assert (profile.method, profile.objective, profile.model_params) == ("full", "pretrain", params)


@pytest.mark.parametrize("line, step, metrics", [
    ("40 | loss 6.6875 | lr 3.000000e-04 | 13808.97ms", 40, {"loss": 6.6875, "learning_rate": 3e-4}),  # nwyin
    ("batch: 0, GD_loss: 8.13, RD_loss: 7.95, reversed_kl_loss: 1.5, combined_loss: 17.58, ", 0,  # franciscoliu/SKU
     {"gd_loss": 8.13, "rd_loss": 7.95, "reversed_kl_loss": 1.5, "loss": 17.58}),
    ("batch: 1, loss: 2.0, total_loss: 3.0", 1, {"loss": 2.0, "total_loss": 3.0}),  # a plain loss stays the loss
])
def test_a_bare_step_before_pipes_and_a_combined_loss_with_a_trailing_comma_are_read(line, step, metrics):
    assert _parsed(line) == ("key_value", step, None, metrics)


@pytest.mark.parametrize("line", ["12 | apples 3 | pears 4", "2024 | loss of data was reported", "batch: 3, GD_loss: 1.2"])
def test_pipes_without_a_loss_and_terms_without_a_total_are_not_step_lines(line):
    from forensics.ingest.pretrain_lines import parse_line

    assert parse_line(line) is None


def test_an_xtuner_console_gives_its_lines_epochs_from_the_printed_config():
    """HandSomeGuy001's XTuner log: `max_epochs = 8` in the printed mmengine config, `Iter(train) [  10/1344]` lines:
    168 iterations an epoch; eight epochs of 2,000 examples to a loss of 0.03 with no eval is memorization."""
    case = CORPUS / "HandSomeGuy001_InternLM-813-dadapt"
    rec = stdout.read(case / "20240827_085434.log")
    assert _series(rec.frame, "epoch")[1340] == pytest.approx(1340 / 168)
    a = forensics.analyze(case)
    assert (a.status, a.first_incident.kind) == ("warning", "memorization")


def test_a_loss_printed_as_a_torch_tensor_each_step_is_a_loss_series(tmp_path):
    """lich99/ChatGLM-finetune-LoRA issue 32: a hand-written loop's `print(loss.detach().float())`, ten lines,
    `tensor(3.2207, device='cuda:0')` then `tensor(nan, device='cuda:0')` nine times: NaN from step 2."""
    import forensics

    (tmp_path / "train.log").write_text("tensor(3.2207, device='cuda:0')\n" + "tensor(nan, device='cuda:0')\n" * 9)
    a = forensics.analyze(tmp_path)
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("broken", "nonfinite_metric", 2)
    labelled = "".join(f"loss: tensor({2.5 - i / 10:.4f}, device='cuda:0', grad_fn=<NllLossBackward0>)\n"
                       for i in range(6))
    (tmp_path / "train.log").write_text(labelled)
    loss = stdout.read(tmp_path / "train.log").frame
    assert list(loss.loc[loss["metric"] == "loss", "step"]) == [1, 2, 3, 4, 5, 6]


def test_a_few_printed_tensors_or_a_tensor_of_several_values_are_no_loss_series(tmp_path):
    (tmp_path / "few.log").write_text("tensor(0.5000)\n" * 4)  # four prints: a debugging session, not a run
    (tmp_path / "vectors.log").write_text("tensor([0.1, 0.9], device='cuda:0')\n" * 10)
    (tmp_path / "named.log").write_text("acc = tensor(0.91)\n" * 10)  # another quantity, named
    # a bare value may be an accuracy: kept under its own name, not judged as a loss (0.40 -> 0.95 is no divergence)
    (tmp_path / "bare.log").write_text("".join(f"tensor({0.40 + i / 70:.4f}, device='cuda:0')\n" for i in range(40)))
    for name in ("few.log", "vectors.log", "named.log", "bare.log"):
        assert "loss" not in set(stdout.read(tmp_path / name).frame["metric"])
    assert (stdout.read(tmp_path / "bare.log").frame["metric"] == "printed_tensor").sum() == 40


def test_a_custom_losss_printed_tensors_beside_the_trainers_own_lines_are_left_out(tmp_path):
    """A compute_loss that prints each micro-batch's loss tensor in a Trainer console: the Trainer's dict lines are
    the log; the prints, four a step, numbered as steps 1-400, would stretch it and read as divergence."""
    lines = []
    for step in range(1, 101):
        lines += [f"tensor({2.5 * 0.99 ** step + 0.1 * (i - 1.5):.4f}, device='cuda:0', grad_fn=<NllLossBackward0>)"
                  for i in range(4)]
        if step % 10 == 0:
            lines.append(str({"loss": round(2.5 * 0.99 ** step, 4), "grad_norm": 1.0, "epoch": step / 100}))
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    frame = stdout.read(tmp_path / "train.log").frame
    assert (frame["metric"] == "loss").sum() == 10


def test_a_held_out_accuracy_printed_alone_on_a_step_line_is_read_beside_the_loss_lines(tmp_path):
    """Tianshi-Xu's CS336 SFT loop: `Step N loss: L token_entropy: E` every second step, and `Step 15 eval_acc:
    0.278` ... `Step 127 eval_acc: 0.54` between them; its summed loss swings with the batch's length, and the
    rising held-out accuracy is what shows it learned. A training accuracy alone, or a best-so-far line, is not read."""
    import forensics

    prefix = "2025-09-16 21:23:51,899 - train - INFO - "
    lines = [f"{prefix}Initial eval_acc: 0.0"]
    for step in range(1, 128, 2):
        lines.append(f"{prefix}Step {step} loss: {90 - step / 4 + (35 if step % 6 == 1 else -20):.4f} token_entropy: 0.6")
        if step % 16 == 15:
            lines.append(f"{prefix}Step {step} eval_acc: {min(0.55, 0.28 + step / 500):.3f}")
    lines += [f"{prefix}Step 3 train_acc: 0.5", f"{prefix}Best acc: 0.546"]
    (tmp_path / "sft.log").write_text("\n".join(lines) + "\n")
    frame = stdout.read(tmp_path / "sft.log").frame
    accuracy = frame[frame["metric"] == "eval_accuracy"]
    assert list(accuracy["step"]) == list(range(15, 128, 16)) and "accuracy" not in set(frame["metric"])
    a = forensics.analyze(tmp_path)
    assert a.learning is not None and a.learning.metric == "eval_accuracy"


def test_a_global_step_counter_with_the_runs_total_is_not_renumbered_at_each_epoch(tmp_path):
    """TsinghuaAI/CPM-2-Finetune issue 11: `epoch 4/10 | global iteration 1370/3402 | ... | lm loss 0.697672 |` after
    `epoch 3/10 | global iteration 1360/3402`: the counter goes on over the epoch's change, so 3402 is the run's
    total; it was read as the epoch's and put the lines at 4772-4852. A counter that starts over each epoch
    (`Epoch 2/3, Step 1/100`) is still numbered on."""
    lines = [f"epoch {3 if s == 1360 else 4:3d}/ 10 | global iteration {s:8d}/    3402 | learning rate 3e-06 | "
             f"lm loss {0.699 - (s - 1360) / 1e5:.6f} | loss scale 1024.0 |" for s in range(1360, 1460, 10)]
    (tmp_path / "cpm2.log").write_text("\n".join(lines) + "\n")
    frame = stdout.read(tmp_path / "cpm2.log").frame
    assert list(frame.loc[frame["metric"] == "loss", "step"]) == list(range(1360, 1460, 10))
    per_epoch = [f"Epoch {e}/3, Step {s}/100, Loss: {2.0 - e / 10 - s / 1000:.4f}" for e in (1, 2) for s in (50, 100)]
    (tmp_path / "loop.log").write_text("\n".join(per_epoch) + "\n")
    frame = stdout.read(tmp_path / "loop.log").frame
    assert list(frame.loc[frame["metric"] == "loss", "step"]) == [50, 100, 150, 200]


def test_a_dynamic_loss_scale_on_a_hand_written_line_is_read_and_says_fp16(tmp_path):
    """CPM-2's `| lm loss 0.697672 | loss scale 1024.0 |`: a loss scale above 1 is fp16's scaler (bf16 and fp32 runs
    have none, Megatron prints 1.0 for them)."""
    import forensics

    lines = [f"epoch   4/ 10 | global iteration {s:8d}/    3402 | learning rate 3e-06 | lm loss {2.0 - s / 2000:.6f} | "
             "loss scale 1024.0 |" for s in range(1360, 1460, 10)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    assert forensics.analyze(tmp_path).run_profile.precision == "fp16"
    (tmp_path / "train.log").write_text("\n".join(line.replace("1024.0", "1.0") for line in lines) + "\n")
    assert forensics.analyze(tmp_path).run_profile.precision == "unknown"


def _neox_line(iteration, loss):
    """One line as GPT-NeoX's training_log prints it (megatron/logging.py: `lm_loss`, an underscore where
    Megatron-LM prints `lm loss`)."""
    return (f" samples/sec: 6.085 | iteration {iteration:8d}/   11000 | elapsed time per iteration (ms): 164.3 |"
            f" learning rate: 3.000E-04 | approx flops per GPU: 19.6TFLOPS | lm_loss: {loss:.6E} |"
            " number of skipped iterations:   0 | number of nan iterations:   0 |")


def test_gpt_neox_console_lm_loss_validation_and_printed_precision(tmp_path):
    args = ["-------------------- arguments --------------------",
            "  bf16 ............................ {'enabled': True}...........updated",
            "  fp16 ............................ None........................default",
            "  lr .............................. 0.0003......................updated",
            "  precision ....................... bfloat16....................updated",
            "---------------- end of arguments ----------------"]
    steps = [_neox_line(i, 11.0 - i / 100) for i in range(10, 210, 10)]
    steps.insert(10, " validation results at iteration 100 | lm_loss value: 1.020000E+01 | "
                     "lm_loss_ppl value: 2.690000E+04 | ")
    (tmp_path / "stdout.txt").write_text("\n".join(args + steps) + "\n")
    rec = stdout.read(tmp_path / "stdout.txt")
    loss = _series(rec.frame, "loss")
    assert sorted(loss) == list(range(10, 201, 10)) and loss[10] == 10.9
    assert _series(rec.frame, "eval_loss") == {100: 10.2} and _series(rec.frame, "eval_ppl") == {100: 26900.0}
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "healthy"
    assert analysis.run_profile.precision == "bf16"
    assert analysis.run_profile.objective == "pretrain"


def test_gpt_neox_tensorboard_tags(tmp_path):
    """GPT-NeoX (megatron/logging.py training_log, training.py evaluate_and_print_results) logs train/lm_loss and
    validation/lm_loss; a file that also logs a loss of its own keeps lm_loss as a component."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(str(tmp_path / "neox"))
    for it in (10, 20, 30):
        writer.add_scalar("train/lm_loss", 4.0 - it / 100, it)
        writer.add_scalar("train/learning_rate", 3e-4, it)
    writer.add_scalar("validation/lm_loss", 3.9, 30)
    writer.add_scalar("validation/lm_loss_ppl", 49.4, 30)
    writer.close()
    (neox_file,) = (tmp_path / "neox").glob("events.out.tfevents.*")
    frame = tensorboard.read(neox_file).frame
    assert _series(frame, "loss") == pytest.approx({10: 3.9, 20: 3.8, 30: 3.7})
    assert _series(frame, "eval_loss") == pytest.approx({30: 3.9}) and _series(frame, "eval_ppl") == pytest.approx({30: 49.4})

    writer = SummaryWriter(str(tmp_path / "both"))
    for it in (10, 20, 30):
        writer.add_scalar("train/loss", 4.5 - it / 100, it)
        writer.add_scalar("train/lm_loss", 4.0 - it / 100, it)
    writer.close()
    (both_file,) = (tmp_path / "both").glob("events.out.tfevents.*")
    frame = tensorboard.read(both_file).frame
    assert _series(frame, "loss") == pytest.approx({10: 4.4, 20: 4.3, 30: 4.2})
    assert _series(frame, "lm_loss") == pytest.approx({10: 3.9, 20: 3.8, 30: 3.7})


def test_nemo2_progress_lines_behind_srun_and_ray_actor_prefixes_are_read(tmp_path):
    """NeMo-Run launches NeMo 2.0 through Ray and srun: every line reads `0: (pretraining, pid=4112) Training epoch 0,
    iteration N/M | ...`; both prefixes go, the ProgressPrinter's fields are read at its global_step, and the
    validation fields it appends are eval_loss / eval_ppl."""
    lines = ["0: (pretraining, pid=4112) [NeMo I 2024-06-01 10:00:00 nemo_logging:393] Experiments will be logged"]
    for it in range(10):
        line = (f"Training epoch 0, iteration {it}/9 | lr: 2e-05 | global_batch_size: 8 | global_step: {it} | "
                f"reduced_train_loss: {2.5 - it / 10:.4} | train_step_timing in s: 0.345 | consumed_samples: {8 * it + 8}")
        lines.append("0: (pretraining, pid=4112) " + line + (" | val_loss: 2.861 | val_ppl: 17.48" if it == 9 else ""))
    (tmp_path / "log-nemo.txt").write_text("\n".join(lines) + "\n")
    frame = stdout.read(tmp_path / "log-nemo.txt").frame
    assert _series(frame, "loss") == pytest.approx({it: 2.5 - it / 10 for it in range(10)})
    assert _series(frame, "eval_loss") == {9: 2.861} and _series(frame, "eval_ppl") == {9: 17.48}
    assert forensics.analyze(tmp_path, check_checkpoints=False).run_profile.framework == "nemo"


def test_opennmt_tensorboard_tags_name_the_loss():
    """OpenNMT-py's log_tensorboard: `train/xent` is the loss where no tag is, `valid/xent` the held-out one."""
    from forensics.metric_names import tracker_metric_names
    assert tracker_metric_names(["train/xent", "train/ppl", "train/lr", "valid/xent", "valid/ppl"]) == [
        "loss", "ppl", "learning_rate", "eval_loss", "eval_ppl"]
    assert tracker_metric_names(["train/loss", "train/xent"]) == ["loss", "xent"]
