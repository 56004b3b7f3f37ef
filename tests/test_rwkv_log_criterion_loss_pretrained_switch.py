"""Tests of RWKV-LM's train_log.txt (ingest.rwkv_args), a loss printed under its criterion's name
(ingest.pretrain_lines) and a script's `pretrained` switch (ingest.namespace_args).

Corpus batch AS33's misread logs: RWKV-LM's train_log.txt (Renata1214_rwkv-modbus-finetune), a hand-written loop's
per-step `CrossEntropyLoss: X` lines and its Namespace's `pretrained=''` (styxjedi_ada-self-attn-defseq)."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import namespace_args, rwkv_args
from forensics.ingest.pretrain_lines import parse_line

CORPUS = Path(__file__).parent / "realworld"


def _rwkv_args(precision, peft: str = "disha", quant: str = "none") -> str:
    return ("{'load_model': '/models/RWKV-5-World-0.4B-v2-20231113-ctx4096.pth', 'proj_dir': 'out/ft', "
            f"'data_type': 'sft', 'vocab_size': 65536, 'ctx_len': 512, 'epoch_steps': 100, 'epoch_count': 5, "
            f"'micro_bsz': 1, 'lr_init': 6e-05, 'lr_final': 1e-05, 'warmup_steps': 10, 'peft': '{peft}', "
            "'train_parts': ['time', 'ln'], 'lora_config': {'lora_load': '', 'lora_r': 8, 'lora_alpha': 32}, "
            f"'disha_config': {{'mode': 'bone', 'r': 32, 'load': ''}}, 'quant': '{quant}', 'strategy': 'deepspeed', "
            f"'precision': {precision!r}, 'max_epochs': 5, 'betas': (0.9, 0.99), 'gradient_clip_val': 1.0}}")


def _deepspeed(dtype: str) -> str:
    return ("{'zero_optimization': {'stage': 2, 'contiguous_gradients': True}, 'gradient_accumulation_steps': 1, "
            f"'train_micro_batch_size_per_gpu': 1, 'gradient_clipping': 1.0, '{dtype}': {{'enabled': True}}}}")


EPOCHS = ((1.179688, 3.2534), (0.515625, 1.6747), (0.339844, 1.4047), (0.251953, 1.2865), (0.174805, 1.1910))


def _train_log(launches) -> str:
    """RWKV-LM's train_log.txt: per launch its head, arguments and DeepSpeed config, then its mini-epoch lines."""
    text = ""
    for stamp, precision, dtype, epochs in launches:
        text += f"NEW RUN {stamp}\n{_rwkv_args(precision)}\n{_deepspeed(dtype)}\n"
        text += "".join(f"{e} {loss:.6f} {ppl:.4f} {1.001e-05 if e == 0 else 1e-05:.8f} 2025-05-30 18:1{e}:20.796917 {e}\n"
                        for e, (loss, ppl) in enumerate(EPOCHS[:epochs]))
    return text


def test_rwkvs_train_log_is_read_at_its_mini_epochs_and_profiled_from_its_last_launch(tmp_path: Path):
    """An fp16 launch that wrote no loss, a bf16 launch cut after 3 mini-epochs, the bf16 relaunch that finished: the
    loss of the last launch at mini-epochs 0-4, and the profile its arguments and DeepSpeed config say."""
    (tmp_path / "train_log.txt").write_text(_train_log([("2025-05-27-10-32-22", 16, "fp16", 0),
                                                        ("2025-05-30-08-45-44", "bf16", "bf16", 3),
                                                        ("2025-05-30-18-11-54", "bf16", "bf16", 5)]))
    a = forensics.analyze(tmp_path)
    loss = a.timeline.series("loss")
    assert list(loss.index) == [0, 1, 2, 3, 4] and list(loss) == [loss for loss, _ in EPOCHS]
    assert a.status == "healthy" and a.first_incident is None
    profile = a.run_profile
    assert (profile.method, profile.objective, profile.framework, profile.precision) == ("peft", "sft", "deepspeed",
                                                                                          "bf16")
    assert a.config.get("learning_rate") == 6e-05 and "RWKV" in a.config.source_of("learning_rate")


