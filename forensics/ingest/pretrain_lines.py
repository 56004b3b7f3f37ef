"""Console step lines: Megatron, OLMo, NeMo, torchtitan, nanochat, autoresearch, nanoGPT, `key: value`.

`parse_line(line)` turns one console line (ANSI colour codes already removed) into a
`StepLine` or None; `OlmoBlock` gathers OLMo's multi-line records. The stdout reader calls
both and puts the rows in file order with its other events.

* Megatron-LM / Megatron-DeepSpeed (megatron/training/training.py `training_log`, printed
  every `log_interval` by the last rank): ` iteration N/ M | key: value | ... |`. Each field is
  `key: value |`, so only fields closed by `|` are read (a line cut mid-write keeps its
  complete fields). `lm loss` is the loss averaged over the interval's advanced iterations;
  `number of skipped iterations` (fp16 overflows) and `number of nan iterations` (skipped
  iterations whose loss was NaN/Inf) are counts per interval. The validation line
  ` validation loss at iteration N | lm loss value: X | lm loss PPL: Y |` gives eval_loss /
  eval_ppl. Launcher prefixes (`[default7]:`, `[rank0]:`, `0: `, a timestamp) are ignored. Megatron-LM of 2019-20
  (and the forks of it, Chinese-Transformer-XL among them) printed most fields without the colon: ` iteration N/ M |
  elapsed time per iteration (ms): T | learning rate X | lm loss X | loss scale X |`; such a field is read where its
  name is one Megatron prints (or ends in `loss`) and the iteration is the line's first field (a fork's line that puts
  its own fields first, `epoch 3/ 10 | global iteration N/ M | ...`, is read as a generic line, its epoch with it).
* GPT-NeoX prints Megatron's line with `lm_loss` (and ` validation results at iteration N | lm_loss value: X |`);
  nanotron (src/nanotron/logging/base.py) `iteration: N / M | ... | grad_norm: G | lm_loss: X | lr: Y | ...`
  with values through its `human_format` (`81.9K`; kind "nanotron").
* Composer / llm-foundry (composer/loggers/console_logger.py `log_to_console`): a `[batch=N/M]:` header
  (`[epoch=E][batch=b/n]:` when the duration is in epochs, `[token=N/M]:` in tokens), then one
  `\t Train name: value` line per metric (`loss/train/total`, `l2_norm/grad/global`, `lr-<Optimizer>/group0`);
  the step is the run's batch count (`time/batch`, logged at the batch's start, + 1) where the block holds it.
  An evaluation prints `[Eval batch=k/n] Eval on <label> data:` then `\t Eval metrics/<label>/<Metric>: X`
  lines (LanguageCrossEntropy -> eval_loss), at the last training batch (`ComposerBlock`).
* NeMo-RL (nemo_rl/algorithms/sft.py, grpo.py): `===== Step N/M =====`, then `  • Loss: X` (`  • Avg Reward: X`,
  `    • Validation loss: X`) among the step's other prints (`NemoRLBlock`).
* fairseq's validation line `valid | epoch 001 | valid on 'valid' subset | loss X | ppl Y | ... | num_updates N`
  (eval_loss at update N; its `train_inner` lines, `loss=X, ..., gnorm=G`, are generic lines).
* Keras `model.fit`: `Epoch E/N`, then `100/100 ━━━━ 5s 50ms/step - loss: X - val_loss: Y` (the epoch's means at
  its last batch; step E, `KerasEpochs`).
* the transformers Flax examples (run_clm_flax.py, run_mlm_flax.py, run_t5_mlm_flax.py): `Step... (N | Loss: X, Learning
  Rate: Y)` and `Step... (N | Eval Loss: X | Eval Perplexity: Y)` (a line with no learning rate is an evaluation's: its
  fields eval_; kind "flax").
* fairseq2: `Train Metrics (step N) - NLL Loss: X | Gradient Norm: G | ... | Learning Rate: Y` (`Validation Metrics`:
  eval_); MaxText's `Completed eval after train step N, loss=X, perplexity=Y` (its `completed step: N, ..., loss: X`
  lines are generic ones); clu's LoggingWriter (t5x): `[N] collection=train loss=X, accuracy=Y` (other collections:
  eval_).
* mlx-lm's table (cli_ui.py): `  iter   train_loss ...` then `    10    2.300 ▼ ...` and `    10    val 2.100 ...`
  rows (`MlxTable`).
* EasyR1's console: `Step N` then the step's metrics as nested YAML (`actor:` / `  grad_norm: 0.3`; `.nan`), names
  joined with `/` (`YamlSteps`).
* a PPO loop's own prints under a dashed header (trl.PPOTrainer driven by hand, as in a course notebook):
  `------ STEP N ------`, then one `rewards/mean:<TAB>-14.7<TAB><---- a comment` line per metric (`DashedSteps`).
* OLMo (olmo/train.py `log_metrics_to_console`): a `[step=N/M]` (later `[step=N/M,epoch=E]`)
  header, then one `    name=value` line per metric; values above 1000 carry thousands
  commas. OLMo-core prints the same shape with names such as `train/CE loss`, and its evaluations as
  `Finished lm evals in 1.0 seconds. Metrics:` then `    CE loss=X` lines (eval_loss). Pairs on the
  header line itself (`[step=N] train/CrossEntropyLoss=2.1 optim/total_grad_norm=0.4`) count too.
* NeMo (PyTorch Lightning's TQDMProgressBar with NeMo's logged metrics in the postfix):
  `Epoch 0: 47%|...| 7/15 [06:19<07:13, reduced_train_loss=11.50, global_step=5.000,
  consumed_samples=12288.0, train_step_timing in s=49.50]`; reduced_train_loss -> loss,
  lr -> learning_rate, val_loss -> eval_loss; Lightning's own smoothed `loss` is left out.
* NeMo 2.0 (nemo/lightning/pytorch/callbacks/progress_printer.py, ProgressPrinter): `Training epoch 0, iteration 9/29
  | lr: 1.9e-05 | global_batch_size: 8 | global_step: 9 | reduced_train_loss: 2.345 | train_step_timing in s: 0.345 |
  consumed_samples: 80`, with ` | val_loss: X | val_ppl: Y` appended at a validation (kind "nemo2"): its step is the
  printed global_step (0-based, as NeMo's Lightning bar prints it too); reduced_train_loss -> loss, lr ->
  learning_rate, val_loss -> eval_loss, val_ppl -> eval_ppl.
* MindSpore MindFormers (mindformers/core/callback/callback.py:485/:490, MFLossMonitor): `{ Epoch:[  1/  1],
  step:[   10/   30], loss: 2.345, per_step_time: 345ms, lr: 1.9e-05, overflow cond: False, loss_scale: 1.0,
  global_norm: [1.234], train_throughput_per_npu: 123.456T` (not in sink mode `loss:[2.345/2.400]`, the step's loss
  then the running mean; kind "mindformers"): step n + (E - 1) x M; global_norm -> grad_norm, per_step_time ->
  step_time_ms, `overflow cond: True` -> an `overflow` point, the `T` throughput -> tflops_per_npu.
* OpenNMT-py (onmt/utils/statistics.py:125, Statistics.output): `Step 10/  300; acc: 41.0; ppl:  11.8; xent: 2.5;
  lr: 0.00100; sents: ...; bsz: ...; 12345/13456 tok/s;      6 sec;` (kind "opennmt"): xent is the loss (ppl =
  exp(xent)), acc -> accuracy_pct. Its validation's `[... INFO] Validation perplexity: P` / `Validation accuracy: A`
  lines (report_manager.py:154) give eval_ppl and eval_loss = ln P, eval_accuracy_pct (kind "opennmt_valid", placed
  at the step line before them by `step_numbering`).
* lucidrains' scripts (x-transformers train_enwik8.py, train_belief_state.py:112,121): `training loss: 2.48` alone on
  its line once a batch (or behind the tqdm bar it was printed after), `validation loss: 2.51` every few batches
  (kind "loss_print"): no step; `step_numbering.uncounted_lines_numbered` numbers the n-th training print batch n and
  puts a validation print at the batch before it.
* The MetricLogger of DeiT / MAE / DETR / DINO and the LLaMA-Adapter / LLaMA2-Accessory scripts that copied it:
  `[17:11:05.859398] Epoch: [0]  [   30/13000]  eta: 2:17:53  lr: 0.000001  closs: 1.5078 (1.6011)  grad_norm: 0.9
  (1.1)  time: 0.61  data: 0.00  max mem: 20618` (kind "metric_logger"): step E x M + N; each meter prints the median
  of its recent window then its global average, and the median is read (a smoothed value); `loss`, else the first
  `*loss` meter (`closs`), is the loss. `Test:  [N/M]  ...` lines (kind "metric_logger_eval") are an evaluation:
  eval_ meters at their global average, the last line of each evaluation kept (`step_numbering`).
* torchtitan (torchtitan/components/metrics.py `MetricsProcessor.log`):
  `step: N  loss: X  grad_norm: Y  memory: 20.21GiB(21.27%)  tps: 1,016  tflops: 58.88  mfu: 5.95%`.
* nanochat (karpathy/nanochat): scripts/base_train.py prints
  `step 00012/00100 (12.00%) | loss: X | lrm: L | dt: Tms | tok/sec: N | bf16_mfu: M | epoch: E pq: P rg: R |
  total time: Tm[ | eta: Em]` (kind "nanochat_base"); scripts/chat_sft.py and scripts/mid_train.py print the
  same without the total (`step 00001 (0.28%) | ...`, kind "nanochat"). The loss is nanochat's debiased EMA
  of the step losses (a NaN stays in it). Fields: lrm -> lr_multiplier, dt -> time_ms, tok/sec ->
  tokens_per_second, (bf16_)mfu -> mfu_pct, a unit becomes a suffix (`total time: 0.5m` -> total_time_min).
  Its evaluations `Step 00050 | Validation bpb: 3.162` (base_train, chat_sft, mid_train) give eval_bpb,
  bits per byte, kept apart from eval_loss (nats per token); `Validation loss` -> eval_loss, `CORE metric`
  -> eval_core_metric; old chat_sft's `Step N/M | Training loss: X| lrm: Y` (the `/M` or not) is a training line.
* autoresearch (karpathy/autoresearch train.py): `\\rstep 00012 (3.9%) | loss: X | lrm: L | dt: Tms |
  tok/sec: N | mfu: M% | epoch: E | remaining: Ss    `, each written over the last with `\\r` (the
  stdout reader splits on `\\r`, so each update is a line); kind "autoresearch", told by `remaining`.
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
* karpathy/build-nanogpt's log.txt: `N train X`, `N val X`, `N hella X`, one a line (kind "step_name_value"):
  train -> loss, val -> eval_loss, hella -> eval_hellaswag.
* verl (verl/utils/logger/aggregate_logger.py `concat_dict_to_str`, its console logger for SFT and RL
  trainers): `step:N - train/loss:X - train/lr(1e-3):Y - train/time(s):Z`, every numeric metric as
  `name:value` joined by ` - ` (kind "verl"). A scale in the name is undone (`lr(1e-3)` prints the LR
  in units of 1e-3: 0.01 is 1e-5) and a unit becomes a suffix (`time(s)` -> time_s); numpy 2 scalars
  print as `np.float64(0.5)`. RL names keep verl's spelling except those the timeline knows
  (actor/grad_norm -> grad_norm, critic/score/mean -> reward, ...).
* A tqdm bar whose postfix holds a loss, as custom training loops print it (`progress.set_postfix(loss=...)`
  or `set_postfix_str(f"loss {x:.4f}")`): `SFT:   3%|▎  | 10/375 [02:09<1:13:19, 12.05s/it, loss 6.0530]`
  (kind "tqdm_postfix"); its step is the bar's n; an `Epoch E` before the bar restarts it each epoch, so
  the epoch is kept as a metric and the stdout reader numbers the steps on across epochs. The postfix
  repeats its last value at every redraw: the reader keeps a value where it changes.
* `Epoch:[E/N](n/M) loss: X, ...` lines of the small from-scratch LLM projects (jingyaogong/minimind's
  trainer/train_*.py: `Epoch:[1/1](10/39695), loss: 8.5371, logits_loss: 8.5371, aux_loss: 0.0000, lr: 0.0005,
  epoch_time: 130.0min`; baby-llama2-chinese and its forks: `Epoch:[0/2](100/2000) loss:3.123 lr:0.0003000
  epoch_Time:12.0min:`), kind "epoch_bracket": n is the step within epoch E of N, M the steps an epoch makes, and
  the fields are `name: number` pairs separated by commas, spaces or periods. The epoch is kept as a metric (the
  stdout reader numbers the steps on across epochs, whichever epoch the script counts from).
* Any other short line of a hand-written training loop that names a step counter and a loss, each with its number:
  `Epoch 1/3, Step 100/1000, Loss: 2.3456, LR: 1e-4`, `Step 100: loss = 2.3456`, `[Epoch 1][Step 100] loss: 2.3`,
  `step 100 | loss 2.3456 | lr 1e-4`, `2024-01-01 12:00:00 - INFO - Step 100 - loss: 2.3456` (kind "generic"). Only
  the names it knows are read (loss, train / training loss, val / validation / eval loss, lr / learning rate, grad
  norm, epoch, perplexity, accuracy); the step is the counter as printed, the epoch (`Epoch 2`, or a bracketed tag:
  `[E2] step 0 loss X`) as a metric (the stdout reader numbers steps that start over each epoch on). A line counted
  by its iteration that prints the optimizer step beside it (LitGPT's `iter 46 step 1`) keeps that step as
  `optimizer_step`. A line holding a dict (`{`) is the dict reader's. A line printed
  once an epoch with no step counter (`Epoch 1/10 | Train Loss: 2.3 | Val Loss: 2.5`, LitGPT's `loss train:`) is
  kind "generic_epoch": epoch E is its step.
* `N | loss X | lr Y | Tms`, the step alone before `|`-separated fields (kind "key_value").
* A loss printed as a torch tensor, one a line, as a hand-written loop's `print(loss)` writes it: after a loss
  label (`loss: tensor(2.31, ...)`, `Loss = tensor(...)`) or with its `grad_fn=<NllLossBackward0>`; a scalar only
  (kind "printed_tensor"). A bare `tensor(3.2207, device='cuda:0')` may be anything the loop printed (an
  accuracy): metric `printed_tensor`, which is judged for NaN/Inf but not as a loss. No step: step 0 until
  `step_numbering.uncounted_lines_numbered` numbers such lines by their order (none where the file logs its loss
  another way: a custom loss's print beside the Trainer's own lines).
* Plain logging lines made only of comma-separated `key: value` pairs with a loss and a counter,
  as Barber0/LLM-pretrain pretrain.py logs `ep: %d, batch: %d, time: %.2f, ntokens: %.2f/%d, loss: %f`
  (kind "key_value"). Such a line has no step of its own: its step is the counter as printed (step,
  iter, iteration, else batch), so a counter restarted by a new attempt or epoch reads like a restart.
  A line with any part that is not a numeric pair (prose, `batch: 3, tensorboard error: ...`) is not read. A line of
  several `*_loss` terms and no plain `loss` takes its `total_loss` / `combined_loss` as the loss.
* torchtune's bar description `E|N|Loss: X:` before the bar itself (kind "torchtune"): step N, the recipe's
  global_step (the bar's own n, one ahead after the update, and each redraw are not the step).
* NVIDIA DLLogger's StdOutBackend (dllogger/logger.py, the DeepLearningExamples scripts): `DLL <timestamp> - <step>
  name : value [unit] name : value ...` (kind "dllogger"), the step as the script's step_format prints it: `Training
  Epoch: 0 Training Iteration: 2933` (BERT), `Epoch: 0 Iteration: 100`, `step: 100`, a bare `100` or the tuple `(0,
  100)`; the last counter is the step, an epoch beside it kept as a metric, a `Validation` step's fields eval_. Every
  numeric field is read: `step_loss` is the loss, a running `average_loss` beside it loss_avg (the loss where the line
  has no other). A line with no step (`()`, a run's closing summary) is not a step's; a `PARAMETER` line is the
  stdout reader's (`loss_scale : X` there is an overflow the scaler skipped).
On the last line of a file (no newline after it) the last field of these shapes may be cut mid-write:
it is left out and the line marked cut.

Names go through `canonical_metric` (lm loss, CE loss, CrossEntropyLoss -> loss; grad norm ->
grad_norm; ...). A `loss scale` that is 1.0 on every line is no dynamic scaler at all (bf16 and
fp32 runs print 1.0), so it is dropped by the reader, not reported as a scale at its floor.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..metric_names import OPTIMIZER_STEP, keras_metric_name
from ..timeline import canonical_metric

# Every step line holds one of these; a log holding none needs no line-by-line look.
STEP_LINE_MARKERS = ("iteration", "[step=", "[batch=", "[token=", "[sample=", "= Step ", "valid on '",
                     "Metrics (step ", "Completed eval after", "] collection=", "] loss=", "tgs (tokens/gpu/second)=",
                     "step:", "reduced_train_loss=", "loss:",
                     ": loss ", ": train loss ", "| Validation ", "| CORE metric", "| ChatCORE", " trl:", " train ",
                     "| loss ", "tensor(", "Step... (", "Running Loss:", "; xent: ", "DLL ", "|Loss: ")
# A tqdm bar with a loss in its postfix (no fixed substring marks it: one search over the text does).
TQDM_LOSS_POSTFIX = re.compile(r"(?:it/s|s/it),[^\]\r\n]*loss")
# The kinds of step line that only a pre-training script prints (nanochat's chat_sft / mid_train
# lines, nanoGPT's train.py and plain key: value lines also come from fine-tuning runs).
PRETRAINING_KINDS = ("megatron", "olmo", "nemo", "torchtitan", "nanochat_base", "autoresearch", "nanotron")
# The framework a kind of line names, where it names one.
KIND_FRAMEWORKS = {"megatron": "megatron", "nanotron": "nanotron", "composer": "composer", "nemo_rl": "nemo_rl", "olmo": "olmo", "nemo": "nemo", "torchtitan": "torchtitan",
                   "nanochat_base": "nanochat", "nanochat": "nanochat", "autoresearch": "autoresearch",
                   "nanogpt": "nanogpt", "verl": "verl", "llmc": "llm.c", "dschat_sft": "deepspeed", "dschat_rm": "deepspeed",
                   "dschat_ppo": "deepspeed", "dschat_dpo": "deepspeed",
                   "nemo2": "nemo", "mindformers": "mindformers", "opennmt": "opennmt", "torchtune": "torchtune"}
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NUMBER = re.compile(r"^[-+]?(?:nan|inf(?:inity)?|(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)", re.IGNORECASE)

_MEGATRON_ITERATION = re.compile(r"\biteration(:?)\s+(\d{1,18})\s*/\s*(\d{1,18})\s*\|")  # `iteration:` is nanotron's
_MEGATRON_FIELD = re.compile(r"\s*([^|:]+?)\s*:([^|]*)\|")
# old Megatron's field without a colon: `learning rate 6.300E-06 `, `lm loss NAN `, `loss scale 64.0 `
_MEGATRON_BARE_FIELD = re.compile(r"^\s*([A-Za-z][A-Za-z _()/-]*?)\s+([-+]?(?:nan|inf|\d[\d.]*(?:[eE][-+]?\d+)?))\s*$",
                                  re.IGNORECASE)
# Megatron's `validation loss at iteration N |`, GPT-NeoX's ` validation results at iteration N |`
_MEGATRON_VALIDATION = re.compile(r"validation (?:loss|results) at iteration\s+(\d{1,18})\b[^|]*\|")
# Megatron's field names -> the timeline's (the loss keys go through `_loss_name`).
_MEGATRON_KEYS = {
    "consumed samples": "consumed_samples",
    "consumed tokens": "consumed_tokens",
    "skipped samples": "skipped_samples",
    "elapsed time per iteration (ms)": "iteration_time_ms",
    "elapsed time per iteration (s)": "iteration_time_s",
    "throughput per gpu (tflop/s/gpu)": "tflops_per_gpu",
    "learning rate": "learning_rate",
    "global batch size": "global_batch_size",
    "loss scale": "loss_scale",
    "grad norm": "grad_norm",
    "num zeros": "num_zeros",
    "params norm": "params_norm",
    "number of skipped iterations": "skipped_iterations",
    "number of nan iterations": "nan_iterations",
    "samples per second": "samples_per_second",
    "tflops": "tflops",
}

_OLMO_HEADER = re.compile(r"\[step=(\d{1,18})(?:/(\d{1,18}))?[^\]]*\]")
_OLMO_INLINE_PAIR = re.compile(r"(?<![\w/])([A-Za-z][\w/.()-]*)=(\S+)")
_OLMO_BLOCK_LINE = re.compile(r"^\s+([A-Za-z][^=]*?)=(\S+)\s*$")

# Lightning's bar: `Epoch E: 47%|####| N/M [06:19<07:13, reduced_train_loss=11.50, global_step=5.000, ...]`
# or, without a length, `Epoch E: : Nit [00:04, 4.36s/it, ...]`.
_NEMO_BAR = re.compile(r"Epoch (\d+):[^\[\r\n]*?\b(\d+)(?:/(\d+)|it)\s*\[([^\]]*reduced_train_loss=[^\]]*)\]")
_NEMO_PAIR = re.compile(r"([A-Za-z_][\w/ ]*?)=([^,\]]+)")
# Lightning's own `loss` is a running mean over the bar's window, `global_step` the step itself.
_NEMO_SKIP = {"loss", "v_num", "global_step", "consumed_samples"}

_TITAN = re.compile(r"\bstep:\s*(\d{1,18})(?:/(\d{1,18}))?\s+(?:=\s*[\d.]+%\s+)?loss:\s")
_TITAN_PAIR = re.compile(r"([a-z_]+):\s*(\S+)")
_TITAN_NAMES = {"memory": "memory_gib", "mfu": "mfu_pct"}  # max reserved GiB; % of peak FLOPS


# nanochat / autoresearch / pipe-separated training lines: `step N[/M] [(P%)] | loss: X | key: value | ...`,
# adeelmahmood/nanogpt-to-chat's `step: N/M | loss: X | matrix lr Y | ...`; the first field must be a loss.
_PIPE_STEP = re.compile(r"(?<![\w/])step:?\s+(\d{1,18})(?:/(\d{1,18}))?(?:\s+\(([\d.]+)%\))?\s+\|(?=[\w ]*loss:)")
# nanochat's evaluations `Step N | Validation bpb: X` and old chat_sft `Step N/M | Training loss: X| lrm: Y`.
_NANOCHAT_STEP = re.compile(r"(?<![\w/])Step (\d{1,18})(?:/(\d{1,18}))? \|"
                            r"(?= *(?:Validation |CORE metric:|ChatCORE|Training loss:))")
# nanoGPT train.py: `iter N: loss X, time Yms, mfu Z%` and `step N: train loss X, val loss Y`.
_NANOGPT = re.compile(r"(?<![\w/])(?:iter (\d{1,18}): (?=loss )|step (\d{1,18}): (?=train loss ))")
# verl's console logger: `step:N - name:value - name:value ...`.
# modded-nanogpt / parameter-golf `step:N/M train_loss:X ...` and llm.c `s:N trl:X ...` (no space after the colon)
_COLON_STEP = re.compile(r"^\s*(step|s):(\d{1,18})(?:/(\d{1,18}))?(?= \S+:\S)")
_COLON_NAMES = {"train_loss": "loss", "trl": "loss", "val_loss": "eval_loss", "tel": "eval_loss", "val_bpb": "eval_bpb",
                "norm": "grad_norm", "lr": "learning_rate", "eval": "eval_hellaswag"}
_COLON_MEASURES = ("loss", "eval_loss", "eval_bpb", "eval_hellaswag")  # a line holds one of these, or is no step line
# build-nanogpt's `N train X` / `N val X` / `N hella X`
_STEP_NAME_VALUE = re.compile(r"^(\d{1,18}) (train|val|hella) ([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf))\s*$")
_STEP_NAMES = {"train": "loss", "val": "eval_loss", "hella": "eval_hellaswag"}
_VERL_STEP = re.compile(r"(?<![\w/])step:(\d{1,18}) - (?=[^\s:]+:)")
_VERL_FIELD = re.compile(r"([^\s:][^:]*?)(?:\(([^()]*)\))?:(?:np\.\w+\()?([-+\w.]+)\)?")
_VERL_UNITS = {"s": "_s", "ms": "_ms", "%": "_pct"}
# A tqdm bar (`[prefix: ]P%|bar| n/total [elapsed<left, rate, postfix...]`) whose postfix names a loss.
_TQDM_BAR = re.compile(r"\d{1,3}%\|[^|]{0,200}\|\s*(?P<n>\d{1,18})/(?P<total>\d{1,18})\s*"
                       r"\[[^\],\]]{0,60},\s*[^\],]{0,40}(?:it/s|s/it)\s*,(?P<postfix>[^\]]{0,500}(?i:loss)[^\]]{0,500})\]")
# (a key may be words: a loop's own `set_postfix({"Training Loss": loss})` draws `Training Loss=0.365`)
_POSTFIX_PAIR = re.compile(r"^\s*([A-Za-z][\w/.-]*(?: [A-Za-z][\w/.-]*){0,3})\s*[=:]?\s*([-+]?(?:nan|inf|\.?\d)[^\s,]*)\s*$",
                           re.IGNORECASE)
_POSTFIX_SKIP = {"v_num"}  # Lightning's run version, not a metric
_BAR_EPOCH = re.compile(r"\bEpoch\s*(\d{1,6})", re.IGNORECASE)
# MiniMind / baby-llama2-chinese: `Epoch:[E/N](n/M)` then `name: number` pairs (commas, spaces or periods between).
_EPOCH_BRACKET = re.compile(r"(?<![\w/])Epoch:?\s*\[(\d{1,6})/(\d{1,6})\]\s*\((\d{1,18})/(\d{1,18})\)")
_BRACKET_FIELD = re.compile(r"([A-Za-z][\w]{0,40})\s*:\s*([-+]?(?:nan|inf|\d[\d.]*(?:[eE][-+]?\d+)?)[A-Za-z%]{0,4})",
                            re.IGNORECASE)
# A hand-written loop's line: a step counter and a loss, each with its number, in any order and punctuation.
# Separators between a name and its number: spaces or tabs, one of `:=#`, never a run across lines (`\s*[:=]?\s*`
# is quadratic on a long run of blanks).
_SEP = r"[ \t]*(?:[:=#][ \t]*)?"
_GENERIC_STEP = re.compile(r"(?<![\w/])(?:global[_ ]step|step|iter(?:ation)?|batch(?=" + _SEP + r"\[?\d+[ \t]*/))"
                          + _SEP + r"\[?(\d{1,12})(?:[ \t]*/[ \t]*(\d{1,12}))?\]?(?![\w.]|/)", re.IGNORECASE)
_GLOBAL_STEP = re.compile(r"(?<![\w/])global[_ ]step" + _SEP + r"(\d{1,12})()(?![\w.]|/)", re.IGNORECASE)
# A loss named with its split or kind before it (`Train Loss`, `val_loss`, `total loss`) or its split after it
# (LitGPT's `loss train:`, `Loss Val:`); any other word before it (`aux loss`, `kl loss`, `scaled loss`) is another
# loss, passed over.
_SPLIT = r"(?:train(?:ing)?|val(?:id|idation)?|eval|test|dev)"
_GENERIC_PAIR = re.compile(r"(?<![\w/.-])(loss[_ ]scale|(?:([a-z]+)[_ .-]{1,2})?loss(?:[_ ]" + _SPLIT + r")?|(?:[a-z]+_)?lr|"
                           r"learning[_ ]rate|grad(?:ient)?[_ ]norm|gnorm|epoch|(?:(?:" + _SPLIT + r"[_ ])?(?:chosen|rejected)[_ ])?reward|(?:" + _SPLIT + r"[_ ])?(?:ppl|perplexity|"
                           r"acc(?:uracy)?))" + _SEP.replace("#", "") + r"(?:tensor\()?"
                           r"([-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?))(%?)(?![\w.]|,\d)", re.IGNORECASE)
_LOSS_KINDS = frozenset({"train", "training", "total", "lm", "avg", "average", "mean", "running", "batch",
                         "val", "valid", "validation", "eval", "test", "dev"})  # held-out ones: `_HELD_OUT`
# A line about the best or last value so far, not a step's own (`Best loss 0.123 at step 500`, early stopping).
_NOT_A_STEP = re.compile(r"\bbest\b|early[ _-]?stop", re.IGNORECASE)
_GENERIC_NAMES = {"lr": "learning_rate", "learning rate": "learning_rate", "grad norm": "grad_norm", "gnorm": "grad_norm",
                  "gradient norm": "grad_norm", "epoch": "epoch", "ppl": "perplexity", "perplexity": "perplexity",
                  "acc": "accuracy", "accuracy": "accuracy", "reward": "reward"}
_HELD_OUT = re.compile(r"val|eval|test|dev", re.IGNORECASE)
# A generic line is read for its loss, or for a held-out accuracy printed alone (Tianshi-Xu's CS336 SFT loop:
# `Step 15 eval_acc: 0.278` between its `Step N loss: L` lines).
_GENERIC_NEEDS = {"loss", "eval_loss", "eval_accuracy"}
_HELD_OUT_ACCURACY = re.compile(r"(?<![a-z])" + _SPLIT + r"[_ ]acc", re.IGNORECASE)
_LOSS_WORD = re.compile(r"loss", re.IGNORECASE)
# A loop that prints once an epoch, with the epoch as its only counter: `Epoch 1/10 | Train Loss: 2.3 | Val Loss: 2.5`;
# the epoch may be a bracketed tag (`[E2] step 0 loss 0.49`, `[ep 3/5]`) or `Ep N` before the step in parentheses
# (the loops of Raschka's "LLMs from scratch" and their copies: `Ep 1 (Step 000005): Train loss 0.687, Val loss ...`).
_GENERIC_EPOCH = re.compile(r"(?<![\w/])(?:epoch" + _SEP + r"\[?|\[ep?[ \t]*(?=\d{1,6}(?:[ \t]*/[ \t]*\d{1,6})?\])"
                           r"|ep[ \t]+(?=\d{1,6}[ \t]+\(step\b))"
                           r"(\d{1,6})(?:[ \t]*/[ \t]*(\d{1,6}))?\]?(?![\w.]|/)", re.IGNORECASE)
_BARE_COUNT = re.compile(r"(?<![\w./:-])(\d{1,12})[ \t]*/[ \t]*(\d{1,12})(?![\w.:]|/)")
# a line's leading date before a time is no count: mmengine's year-less `10/30 22:18:02 - mmengine - INFO - ...`
_LEADING_DATE = re.compile(r"^\s*\d{1,2}/\d{1,2}[ \t]+\d\d:\d\d")
# mmengine's epoch-based loop (XTuner before its Iter(train) lines): `Epoch(train) [1][200/735]`, the iteration counted
# within the epoch from 1 to its length
_MMENGINE_EPOCH = re.compile(r"\bEpoch\(train\)\s*\[(\d{1,6})\]\s*\[\s*(\d{1,12})/(\d{1,12})\]")
_AFTER_EPOCH = re.compile(r"epoch\W{0,3}$", re.IGNORECASE)
_GENERIC_REACH = 160  # characters before a `loss` that its line's step counter may stand in
_GENERIC_MAX_LINE = 400  # a longer line is prose, a table or a dump, not one training loop's print
# A plain logging line made only of `key: value` pairs, one of them a counter (Barber0/LLM-pretrain).
_KEY_VALUE_START = re.compile(r"(?<![\w/])(?:ep|epoch|batch|step|iter|iteration):\s*\d")
_KEY_VALUE_COUNTERS = ("step", "iter", "iteration", "batch")
# `loss: 2.86, orth_loss: 0.0018, total_loss: 2.86, grad_norm: 21.1` (OddFunction0205/clora-): a step's print with no
# counter; read only with a gradient or rate among its fields (a training step's, not an evaluation summary's). The
# loss may be named for its objective (a hand-written GRPO loop's `rl_loss: -0.0027, time: 109.1, l2_norm: 0.14,
# token_entropy: 0.82, reward_data: {'total_num': 256, 'total_reward': 144.0, ...}`).
_UNCOUNTED_START = re.compile(r"(?<![\w/])(?:[a-z][a-z\d]*_)*loss:[ \t]*[-+]?(?:\d|\.\d|nan|inf)", re.IGNORECASE)
_UNCOUNTED_NEEDS = ("grad_norm", "learning_rate")
_UNCOUNTED_GRAD_NORM = "l2_norm"  # the norm `clip_grad_norm_` returns, printed under its own name
_GLOBAL_STEP_FIELD = "global_step"  # a trainer's own step count printed among such fields: the line's step
# The last field of such a line may be a dict of the step's counts (`reward_data: {...}`): `_RECORD_FIELD` before it
_RECORD_FIELD = re.compile(r"^[ \t]*[A-Za-z][\w]*[ \t]*:[ \t]*$")
_RECORD_MAX = 2000  # characters of such a dict: a longer one is a dump, not a step's counts
# One field: a name of up to three words (`total time`, `matrix lr`, `tok/sec`; prose runs longer), an
# optional colon, a number with its unit.
_FIELD = re.compile(r"^\s*([A-Za-z][\w/.-]*(?: [A-Za-z][\w/.-]*){0,2})\s*:?\s*([-+]?(?:nan|inf|\.?\d)[^\s|]*)",
                    re.IGNORECASE)
_UNITS = {"ms": "_ms", "s": "_s", "m": "_min", "min": "_min", "%": "_pct"}
_FIELD_NAMES = {"dt": "time", "tok/sec": "tokens_per_second", "tok-sec": "tokens_per_second", "lrm": "lr_multiplier",
                "mfu": "mfu_pct", "bf16_mfu": "mfu_pct", "ep": "epoch", "step loss": "loss"}
# The first steps of nanoGPT print `mfu -100.00%`: its running MFU before it has five timings, no value.
_PLACEHOLDER_MFU = -100.0


@dataclass(frozen=True)
class StepLine:
    """One console record: its kind ("megatron", "olmo", "nemo", "torchtitan", "nanochat_base", "nanochat",
    "autoresearch", "nanogpt", "verl", "colon_pairs", "llmc", "step_name_value", "epoch_bracket", "tqdm_postfix", "flax",
    "key_value", "uncounted", "printed_tensor", "generic", "generic_epoch", "nemo2", "mindformers", "opennmt",
    "opennmt_valid", "loss_print", "metric_logger", ...), step, total steps if printed, the
    metrics in print order, and
    whether a cut tail lost fields."""

    kind: str
    step: int
    total: int | None
    metrics: tuple[tuple[str, float], ...]
    cut: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.metrics)

    @property
    def values(self) -> tuple[float, ...]:
        return tuple(value for _, value in self.metrics)


def number(text: str) -> float | None:
    """The number a field starts with ("1.552E+00", "76,631", "NAN", "13372.8/13364.7"); else None."""
    try:
        return float(text)  # the usual case, fast
    except ValueError:
        pass
    m = _NUMBER.match(text.strip())
    if not m:
        return None
    try:
        return float(m.group(0).replace(",", ""))
    except ValueError:
        return None


def parse_line(line: str, last_line: bool = False) -> StepLine | None:
    """The record a step line holds (module docstring), or None (OLMo headers: see OlmoBlock)."""
    if "|Loss: " in line:
        m = _TORCHTUNE_BAR.match(line)
        if m:  # the bar's own n/M after it is one ahead once the step is done: the description's count is the step
            return StepLine("torchtune", int(m.group(1)), None, (("loss", float(m.group(2))),))
    if line.startswith("DLL "):
        m = DLLOGGER.match(line)
        if m:
            return _dllogger(m.group("step"), m.group("fields"))
    if "Training epoch " in line:
        m = _NEMO2_PROGRESS.search(line)
        if m:
            return _nemo2_progress(m, line, last_line)
    if "{ Epoch:[" in line:
        m = _MINDFORMERS.search(line)
        if m:
            return _mindformers(m, line)
    if "; xent: " in line:
        m = _OPENNMT_STEP.search(line)
        if m:
            return _opennmt(m)
    if "] Validation " in line:
        m = _OPENNMT_VALID.search(line)
        if m:  # no step: `step_numbering.uncounted_lines_numbered` puts it at the step line before it
            return _opennmt_valid(m)
    if "iteration" in line:
        m = _MEGATRON_ITERATION.search(line)
        nanotron = bool(m and m.group(1))
        if nanotron and not ("lm_loss:" in line and "consumed_tokens:" in line):
            m = None  # `iteration: 1 / 100 | loss: 2.4 |` from a hand-written loop: read below, not as nanotron's
        record = m and _megatron(line[m.end():], int(m.group(2)), int(m.group(3)), "", last_line,
                                 "nanotron" if nanotron else "megatron", bare="|" not in line[:m.start()])
        if record:  # else `iteration 10/100 | loss 2.3`: a hand-written loop's line, read below
            return record
        m = _MEGATRON_VALIDATION.search(line)
        if m:
            return _megatron(line[m.end():], int(m.group(1)), None, "eval_", last_line)
    if "reduced_train_loss=" in line:
        return _nemo_bar(line)
    if "valid on '" in line:
        m = _FAIRSEQ_VALID.search(line)
        if m:
            return _fairseq_valid(m.group(1))
    if "Metrics (step " in line:
        m = _FAIRSEQ2.search(line)
        if m:
            return _fairseq2(m)
    if "Completed eval after train step " in line:
        m = _MAXTEXT_EVAL.search(line)
        if m:
            return _maxtext_eval(m)
    if "tgs (tokens/gpu/second)=" in line:
        m = _INTERNEVO_STEP.search(line)
        if m:
            return _internevo(line[m.start():], int(m.group(1)))
    if "] loss=" in line:
        m = _GPT2_SIMPLE.match(line)
        if m:  # gpt-2-simple (gpt_2_simple/gpt_2.py): `[250 | 162.50] loss=2.31 avg=2.40`, avg its running mean
            return StepLine("gpt2_simple", int(m.group(1)), None, (("loss", float(m.group(2))),
                                                                     ("loss_avg", float(m.group(3)))))
    if "] collection=" in line:
        m = _CLU_WRITER.search(line)
        if m:
            return _clu_scalars(m)
    if "loss:" in line and "step:" in line:
        m = _TITAN.search(line)
        if m:
            return _titan(line[m.start():], int(m.group(1)), int(m.group(2)) if m.group(2) else None)
    if line.startswith("Step... ("):  # the Flax examples' own line, or their bar's description: no other shape's
        m = _FLAX_STEP.match(line)
        return _flax_step(m) if m else None
    if "tensor(" in line:
        m = PRINTED_TENSOR.match(line)
        if m:
            # a loss where the line says so (its label) or the tensor is in the autograd graph (an accuracy is not);
            # a bare value is kept under its own name: it may be anything the loop printed
            said = m.group(1) or "grad_fn=" in line
            return StepLine("printed_tensor", 0, None, (("loss" if said else "printed_tensor", float(m.group(2))),))
    if " loss: " in line:
        m = _LOSS_PRINT.match(line)
        if m:  # no step: 0 until `step_numbering.uncounted_lines_numbered` numbers the prints in file order
            return StepLine("loss_print", 0, None, (("loss" if m.group(1) == "training" else "eval_loss",
                                                     float(m.group(2))),))
    if "  [" in line and "/" in line:
        m = _METRIC_LOGGER.search(line)
        if m:
            return _metric_logger(m, line, last_line)
    return _small_console(line, last_line)


# The MetricLogger of the facebookresearch vision repositories (DeiT, MAE, DETR, DINO: `util/misc.py` /
# `utils.py` `MetricLogger.log_every`) and the LLaMA-Adapter / LLaMA2-Accessory fine-tuning scripts that copied it:
# `Epoch: [E]  [N/M]  eta: 0:10:00  lr: X  closs: M (A)  grad_norm: M (A)  time: T  data: D  max mem: MB` (DINO
# `Epoch: [E/EPOCHS]`), `Test:  [N/M]  ...` for an evaluation; fields joined by two spaces
_METRIC_LOGGER = re.compile(r"(?<![\w/])(?:Epoch: \[(\d{1,6})(?:/\d{1,6})?\]|(Test|Val(?:id|idation)?|Eval(?:uation)?):)"
                            r"  \[\s*(\d{1,18})/(\d{1,18})\]")
_LOGGER_FIELD = re.compile(r"^([A-Za-z][\w]{0,40}(?: [a-z]{1,10})?): (\S+)(?: \((\S+)\))?$")
_LOGGER_SKIP = {"eta", "time", "data", "max mem", "iter_time", "data_time"}  # timings, memory: no metric


def _metric_logger(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """A MetricLogger line (kind "metric_logger", or "metric_logger_eval" for `Test:`): each meter prints `median
    (global average)` of its SmoothedValue window (the last ~20 iterations; a meter given its own format, such as
    the lr, its value alone), and the first number is read: the window's median, a smoothed value, not the
    iteration's own. For a training line step E x M + N (epochs from 0, as the loggers count them). A `Test:` line's
    meters are eval_ and read at their global average, the evaluation's mean over the batches so far (the last line
    of an evaluation holds its mean); its step is its batch N until `step_numbering` puts the evaluation's last line
    at the training step before it. The
    loss is `loss`, else the first meter whose name ends in `loss` (LLaMA-Adapter's `closs`); lr -> learning_rate.
    On the file's last line the last field may be cut: left out."""
    parts = [p for p in re.split(r"\s{2,}", line[m.end():].strip()) if p]
    cut = last_line and bool(parts)
    if cut:
        parts = parts[:-1]
    evaluating = bool(m.group(2))
    read: list[tuple[str, float]] = []
    for part in parts:
        field_m = _LOGGER_FIELD.match(part)
        if field_m is None or field_m.group(1) in _LOGGER_SKIP:
            continue
        value = number(field_m.group(3) if evaluating and field_m.group(3) else field_m.group(2))
        if value is not None:
            read.append((field_m.group(1), value))
    names = [name for name, _ in read]
    loss = "loss" if "loss" in names else next((n for n in names if n.lower().endswith("loss")), None)
    if loss is None:
        return None
    prefix = "eval_" if evaluating else ""
    metrics = [(prefix + ("loss" if name == loss else "learning_rate" if name == "lr" else _snake(name)), value)
               for name, value in read if not (prefix and name == "lr")]
    n, total = int(m.group(3)), int(m.group(4))
    if prefix:
        return StepLine("metric_logger_eval", n, None, tuple(metrics), cut=cut)  # (M: the evaluation's batches)
    return StepLine("metric_logger", int(m.group(1)) * total + n, None, tuple(metrics), cut=cut)


# A scalar torch tensor alone on a line (a loss label before it at most): `tensor(nan, device='cuda:0')`.
PRINTED_TENSOR = re.compile(r"^\s*((?:train(?:ing)?[ _])?loss\s*[:=]?\s*)?tensor\(\s*([-+]?(?:nan|inf|\d+\.?\d*"
                            r"(?:e[-+]?\d+)?))\s*(?:,\s*(?:device|dtype|grad_fn|requires_grad)=[^()]*?(?:<[\w]+>)?)*\)\s*$",
                            re.IGNORECASE)


# fairseq's end-of-epoch validation (progress_bar.py SimpleProgressBar.print, fairseq_cli/train.py validate):
# `valid | epoch 001 | valid on 'valid' subset | loss 2.1 | ppl 4.29 | ... | num_updates 10 | best_loss 2.1`
_FAIRSEQ_VALID = re.compile(r"\bvalid on '[^']*' subset \| (.*)$")
_FAIRSEQ_NAMES = {"loss": "eval_loss", "ppl": "eval_ppl", "nll_loss": "eval_nll_loss", "accuracy": "eval_accuracy"}


def _fairseq_valid(fields: str) -> StepLine | None:
    pairs = dict(part.strip().split(" ", 1) for part in fields.split("|") if part.strip().count(" ") == 1)
    step = pairs.get("num_updates", "")
    metrics = [(_FAIRSEQ_NAMES[k], value) for k, raw in pairs.items() if k in _FAIRSEQ_NAMES
               and (value := number(raw)) is not None]
    whole = re.fullmatch(r"[0-9]{1,18}", step) is not None
    return StepLine("fairseq_valid", int(step), None, tuple(metrics)) if whole and metrics else None


# fairseq2's LogMetricRecorder (src/fairseq2/metrics/recorders/log.py): `Train Metrics (step 12) - NLL Loss: 2.48 |
# Gradient Norm: 1.48 | ... | Learning Rate: 9.75e-05 | ...` (display names; `Validation Metrics (step N) - ...`)
_FAIRSEQ2 = re.compile(r"\b(Train|Valid|Validation|Eval|Evaluation) Metrics \(step (\d{1,18})\) - (.*)$")
_FAIRSEQ2_NAMES = {"nll loss": "loss", "loss": "loss", "gradient norm": "grad_norm", "learning rate": "learning_rate"}
# MaxText's metric logger (src/maxtext/common/metric_logger.py): `Completed eval after train step 100, loss=2.1,
# perplexity=8.2, total_weights=..., avg_z_loss=...`
_MAXTEXT_EVAL = re.compile(r"\bCompleted eval after train step (\d{1,18}), (.*)$")
# InternEvo / InternLM's training line (internlm/train/pipeline.py record_current_batch_training_metrics): `tflops=180.5
# step=23 loss=1.51 tgs (tokens/gpu/second)=3523.1 ... lr=4.2e-05 loss_scale=65536.0 grad_norm={'0_default': 1.04} ...`
_INTERNEVO_STEP = re.compile(r"\bstep=(\d{1,18}) loss=")
# a printed float, whole (`2.2.1` or `0.91.` is no number: a version, a sentence's full stop)
_FLOAT = r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)(?![\d.])"
_INTERNEVO_PAIR = re.compile(r"(?<![\w/])(loss|lr|loss_scale|acc|perplexity|grad_norm)=(?:\{'[^']*': )?"
                             r"(" + _FLOAT + r")", re.IGNORECASE)


