"""Tests of the readers of llama-recipes, llama.cpp, minimind, InternEvo, SetFit, lit-llama, gpt-2-simple, ... logs.

Formats found in the frameworks' own source (fmt5 sweep): llama-recipes / llama-cookbook, llama.cpp's old
finetune / train-text-from-scratch examples, minimind, InternEvo, SetFit, sentence-transformers, transformers 2.x / 3.x
Trainer, Qwen's finetune.py (HF Trainer + PEFT), mlx-examples' old lora.py, lit-llama, gpt-2-simple, run_clm.py's
metrics blocks and the HF course's Accelerate loop. Each run below is built as that code prints or writes it (the
source file and line in each docstring; commits: llama-cookbook 0e00335, minimind d65ef2c (older form d2f5ef4),
InternEvo c628a8c, setfit 0f8e322, lit-llama 2a464de, gpt-2-simple 91d11ed; llama.cpp common/train.cpp as of its
removal in 2024). A failing test is a reader gap; a passing one records coverage (at most one per framework)."""
from __future__ import annotations

import json
import math

from support.format_runs import analyze_logs, assert_broken_at, assert_healthy_loss, losses, write_file


def gn(s, v):
    return float("nan") if v != v else 1.5 - s * 0.02


def lr(s):
    return 1e-4 * (1 - s / 40)


# --- llama-recipes / llama-cookbook ---------------------------------------------------------------------------


def llama_cookbook_console(nan_at=None):
    """src/llama_cookbook/utils/train_utils.py:196 `pbar.set_description(f"Training Epoch: {epoch+1}/{num_epochs},
    step {step}/{len(train_dataloader)} completed (loss: {loss.detach().float()})")` (a tqdm bar on stderr, \\r
    between updates; `step` is the dataloader index from 0), :394 `print(f" {eval_ppl=} {eval_epoch_loss=}")`, :294
    `Epoch 1: train_perplexity=..., train_epoch_loss=..., epoch time ...s`, :486 `--> {model_name} has {n / 1e6}
    Million params`."""
    out = ["--> Model meta-llama/Llama-3.2-1B", "", "--> meta-llama/Llama-3.2-1B has 1235.8144 Million params", "",
           "trainable params: 851,968 || all params: 1,236,666,368 || trainable%: 0.0689",
           "--> Training Set Length = 3000", "Starting epoch 0/1", "train_config.max_train_step: 0"]
    bar = ""
    for i, v in enumerate(losses(nan_at)):
        pct = int(100 * (i + 1) / 30)
        bar += (f"\rTraining Epoch: 1/1, step {i}/30 completed (loss: {v}): {pct:3d}%|"
                f"{'█' * (pct // 10):<10}| {i + 1}/30 [00:{i + 1:02d}<00:{29 - i:02d},  1.00s/it]")
    out.append(bar)
    e = 2.4 - 0.9
    out.append(f" eval_ppl=tensor({math.exp(e):.4f}, device='cuda:0') "
               f"eval_epoch_loss=tensor({e:.4f}, device='cuda:0')")
    out.append("best eval loss on epoch 1 is 1.5")
    out.append("Epoch 1: train_perplexity=5.2000, train_epoch_loss=1.6487, epoch time 31.2s")
    return "\n".join(out) + "\n"


