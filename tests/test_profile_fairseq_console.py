"""A fairseq console's profile (fairseq_cli/train.py): the method from `num. model params: N (num. trained: M)` (every
weight trained is full; fewer is a frozen part, which fairseq's own count does not name: unknown) and the precision
from the cfg dict's 'common' group it prints first (fp16 / bf16 / amp / memory_efficient_* all False is fp32, one on
is that precision). The real case: Krish080403_Machine-Translation (fp32, full)."""
from __future__ import annotations

from pathlib import Path

from forensics.ingest import fairseq_config
from support.format_runs import analyze_logs, write_file

CASE = Path(__file__).parent / "realworld" / "Krish080403_Machine-Translation"
_STAMP = "2025-05-04 06:06:{:02d} | INFO | "


def _common(fp16=False, bf16=False, amp=False, mem_fp16=False):
    return ("{'_name': None, 'common': {'_name': None, 'no_progress_bar': False, 'log_interval': 2, 'seed': 222, "
            f"'cpu': False, 'tpu': False, 'bf16': {bf16}, 'memory_efficient_bf16': False, 'fp16': {fp16}, "
            f"'memory_efficient_fp16': {mem_fp16}, 'fp16_no_flatten_grads': False, 'fp16_init_scale': 128, "
            f"'amp': {amp}, 'amp_batch_retries': 2, 'user_dir': None}}, 'common_eval': {{'_name': None, "
            "'path': None}, 'model': Namespace(fp16=False, arch='transformer'), 'bpe': None}")


def _console(cfg: str, trained="176,834,560", shared=True):
    """The cfg line, the parameter count line and 30 train_inner lines of a falling loss (bits) of a
    fine-tune (it starts low: a loss of random weights would say full by itself)."""
    counted = "num. shared model params" if shared else "num. model params"
    lines = [_STAMP.format(0) + "fairseq_cli.train | " + cfg,
             _STAMP.format(1) + f"fairseq_cli.train | {counted}: 176,834,560 (num. trained: {trained})"]
    for n in range(1, 31):
        loss = 3.6 - 0.03 * n
        lines.append(_STAMP.format(2 + n) + f"train_inner | epoch 001:   {10 * n:4d} / 1158 loss={loss:.3f}, "
                     f"nll_loss={loss:.3f}, ppl={2 ** loss:.2f}, wps=1024.2, ups=0.56, wpb=1750, bsz=68, "
                     f"num_updates={10 * n}, lr=3e-05, gnorm=1.2, train_wall=4, gb_free=21.1, wall={14 + n}")
    return "\n".join(lines) + "\n"


def _profile(tmp_path, text):
    return analyze_logs(write_file(tmp_path, "train.log", text)).run_profile


def test_cfg_with_every_half_precision_flag_off_is_fp32(tmp_path):
    assert _profile(tmp_path, _console(_common())).precision == "fp32"


def test_cfg_with_fp16_on_stays_fp16(tmp_path):
    assert _profile(tmp_path, _console(_common(fp16=True))).precision == "fp16"


def test_cfg_with_amp_or_memory_efficient_fp16_on_is_fp16_not_fp32():
    assert fairseq_config.parse(_common(amp=True)) == {"fp16": True, "bf16": False}
    assert fairseq_config.parse(_common(mem_fp16=True)) == {"fp16": True, "bf16": False}


def test_cfg_with_bf16_on_is_bf16(tmp_path):
    assert _profile(tmp_path, _console(_common(bf16=True))).precision == "bf16"


def test_every_parameter_trained_is_full(tmp_path):
    profile = _profile(tmp_path, _console(_common(), shared=False))
    assert profile.method == "full"
    assert profile.model_params == 176_834_560


def test_fewer_trained_than_the_model_is_not_full_nor_an_adapter(tmp_path):
    for trained in ("150,000,000", "1,048,576"):  # a frozen encoder, a frozen all-but-the-head: fairseq has no adapter
        assert _profile(tmp_path, _console(_common(), trained=trained)).method == "unknown", trained


def test_a_line_without_the_cfg_dict_says_no_precision():
    assert fairseq_config.parse("{'_name': None, 'task': {'fp16': False}}") == {}


def test_real_fairseq_console_is_full_fp32():
    profile = analyze_logs(CASE).run_profile
    assert (profile.method, profile.precision, profile.model_params) == ("full", "fp32", 1_239_470_080)