def test_the_real_rwkv_peft_log_reads_as_its_ten_finished_launches_did():
    a = forensics.analyze(CORPUS / "Renata1214_rwkv-modbus-finetune")
    assert a.status == "healthy" and list(a.timeline.series("loss").round(6)) == [loss for loss, _ in EPOCHS]
    assert (a.run_profile.method, a.run_profile.precision) == ("peft", "bf16")


def test_rwkv_arguments_name_an_adapter_only_where_one_is_set():
    def method(**args):
        return rwkv_args.config_values({"args": args}).get("method")

    assert method(peft="lora", quant="none") == "lora" and method(peft="pissa", quant="nf4") == "qlora"
    assert method(peft="disha") == "peft" and method(peft="none", train_type="state") == "peft"
    assert method(peft="none", train_type="none") is None and method(lora_r=8) is None  # RWKV-LM trained whole: unsaid
    assert rwkv_args.parse("NEW RUN 2025-05-27-10-32-22\n{'peft': __import__('os').getcwd()}\n") == {}  # never run


def test_a_line_of_numbers_without_rwkvs_fixed_decimals_and_time_is_not_read_as_one():
    assert parse_line("0 1.179688 3.2534 0.00001001 2025-05-27 10:59:28.237880 0").kind == "rwkv"
    for other in ("0 1.18 3.25 0.00001 2025-05-27 10:59:28 0", "2025-05-27 10:59:28.237880 0 1.179688 3.2534",
                  "0 1.179688 3.2534 0.00001001 0"):
        record = parse_line(other)
        assert record is None or record.kind != "rwkv", other


def test_a_loss_printed_under_its_criterions_name_is_the_loss():
    record = parse_line("Epoch [1/100], Step [10/734], CrossEntropyLoss: 10.6802, Perplexity: 43486.9354")
    assert (record.kind, record.step, dict(record.metrics)["loss"]) == ("generic", 10, 10.6802)
    assert dict(parse_line("step 5 | cross_entropy_loss 2.1 | lr 1e-4").metrics)["loss"] == 2.1


def test_a_plain_loss_beside_the_cross_entropy_term_stays_the_loss():
    """A loop that prints its objective's terms (`cross_entropy_loss` and a KL) beside their sum, `loss`, in any order."""
    for line in ("step 5 cross_entropy_loss: 2.1 kl: 0.3 loss: 2.4", "step 5 loss: 2.4 cross_entropy_loss: 2.1"):
        assert dict(parse_line(line).metrics)["loss"] == 2.4, line


def test_the_definition_generators_per_step_losses_are_read():
    a = forensics.analyze(CORPUS / "styxjedi_ada-self-attn-defseq")
    loss = a.timeline.series("loss")
    assert len(loss) == 3139 and loss.iloc[0] == 10.6802


NAMESPACE = ("Namespace(batch_size=128, encoder_layers=6, hidden_size=300, learning_rate=0.001, model_name='l2-1e-4', "
             "num_epochs=100, pretrained='', pretrained_word_emb_path='data/word_matrix.npy', vocab_size=43648)")


def test_a_scripts_pretrained_switch_left_off_says_its_model_is_trained_whole(tmp_path: Path):
    (tmp_path / "training_log.txt").write_text(NAMESPACE + "\n" + "".join(
        f"Epoch [1/100], Step [{s}/734], CrossEntropyLoss: {4 - s / 400:.4f}, Perplexity: 20.0\n"
        for s in range(10, 740, 10)))
    profile = forensics.analyze(tmp_path).run_profile
    assert profile.method == "full" and "pretrained=''" in profile.evidence["method"]


def test_a_pretrained_switch_says_nothing_where_it_is_on_or_an_adapter_is_set():
    assert namespace_args.pretrained_switched_off(namespace_args.parse(NAMESPACE)) == "pretrained=''"
    for other in ("pretrained='bert-base-uncased'", "pretrained=True"):
        assert namespace_args.pretrained_switched_off(namespace_args.parse(
            NAMESPACE.replace("pretrained=''", other))) is None, other
    assert namespace_args.pretrained_switched_off(namespace_args.parse(
        NAMESPACE.replace("num_epochs=100", "lora_r=8"))) is None
    assert namespace_args.pretrained_switched_off(namespace_args.parse(
        NAMESPACE.replace("num_epochs=100", "use_lora=False"))) == "pretrained=''"
