"""Console step lines of the nanoGPT family of pre-training scripts (nanoGPT, nanochat, autoresearch, modded-nanogpt,
llm.c, build-nanogpt) and of char-rnn-tensorflow:
* char-rnn-tensorflow's train.py: `1200/44600 (epoch 2), train_loss = 1.482, time/batch = 0.151` (kind "char_rnn"): the
  run's step of its whole, the loss, the epoch from 0; a character-level model trained from random weights.
* nanochat (karpathy/nanochat): scripts/base_train.py prints
  `step 00012/00100 (12.00%) | loss: X | lrm: L | dt: Tms | tok/sec: N | bf16_mfu: M | epoch: E pq: P rg: R |
  total time: Tm[ | eta: Em]` (kind "nanochat_base"); scripts/chat_sft.py and scripts/mid_train.py print the
  same without the total (`step 00001 (0.28%) | ...`, kind "nanochat"). The loss is nanochat's debiased EMA
  of the step losses (a NaN stays in it). Fields: lrm -> lr_multiplier, dt -> time_ms, tok/sec ->
  tokens_per_second, (bf16_)mfu -> mfu_pct, a unit becomes a suffix (`total time: 0.5m` -> total_time_min).
  Its evaluations `Step 00050 | Validation bpb: 3.162` (base_train, chat_sft, mid_train) give eval_bpb,
  bits per byte, kept apart from eval_loss (nats per token); `Validation loss` -> eval_loss, `CORE metric`
  -> eval_core_metric; old chat_sft's `Step N/M | Training loss: X| lrm: Y` (the `/M` or not) is a training line.
* autoresearch (karpathy/autoresearch train.py): `\rstep 00012 (3.9%) | loss: X | lrm: L | dt: Tms |
  tok/sec: N | mfu: M% | epoch: E | remaining: Ss    `, each written over the last with `\r` (the
  stdout reader splits on `\r`, so each update is a line); kind "autoresearch", told by `remaining`.
* the same `step: N/M | loss: X | matrix lr Y | time: Tms | ...` shape without a percentage
  (adeelmahmood/nanogpt-to-chat train.py, mid_train.py; `step loss` in sft_train.py): kind "key_value".
* nanoGPT (karpathy/nanoGPT train.py): `iter N: loss X, time Yms, mfu Z%` (loss, time_ms, mfu_pct; the
  `mfu -100.00%` printed before five timings is no value and is left out) and the evaluation
  `step N: train loss X, val loss Y` (train_split_loss: the loss estimated on the train split; eval_loss).
* Space-separated `name:value` tokens after a `step:N/M` (KellerJordan/modded-nanogpt's speedrun logs and the
  parameter-golf forks: `step:1/20344 train_loss:22.62 train_time:81991ms step_avg:nanms`, `step:125/20344
  val_loss:6.2335 [val_bpb:3.69] train_time:... step_avg:...`; kind "colon_pairs") or an `s:N` (karpathy/llm.c's
  main.log: `s:0 trl:11.01 lr:0.000001 norm:14.96`, `s:250 tel:6.16`, `s:250 eval:0.2437`; kind "llmc"): every token
  must be such a pair. train_loss / trl -> loss, val_loss / tel -> eval_loss, val_bpb -> eval_bpb (bits per byte),
  norm -> grad_norm, lr -> learning_rate, llm.c's eval (HellaSwag accuracy) -> eval_hellaswag; a unit becomes a
  suffix, and a timing not yet measured (`nanms`) is no value.
* llm.c's console (karpathy/llm.c train_gpt2.cu): `step   10/74 | loss 3.284 (+0.01z)| norm 1.2345 (+0.20z)| lr
  3.00e-04 | 36.58 ms | 9.2% bf16 MFU | 112241 tok/s` (earlier `| train loss X | norm G | ...`, `loss X (z +0.01)|`;
  kind "llmc_console"): loss, norm -> grad_norm (the global gradient norm, before clipping), lr, time_ms, mfu_pct,
  tokens_per_second; the z-scores against the recent steps are not read. Its `val loss X` line (kind "llmc_val",
  eval_loss) is placed by `step_numbering` at the step line before it.
* karpathy/build-nanogpt's log.txt: `N train X`, `N val X`, `N hella X`, one a line (kind "step_name_value"):
  train -> loss, val -> eval_loss, hella -> eval_hellaswag.
* A from-scratch GPT loop's estimate_loss print with bare split names, pipe-separated and no `loss` word:
  `iter     0 | train 4.1292 | val 4.1249` (DaraBodla_mini-gpt-pytorch's MiniGPT notebook; kind "split_pipe"): an
  iter / iteration / step counter, then exactly a `train X` and a `val X` (or `test X`) field, the losses estimated on
  each split as gpt-dev's `step N: train loss X, val loss Y` (train -> train_split_loss, val / test -> eval_loss).
  Nothing else on the line but an `LR L` field (learning_rate) and a last field of the time elapsed (`| 15s`,
  LispLLM_lispllm's char GPT; not read): bare `train` / `val` fields beside others may as well be accuracies.
  yasirkhalil5665_GPT's `Iteration 250: Train 2.4206 | Test 2.4253 | LR 1.00e-03 | 1.5m` puts a colon after the counter.

`printed_dtype(text)`: the `dtype` setting a nanoGPT console prints (its configurator's `Overriding: dtype = float16`,
a config file's `dtype = 'bfloat16'` echoed, a fork's printed hyperparameters `dtype = bfloat16`) as the precision it
trains in: train.py autocasts to it on a GPU (float16 with a GradScaler), as the W&B config's `dtype` is read
(`tracker_config`).
"""
from __future__ import annotations