def _internevo(fields: str, step: int) -> StepLine | None:
    metrics = tuple((canonical_metric(k), float(v)) for k, v in _INTERNEVO_PAIR.findall(fields))
    return StepLine("internevo", step, None, metrics) if any(k == "loss" for k, _ in metrics) else None


_GPT2_SIMPLE = re.compile(r"^\[(\d{1,18}) \| [\d.]+\] loss=(" + _FLOAT + r")"
                          r" avg=(" + _FLOAT + r")", re.IGNORECASE)
# clu's LoggingWriter (t5x, flax examples): `[12] collection=train accuracy=0.45, cross_ent_loss=2.3, loss=2.3, ...`
_CLU_WRITER = re.compile(r"\[(\d{1,18})\] collection=(\w+) (.*)$")
_EQUALS_PAIR = re.compile(r"([A-Za-z][\w/.-]*)=(" + _FLOAT + r")(?![\w.])", re.IGNORECASE)


# The transformers Flax examples (examples/flax/language-modeling/run_clm_flax.py:801-803, :826; run_mlm_flax.py,
# run_t5_mlm_flax.py print the same through tqdm.write): `Step... (10 | Loss: 2.4812345, Learning Rate: 4.9e-05)` and
# the evaluation's `Step... (100 | Eval Loss: 2.1 | Eval Perplexity: 8.2)`. A line without a learning rate is an
# evaluation's (run_mlm_flax's `Step... (N | Loss: X, Acc: Y)`). The whole line is the shape: every field a number.
_FLAX_STEP = re.compile(r"^Step\.\.\. \((\d{1,18}) \| ((?:[A-Z][A-Za-z ]{0,30}: \S+(?:, | \| ))*[A-Z][A-Za-z ]{0,30}: \S+)\)\s*$")
_FLAX_NAMES = {"loss": "loss", "learning_rate": "learning_rate", "acc": "accuracy", "accuracy": "accuracy",
               "perplexity": "perplexity"}


