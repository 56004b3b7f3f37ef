"""Whether a chunk of a file's bytes shows what the file is: a training log's lines, a README or notebook holding a
log. Pure functions of the bytes (a JSON file's own shapes: `json_hints`).

`run.discover` reads a file's head (and tail, `json_hints.SNIFF_BYTES` each) and asks these where the file's name does
not say what it is.
"""
from __future__ import annotations

import json
import re

from .closing_eval_cells import closing_evals, trainers
from .livelossplot_summary import as_step_lines
from .printed_loss_cells import loss_column
from .run_signs import is_training_console, run_signs

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
_LOG_HINT = re.compile(
    rb"""['"](loss|grad_norm|eval_loss|learning_rate|loss/train|embedding_loss)['"]\s*:|OVERFLOW!"""
    # the same dict pasted with typographic quotes (\u2018loss\u2019: ...)
    rb"""|\xe2\x80[\x98\x9c](?:loss|grad_norm|eval_loss|learning_rate)\xe2\x80[\x99\x9d]\s*:"""
    rb"""|loss scale|\bstep \d+: \{'train/|\{"system/global_step": \d+|iteration:?\s+\d+\s*/\s*\d+\s*\|"""
    rb"""|\[step=\d+|step:\s*\d+\s+loss:|reduced_train_loss="""
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
    rb"""|(?m:time:[\d.]+s total_exs:\d+ epochs:[\d.]+[^\n]*\n[ \t]+(?:[\w@/.-]+ +)*loss(?: |$))"""
    # Keras's `Epoch 1/1` and its bar's update under it, a fit cut inside its first epoch
    # (telecombcn-dl_2017-dlai-team8: `1560/11407 [===>....] - ETA: 1:47 - loss: 6.4571`, then nothing)
    rb"""|(?m:^Epoch \d+/\d+[ \t]*\r?\n[ \t]*\d+/\d+ \[[=>.]+\] - [^\n]*?- loss: [-+.\dnNiI])""")