def test_llama_cookbook_tqdm_description_loss_is_read_and_a_nan_is_broken(tmp_path):
    """llama-cookbook train_utils.py:196: the loss is only in the tqdm bar's description, `Training Epoch: 1/1, step
    {step}/{N} completed (loss: 2.5)`, rewritten with \\r per step. Step is the dataloader index (0-based): the NaN at
    the 25th logged step is `step 24`."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", llama_cookbook_console()))
    assert_healthy_loss(a)
    assert a.run_profile.method == "peft"  # PEFT's count banner, and no LoRA named: an adapter of unsaid kind
    broken = analyze_logs(write_file(tmp_path / "nan", "train.log", llama_cookbook_console(nan_at=25)))
    assert_broken_at(broken, 24)


def llama_cookbook_metrics(nan_at=None):
    """train_utils.py:575-587 `save_to_json`: metrics_data_{rank}-{date}.json holds lists train_step_loss,
    train_epoch_loss, train_step_perplexity, train_epoch_perplexity, val_step_loss, val_epoch_loss, ... (json.dump:
    a NaN is `NaN`)."""
    ls = losses(nan_at)
    return json.dumps({"train_step_loss": ls, "train_epoch_loss": [sum(ls) / 30],
                       "train_step_perplexity": [math.exp(v) if v == v else v for v in ls],
                       "train_epoch_perplexity": [5.2], "val_step_loss": [1.6, 1.5, 1.5], "val_epoch_loss": [1.5],
                       "val_step_perplexity": [4.9, 4.5, 4.5], "val_epoch_perplexity": [4.5]})


def test_llama_cookbook_metrics_json_train_step_loss_is_read_and_a_nan_is_broken(tmp_path):
    """llama-cookbook train_utils.py:106 writes `{output_dir}/metrics_data_0-2024-05-01_10-00-00.json`
    (save_metrics=True) with a per-step list `train_step_loss` (:575-587). Step = list index + 1. The tool: 'no
    training logs or checkpoints found' (the name holds no `loss`, the dict of lists is no history it
    sniffs); given by name, no metric at all (warning)."""
    name = "metrics_data_0-2024-05-01_10-00-00.json"
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "ok", name, llama_cookbook_metrics())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", name, llama_cookbook_metrics(nan_at=25))), 25)


# --- llama.cpp finetune / train-text-from-scratch -----------------------------------------------------------


def llama_cpp_console(nan_at=None):
    """common/train.cpp train_opt_callback: `printf("%s: iter=%6d sample=%zu/%zu sched=%f loss=%f", __func__,
    opt->iter, ...)` then ` dt=` / ` eta=` (print_duration hh:mm:ss) and ` |--->`; glibc prints a NaN as `nan`."""
    out = ["main: seed: 1700000000", "llama_model_loader: loaded meta data with 19 key-value pairs and 291 tensors",
           "main: init model", "print_params: n_vocab:   32000", "main: total train_iterations 30",
           "main: begin training"]
    for s, v in enumerate(losses(nan_at), 1):
        loss = "nan" if v != v else f"{v:f}"
        out.append(f"train_opt_callback: iter={s:6d} sample={s * 8 + 1}/27520 sched={min(1.0, s / 10):f} "
                   f"loss={loss} dt=00:00:05 eta=00:{(30 - s) // 12:02d}:{(30 - s) * 5 % 60:02d} |-->")
    out.append("main: total training time: 00:02:30")
    return "\n".join(out) + "\n"


def test_llama_cpp_train_opt_callback_loss_is_read_and_a_nan_is_broken(tmp_path):
    """llama.cpp common/train.cpp (train_opt_callback, used by examples/finetune and train-text-from-scratch):
    `train_opt_callback: iter=    10 sample=81/27520 sched=1.000000 loss=2.345678 dt=00:00:05 eta=00:01:40 |-->`."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "ok", "finetune.log", llama_cpp_console())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "finetune.log", llama_cpp_console(nan_at=25))), 25)


# --- minimind --------------------------------------------------------------------------------------------------


def minimind_console(nan_at=None):
    """trainer/train_lora.py:57 `Logger(f'Epoch:[{epoch + 1}/{args.epochs}]({step}/{iters}), loss:
    {current_loss:.4f}, logits_loss: ..., aux_loss: ..., lr: {current_lr:.8f}, epoch_time: {eta_min:.1f}min')`;
    :135-136 `LLM 总参数量: ... M`, `LoRA 参数量: ... M`; trainer_utils.py:28 `Model Params: {total:.2f}M`."""
    out = ["Model Params: 25.83M", "LLM 总参数量: 25.830 M", "LoRA 参数量: 0.262 M", "LoRA 参数占比: 1.01%"]
    for s, v in enumerate(losses(nan_at), 1):
        out.append(f"Epoch:[1/1]({s * 10}/300), loss: {v:.4f}, logits_loss: {v:.4f}, aux_loss: 0.0000, "
                   f"lr: {lr(s):.8f}, epoch_time: {(30 - s) * 0.1:.1f}min")
    return "\n".join(out) + "\n"