def _flax_step(m: re.Match) -> StepLine | None:
    fields = [field.split(": ") for field in re.split(r", | \| ", m.group(2))]
    values = [number(raw) if re.fullmatch(_FLOAT, raw, re.IGNORECASE) else None for _, raw in fields]
    if None in values:
        return None
    names = [_snake(name) for name, _ in fields]
    held_out = "learning_rate" not in names
    metrics = []
    for name, value in zip(names, values):
        own = _FLAX_NAMES.get(name.removeprefix("eval_"), name.removeprefix("eval_"))
        metrics.append(("eval_" + own if held_out else own, value))
    if not any(name in ("loss", "eval_loss") for name, _ in metrics):
        return None
    return StepLine("flax", int(m.group(1)), None, tuple(metrics))


def _fairseq2(m: re.Match) -> StepLine | None:
    held_out = not m.group(1).startswith("Train")
    metrics = []
    for part in m.group(3).split(" | "):
        name, _, raw = part.partition(": ")
        value = number(raw.strip())
        if value is not None:
            own = _FAIRSEQ2_NAMES.get(name.strip().lower()) or _snake(name)
            metrics.append(("eval_" + own if held_out else own, value))
    return StepLine("fairseq2", int(m.group(2)), None, tuple(metrics)) if metrics else None