# One line of a framework's own that prose may quote (a notes file with `[1200] collection=train loss=nan`): two needed
_FRAMEWORK_LINE_HINT = re.compile(
    rb"""Global step \d+: \{|(?m:^\[\d+ \| [\d.]+\] loss=[-+.\dnNiI])"""
    rb"""|\bstep=\d+ loss=[-+.\dnNiI][^\n]* tgs \(tokens/gpu/second\)="""
    rb"""|(?m:^\s+\xe2\x80\xa2 Loss: [-+.\dnNiI])"""
    rb"""|\bepoch \d+: perplexity: [-+.\dnNiI][^\n]* eval_loss: """
    rb"""|Completed eval after train step \d+, loss=|Metrics \(step \d+\) - """
    rb"""|\] collection=train """
    rb"""|\{ Epoch:\[\s*\d+/\s*\d+\], step:\[\s*\d+/\s*\d+\], loss:"""  # MindFormers
    # MXNet's Speedometer (ingest.console_lines.mxnet_speedometer)
    rb"""|\bEpoch\[\d+\] Batch ?\[(?:\d+-)?\d+\]\tSpeed: [\d.]+ samples/sec\t[^\n=]+=[-+.\dnNiI]"""
    # Marian NMT's update line (ingest.console_lines.marian)
    rb"""|\bEp\. \d+ : Up\. \d+ : Sen\. [\d,]+ : Cost [-+.\dnNiI]"""
    rb"""|\bStep \d+(?:/\s*\d+)?; acc:\s*[-+.\w]+; ppl:\s*[-+.\w]+; xent: """  # OpenNMT-py
    rb"""|\bEpoch\s*\d+,\s*\d+/\s*\d+; acc:\s*[-+.\w]+; ppl:\s*[-+.\w]+; xent: """  # its 2018 line
    # PEFT's example loops: `epoch=0: train_ppl=tensor(4.96, ...) train_epoch_loss=tensor(`
    rb"""|(?m:(?:^|\])[ \t]*epoch=\d+: [^\n]*?loss=(?:tensor\()?[-+.\dnNiI])"""
    rb"""|(?m:^-{3,} ?STEP \d+ ?-{3,}[ \t]*\n[A-Za-z_][\w/.@-]*:\t)"""  # a PPO loop's prints
    # the TF PTB word-LM tutorial's running line: `0.083 perplexity: 14566.362 speed: 525 wps` (its PyTorch ports:
    # `0.10700828937452901 perplexity:  1527.65 speed: 8936.414493654802 wps`)
    rb"""|\b\d\.\d{3,20} perplexity:[ \t]+[\d.]+[ \t]+speed: \d+(?:\.\d*)? wps"""
    # a tqdm bar whose description names a loss with its number (`Training loss: 2.28e-01 lr: 5.65e-05:   0%|  |
    # 1/10000 [`: ingest.console_lines.tqdm_loss_bars `tqdm_description`), a line per redraw
    rb"""|(?i:loss)[ \t]*[:=]?[ \t]*[-+]?(?:\d|nan|inf)[^|\n]{0,80}?:[ \t]*\d{1,3}%\|[^|\n]{0,200}\|"""
    rb"""[ \t]*\d+/\d+[ \t]*\["""
    # the TF seq2seq tutorial's checkpoint header (ingest.console_lines.tf_seq2seq)
    rb"""|(?m:^global step \d+ learning rate [-+.\deE]+ step-time [-+.\deE]+(?: perplexity [-+.\deEnNiI]+)?[ \t]*$)"""
    # a loop's epoch record naming its loss cost (ingest.console_lines.epoch_costs)
    rb"""|(?i:\bepoch[ \t]*#?[ \t]*\d+[ \t]+finished[-=*#:\s]*train(?:ing)?[ \t]+cost: [-+.\dnNiI])"""
    # a loop's step line naming its losses by split alone (ingest.console_lines.split_values)
    rb"""|(?i:\[[ \t]*Step[ \t]+\d+[ \t]*/[ \t]*\d+[ \t]*\][ \t]+Train(?:ing)?[ \t]+[-+.\dnNiI])"""
    # Keras 2.2's fit(verbose=2): `Epoch 1/200`, then ` - 131s - loss: 2.3976` (no n/N)
    rb"""|(?m:^Epoch \d+/\d+[ \t]*\n[ \t]*- \d+m?s - loss: [-+.\dnNiI])"""
    # TF Estimator's hook line: `INFO:tensorflow:loss = 1.96779, step = 54901 (116.492 sec)`
    rb"""|(?m:[:\]\s]loss = [-+.\dnNiI][^\n,]*, (?:global_)?step = \d+(?: \([\d.]+ sec\))?[ \t]*$)"""
    # tinygrad's MLPerf line, each value before its name: `    1 93.44 s run, 11.8750 loss, 1e-12 LR`
    rb"""|(?m:^[ \t]*\d+ [-+.\deE]+ [A-Za-z][\w ]{0,20}, [-+.\deEnNiI]+ loss, [-+.\deE]+ [A-Za-z])""")
_FRAMEWORK_LINES = 2
# A hand-written loop's line (a step, iter or epoch count, a bare n/M, or a bare counter opening the line before a
# split's loss: `5300: train loss: 3.49 / val loss: 3.62`; then a loss, or a loss per word, with its number): so loose
# that prose can hold one (`step 30 loss nan, then we switched to bf16`), so a file needs `_LOOSE_LINES` of them.
_LOOSE_HINT = re.compile(
    rb"""(?i)(?:(?<![\w/])(?:steps?|iter(?:ation)?|epoch(?:[ \t_](?:id|idx|index|no\.?|num))?)[ \t]*"""
    rb"""(?:[:=#][ \t]*)?\[?\d+"""
    rb"""|\d[ \t]*/[ \t]*\d+|\[\d+[ \t]+-[ \t]+\d{1,3}(?:\.\d+)?%\]"""
    rb"""|(?m:^)[ \t]*\d+[ \t]*:[ \t]*(?=(?:train|val|eval|test|dev)\w*[_ ]loss))"""
    rb"""[^\n{]{0,120}?(?:\b|(?<=_)|(?<=entropy))loss(?:/(?:word|token|char|byte)\w*)?[ \t]*(?:(?:::?|=)[ \t]*)?"""
    rb"""[-+]?(?:\d|nan|inf)""")