def test_minimind_epoch_bracket_lines_are_read_and_a_nan_is_broken(tmp_path):
    """minimind trainer/train_lora.py:57 (same f-string in train_pretrain.py:58, train_full_sft.py:58): `Epoch:[1/1]
    (250/300), loss: nan, ...` -- the step is the in-epoch counter (250 for the 25th logged line); and the early-2025
    form (train_pretrain.py @d2f5ef4:69-77, no commas) `Epoch:[1/1](2400/3000) loss:nan lr:0.000037500000
    epoch_Time:5.0min:`, counted from 0 (2400 for the 25th)."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "ok", "train.log", minimind_console())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", minimind_console(nan_at=25))), 250)
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "old", "pretrain.log", minimind_old_console())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "old_nan", "pretrain.log", minimind_old_console(25))), 2400)


def test_minimind_banner_gives_method_and_model_params(tmp_path):
    """minimind trainer/train_lora.py:135-136 prints `LLM 总参数量: 25.830 M` / `LoRA 参数量: 0.262 M` / `LoRA
    参数占比: 1.01%` and trainer_utils.py:28 `Model Params: 25.83M`: the run is LoRA on a 25.83M model. The profile
    says method unknown and model_params None."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", minimind_console()))
    assert a.run_profile.method == "lora"
    assert a.run_profile.model_params is not None and abs(a.run_profile.model_params - 25_830_000) < 10_000


def minimind_old_console(nan_at=None):
    """train_pretrain.py @d2f5ef4 lines 69-77: `'Epoch:[{}/{}]({}/{}) loss:{:.3f} lr:{:.12f} epoch_Time:{}min:'`
    (step from enumerate(train_loader), logged at step % log_interval == 0, so from 0)."""
    out = ["LLM总参数量：25.830 百万"]
    for s, v in enumerate(losses(nan_at), 1):
        out.append(f"Epoch:[1/1]({(s - 1) * 100}/3000) loss:{v:.3f} lr:{lr(s):.12f} epoch_Time:{30 - s}.0min:")
    return "\n".join(out) + "\n"


# --- InternEvo -------------------------------------------------------------------------------------------------


def internevo_console(nan_at=None):
    """internlm/train/pipeline.py:555-611 record_current_batch_training_metrics: `line += f"{key}={value} "` over
    infos {tflops, step, loss, 'tgs (tokens/gpu/second)', tgs/..., lr, loss_scale, grad_norm (a dict), micro_num,
    num_consumed_tokens, ..., acc, perplexity, loss_from_metric}; logger format (utils/logger.py:8)
    `%(asctime)s\\t%(levelname)s %(filename)s:%(lineno)s in %(funcName)s -- %(message)s`. Validation
    (eval/evaluation.py:116-128): `Validation on {val_name}: step=N val/{val_name}_loss=X val/..._acc=..`."""
    pre = "2024-05-01 10:00:{:02d},123\tINFO pipeline.py:622 in record_current_batch_training_metrics -- "
    out = []
    for s, v in enumerate(losses(nan_at), 1):
        t = 3500.12 + s
        out.append(pre.format(s) + f"tflops=180.5 step={s} loss={v} tgs (tokens/gpu/second)={t} "
                   f"tgs/last_tgs_1={t} tgs/tgs_all={t} tgs/tgs_avg={t} tgs/tgs_SMA={t} tgs/last_tgs_10=0 "
                   f"tgs/last_tgs_50=0 lr={lr(s)} loss_scale=65536.0 grad_norm={{'0_default': {gn(s, v)}}} "
                   f"micro_num=4 num_consumed_tokens={s * 65536} inf_nan_skip_batches=0 num_samples_in_batch=17 "
                   f"largest_length=2048 largest_batch=5 smallest_batch=3 adam_beta2=0.95 fwd_bwd_time=1.02 "
                   f"acc=0.41 perplexity={math.exp(v) if v == v else v:.4f} tokens_num=65536 loss_from_metric="
                   f"{round(v, 4)} ")
        if s % 10 == 0:
            out.append(f"2024-05-01 10:00:{s:02d},500\tINFO evaluation.py:128 in evaluate_on_val_dls -- "
                       f"Validation on val: step={s} val/val_loss={2.4 - s * 0.03} val/val_acc=0.4 val/val_plex=9.1")
    return "\n".join(out) + "\n"