import math
import re

from ...timeline import canonical_metric
from .fields import StepLine, FLOAT, NUMBER, UNITS, _fields, _record, _snake, number

# nanochat / autoresearch / pipe-separated training lines: `step N[/M] [(P%)] | loss: X | key: value | ...`,
# adeelmahmood/nanogpt-to-chat's `step: N/M | loss: X | matrix lr Y | ...`; the first field must be a loss.
PIPE_STEP = re.compile(r"(?<![\w/])step:?\s+(\d{1,18})(?:/(\d{1,18}))?(?:\s+\(([\d.]+)%\))?\s+\|(?=[\w ]*loss:)")
# nanochat's evaluations `Step N | Validation bpb: X` and old chat_sft `Step N/M | Training loss: X| lrm: Y`.
NANOCHAT_STEP = re.compile(r"(?<![\w/])Step (\d{1,18})(?:/(\d{1,18}))? \|"
                            r"(?= *(?:Validation |CORE metric:|ChatCORE|Training loss:))")
# nanoGPT train.py: `iter N: loss X, time Yms, mfu Z%` and `step N: train loss X, val loss Y`.
NANOGPT = re.compile(r"(?<![\w/])(?:iter (\d{1,18}): (?=loss )|step (\d{1,18}): (?=train loss ))")
# char-rnn-tensorflow train.py (sherjilozair/char-rnn-tensorflow and its forks): `{}/{} (epoch {}), train_loss = {:.3f},
# time/batch = {:.3f}`, the first count e x batches an epoch + b (the run's own step), the second the whole run's
CHAR_RNN = re.compile(r"^\s*(\d{1,18})/(\d{1,18}) \(epoch (\d{1,6})\), train_loss = (" + FLOAT + r"), time/batch = ")
# verl's console logger: `step:N - name:value - name:value ...`.
# modded-nanogpt / parameter-golf `step:N/M train_loss:X ...` and llm.c `s:N trl:X ...` (no space after the colon)
COLON_STEP = re.compile(r"^\s*(step|s):(\d{1,18})(?:/(\d{1,18}))?(?= \S+:\S)")
_COLON_NAMES = {"train_loss": "loss", "trl": "loss", "val_loss": "eval_loss", "tel": "eval_loss", "val_bpb": "eval_bpb",
                "norm": "grad_norm", "lr": "learning_rate", "eval": "eval_hellaswag"}
_COLON_MEASURES = ("loss", "eval_loss", "eval_bpb", "eval_hellaswag")  # a line holds one of these, or is no step line
# build-nanogpt's `N train X` / `N val X` / `N hella X`
STEP_NAME_VALUE = re.compile(r"^(\d{1,18}) (train|val|hella) ([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf))\s*$")
_STEP_NAMES = {"train": "loss", "val": "eval_loss", "hella": "eval_hellaswag"}
# `iter N | train X | val Y`: a counter, then the two splits' estimated losses and nothing else but the learning rate
# and the time elapsed (`| 15s`: LispLLM_lispllm's `step   250 | train 2.5660 | val 2.5619 |     15s`;
# yasirkhalil5665_GPT's `Iteration 250: Train 2.4206 | Test 2.4253 | LR 1.00e-03 | 1.5m`, a colon after the counter)
SPLIT_PIPE = re.compile(r"^\s*(?:iter(?:ation)?|step)\s*(?::\s*)?(\d{1,18})\s*[|:]\s*train\s*(?::\s*)?(" + FLOAT
                        + r")\s*\|\s*(?:val|test)\s*(?::\s*)?(" + FLOAT + r")\s*(?:\|\s*lr\s*(?::\s*)?(" + FLOAT
                        + r")\s*)?(\|[\s\d.a-z]*)?$", re.IGNORECASE)