# (a loss named for its criterion: `CrossEntropyLoss: 10.68`; the iteration and the share done bracketed:
# `[1000 - 20.0%] loss = 1.3149`, 1-sang_data; a doubled colon after the loss: the CS224N default project's
# `Epoch 0: train loss :: 1.540, train acc :: 0.427, dev acc :: 0.375`; the steps counted in the plural and the epoch
# by its index: CasEE's `Epoch id: 1, Training steps: 5, ED loss:53.4, ...`)
_LOOSE_LINES = 3
# The PyTorch NLP tutorials' progress print, no word in it (`1m 1s (500 3%) 4.2725`, `0m 43s (- 6m 25s) (5000 10%)
# 2.9432`: 164887081_python-; ingest.console_lines.elapsed_percent): the whole line, `_LOOSE_LINES` of them
_ELAPSED_PERCENT_HINT = re.compile(
    rb"(?m)^[ \t]*\d{1,6}m \d{1,2}s (?:\(- -?\d{1,6}m -?\d{1,2}s\) )?\(\d{1,12} \d{1,3}%\) "
    rb"[-+]?(?:\d|nan|inf)[\w.+-]*[ \t]*$")
# A from-scratch loop's estimate_loss print with bare split names (`iter     0 | train 4.1292 | val 4.1249`,
# DaraBodla_mini-gpt-pytorch; `Iteration 250: Train 2.4206 | Test 2.4253 | LR 1.00e-03 | 1.5m`, yasirkhalil5665_GPT;
# ingest.console_lines.nanogpt): no `loss` word, so `_LOOSE_LINES` of them
_SPLIT_PIPE_HINT = re.compile(rb"(?im)^[ \t]*(?:iter(?:ation)?|step)[ \t]*(?::[ \t]*)?\d+[ \t]*[|:][ \t]*train[ \t]*"
                              rb"(?::[ \t]*)?[-+.\dnNiI][^|\n]*\|[ \t]*(?:val|test)[ \t]*(?::[ \t]*)?[-+.\dnNiI][^|\n]*"
                              rb"(?:\|[ \t]*lr[ \t]*(?::[ \t]*)?[-+.\dnNiI][^|\n]*)?"
                              rb"(?:\|[ \t]*\d+(?:\.\d+)?[ \t]*(?:ms|s|min|m)[ \t]*)?$")
# A BERT pre-training loop's masked-LM loss lines (ingest.console_lines.masked_lm): `[ 42,174/4,000,000 ][ 0:10:13 ][
# NSP loss: 0.4465 ][ NSP acc: 0.766 ][ MLM loss: 0.4008 ][ MLM acc: 0.935 ]` (KimRass_BERT), `20 step,  mlm : 6.20,
# nsp : 0.66 nsp_acc : 0.65625` (joonkeekim_AIGC_SilverIRIS): `_LOOSE_LINES` of them
_MASKED_LM_HINT = re.compile(rb"(?im)^\[[ \t]*\d[\d,]*[ \t]*/[ \t]*\d[\d,]*[ \t]*\](?:[ \t]*\[[^\[\]\n]*\])*?[ \t]*"
                             rb"\[[ \t]*mlm[ _]loss[ \t]*:[ \t]*[-+.\dnNiI]"
                             rb"|^[ \t]*\d+ step,[ \t]+mlm[ \t]*:[ \t]*[-+.\dnNiI]")
# Unsloth's own loop, unsloth_train: its banner, then a `step, loss` print every logging_steps steps, on a line of its
# own or after the tqdm bar (`...12.12s/it]10, 2.2398`): the banner and `_LOOSE_LINES` prints
_UNSLOTH_TRAIN = b"==((====))==  Unsloth - 2x faster free finetuning"
_UNSLOTH_PRINT = re.compile(
    rb"(?m)(?:^|(?:it/s|s/it)\])\d{1,12}, [-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|nan|inf)[ \t]*$")
# A loop's once-an-epoch line of its two losses and the perplexity beside them (`Epoch 007: train=1.9021, val=1.9530,
# ppl=7.05`): `_LOOSE_LINES` of them (the reader keeps those whose ppl is exp of a loss)
_EPOCH_LOSSES_HINT = re.compile(
    rb"""(?i)(?<![\w/])epoch[ \t]*\d+(?:[ \t]*/[ \t]*\d+)?[ \t]*:[ \t]*train(?:ing)?[ \t]*=[ \t]*"""
    rb"""[-+.\dnNiI][^\n]{0,60}?\bppl[ \t]*=[ \t]*[-+.\dnNiI]""")