def test_internevo_key_equals_value_line_is_read_and_a_nan_is_broken(tmp_path):
    """InternEvo internlm/train/pipeline.py:606-611 (`line += f"{key}={value} "`, logger.info(line)): `tflops=180.5
    step=25 loss=nan tgs (tokens/gpu/second)=3525.12 ... lr=3.75e-05 loss_scale=65536.0 grad_norm={'0_default':
    nan} ...` (a line of 600+ characters). The tool: 'nothing readable', even for the file given by name."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "ok", "train.log", internevo_console())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", internevo_console(nan_at=25))), 25)


# --- HF Trainer descendants: SetFit, sentence-transformers v3, transformers 2.x / 3.x ---------------------------


def setfit_console(nan_at=None):
    """setfit src/setfit/trainer.py:172-174 `log`: `{f"{self.logs_prefix}_{k}" if k == "loss" ...}` with
    logs_prefix "embedding": transformers' ProgressCallback then prints `{'embedding_loss': 0.25, 'grad_norm': ...,
    'learning_rate': ..., 'epoch': 0.01}`; evaluate prefixes `eval_embedding_` (:176-186)."""
    out = ["***** Running training *****", "  Num unique pairs = 2400", "  Batch size = 16", "  Num epochs = 1",
           "  Total optimization steps = 300"]
    for s, v in enumerate(losses(nan_at), 1):
        out.append(str({"embedding_loss": round(v, 4), "grad_norm": gn(s, v), "learning_rate": lr(s),
                        "epoch": round(s * 10 / 300, 4)}))
        if s % 10 == 0:
            out.append(str({"eval_embedding_loss": round(2.4 - s * 0.03, 4), "eval_runtime": 1.2,
                            "eval_samples_per_second": 800.0, "eval_steps_per_second": 50.0,
                            "epoch": round(s * 10 / 300, 4)}))
    return "\n".join(out) + "\n"


def test_setfit_embedding_loss_is_the_loss_and_a_nan_is_broken(tmp_path):
    """SetFit src/setfit/trainer.py:172-174 renames the Trainer's `loss` to `embedding_loss` (and `eval_loss` to
    `eval_embedding_loss`): `{'embedding_loss': nan, 'grad_norm': nan, 'learning_rate': 3.75e-05, 'epoch': 0.8333}`.
    Steps from the dict order (logging_steps 10 over 300 steps): the 25th dict is step 250. The tool reads
    `embedding_loss` but no `loss`: warning (no_learning_evidence at step 0), and the NaN run is a warning too."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", setfit_console()))
    assert_healthy_loss(a)
    assert "eval_loss" in a.timeline.metrics
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", setfit_console(nan_at=25))), 250)


def sentence_transformers_console(nan_at=None):
    """sentence-transformers v3 SentenceTransformerTrainer (a transformers Trainer subclass, trainer.py): the
    Trainer's printed dicts; evaluator metrics come prefixed `eval_{evaluator.name}_` (`eval_sts-dev_pearson_cosine`)
    beside `eval_loss`."""
    out = []
    for s, v in enumerate(losses(nan_at), 1):
        out.append(str({"loss": round(v, 4), "grad_norm": gn(s, v), "learning_rate": lr(s),
                        "epoch": round(s * 10 / 300, 4)}))
        if s % 10 == 0:
            out.append(str({"eval_loss": round(2.4 - s * 0.03, 4), "eval_sts-dev_pearson_cosine": 0.8,
                            "eval_sts-dev_spearman_cosine": 0.81, "eval_runtime": 1.2,
                            "eval_samples_per_second": 800.0, "eval_steps_per_second": 50.0,
                            "epoch": round(s * 10 / 300, 4)}))
    return "\n".join(out) + "\n"


def test_sentence_transformers_v3_trainer_dicts_are_read_and_a_nan_is_broken(tmp_path):
    """sentence-transformers v3 SentenceTransformerTrainer: `{'loss': nan, 'grad_norm': nan, 'learning_rate':
    3.75e-05, 'epoch': 0.8333}` and `{'eval_loss': 1.65, 'eval_sts-dev_pearson_cosine': 0.8, ...}` (the 25th dict at
    step 25: no banner states the logging interval)."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", sentence_transformers_console()))
    assert_healthy_loss(a)
    assert "eval_loss" in a.timeline.metrics
    broken = analyze_logs(write_file(tmp_path / "nan", "train.log", sentence_transformers_console(25)))
    assert broken.status == "broken"


def transformers3_console(nan_at=None):
    """transformers v3.x trainer.py `log`: `output = {**logs, **{"step": self.global_step}}` then
    `iterator.write(output)` (tqdm.write(str(dict))); logs hold loss, learning_rate, epoch; eval adds eval_loss."""
    out = []
    for s, v in enumerate(losses(nan_at), 1):
        out.append(str({"loss": v, "learning_rate": lr(s), "epoch": round(s / 30, 4), "step": s * 50}))
        if s % 10 == 0:
            out.append(str({"eval_loss": 2.4 - s * 0.03, "epoch": round(s / 30, 4), "step": s * 50}))
    return "\n".join(out) + "\n"


def transformers2_console(nan_at=None):
    """transformers v2.9-2.11 trainer.py `_log`: `logger.info(json.dumps({**logs, **{"step": self.global_step}}))`
    with the logging format of the examples `%(asctime)s - %(levelname)s - %(name)s -   %(message)s`; json.dumps
    spells a NaN `NaN`."""
    out = []
    for s, v in enumerate(losses(nan_at), 1):
        out.append(f"05/01/2020 10:00:{s:02d} - INFO - transformers.trainer -   "
                   + json.dumps({"loss": v, "learning_rate": lr(s), "epoch": round(s / 30, 4), "step": s * 50}))
    return "\n".join(out) + "\n"


def test_transformers_2_and_3_log_dicts_with_step_key_are_read_and_a_nan_is_broken(tmp_path):
    """transformers v3.0-3.5 trainer.py `Trainer.log` (output = {**logs, "step": global_step}; iterator.write(output)):
    `{'loss': nan, 'learning_rate': 3.75e-05, 'epoch': 0.8333, 'step': 1250}`; v2.9-2.11 `_log`: `05/01/2020
    10:00:25 - INFO - transformers.trainer -   {"loss": NaN, ..., "step": 1250}` (json.dumps). The step is the
    dict's own `step` key (1250 for the 25th)."""
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "ok3", "train.log", transformers3_console())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan3", "train.log", transformers3_console(25))), 1250)
    assert_healthy_loss(analyze_logs(write_file(tmp_path / "ok2", "train.log", transformers2_console())))
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan2", "train.log", transformers2_console(25))), 1250)


def run_clm_console(nan_at=None):
    """transformers examples/pytorch/language-modeling/run_clm.py: the Trainer's dict lines, then
    `trainer.log_metrics("train", metrics)` (trainer_pt_utils.py log_metrics: `***** train metrics *****` and
    `  {key: <{k_width}} = {value:>{v_width}}`), and `trainer.log_metrics("eval", metrics)` with eval_loss and
    perplexity."""
    out = []
    for s, v in enumerate(losses(nan_at), 1):
        out.append(str({"loss": round(v, 4), "grad_norm": gn(s, v), "learning_rate": lr(s),
                        "epoch": round(s / 10, 2)}))
    out += ["{'train_runtime': 62.3, 'train_samples_per_second': 38.5, 'train_steps_per_second': 4.8, "
            "'train_loss': 1.85, 'epoch': 3.0}",
            "***** train metrics *****", "  epoch                    =        3.0",
            "  total_flos               =   456789GF", "  train_loss               =      1.85",
            "  train_runtime            = 0:01:02.30", "  train_samples            =        800",
            "  train_samples_per_second =     38.5", "  train_steps_per_second   =      4.8",
            "***** eval metrics *****", "  epoch                   =        3.0",
            "  eval_accuracy           =     0.6512", "  eval_loss               =     1.6123",
            "  eval_runtime            = 0:00:01.20", "  eval_samples            =        100",
            "  eval_samples_per_second =     83.3", "  eval_steps_per_second   =     10.4",
            "  perplexity              =     5.0140"]
    return "\n".join(out) + "\n"


def test_run_clm_eval_metrics_block_gives_eval_loss(tmp_path):
    """run_clm.py:~640 `trainer.log_metrics("eval", metrics)` (trainer_pt_utils.py `log_metrics`: `***** eval metrics
    *****` then `  {key: <{k_width}} = {value:>{v_width}}`): `  eval_loss               =     1.6123` and
    `  perplexity              =     5.0140`. The post-training evaluate's dict is not printed (ProgressCallback's
    bar is closed by then), so this block is the console's only eval loss. The per-step dicts are read (the 25th at
    step 250: 62.3 s x 4.8 steps/s = 300 steps, 10 per log); the block is not: no eval_loss."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", run_clm_console()))
    assert_healthy_loss(a)
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", run_clm_console(nan_at=25))), 250)
    assert "eval_loss" in a.timeline.metrics, sorted(a.timeline.metrics)


# --- HF course: Accelerate loop ---------------------------------------------------------------------------------


def course_accelerate_console(nan_at=None):
    """HF course chapter7/6 (training a causal LM from scratch, Accelerate loop): every 100 micro-batches
    `accelerator.print({"lr": get_lr(), "samples": step * samples_per_step, "steps": completed_steps, "loss/train":
    loss.item() * gradient_accumulation_steps})`; after an eval `accelerator.print({"loss/eval": eval_loss,
    "perplexity": perplexity})`. gradient_accumulation_steps 8, so `steps` = (step - 1) // 8."""
    out = []
    for i, v in enumerate(losses(nan_at), 1):
        step = i * 100
        out.append(str({"lr": lr(i), "samples": step * 256, "steps": (step - 1) // 8, "loss/train": v}))
        if i % 10 == 0:
            e = 2.4 - i * 0.03
            out.append(str({"loss/eval": e, "perplexity": math.exp(e)}))
    return "\n".join(out) + "\n"


def test_hf_course_accelerate_loss_train_dicts_are_read_and_a_nan_is_broken(tmp_path):
    """HF course chapters/en/chapter7/6.mdx (the Accelerate training loop): `{'lr': 3.75e-05, 'samples': 640000,
    'steps': 312, 'loss/train': nan}`; the step is the dict's `steps` key ((2500 - 1) // 8 = 312 for the 25th).
    The tool: 'no training logs or checkpoints found'; given by name, 'nothing readable'."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", course_accelerate_console()))
    assert_healthy_loss(a)
    assert "eval_loss" in a.timeline.metrics
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", course_accelerate_console(25))), 312)


# --- mlx-examples lora.py (older), lit-llama, gpt-2-simple ---------------------------------------------------------


def mlx_examples_lora_console(nan_at=None):
    """ml-explore/mlx-examples lora/lora.py (2023-24) train(): `print(f"Iter {it + 1}: Train loss {train_loss:.3f},
    It/sec {...:.3f}, Tokens/sec {...:.3f}")` every steps_per_report, `print(f"Iter {it + 1}: Val loss
    {val_loss:.3f}, Val took {...:.3f}s")` every steps_per_eval."""
    out = ["Loading pretrained model", "Total parameters 7243.436M", "Trainable parameters 1.704M", "Loading datasets",
           "Training", "Iter 1: Val loss 2.900, Val took 10.000s"]
    for s, v in enumerate(losses(nan_at), 1):
        out.append(f"Iter {s * 10}: Train loss {v:.3f}, It/sec 0.900, Tokens/sec 700.123")
        if s % 10 == 0:
            out.append(f"Iter {s * 10}: Val loss {2.4 - s * 0.03:.3f}, Val took 10.000s")
    return "\n".join(out) + "\n"


def test_mlx_examples_lora_iter_train_loss_is_read_and_a_nan_is_broken(tmp_path):
    """mlx-examples lora/lora.py train(): `Iter 250: Train loss nan, It/sec 0.900, Tokens/sec 700.123` (step 250 for
    the 25th report at steps_per_report 10)."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", mlx_examples_lora_console()))
    assert_healthy_loss(a)
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", mlx_examples_lora_console(25))), 250)


def lit_llama_console(nan_at=None):
    """lit-llama finetune/lora.py:145 `fabric.print(f"iter {iter_num}: loss {loss.item():.4f}, time:
    {dt*1000:.2f}ms")`, :133 `fabric.print(f"step {iter_num}: val loss {val_loss:.4f}")`."""
    out = []
    for s, v in enumerate(losses(nan_at), 1):
        out.append(f"iter {s}: loss {v:.4f}, time: 512.34ms")
        if s % 10 == 0:
            out.append("Validating ...")
            out.append(f"step {s}: val loss {2.4 - s * 0.03:.4f}")
            out.append("Saving LoRA weights to out/lora/alpaca")
    return "\n".join(out) + "\n"


def test_lit_llama_iter_loss_time_line_is_read_and_a_nan_is_broken(tmp_path):
    """lit-llama finetune/lora.py:145 (also adapter.py:166): `iter 25: loss nan, time: 512.34ms`."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", lit_llama_console()))
    assert_healthy_loss(a)
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", lit_llama_console(nan_at=25))), 25)