_ELAPSED = re.compile(r"\|\s*\d+(?:\.\d+)?\s*(?:ms|s|min|m)\s*", re.IGNORECASE)
# what is left of it where the file's last line was cut inside it (`|     1`); the digits after a dot only, so that a
# run of digits is read one way (`\d+\.?\d*` splits it n ways and tries each before it fails: quadratic on a long line)
_ELAPSED_CUT = re.compile(r"\|\s*(?:\d+(?:\.\d*)?\s*(?:ms?|s|mi?)?)?", re.IGNORECASE)
# llm.c train_gpt2.cu:1872 (karpathy/llm.c f1e2ace): `printf0("step %4d/%d | loss %7.6f (%+.2fz)| norm %6.4f
# (%+.2fz)| lr %.2e | %.2f ms | %.1f%% bf16 MFU | %.0f tok/s\n", ...)`; before 5983036 (2024-06) `loss %7.6f (z %+.2f)|
# norm %6.4f |`, before that `train loss %7.6f | norm %6.4f |` (`A100 fp16 MFU` in its first form); and at each
# evaluation `printf0("val loss %f\n", val_loss)` (train_gpt2.cu:1728)
LLMC_STEP = re.compile(r"^step\s+(\d{1,18})/(\d{1,18}) \| (?:train )?loss\s+(" + FLOAT + r")\s*(?:\([^)|]*\))?\s*\| "
                        r"norm\s+(" + FLOAT + r")\s*(?:\([^)|]*\))?\s*\| lr\s+(" + FLOAT + r") \| (" + FLOAT
                        + r") ms \| (" + FLOAT + r")% [^|]{0,30}MFU \| (" + FLOAT + r") tok/s\s*$", re.IGNORECASE)
LLMC_VAL = re.compile(r"^val loss (" + FLOAT + r")\s*$", re.IGNORECASE)
_LLMC_NAMES = ("loss", "grad_norm", "learning_rate", "time_ms", "mfu_pct", "tokens_per_second")
# The first steps of nanoGPT print `mfu -100.00%`: its running MFU before it has five timings, no value.
_PLACEHOLDER_MFU = -100.0