# A loop's record as bare lines under a line that is only its counter, `epoch 0` then `time 395.9` / `loss 1.788` a
# line each (14renus_cse291), `### ITER 50 ###` then `Train Loss: 2.6893` (AIdventures_flora): `_LOOSE_LINES` of them
# (the shape ingest.console_lines.bare_epochs reads)
_BARE_RECORD_NAME = rb"[A-Za-z_]\w{0,40}(?: [A-Za-z_]\w{0,40}){0,2}(?::[ ]*|[ ]+)"
_BARE_EPOCH_RECORD_HINT = re.compile(rb"(?im)^[#=*\- \t]*(?:epoch|iter(?:ation)?|step)[ \t]*:?[ \t]*\d{1,9}"
                                     rb"(?:[ \t]*/[ \t]*\d{1,9})?[#=*\- \t]*\n"
                                     rb"(?:" + _BARE_RECORD_NAME + rb"[-+]?[\d.]+(?:e[-+]?\d+)?[ \t]*\n)*?"
                                     rb"(?:[A-Za-z_]\w{0,40} ){0,2}[A-Za-z_]*loss(?::[ ]*|[ ]+)"
                                     rb"[-+]?(?:nan|inf|[\d.]+(?:e[-+]?\d+)?)[ \t]*$")
# ... or short loss lines under a header of one word that starts the epoch (BlayvasD_GPT-Histories: `Training epoch 1`,
# then `Validation Loss: X` / `Training Loss: Y` a print each, tqdm bars and the outputs' names between; the shape
# ingest.console_lines.stepless reads)
_WORDED_EPOCH_SECTION_HINT = re.compile(rb"(?im)^[ \t]*(?:training|starting|start|beginning|running)[ \t]+epoch[ \t]*"
                                        rb"\d{1,6}(?:[ \t]*/[ \t]*\d{1,6})?[ \t.:]*\n(?:[^\n]*\n){0,12}?"
                                        rb"[^\n]{0,40}\bloss[ \t]*[:=][ \t]*[-+]?(?:\d|nan|inf)")
# ... or a split's perplexity under a line that is only the epoch, bare progress counts between (the KU Leuven
# RNN-LM tutorial's run_lm, Yanhan-ss_speech-recognition: `Epoch 1` / `49984` / `Train perplexity: 1439.57` / `9984` /
# `Validation perplexity: 1005.25`; the shape ingest.console_lines.stepless dates)
_EPOCH_SECTION_PERPLEXITY_HINT = re.compile(
    rb"(?im)^[ \t]*epoch[ \t]*:?[ \t]*\d{1,6}[ \t]*\n(?:[ \t]*\d{1,12}[ \t]*\n){0,3}"
    rb"[ \t]*(?:train(?:ing)?|val(?:id|idation)?|eval|test|dev)[ _]perplexity"
    rb"[ \t]*[:=][ \t]*[-+]?(?:\d|nan|inf)")
# ... and a step's `|`-separated header stating the run's length, its values indented further down with other lines
# between (karanravindra_omni: `Step 1/50 | gold='72'`, sample lines, then `  rewards: [...]` / `  loss:    -0.0000`):
# `_PIPED_RECORDS` of them
_PIPED_STEP_RECORD_HINT = re.compile(rb"(?im)^(?:epoch|iter(?:ation)?|step)[ \t]+\d{1,9}[ \t]*/[ \t]*\d{1,9}[ \t]*\|"
                                     rb"(?![^\n]*loss)[^\n]*\n(?:(?![ \t]*(?:epoch|iter|step)[ \t]+\d+[ \t]*/)[^\n]*\n)"
                                     rb"{0,40}?[ \t]+(?:[A-Za-z_]\w{0,40} ){0,2}[A-Za-z_]*loss:[ \t]*"
                                     rb"[-+]?(?:nan|inf|[\d.]+(?:e[-+]?\d+)?)[ \t]*$")
_PIPED_RECORDS = 2
# A list of saved checkpoints' held-out perplexities, `results/checkpoint-10 valid 16.61` a line (Roushelfy_LLM_HW3;
# ingest.console_lines.checkpoint_evals): `_LOOSE_LINES` of them
# A loop's records printed as pretty-printed JSON objects, a reward or a loss on an indented line of each (a TRL PPO
# loop's samples and steps, BuonHobo_fake-gpt; ingest.console_lines.json_blocks): `_LOOSE_LINES` of them
_JSON_BLOCK_HINT = re.compile(
    rb'(?m)^\{[ \t]*\n(?:[ \t][^\n]*\n){0,80}?[ \t]+"(?:\w*_)?(?:reward|loss)"[ \t]*:[ \t]*[-+]?\d')