def _maxtext_eval(m: re.Match) -> StepLine | None:
    names = {"loss": "eval_loss", "perplexity": "eval_ppl"}
    metrics = tuple((names[k], float(v)) for k, v in _EQUALS_PAIR.findall(m.group(2)) if k in names)
    return StepLine("maxtext_eval", int(m.group(1)), None, metrics) if metrics else None


def _clu_scalars(m: re.Match) -> StepLine | None:
    prefix = "" if m.group(2) == "train" else "eval_"
    metrics = tuple((prefix + canonical_metric(k), float(v)) for k, v in _EQUALS_PAIR.findall(m.group(3)))
    if not any(name.endswith("loss") for name, _ in metrics):
        return None
    return StepLine("clu", int(m.group(1)), None, metrics)


# NeMo 2.0's ProgressPrinter (nemo/lightning/pytorch/callbacks/progress_printer.py): `Training epoch 0, iteration 9/29 |
# lr: 1.9e-05 | global_batch_size: 8 | global_step: 9 | reduced_train_loss: 2.345 | train_step_timing in s: 0.345 |
# consumed_samples: 80`, with ` | val_loss: 2.861 | val_ppl: 17.57` appended at a validation
_NEMO2_PROGRESS = re.compile(r"\bTraining epoch (\d{1,9}), iteration (\d{1,18})/(\d{1,18}) \|")
_NEMO2_NAMES = {"val_ppl": "eval_ppl"}  # the others through canonical_metric (reduced_train_loss, lr, val_loss)