def pipe_step(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """nanochat base_train (`step N/M (P%)`), chat_sft / mid_train (`step N (P%)`), autoresearch
    (`step N (P%) ... | remaining: Ss`), or a nanoGPT-style `step: N/M | loss: X | ...` line."""
    metrics, cut = _fields(line[m.end():].split("|"), last_line)
    names = {name for name, _ in metrics}
    if m.group(3) is None:
        kind = "key_value"
    elif "remaining_s" in names:
        kind = "autoresearch"
    else:
        kind = "nanochat_base" if m.group(2) else "nanochat"
    return _record(kind, int(m.group(1)), m.group(2), metrics, cut)


def nanochat_step(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """`Step N | Validation bpb: X` (-> eval_bpb; `Validation loss` -> eval_loss, `CORE metric` ->
    eval_core_metric), or old chat_sft's `Step N/M | Training loss: X| lrm: Y| num_tokens: Z` (with or without its
    `/M`: the `Training` field says it is a training line)."""
    metrics, cut = _fields(line[m.end():].split("|"), last_line)
    if m.group(2) is None and not line[m.end():].lstrip().startswith("Training loss:"):  # an evaluation's fields
        metrics = [(name if name.startswith("eval_") else "eval_" + name, value) for name, value in metrics]
    return _record("nanochat", int(m.group(1) or m.group(2)), m.group(2), metrics, cut)


def _nanogpt(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """nanoGPT's `iter N:` line (loss, time_ms, mfu_pct) or its `step N:` evaluation line, whose
    `train loss` is the loss estimated on the train split (train_split_loss) and `val loss` eval_loss."""
    metrics, cut = _fields(line[m.end():].split(","), last_line)
    metrics = [("train_split_loss" if name == "train_loss" else name, value) for name, value in metrics
               if not (name == "mfu_pct" and value == _PLACEHOLDER_MFU)]
    if not metrics or not metrics[0][0].endswith("loss"):  # the loss comes first, or it is no such line
        return None
    return _record("nanogpt", int(m.group(1) or m.group(2)), None, metrics, cut)


def _char_rnn(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """char-rnn-tensorflow's step line (kind "char_rnn"): a character-level language model trained from its random
    weights, at the run's step, its loss and epoch (counted from 0, as it prints it)."""
    return StepLine("char_rnn", int(m.group(1)), int(m.group(2)),
                    (("loss", float(m.group(4))), ("epoch", float(m.group(3)))))


def _colon_pairs(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """`step:N/M name:value ...` (modded-nanogpt, parameter-golf) or llm.c's `s:N name:value ...`: read when every
    token after the counter is a numeric `name:value`, a loss or an evaluation among them."""
    tokens = line[m.end():].split()
    cut = last_line and bool(tokens)
    metrics = []
    for token in tokens[:-1] if cut else tokens:
        name, sep, raw = token.partition(":")
        value = number(raw) if sep and name else None
        if value is None:
            return None
        unit = UNITS.get(raw[NUMBER.match(raw).end():].lower(), "") if NUMBER.match(raw) else ""
        if unit and not math.isfinite(value):
            continue  # `step_avg:nanms`: a timing not measured yet
        metrics.append((_COLON_NAMES.get(name) or canonical_metric(_snake(name.lower())) + unit, value))
    if not any(name in _COLON_MEASURES for name, _ in metrics):
        return None
    kind = "llmc" if m.group(1) == "s" else "colon_pairs"
    return _record(kind, int(m.group(2)), m.group(3), metrics, cut)


def _step_name_value(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """build-nanogpt's `N train X` / `N val X` / `N hella X`."""
    value = number(m.group(3))
    return None if value is None else _record("step_name_value", int(m.group(1)), None,
                                                [(_STEP_NAMES[m.group(2)], value)], False)


def split_pipe(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """`iter N | train X | val Y [| LR L]` (kind "split_pipe"): the losses estimated on the train and held-out (val or
    test) splits at step N, as train_split_loss and eval_loss, and the learning rate. On a file's last line its last
    field may be cut mid-write: the value that ends the line (left out), else the elapsed time (not read: the value
    before its `|` is whole)."""
    elapsed = m.group(5)
    whole_time = elapsed is not None and _ELAPSED.fullmatch(elapsed) is not None
    if elapsed and not whole_time and not (last_line and _ELAPSED_CUT.fullmatch(elapsed)):
        return None
    metrics = [("train_split_loss", float(m.group(2))), ("eval_loss", float(m.group(3)))]
    metrics += [("learning_rate", float(m.group(4)))] if m.group(4) else []
    value_cut = last_line and not elapsed
    return _record("split_pipe", int(m.group(1)), None, metrics[:-1] if value_cut else metrics,
                   last_line and not whole_time)


def _llmc_console(m: re.Match, line: str, last_line: bool) -> StepLine:
    """llm.c's step line: step N of M, its loss, grad norm, lr, time, MFU and throughput."""
    metrics = tuple((name, float(raw)) for name, raw in zip(_LLMC_NAMES, m.groups()[2:]))
    return StepLine("llmc_console", int(m.group(1)), int(m.group(2)), metrics)


def _llmc_val(m: re.Match, line: str, last_line: bool) -> StepLine:
    """llm.c's `val loss X`: eval_loss, at step 0 until `step_numbering` places it (none in a file of no llm.c step
    line: the words alone may be anyone's)."""
    return StepLine("llmc_val", 0, None, (("eval_loss", float(m.group(1))),))


# nanoGPT's train.py: `dtype = 'bfloat16' if ... else 'float16'  # 'float32', 'bfloat16', or 'float16', the latter will
# auto implement a GradScaler`, then `ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(...,
# dtype=ptdtype)`: the autocast dtype, on a GPU alone (device_type is 'cpu' for any device that is not CUDA)
NANOGPT_DTYPES = {"float16": {"fp16": True, "bf16": False}, "bfloat16": {"bf16": True, "fp16": False},
                  "float32": {"fp16": False, "bf16": False}}
DTYPE_TEXT_KEY = "nanogpt_dtype"  # LogRecords.texts key: `printed_dtype`'s values as JSON
_SETTING = r"(?m)^[ \t]*(?:Overriding: )?{}[ \t]*=[ \t]*(['\"]?)([\w:.-]+)\1[ \t]*(?:#[^\n]*)?$"
_DTYPE_SETTING = re.compile(_SETTING.format("dtype"))
_DEVICE_SETTING = re.compile(_SETTING.format("device"))


def printed_dtype(text: str) -> dict:
    """{"fp16": ..., "bf16": ...} of the last `dtype = X` setting a console of nanoGPT's step lines prints (module
    docstring), where its printed device (none: train.py's default, 'cuda') is a CUDA one; else {}."""
    if "dtype" not in text or not NANOGPT.search(text):
        return {}
    dtypes = [m.group(2) for m in _DTYPE_SETTING.finditer(text)]
    devices = [m.group(2) for m in _DEVICE_SETTING.finditer(text)]
    if not dtypes or (devices and "cuda" not in devices[-1]):
        return {}
    return dict(NANOGPT_DTYPES.get(dtypes[-1], {}))