_CHECKPOINT_EVAL_HINT = re.compile(rb"(?im)^[ \t]*(?:\S*/)?checkpoint-\d{1,12}/?[ \t]+(?:valid|validation|val|dev|eval)"
                                   rb"[ \t]+\d[\d.]*(?:e[-+]?\d+)?[ \t]*$")
# ... or an epoch's last batch loss, then its average over the training batches (2b3o4o_transformer-implementation:
# `Loss on step 0: 961.11` / `Average loss for training batches in this epoch: 961.11`, a one-batch epoch): the pair is
# the loop's own record, one enough (the shape ingest.console_lines.batch_averages reads)
_BATCH_AVERAGE_HINT = re.compile(
    rb"(?im)^[ \t]*Loss on (?:step|batch)[ \t]+\d+[ \t]*:[ \t]*[-+.\dnNiI][^\n]*\n"
    rb"(?:[^\n]*\n){0,3}?[ \t]*Average loss for training batches in this epoch:[ \t]*[-+.\dnNiI]")
# A loss printed as a scalar torch (or TensorFlow) tensor, alone on its line (`tensor(nan, device='cuda:0')`): five in
# a file.
_PRINTED_TENSOR = re.compile(rb"(?im)^[ \t]*(?:(?:train(?:ing)?[ _])?loss[ \t]*[:=]?[ \t]*)?(?:tf\.)?tensor\([ \t]*"
                             rb"[-+]?(?:nan|inf|\d)")
_PRINTED_TENSORS = 5
# ... fewer where each comes right after a progress bar's reading (a loop's once-an-epoch `print(loss)` under its
# tqdm epoch bar: AaronBarbosa12_transformer_model, 4 epochs; ingest.bar_dated_prints): `_BAR_DATED_PRINTS` of them (in
# a notebook the print is another output than the bar's: its stream's name and type come between)
_BAR_DATED_PRINT = re.compile(
    rb"(?i)\d/\d+ \[[^\]\n]*(?:it/s|s/it)\][ \t]*(?:\n(?:stdout|stream)?[ \t]*){1,4}(?:loss[ \t]*[:=]?[ \t]*)?"
    rb"(?:tf\.)?tensor\([ \t]*[-+]?(?:nan|inf|\d)")
_BAR_DATED_PRINTS = 3
# lucidrains' scripts print `training loss: 2.48` alone once a batch (after tqdm's bar, when it drew one), back to back
# (a `validation loss: X` print between some): a line prose may hold once, and a sweep's summary once a trial, each
# under its own header, so a file needs `_LOSS_PRINTS` of them each followed at once by the next
_LOSS_PRINT = re.compile(rb"(?m)(?:^|\])training loss: [-+]?(?:\d[\d.eE+-]*|nan|inf)[ \t]*\r?\n"
                         rb"(?=(?:(?:[^\n]*\])?validation loss: [^\n]*\n)?(?:[^\n]*\])?training loss: )")
_LOSS_PRINTS = 9


# The header of the Trainer's notebook progress table (copied as text) or of its model card's results table.
# (the card's table as a web page shows it has its cells separated by spaces: `Training Loss Epoch Step Validation
# Loss`; the card of transformers' Keras callback heads its table `| Train Loss | Validation Loss | Epoch |`)
_RESULTS_TABLE = re.compile(
    rb"(?m)^[ \t|]*(?:Step|Epoch|Train(?:ing)? Loss)[ \t]*[\t|][^\n]*(?:Training|Validation) Loss"
    rb"|^Training Loss (?:Epoch Step|Step Epoch) Validation Loss\b")


# A loop's status drawn as a box table (`ingest.boxed_table`): a border, a header naming a step and a loss between
# `|`, a rule, then a row of numbers or printed tensors (fani-lab_RePair's `|  0   |  10   | tensor(4.9702, ...) |`)
_BOXED_TABLE = re.compile(rb"(?im)^[ \t]*\+[-=+]{3,}\+[ \t]*\n[ \t]*(?=[^\n]*\|[ \t]*(?:steps?|iter(?:ation)?|batch)"
                          rb"[ \t]*\|)(?=[^\n]*\bloss[ \t]*\|)\|[^\n]*\|[ \t]*\n(?:[ \t]*\|[-=+:| ]*\|[ \t]*\n)?"
                          rb"[ \t]*\|[ \t]*(?:tensor\()?[-+]?\d")