def gpt2_simple_console(nan_at=None):
    """gpt-2-simple gpt_2_simple/gpt_2.py:354-360 `'[{counter} | {time:2.2f}] loss={loss:2.2f} avg={avg:2.2f}'`
    every print_every steps; :266 `dataset has N tokens`, :267 `Training...`."""
    out = ["Loading checkpoint models/124M/model.ckpt", "Loading dataset...", "dataset has 338025 tokens",
           "Training..."]
    avg = (0.0, 0.0)
    for s, v in enumerate(losses(nan_at), 1):
        avg = (avg[0] * 0.99 + v, avg[1] * 0.99 + 1.0)
        out.append("[{counter} | {time:2.2f}] loss={loss:2.2f} avg={avg:2.2f}".format(
            counter=s * 10, time=s * 6.5, loss=v, avg=avg[0] / avg[1]))
    return "\n".join(out) + "\n"


def test_gpt2_simple_counter_loss_avg_line_is_read_and_a_nan_is_broken(tmp_path):
    """gpt-2-simple gpt_2.py:354-360: `[250 | 162.50] loss=nan avg=nan` (counter 250 for the 25th print at
    print_every 10). The tool: 'no training logs or checkpoints found'; given by name, 'nothing readable'."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", gpt2_simple_console()))
    assert "loss" in a.timeline.metrics, sorted(a.timeline.metrics)
    loss = a.timeline.series("loss")
    assert len(loss) == 30 and loss.iloc[0] > 2.4 and loss.iloc[-1] < 1.3  # two decimals: 2.48 at the first
    assert a.status == "healthy"
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", gpt2_simple_console(nan_at=25))), 250)