def _nemo2_progress(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """NeMo 2.0's progress line at its printed `global_step` (0-based, as NeMo's Lightning bar prints it too; the
    iteration as printed where it is missing); read when a loss is among its fields."""
    metrics, cut = _fields(line[m.end():].split("|"), last_line)
    metrics = [(_NEMO2_NAMES.get(name, name), value) for name, value in metrics]
    found = dict(metrics)
    step = found.get("global_step", float(m.group(2)))
    if not ("loss" in found or "eval_loss" in found) or not math.isfinite(step) or step != int(step):
        return None
    return _record("nemo2", int(step), None, [(k, v) for k, v in metrics if k != "global_step"], cut)


# MindSpore MindFormers' MFLossMonitor (mindformers/core/callback/callback.py:485 in dataset sink mode, :490 not):
# `{ Epoch:[  1/  1], step:[   10/   30], loss: 2.345, per_step_time: 345ms, lr: 1.9e-05, overflow cond: False,
# loss_scale: 1.0, global_norm: [1.234], train_throughput_per_npu: 123.456T`; not in sink mode the loss is
# `loss:[2.345/2.400]` (the step's loss / the epoch's running mean); `%5.3f` of a NaN prints `loss:   nan`
_MINDFORMERS = re.compile(r"\{ Epoch:\[\s*(\d{1,9})/\s*(\d{1,9})\], step:\[\s*(\d{1,18})/\s*(\d{1,18})\], (?=loss:)")
_MINDFORMERS_FIELD = re.compile(r"^\s*([a-z][a-z_ ]*?):\s*\[?\s*(" + _FLOAT + r"|True|False)\s*(ms|T)?(?:/" + _FLOAT
                                + r")?\]?", re.IGNORECASE)
_MINDFORMERS_NAMES = {"per_step_time": "step_time", "global_norm": "grad_norm", "overflow cond": "overflow",
                      "train_throughput_per_npu": "tflops_per_npu"}  # its `T`: TFLOPS
_MINDFORMERS_UNITS = {"ms": "_ms"}


def _mindformers(m: re.Match, line: str) -> StepLine | None:
    """MindFormers' loss line at step n + (epoch - 1) x the steps an epoch makes (`step:[n/M]` counts within the
    epoch); `overflow cond: True` is an `overflow` point (as DeepSpeed's OVERFLOW! lines give one), False none."""
    metrics = []
    for part in line[m.end():].split(","):
        field = _MINDFORMERS_FIELD.match(part)
        if field is None:
            continue
        key, raw = field.group(1).strip().lower(), field.group(2)
        name = _MINDFORMERS_NAMES.get(key) or canonical_metric(_snake(key))
        if raw.lower() in ("true", "false"):
            if name == "overflow" and raw.lower() == "true":
                metrics.append((name, 1.0))
            continue
        metrics.append((name + _MINDFORMERS_UNITS.get((field.group(3) or "").lower(), ""), float(raw)))
    if not any(name == "loss" for name, _ in metrics):
        return None
    step = (int(m.group(1)) - 1) * int(m.group(4)) + int(m.group(3))
    return StepLine("mindformers", step, int(m.group(2)) * int(m.group(4)), tuple(metrics))


# OpenNMT-py's Statistics.output (onmt/utils/statistics.py:125): `Step 10/  300; acc: 41.0; ppl:  11.8; xent: 2.5;
# lr: 0.00100; sents:    3200; bsz: 1234/1345/32; 12345/13456 tok/s;      6 sec;` (`Step 10;` without train_steps;
# OpenNMT-py 2.x stops after `tok/s; 6 sec`). xent is the loss, ppl = exp(xent), acc a percentage.
_OPENNMT_STEP = re.compile(r"\bStep\s*(\d{1,18})(?:/\s*(\d{1,18}))?; acc:\s*(" + _FLOAT + r"); ppl:\s*(" + _FLOAT
                           + r"); xent:\s*(" + _FLOAT + r"); lr:\s*(" + _FLOAT + r");")


# OpenNMT-py's report_manager.py:154-155 after a validation: `[2024-06-01 10:00:00,500 INFO] Validation perplexity:
# 11.2` and `... Validation accuracy: 41` (`%g`)
_OPENNMT_VALID = re.compile(r"^\[[\d-]+ [\d:,]+ INFO\] Validation (perplexity|accuracy): (" + _FLOAT + r")\s*$")


def _opennmt_valid(m: re.Match) -> StepLine:
    """A validation's perplexity (and eval_loss, its log: OpenNMT-py's ppl is exp(xent)) or accuracy (in %)."""
    value = float(m.group(2))
    if m.group(1) == "accuracy":
        return StepLine("opennmt_valid", 0, None, (("eval_accuracy_pct", value),))
    loss = math.log(value) if value > 0 else math.nan
    return StepLine("opennmt_valid", 0, None, (("eval_loss", loss), ("eval_ppl", value)))


def _opennmt(m: re.Match) -> StepLine:
    metrics = (("loss", float(m.group(5))), ("ppl", float(m.group(4))), ("accuracy_pct", float(m.group(3))),
               ("learning_rate", float(m.group(6))))
    return StepLine("opennmt", int(m.group(1)), int(m.group(2)) if m.group(2) else None, metrics)


# lucidrains' training scripts (x-transformers train_enwik8.py, train_belief_state.py:112,121 and their kin):
# `training loss: 2.48` once a batch and `validation loss: 2.51` every VALIDATE_EVERY batches, the whole line, or after
# the tqdm bar it was printed behind (`training:   1%|...| 1/100000 [00:10<...]training loss: 2.48`); no step
_LOSS_PRINT = re.compile(r"^(?:[^\n]*\|\s*\d{1,18}/\d{1,18} \[[^\]]*\])?(training|validation) loss: (" + _FLOAT
                         + r")\s*$")


def _small_console(line: str, last_line: bool) -> StepLine | None:
    """nanochat, autoresearch, nanoGPT and plain `key: value` lines (module docstring): the first
    shape whose start the line holds and whose reader reads it decides (a cheap substring test keeps most lines off
    the regexes); a line none of them reads may still be a step's print with no counter. A shape that starts the line
    but cannot read it passes it on (`epoch: 3442 loss: 0.21` starts like a line of `key: value` pairs, whose reader
    wants them comma-separated with a step counter, and is a hand-written loop's per-epoch print)."""
    for needle, start, read in _SMALL_SHAPES:
        m = start.search(line) if needle in line else None
        found = (read(m, line, last_line) or _uncounted_key_values(line, last_line)) if m else None
        if found is not None:
            return found
    return None


def _megatron(fields: str, step: int, total: int | None, prefix: str, last_line: bool,
              kind: str = "megatron", bare: bool = False) -> StepLine | None:
    """The fields of a Megatron line after its iteration; `bare`: old Megatron's fields without a colon are read too."""
    metrics = []
    for key, value in _MEGATRON_FIELD.findall(fields):  # only fields closed by "|"
        parsed = number(value)
        if parsed is not None:
            metrics.append((prefix + _megatron_name(key), parsed))
    if bare:
        for part in fields.split("|")[:-1]:  # only fields closed by "|"
            m = _MEGATRON_BARE_FIELD.match(part) if ":" not in part else None
            if m and _old_megatron_name(m.group(1)):
                metrics.append((prefix + _megatron_name(m.group(1)), float(m.group(2))))
    if not metrics:
        return None
    cut = last_line and bool(fields[fields.rfind("|") + 1:].strip())
    return StepLine(kind, step, total, tuple(metrics), cut=cut)


@lru_cache(maxsize=256)
def _megatron_name(key: str) -> str:
    lowered = key.lower().replace("-", " ")  # Megatron-DeepSpeed forks print `lm-loss`
    if lowered in _MEGATRON_KEYS:
        return _MEGATRON_KEYS[lowered]
    lowered = lowered.replace("_", " ")  # GPT-NeoX prints `lm_loss`, `lm_loss value`, `lm_loss_ppl value`
    if lowered in _MEGATRON_KEYS:  # nanotron's grad_norm
        return _MEGATRON_KEYS[lowered]
    for suffix, name in ((" loss ppl value", "ppl"), (" loss value", "loss"), (" loss ppl", "ppl"), (" loss", "loss")):
        if lowered.endswith(suffix):  # 'lm loss' -> loss, 'mtp_1 loss' -> mtp_1_loss
            head = lowered[: -len(suffix)].strip()
            return name if head == "lm" else f"{_snake(head)}_{name}"
    return canonical_metric(_snake(lowered))  # nanotron's lr


def _old_megatron_name(key: str) -> bool:
    """A colon-less field's name that Megatron prints: one of its known keys, or a loss."""
    lowered = key.lower().replace("-", " ").replace("_", " ").strip()
    return lowered in _MEGATRON_KEYS or lowered == "loss" or lowered.endswith(" loss")


def _snake(key: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", key.lower()).strip("_")


def _nemo_bar(line: str) -> StepLine | None:
    """The last NeMo bar state on a line (tqdm redraws with \\r; the reader splits on it too).

    Its step is NeMo's printed `global_step` when it is exact ("5.000", "188.0"); when tqdm cut
    it to 3 significant digits ("2e+3"), the bar's `epoch x M + N - 1` (M batches per epoch).
    """
    matches = list(_NEMO_BAR.finditer(line))
    if not matches:
        return None
    m = matches[-1]
    raw = {k.strip(): v.strip() for k, v in _NEMO_PAIR.findall(m.group(4))}
    pairs = {k: number(v) for k, v in raw.items()}
    printed = raw.get("global_step", "e")
    if "e" not in printed.lower() and pairs["global_step"] is not None:  # exact: "5.000", "188.0"
        step = int(round(pairs["global_step"]))
    elif m.group(3):
        step = int(m.group(1)) * int(m.group(3)) + int(m.group(2)) - 1
    else:
        return None
    metrics = tuple((canonical_metric(k), v) for k, v in pairs.items() if v is not None and k not in _NEMO_SKIP)
    return StepLine("nemo", step, None, metrics) if metrics else None


def _titan(text: str, step: int, total: int | None) -> StepLine | None:
    metrics = []
    for key, value in _TITAN_PAIR.findall(text):
        parsed = number(value)
        if key != "step" and parsed is not None:
            metrics.append((_TITAN_NAMES.get(key) or canonical_metric(key), parsed))
    return StepLine("torchtitan", step, total, tuple(metrics)) if metrics else None


def _pipe_step(m: re.Match, line: str, last_line: bool) -> StepLine | None:
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


def _nanochat_step(m: re.Match, line: str, last_line: bool) -> StepLine | None:
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
        unit = _UNITS.get(raw[_NUMBER.match(raw).end():].lower(), "") if _NUMBER.match(raw) else ""
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


def _verl(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """verl's `step:N - name:value - ...` line; a part that is no such pair is passed over (verl prints
    only numbers, so it is a name this reader cannot spell, not prose)."""
    parts = line[m.end():].rstrip().split(" - ")
    cut = last_line and len(parts) > 1
    metrics = []
    for part in parts[:-1] if cut else parts:
        field = _VERL_FIELD.fullmatch(part.strip())
        value = number(field.group(3)) if field else None
        if value is not None:
            metrics.append(_verl_metric(field.group(1), field.group(2), value))
    # verl names its metrics train/loss, actor/..., critic/...; a bare `step:N - loss:X` is some other script's
    kind = "verl" if any("/" in raw for raw in parts) else "key_value"
    return _record(kind, int(m.group(1)), None, metrics, cut)


def _verl_metric(name: str, bracket: str | None, value: float) -> tuple[str, float]:
    """`train/lr`, `1e-3`, 0.01 -> (learning_rate, 1e-5); `train/time`, `s`, 6.1 -> (time_s, 6.1)."""
    scale = number(bracket) if bracket else None
    if scale is not None:
        return canonical_metric(name), value * scale
    name = canonical_metric(name)
    unit = _VERL_UNITS.get(bracket or "", "")
    return name + unit if bracket is None or unit else f"{name}_{_snake(bracket)}", value


_POSTFIX_TRAIN = {"train_loss": "loss", "train_lr": "learning_rate", "train_grad_norm": "grad_norm"}


def _tqdm_postfix(first: re.Match, line: str, last_line: bool) -> StepLine | None:
    """The last redraw on the line of a tqdm bar whose postfix holds a loss (module docstring); `first` is
    the first redraw the shape found, the line may hold more."""
    m = list(_TQDM_BAR.finditer(line, first.start()))[-1]
    prefix = line[max(0, m.start() - 200):m.start()]  # the bar's label (`Epoch 2: `), looked back for, bounded
    metrics = []
    for part in m.group("postfix").split(","):
        pair = _POSTFIX_PAIR.match(part)
        value = number(pair.group(2)) if pair else None
        if value is not None and pair.group(1) not in _POSTFIX_SKIP:
            key = pair.group(1).lower().replace(" ", "_")  # (`set_postfix(Loss=...)` draws `Loss=2.31`)
            metrics.append((canonical_metric(key), value))
    if not any(name == "loss" or name.endswith("_loss") for name, _ in metrics):  # not loss_scale alone
        return None
    if not any(name == "loss" for name, _ in metrics):  # NeMo-Aligner's `train_loss=2.3, train_lr=1e-05`: the step's own
        metrics = [(_POSTFIX_TRAIN.get(name, name), value) for name, value in metrics]
    epoch = _BAR_EPOCH.search(prefix.rsplit("|", 1)[-1])
    if epoch:
        metrics.append(("epoch", float(epoch.group(1))))
    return _record("tqdm_postfix", int(m.group("n")), m.group("total"), metrics, False)


def _epoch_bracket(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """`Epoch:[E/N](n/M) loss: X, lr: Y, ...` (module docstring): step n of M in epoch E, the epoch as a metric;
    a line without a loss is none of these. On the file's last line the last pair may be cut: left out."""
    pairs = _BRACKET_FIELD.findall(line, m.end())
    cut = last_line and bool(pairs) and line.rstrip().endswith(pairs[-1][1])
    metrics = [(_field_name(name, raw), value) for name, raw in (pairs[:-1] if cut else pairs)
               if (value := number(raw)) is not None]
    if not any(name == "loss" for name, _ in metrics):
        return None
    return _record("epoch_bracket", int(m.group(3)), m.group(4), metrics + [("epoch", float(m.group(1)))], cut)


def has_generic_line(text: str) -> bool:
    """Whether a log holds a line with a step counter before a loss (kind "generic"): looked for before each `loss`
    in the text (case aside), in what precedes it on its line outside a dict; one regex over a whole console with
    a case-blind counter at every position takes a second."""
    low = text.lower()  # `Iter 25: Train loss`, `Step 10 | Loss:`: the words in any case
    at = low.find("loss")
    while at >= 0:
        before = low[max(0, at - _GENERIC_REACH):at]
        before = before[max(before.rfind("\n"), before.rfind("\r"), before.rfind("{")) + 1:]
        if ("step" in before or "iter" in before) and _GENERIC_STEP.search(before) or (
                "epoch" in before and _GENERIC_EPOCH.search(before)) or ("/" in before and _bare_count(before)):
            return True
        at = low.find("loss", at + 4)
    return False


def _hand_written(_: re.Match, line: str, last_line: bool) -> StepLine | None:
    """A short line of a hand-written loop with a loss among the names it knows (module docstring), counted by the
    first of: a step word (`Step 100`, `iter 25:`; kind "generic"), a bare `n/M` count that is not the epoch's
    (`| epoch 1 | 200/ 2983 batches |`, `Training [===] 8.5% 5000/58874 |`; "generic" too), the epoch alone
    (`Epoch 1/10 | Train Loss: 2.3`; kind "generic_epoch"). On a file's last line the last pair may be cut: left
    out."""
    if len(line) > _GENERIC_MAX_LINE or "{" in line or _NOT_A_STEP.search(line):
        return None
    metrics, cut = _generic_pairs(line, last_line)
    if not metrics:
        return None
    mm = _MMENGINE_EPOCH.search(line)
    if mm is not None:  # the run's own count of iterations: the epochs before this one, whole, and this one's
        epoch, i, length = (int(g) for g in mm.groups())
        return _record("generic", (epoch - 1) * length + i, None, metrics + [("epoch", epoch - 1 + i / length)], cut)
    m = _GLOBAL_STEP.search(line) or _GENERIC_STEP.search(line) or _bare_count(line)
    if m is not None:
        epoch = _GENERIC_EPOCH.search(line) if not any(k == "epoch" for k, _ in metrics) else None
        if epoch is not None:  # `Epoch [2/10], Step [100/600]`: the bracketed epoch the pairs do not take
            metrics = metrics + [("epoch", float(epoch.group(1)))]
        return _record("generic", int(m.group(1)), m.group(2) or None, metrics + _optimizer_step(m, line), cut)
    m = _GENERIC_EPOCH.search(line)
    if m is None:
        return None
    metrics = [(k, v) for k, v in metrics if k != "epoch"] + [("epoch", float(m.group(1)))]
    return _record("generic_epoch", int(m.group(1)), m.group(2), metrics, cut)


def _optimizer_step(counter: re.Match, line: str) -> list[tuple[str, float]]:
    """A line counted by its iteration (micro-batch) that also prints the optimizer's step after it (LitGPT's
    `iter 46 step 1 | loss train: 3.724`): that step as the metric OPTIMIZER_STEP (whether the weights were updated
    between lines), else []."""
    if not counter.group(0).lower().startswith("iter"):
        return []
    step = next((m for m in _GENERIC_STEP.finditer(line, counter.end()) if m.group(0).lower().startswith("step")), None)
    return [(OPTIMIZER_STEP, float(step.group(1)))] if step is not None else []


def _bare_count(line: str) -> re.Match | None:
    """The first `n/M` on the line with n <= M that is not an epoch's (`Epoch 1/3`) or part of a date or rate."""
    dated = _LEADING_DATE.match(line)
    for m in _BARE_COUNT.finditer(line, dated.end() if dated else 0):
        if int(m.group(1)) <= int(m.group(2)) and not _AFTER_EPOCH.search(line, 0, m.start()):
            return m
    return None


def _generic_pairs(line: str, last_line: bool) -> tuple[list[tuple[str, float]], bool]:
    """The known (name, value) pairs of a generic line, first of each name; none unless a loss is among them."""
    pairs = _GENERIC_PAIR.findall(line)
    # a cut number reads as a smaller one; a cut `nan` cannot be told from a whole one and is kept (a NaN hidden
    # by dropping the last line would hide a broken run)
    cut = last_line and bool(pairs) and line.rstrip().endswith(pairs[-1][2] + pairs[-1][3]) \
        and pairs[-1][2].lower().lstrip("+-") not in ("nan", "inf")
    found: dict[str, float] = {}
    for key, before, raw, percent in pairs[:-1] if cut else pairs:
        lowered = key.lower()
        if lowered.replace("_", " ") == "loss scale":  # a dynamic loss scale (CPM-2's `| loss scale 1024.0 |`)
            name = "loss_scale"
        elif "loss" in lowered:
            kind = before.lower()
            if kind and kind not in _LOSS_KINDS:
                continue  # `aux loss`, `kl loss`, `scaled loss`: not the training loss
            name = "eval_loss" if _HELD_OUT.search(lowered) else "loss"
        elif lowered.endswith("reward") and ("chosen" in lowered or "rejected" in lowered):
            # a preference trainer's implicit reward of each side of its pairs (mlx-lm's DPO `Chosen reward -8.05`),
            # TRL's rewards/chosen: no RL reward to rise
            side = "rewards/chosen" if "chosen" in lowered else "rewards/rejected"
            name = "eval_" + side if _HELD_OUT.match(lowered) else side
        elif lowered.endswith("lr"):  # `lr`, or the first of several groups' (`backbone_lr 9.67e-06  proj_lr ...`)
            name = "learning_rate"
        else:  # a held-out split's perplexity or accuracy is an eval metric (`valid ppl`)
            split, _, base = lowered.replace("_", " ").rpartition(" ")
            name = _GENERIC_NAMES.get(lowered.replace("_", " ")) or _GENERIC_NAMES[base]
            name = "eval_" + name if _HELD_OUT.search(split) else name
        if name not in found:  # the pattern only takes what float() reads (nan, inf, 1e-4, 2.); `85.2%` is 0.852
            found[name] = float(raw) / 100 if percent else float(raw)
    return (list(found.items()) if found.keys() & _GENERIC_NEEDS else []), cut


def _key_values(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """A line of `key: value` pairs and nothing else (`ep: 0, batch: 20, time: 9.17, ntokens: 485.20/513,
    loss: 10.98`): read when every comma-separated part is such a pair, a loss among them, and a
    counter gives the step (step, iter, iteration, else batch: the printed counter as it is, so a
    counter that restarts reads like a restarted attempt)."""
    parts = [part for part in line[m.start():].split(",") if part.strip()]  # a trailing `, ` leaves an empty part
    metrics, cut = _fields(parts, last_line)
    metrics = _total_as_loss(metrics)
    found = dict(metrics)
    counter = next((key for key in _KEY_VALUE_COUNTERS if key in found), None)
    if len(metrics) + cut < len(parts) or "loss" not in found or counter is None:
        return None
    step = found[counter]
    if not math.isfinite(step) or step < 0 or step != int(step):
        return None
    return _record("key_value", int(step), None, [(n, v) for n, v in metrics if n != counter], cut)


_TOTAL_LOSSES = ("total_loss", "combined_loss")  # the sum a multi-term objective trains on, where no `loss` is printed


def _total_as_loss(metrics: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """A line of several `*_loss` terms and no plain `loss`: its total (`combined_loss: X`) is the loss trained on
    (franciscoliu/SKU: `GD_loss, RD_loss, reversed_kl_loss, combined_loss`)."""
    names = [name for name, _ in metrics]
    total = next((name for name in _TOTAL_LOSSES if name in names), None)
    if "loss" in names or total is None:
        return metrics
    return [("loss" if name == total else name, value) for name, value in metrics]


def _bare_pipe_step(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """`40 | loss 6.6875 | lr 3.000000e-04 | 13808.97ms` (nwyin/modded-llama2): the step alone, then `|`-separated
    `name value` fields, a loss among them (a part with no name, the step's time, is passed over)."""
    metrics, cut = _fields(line[m.end():].split("|"), last_line)
    return _record("key_value", int(m.group(1)), None, metrics, cut) if "loss" in dict(metrics) else None


def _uncounted_key_values(line: str, last_line: bool) -> StepLine | None:
    """A line of `key: value` pairs from a `loss: X` (or `<objective>_loss: X`) on, with a grad_norm (or an `l2_norm`)
    or learning rate among them and no counter: kind "uncounted", step 0 until
    `step_numbering.uncounted_lines_numbered` numbers such lines by their order. A loss named for its objective
    (`rl_loss`, `policy_loss`) is the loss where no plain one is printed; a last field that is a dict of the step's
    counts (`reward_data: {'total_num': 256, 'total_reward': 144.0}`) gives the mean reward where it holds a
    reward's total over a count (`_mean_reward`), and nothing else."""
    m = _UNCOUNTED_START.search(line) if "loss:" in line else None
    if m is None:
        return None
    text, record = line[m.start():], None
    if "{" in text:
        head, _, name = text[:text.find("{")].rpartition(",")
        record = _literal_dict(text[text.find("{"):])
        if record is None or not _RECORD_FIELD.match(name):
            return None
        text = head
    parts = text.split(",")
    metrics, cut = _fields(parts, last_line and record is None)
    names = {name for name, _ in metrics}
    if len(metrics) + cut < len(parts) or names & set(_KEY_VALUE_COUNTERS):
        return None
    metrics = _objective_loss(_total_as_loss(metrics))
    if "grad_norm" not in names:
        metrics = [("grad_norm" if name == _UNCOUNTED_GRAD_NORM else name, value) for name, value in metrics]
    names = {name for name, _ in metrics}
    if len(metrics) < 2 or not names & set(_UNCOUNTED_NEEDS) or "loss" not in names:
        return None
    reward = _mean_reward(record) if record is not None and "reward" not in names else None
    metrics += [("reward", reward)] if reward is not None else []
    step = dict(metrics).get(_GLOBAL_STEP_FIELD)
    if step is not None and math.isfinite(step) and step >= 0 and step == int(step):
        # the trainer's own count among the fields (PaddleNLP's Trainer: `loss: 5.06, learning_rate: 1e-05,
        # global_step: 1, ...`): the step as printed
        return _record("key_value", int(step), None, [(n, v) for n, v in metrics if n != _GLOBAL_STEP_FIELD], cut)
    return _record("uncounted", 0, None, metrics, cut)


def _objective_loss(metrics: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """A line whose first field is a training loss named for its objective (`rl_loss`, `policy_loss`) and that prints
    no plain `loss`: that field is the loss (a held-out split's, `val_loss`, is not)."""
    if not metrics or any(name == "loss" for name, _ in metrics):
        return metrics
    first = metrics[0][0]
    if not first.endswith("loss") or _HELD_OUT.search(first):
        return metrics
    return [("loss", metrics[0][1])] + metrics[1:]


def _literal_dict(text: str) -> dict | None:
    """The dict a Python print wrote (`{'total_num': 256, 'total_reward': 144.0}`), whole to the line's end, else
    None."""
    if len(text) > _RECORD_MAX or not text.rstrip().endswith("}"):
        return None
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def _mean_reward(record: dict) -> float | None:
    """The mean reward of a step's counts: its `total_reward` over its `total_num` (the sum of the rewards of that many
    rollouts); None where the dict holds no such pair (a reward it names otherwise is left unread)."""
    total, count = record.get("total_reward"), record.get("total_num")
    if type(total) not in (int, float) or type(count) not in (int, float) or not count > 0:
        return None
    return float(total) / float(count)


def _fields(parts: list[str], last_line: bool) -> tuple[list[tuple[str, float]], bool]:
    """The (name, value) of each `name[:] number[unit]` part; on the file's last line the last part
    may be cut mid-write, so it is left out (and said)."""
    cut = last_line and bool(parts[-1].strip())
    metrics = []
    for part in parts[:-1] if cut else parts:
        m = _FIELD.match(part)
        value = number(m.group(2)) if m else None
        if value is not None:
            metrics.append((_field_name(m.group(1), m.group(2)), value))
    return metrics, cut


def _field_name(key: str, raw: str) -> str:
    """`dt: 120ms` -> time_ms, `total time: 0.5m` -> total_time_min, `mfu: 12.0%` -> mfu_pct."""
    lowered = key.lower()
    name = _FIELD_NAMES.get(lowered) or canonical_metric(_snake(lowered))
    unit = _UNITS.get(raw[_NUMBER.match(raw).end():].lower(), "")
    return name if name.endswith(unit) else name + unit


# torchtune's recipes describe their tqdm bar as `pbar.set_description(f"{curr_epoch + 1}|{self.global_step}|Loss:
# {loss_to_log}")`: `1|12|Loss: 1.9749605655670166:   2%|▏  | 13/512 [00:35<...]`, redrawn (and read) more than once
_TORCHTUNE_BAR = re.compile(r"^\s*\d{1,6}\|(\d{1,18})\|Loss: ([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)):")
# DLLogger's StdOutBackend line: `DLL 2020-06-04 01:09:11.569757 - <step> name : value ...` (a script's own prefix
# format may drop the time: `DLL - `)
DLLOGGER = re.compile(r"^DLL (?:\d{4}-\d{2}-\d{2}[ T][\d:.]+ )?- (?P<step>.*?)\s*"
                      r"(?P<fields>(?<![^\s(,])[A-Za-z_][\w./-]* : .*)?$")
_DLL_FIELD = re.compile(r"(?:^|\s)([A-Za-z_][\w./-]*) : (\S+)")
_DLL_COUNTER = re.compile(r"(?i)\b(?:iteration|step)s?\s*:?\s*(\d{1,18})\b")
_DLL_EPOCH = re.compile(r"(?i)\bepoch\s*:?\s*(\d{1,9})\b")
_DLL_TUPLE = re.compile(r"^\(\s*(\d{1,18}(?:\s*,\s*\d{1,18})*)\s*,?\s*\)$")
_DLL_NAMES = {"step_loss": "loss", "train_loss": "loss", "lr": "learning_rate"}
_DLL_RUNNING = ("average_loss", "avg_loss", "running_loss")
_DLL_SPLITS = {"train": "", "training": "", "val": "val_", "validation": "val_", "eval": "eval_"}


def _dllogger(step_text: str, fields: str | None) -> StepLine | None:
    """A DLLogger step line (module docstring), or None: a PARAMETER line, a line with no step, no numeric field."""
    if not fields or step_text.startswith("PARAMETER"):
        return None
    epoch = None
    tup = _DLL_TUPLE.match(step_text)
    if tup:  # the default step_format: str(step) of a tuple, (epoch, iteration)
        counts = [int(n) for n in tup.group(1).split(",")]
        step, epoch = counts[-1], counts[0] if len(counts) > 1 else None
    elif step_text.isdigit():
        step = int(step_text)
    else:
        counters = _DLL_COUNTER.findall(step_text)
        if not counters:
            return None
        step = int(counters[-1])
        said = _DLL_EPOCH.search(step_text)
        epoch = int(said.group(1)) if said else None
    pairs = []
    for name, raw in _DLL_FIELD.findall(fields):
        value = number(raw)
        if value is not None:
            pairs.append((name, value))
    names = {name for name, _ in pairs}
    own = names & ({"loss", "step_loss", "train_loss"})
    held_out = "alidation" in step_text or "eval" in step_text.lower()
    metrics = []
    for name, value in pairs:
        split, dot, rest = name.partition(".")  # `train.loss`, `val.loss` (a script's own metric names)
        if dot and split in _DLL_SPLITS:
            name = f"{_DLL_SPLITS[split]}{rest}"
        if name in _DLL_RUNNING:
            name = "loss_avg" if own else "loss"
        else:
            name = canonical_metric(_DLL_NAMES.get(name, name))
        metrics.append(("eval_" + name if held_out and not name.startswith("eval_") else name, value))
    if epoch is not None and metrics:
        metrics.append(("epoch", float(epoch)))
    return _record("dllogger", step, None, metrics, False)


def _record(kind: str, step: int, total: str | None, metrics: list, cut: bool) -> StepLine | None:
    return StepLine(kind, step, int(total) if total else None, tuple(metrics), cut=cut) if metrics else None


# (substring, start of the shape, reader) in the order they are tried.
_BARE_PIPE = re.compile(r"^\s*(\d{1,18})\s+\|\s+(?=loss[ :]\s*[-+.\dnNiI])")
_SMALL_SHAPES = (("| ", _PIPE_STEP, _pipe_step), ("| ", _NANOCHAT_STEP, _nanochat_step), ("| loss", _BARE_PIPE, _bare_pipe_step),
                 (":", _COLON_STEP, _colon_pairs), (" ", _STEP_NAME_VALUE, _step_name_value),
                 ("loss", _NANOGPT, _nanogpt), (" - ", _VERL_STEP, _verl),
                 ("Epoch", _EPOCH_BRACKET, _epoch_bracket), ("loss", _KEY_VALUE_START, _key_values),
                 ("%|", _TQDM_BAR, _tqdm_postfix), ("oss", _LOSS_WORD, _hand_written),
                 ("acc", _HELD_OUT_ACCURACY, _hand_written))

@dataclass
class OlmoBlock:
    """OLMo's `[step=N/M]` header and the `    name=value` lines under it, fed line by line.

    `feed(line)` returns the finished StepLine when a line ends the block (a non-metric line or
    the next header), else None; `close()` returns the block left open at the end of the file.
    """

    step: int | None = None
    total: int | None = None
    metrics: list = field(default_factory=list)
    prefix: str = ""  # "eval_" in an evaluation block
    last_step: int = 0

    def feed(self, line: str) -> StepLine | None:
        header = _OLMO_HEADER.search(line) if "[step=" in line else None
        if header:
            done = self.close()
            self.step, self.total = int(header.group(1)), int(header.group(2)) if header.group(2) else None
            self.metrics = [(canonical_metric(k), v) for k, raw in _OLMO_INLINE_PAIR.findall(line[header.end():])
                            if (v := number(raw)) is not None]
            return done
        if "evals in" in line and _OLMO_CORE_EVALS.search(line):
            done = self.close()
            self.step, self.prefix = self.last_step, "eval_"  # at the step the evaluation followed
            return done
        if self.step is None:
            return None
        m = _OLMO_BLOCK_LINE.match(line)
        value = number(m.group(2)) if m else None
        if m and value is not None:
            self.metrics.append((self.prefix + canonical_metric(m.group(1).strip()), value))
            return None
        return self.close()

    def close(self) -> StepLine | None:
        done = StepLine("olmo", self.step, self.total, tuple(self.metrics)) if self.step is not None and self.metrics else None
        if done is not None and not self.prefix:
            self.last_step = done.step
        self.step, self.total, self.metrics, self.prefix = None, None, [], ""
        return done


# OLMo-core's evaluator callback: `Finished lm evals in 1.0 seconds. Metrics:` then `    CE loss=X` / `    PPL=Y`
_OLMO_CORE_EVALS = re.compile(r"\bFinished [\w-]+ evals in [\d.]+ seconds\. Metrics:\s*$")


# Composer's ConsoleLogger (module docstring)
_COMPOSER_HEADER = re.compile(r"^\[(?:epoch=\d{1,9}\]\[)?(?:batch|token|sample)=(\d{1,18})(?:/(\d{1,18}))?\]:\s*$")
_COMPOSER_EVAL_HEADER = re.compile(r"^\[Eval batch=\d{1,18}/\d{1,18}\] Eval on [^\n]*? data:\s*$")
_COMPOSER_LINE = re.compile(r"^\t (?:Train|Eval) (\S[^:]*): (\S+)\s*$")
_COMPOSER_NAMES = {"loss/train/total": "loss", "l2_norm/grad/global": "grad_norm",
                   "metrics/train/LanguagePerplexity": "ppl"}
_COMPOSER_LR = re.compile(r"^lr-\w+/group0$")
_COMPOSER_EVAL = re.compile(r"^metrics/(?!train/)[^/]+/Language(CrossEntropy|Perplexity)$")


@dataclass
class ComposerBlock:
    """Composer's `[batch=N/M]:` block and its `\t Train name: value` lines, and its evaluation block, fed line by
    line like `OlmoBlock`."""

    step: int | None = None
    metrics: list = field(default_factory=list)
    total: int | None = None
    last_train: int = 0

    def feed(self, line: str) -> StepLine | None:
        if line.startswith("["):
            header = _COMPOSER_HEADER.match(line)
            if header or _COMPOSER_EVAL_HEADER.match(line):
                done = self.close()
                if header:
                    self.step, self.total = int(header.group(1)), int(header.group(2)) if header.group(2) else None
                else:  # an evaluation: at the last training batch
                    self.step, self.total = self.last_train, None
                return done
        if self.step is None:
            return None
        m = _COMPOSER_LINE.match(line)
        value = number(m.group(2)) if m else None
        if m and value is not None:
            self.metrics.append((_composer_name(m.group(1)), value))
            return None
        return self.close()

    def close(self) -> StepLine | None:
        metrics = dict(self.metrics)
        step = self.step
        count = metrics.get("time/batch")
        if step is not None and count is not None and 0 <= count < 1e15:
            step = int(count) + 1  # the batch count at the batch's start; the header's is after it
        done = StepLine("composer", step, self.total, tuple(self.metrics)) if step is not None and self.metrics else None
        if done is not None and "eval_loss" not in metrics:
            self.last_train = step
        self.step, self.total, self.metrics = None, None, []
        return done


@lru_cache(maxsize=256)
def _composer_name(name: str) -> str:
    if name in _COMPOSER_NAMES:
        return _COMPOSER_NAMES[name]
    if _COMPOSER_LR.match(name):
        return "learning_rate"
    m = _COMPOSER_EVAL.match(name)
    if m:
        return "eval_loss" if m.group(1) == "CrossEntropy" else "eval_ppl"
    return canonical_metric(name)


# NeMo-RL's algorithms (nemo_rl/algorithms/sft.py, grpo.py): `===== Step N/M =====`, then, among other prints,
# `📊 Training Results:` with `  • Loss: X` (`  • Avg Reward: X` in GRPO) and `📊 Validation Results:` with
# `    • Validation loss: X`
_NEMO_RL_HEADER = re.compile(r"^=+ Step (\d{1,18})/(\d{1,18}) =+\s*$")
_NEMO_RL_ITEM = re.compile(r"^\s+\u2022 ([A-Za-z][\w /()-]*?): (" + _FLOAT + r")", re.IGNORECASE)
_NEMO_RL_NAMES = {"loss": "loss", "validation loss": "eval_loss", "avg reward": "reward", "grad norm": "grad_norm"}


@dataclass
class NemoRLBlock:
    """NeMo-RL's step block, fed line by line like `OlmoBlock`; it ends at the next step's header (or the file's
    end), since the step's other prints (`▶ Taking a training step...`) come between its results."""

    step: int | None = None
    total: int | None = None
    metrics: list = field(default_factory=list)

    def feed(self, line: str) -> StepLine | None:
        header = _NEMO_RL_HEADER.match(line) if "= Step " in line else None
        if header:
            done = self.close()
            self.step, self.total = int(header.group(1)), int(header.group(2))
            return done
        item = _NEMO_RL_ITEM.match(line) if self.step is not None and "\u2022" in line else None
        if item:
            name = item.group(1).strip().lower()
            self.metrics.append((_NEMO_RL_NAMES.get(name) or _snake(name), float(item.group(2))))
        return None

    def close(self) -> StepLine | None:
        done = (StepLine("nemo_rl", self.step, self.total, tuple(self.metrics))
                if self.step is not None and self.metrics else None)
        self.step, self.total, self.metrics = None, None, []
        return done


# Keras `model.fit` (keras/src/callbacks/progbar_logger.py, keras/src/utils/progbar.py): `Epoch E/N`, then the bar,
# `100/100 ━━━━ 5s 50ms/step - loss: X - val_loss: Y` (verbose=1, updated in place) or `100/100 - 5s - loss: X`
# (verbose=2); each metric is the epoch's running mean, final at the bar's last batch.
_KERAS_EPOCH = re.compile(r"^Epoch (\d{1,9})/(\d{1,9})\s*$")
# Keras's own bar after `n/N`: `━━━━` (Keras 3), `[=====>....]` (tf.keras) or ` - 5s` (verbose=2); not a tqdm bar
_KERAS_BAR = re.compile(r"^\s*(\d{1,12})/(\d{1,12}) (?:[\u2501\s]*\u2501|\[[=>.]+\]|- \d+m?s\b).*? - loss: ")
_KERAS_PAIR = re.compile(r" - ([A-Za-z][\w/]*): (" + _FLOAT + r")", re.IGNORECASE)


@dataclass
class KerasEpochs:
    """Keras's `Epoch E/N` lines and their bars: `owns(line)` says a line is one (a bar's updates within an epoch
    are its own, read by nothing else); `feed(line)` gives the epoch's record at its last batch, at step E."""

    epoch: int | None = None
    epochs: int | None = None
    before: int = 0  # the epochs of earlier `fit` calls that ran to their end (fine-tuning after a frozen phase)

    def owns(self, line: str) -> bool:
        return bool(_KERAS_EPOCH.match(line) or (self.epoch is not None and " - loss: " in line
                                                  and _KERAS_BAR.match(line)))

    def feed(self, line: str) -> StepLine | None:
        header = _KERAS_EPOCH.match(line)
        if header:
            epoch, epochs = int(header.group(1)), int(header.group(2))
            if self.epoch is not None and epoch <= self.epoch and self.epoch == self.epochs:
                self.before += self.epoch  # a new `fit` after one that finished: its epochs come after
            self.epoch, self.epochs = epoch, epochs
            return None
        bar = _KERAS_BAR.match(line)
        if bar is None or bar.group(1) != bar.group(2):
            return None  # an update within the epoch: its mean so far
        metrics = tuple((keras_metric_name(name), float(raw)) for name, raw in _KERAS_PAIR.findall(line))
        return StepLine("keras", self.before + self.epoch, None, metrics) if metrics else None


# mlx-lm's training table (mlx_lm/cli_ui.py TrainUI): a header `  iter   train_loss     tok/s     tokens`, then a row
# per report, `    10    2.300 ▼      210      4.1k`, and a validation row `    10    val 2.100    1.23s`
_MLX_HEADER = re.compile(r"^\s*iter\s+train_loss\s")
_MLX_ROW = re.compile(r"^\s*(\d{1,12})\s+(?:(val)\s+(" + _FLOAT + r")\s+[\d.]+s"  # a validation row, or a training one
                     r"|(" + _FLOAT + r")\s+[\u25bc\u25b2=-]?\s*[\d,.]+\s+[\d.]+[kMGT]?)\s*$", re.IGNORECASE)


@dataclass
class MlxTable:
    """mlx-lm's table, fed line by line: its rows after its header are its own (`owns`)."""

    started: bool = False

    def owns(self, line: str) -> bool:
        if _MLX_HEADER.match(line):
            self.started = True
            return True
        return self.started and _MLX_ROW.match(line) is not None

    def feed(self, line: str) -> StepLine | None:
        row = _MLX_ROW.match(line)
        if row is None:
            return None
        name, value = ("eval_loss", row.group(3)) if row.group(2) else ("loss", row.group(4))
        return StepLine("mlx", int(row.group(1)), None, ((name, float(value)),))


# EasyR1's console logger (verl/utils/logger/logger.py): `Step N`, then the step's metrics as a nested YAML dump
# (`actor:` / `  grad_norm: 0.3` / `critic:` / `  score:` / `    mean: 0.11`; a NaN `.nan`), names joined with `/`
_YAML_STEP = re.compile(r"^Step (\d{1,18})\s*$")
_YAML_KEY = re.compile(r"^( *)([A-Za-z_][\w@.-]*):(?: (\S+))?\s*$")
_YAML_FLOATS = {".nan": "nan", ".inf": "inf", "-.inf": "-inf", ".NaN": "nan", ".Inf": "inf", "-.Inf": "-inf"}


@dataclass
class YamlSteps:
    """`Step N` headers and the indented YAML under each, fed line by line like `OlmoBlock`; `owns` says a line is the
    block's (a header, or a `key:` line inside an open block)."""

    step: int | None = None
    metrics: list = field(default_factory=list)
    path: list = field(default_factory=list)  # (indent, key) of the open parents

    def owns(self, line: str) -> bool:
        return bool(_YAML_STEP.match(line)) or (self.step is not None and _YAML_KEY.match(line) is not None)

    def feed(self, line: str) -> StepLine | None:
        header = _YAML_STEP.match(line)
        if header:
            done = self.close()
            self.step = int(header.group(1))
            return done
        m = _YAML_KEY.match(line)
        indent, key, raw = len(m.group(1)), m.group(2), m.group(3)
        while self.path and self.path[-1][0] >= indent:
            self.path.pop()
        if raw is None:
            self.path.append((indent, key))
            return None
        value = number(_YAML_FLOATS.get(raw, raw))
        if value is not None:
            self.metrics.append((canonical_metric("/".join([k for _, k in self.path] + [key])), value))
        return None

    def close(self) -> StepLine | None:
        done = (StepLine("yaml_steps", self.step, None, tuple(self.metrics))
                if self.step is not None and self.metrics else None)
        self.step, self.metrics, self.path = None, [], []
        return done


# A hand-driven PPO loop's prints (the course notebooks around trl.PPOTrainer.step): `------ STEP N ------`, then one
# `name:<TAB>value` line per statistic the loop picked from `stats` (`rewards/mean`, `ppo/returns/mean`, `objective/kl`),
# each followed by an explanation after a tab (`<---- average reward over this batch`)
_DASHED_STEP = re.compile(r"^-{3,} ?STEP (\d{1,18}) ?-{3,}\s*$")
_TAB_METRIC = re.compile(r"^([A-Za-z_][\w/.@-]*):\t+(\S+)(?:\t.*)?\s*$")


@dataclass
class DashedSteps:
    """`------ STEP N ------` headers and the `name:<TAB>value` lines under each, fed line by line like `YamlSteps`;
    `owns` says a line is the block's (a header, or a metric line inside an open block)."""

    step: int | None = None
    metrics: list = field(default_factory=list)

    def owns(self, line: str) -> bool:
        return bool(_DASHED_STEP.match(line)) or (self.step is not None and _TAB_METRIC.match(line) is not None)

    def feed(self, line: str) -> StepLine | None:
        header = _DASHED_STEP.match(line)
        if header:
            done = self.close()
            self.step = int(header.group(1))
            return done
        m = _TAB_METRIC.match(line)
        value = number(m.group(2))
        if value is not None:
            self.metrics.append((canonical_metric(m.group(1)), value))
        return None

    def close(self) -> StepLine | None:
        done = StepLine("dashed_steps", self.step, None, tuple(self.metrics)) if self.step is not None and self.metrics \
            else None
        self.step, self.metrics = None, []
        return done