# The Trainer's printed log dicts, values as numbers or as strings (`{'loss': '0.5717', 'grad_norm': ...}`)
_LOG_DICT = re.compile(rb"""\{['"]loss['"]: '?[-\d.]""")
_README_DICTS = 3


def readme_log(chunk: bytes) -> bool:
    """A README that holds a training log: the Trainer's results table, or `_README_DICTS` of its log dicts."""
    return bool(_RESULTS_TABLE.search(chunk)) or _at_least(_LOG_DICT, chunk, _README_DICTS)


# A pandas DataFrame of per-epoch results as its repr prints it (`ingest.dataframe_table`): a header of names, one of
# them a loss, its index named epoch (or step) on the next line or an epoch column, then a row of numbers. A header
# with an epoch column may start with a comment mark (`#epoch train_loss val_loss`: danis-b_YodaGPT's losses.txt,
# numpy.savetxt's `# ` header)
_HISTORY_TABLE = re.compile(
    rb"(?m)^(?=[^\n]*loss)[ \t]+[A-Za-z_][\w \t]*\n(?:epoch|step)[ \t]*\n[ \t]*\d+[ \t]+[-+\d.nN]"
    rb"|^(?=[^\n]*loss)(?=[^\n]*\b(?:epoch|step)\b)[ \t]*(?:#[ \t]*)?[A-Za-z_][\w \t]*\n[ \t]*\d+[ \t]+"
    rb"[-+\d.nN]")


# The same table as HTML, as Jupyter displays it (a notebook's output, nbconvert's Markdown export): its header cells
_TRAINER_TABLE_HTML = re.compile(rb"<th\b[^>]*>\s*(?:Training|Validation)(?:\s|&nbsp;|&#160;)+Loss\s*</th>")


# A hand-written loop's line with no counter at all: a loss (`loss`, or one named for its objective, `rl_loss`) and
# another `name: number` after it (`loss: 1.3741, orth_loss: 0.0015, grad_norm: 1.9062`), `_UNCOUNTED_LINES` of them.
_UNCOUNTED_HINT = re.compile(
    rb"""(?i)(?:\b|(?<=_))loss[ \t]*[:=][ \t]*[-+]?(?:\d|nan|inf)[^\n]{0,40}?[,|][ \t]*\w+[ \t]*[:=][ \t]*"""
    rb"""[-+]?(?:\d|nan|inf)""")
_UNCOUNTED_LINES = 5
# What a terminal or a launcher adds to a line (colour codes; torchrun's `[rank0]: `): gone before the hints are
# looked for, as the console reader drops them (some hints are anchored at a line's start)
_ANSI_BYTES = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]")
_LAUNCHER_BYTES = re.compile(rb"(?m)^(?:\d+: )?\[(?:rank|default)\d+\]: ?")
# a log collector's time or task label before every line (`docker logs -t`, `srun --label`), as the reader drops them
_STAMP_BYTES = re.compile(rb"(?m)^(?:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}) |\d{1,4}: )")


def log_hinted(chunk: bytes) -> bool:
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
            b"Average loss for" in chunk and _BATCH_AVERAGE_HINT.search(chunk)) or (
            b"loss" in chunk and _HISTORY_TABLE.search(chunk)) or (b"+-" in chunk and _BOXED_TABLE.search(chunk)):
        return True
    return (_at_least(_LOOSE_HINT, chunk, _LOOSE_LINES) or _at_least(_UNCOUNTED_HINT, chunk, _UNCOUNTED_LINES)
            or _at_least(_EPOCH_LOSSES_HINT, chunk, _LOOSE_LINES)
            or _at_least(_BARE_EPOCH_RECORD_HINT, chunk, _LOOSE_LINES)
            or _at_least(_WORDED_EPOCH_SECTION_HINT, chunk, _LOOSE_LINES)
            or b"erplexity" in chunk and _at_least(_EPOCH_SECTION_PERPLEXITY_HINT, chunk, _LOOSE_LINES)
            or b"%) " in chunk and _at_least(_ELAPSED_PERCENT_HINT, chunk, _LOOSE_LINES)
            or (b"| train" in chunk or b": Train " in chunk) and _at_least(_SPLIT_PIPE_HINT, chunk, _LOOSE_LINES)
            or (b"MLM" in chunk or b"mlm" in chunk) and _at_least(_MASKED_LM_HINT, chunk, _LOOSE_LINES)
            or b"|" in chunk and _at_least(_PIPED_STEP_RECORD_HINT, chunk, _PIPED_RECORDS)
            or b"checkpoint-" in chunk and _at_least(_CHECKPOINT_EVAL_HINT, chunk, _LOOSE_LINES)
            or b"\n{" in chunk and _at_least(_JSON_BLOCK_HINT, chunk, _LOOSE_LINES)
            or _at_least(_FRAMEWORK_LINE_HINT, chunk, _FRAMEWORK_LINES)
            or _at_least(_PRINTED_TENSOR, chunk, _PRINTED_TENSORS) or _at_least(_LOSS_PRINT, chunk, _LOSS_PRINTS)
            or b"ensor(" in chunk and _at_least(_BAR_DATED_PRINT, chunk, _BAR_DATED_PRINTS)
            or _UNSLOTH_TRAIN in chunk and _at_least(_UNSLOTH_PRINT, chunk, _LOOSE_LINES))


def _at_least(pattern: re.Pattern, chunk: bytes, n: int) -> bool:
    return any(i + 1 >= n for i, _ in enumerate(pattern.finditer(chunk)))


def a_training_console(chunk: bytes) -> bool:
    return is_training_console(run_signs(chunk))


# train()'s return value as a cell shows it: the Trainer ran to its end, even where it logged no row and printed no
# banner (Onemaeus97_yifanbot: a 2-step run under logging_steps 10; ingest.notebook dates it at its global step)
_TRAIN_OUTPUT = re.compile(rb"TrainOutput\(global_step=\d+, training_loss=")


def notebook_hinted(data: bytes) -> bool:
    """A notebook whose cell outputs hold a training log's line, the Trainer's notebook table or train()'s
    TrainOutput, or a cell whose loop prints its loss bare (`printed_loss_cells`), or a call of a training function
    that prints only its held-out loss when it returns (`closing_eval_cells`), or livelossplot's closing summary of a
    loss (`livelossplot_summary`)."""
    if _TRAINER_TABLE_HTML.search(data):
        return True
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # cut mid-write: kept when its raw text shows a line, for its reader to name
        return log_hinted(data)
    sheets = notebook.get("worksheets") if isinstance(notebook, dict) else None  # nbformat 3
    cells = notebook.get("cells") if isinstance(notebook, dict) and "cells" in notebook else [
        c for w in sheets if isinstance(w, dict) and isinstance(w.get("cells"), list) for c in w["cells"]] \
        if isinstance(sheets, list) else None
    strings: list[str] = []
    _strings_in([c.get("outputs") for c in cells if isinstance(c, dict)] if isinstance(cells, list) else [], strings)
    text = "\n".join(strings).encode("utf-8", "replace")
    return log_hinted(text) or bool(_TRAIN_OUTPUT.search(text)) or _livelossplot_summary(strings) or (
        isinstance(cells, list) and (
        any(loss_column(c) is not None for c in cells) or _closing_evals(cells) or _loop_lines_in_one_cell(cells)))


def _livelossplot_summary(strings: list[str]) -> bool:
    """Whether the outputs hold livelossplot's closing summary of a loss (`livelossplot_summary`)."""
    text = "\n".join(strings)
    return "cur:" in text and as_step_lines(text) is not None


# A hand-written loop's lines that one cell's code printed: no notes file, so fewer than `_LOOSE_LINES` are its log
# (ingest.step_numbering `_FEWEST_HAND_WRITTEN_IN_ONE_CELL`; AugustinCombes_icu_MLM's one epoch, `Epoch 1: train: loss
# 3.86; ...` then `Epoch 1: valid: loss 3.12; ...`)
_LOOSE_LINES_IN_ONE_CELL = 2


def _loop_lines_in_one_cell(cells: list) -> bool:
    for cell in cells:
        strings: list[str] = []
        _strings_in(cell.get("outputs") if isinstance(cell, dict) else None, strings)
        if _at_least(_LOOSE_HINT, "\n".join(strings).encode("utf-8", "replace"), _LOOSE_LINES_IN_ONE_CELL):
            return True
    return False


def _closing_evals(cells: list) -> bool:
    trained_by = trainers(cells)
    return bool(trained_by) and any(closing_evals(c, trained_by) for c in cells)


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
