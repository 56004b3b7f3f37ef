"""Tests of learning evidence on short logs of window means (analyzers.learning_evidence, fall_measure, metrics)
and the fp32 precision of a model prepared for k-bit training (ingest.notebook_code).

Corpus batch AS72's short healthy fine-tunes: a short log of window means whose every later point is under its
first, their mean clearly under, learned (abdallaelmahdy_Transformer, lmaddalena_mistral-tutorial's pair means, and
soureeshdalal_finetuned-phi2's held-out loss); the noise a warning names is that of the series it read; a model loaded
with `torch_dtype=torch.bfloat16` then handed to peft's `prepare_model_for_kbit_training` trains in fp32 where no
mixed-precision flag is set (lmaddalena_mistral-tutorial)."""
from __future__ import annotations

import pytest

import forensics

_QLORA_LOAD = ("bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)\n"
               "model = AutoModelForCausalLM.from_pretrained('mistral-7b', quantization_config=bnb, "
               "torch_dtype=torch.bfloat16)\n")
_TRAIN = ("args = TrainingArguments(output_dir='out', fp16=False, bf16=False)\n"
          "trainer = SFTTrainer(model=model, args=args, peft_config=LoraConfig(r=64))\ntrainer.train()")


@pytest.mark.parametrize("prepare, precision", [
    ("model = prepare_model_for_kbit_training(model)\n", "fp32"),  # lmaddalena: its half weights cast to float32
    ("", "bf16"),  # without it the weights stay in bfloat16 and train so (weiyuli20, batch AI8)
])
def test_a_model_prepared_for_kbit_training_trains_in_fp32_whatever_dtype_it_loaded_in(tmp_path, prepare, precision):
    from support.review_runs import training_notebook

    folder = training_notebook(tmp_path / "nb", [_QLORA_LOAD + prepare + _TRAIN])
    assert forensics.analyze(folder).run_profile.precision == precision


def _warned(values, steps) -> list:
    import pandas as pd

    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    from forensics.config import Thresholds

    return detect_no_learning_evidence({"loss": pd.Series(values, index=steps, dtype="float64")}, Thresholds())


_WINDOWS = [25, 50, 75, 100, 125]


def test_a_short_log_of_windows_each_under_its_first_learned():
    # abdallaelmahdy_Transformer: one pass over 1,000 examples, logged every 25 steps; the last window rose again
    assert _warned([1.5104, 1.4588, 1.3175, 1.3569, 1.4149], _WINDOWS) == []


def test_a_length_grouped_sawtooth_whose_pair_means_fall_learned():
    # lmaddalena_mistral-tutorial: group_by_length swings by turns; pair means 1.349, 1.214, 1.152, 1.172, 1.171
    raw = [1.0346, 1.6637, 1.0741, 1.3532, 1.0504, 1.2527, 1.0513, 1.2937, 1.0038, 1.3383]
    assert _warned(raw, list(range(25, 251, 25))) == []


def test_the_evidence_of_a_short_log_of_windows_runs_from_its_first_to_the_mean_of_the_later_ones():
    import pandas as pd

    from forensics.analyzers.learning_evidence import learning_shown
    from forensics.config import Thresholds

    loss = pd.Series([1.5104, 1.4588, 1.3175, 1.3569, 1.4149], index=_WINDOWS)
    shown = learning_shown({"loss": loss}, Thresholds())
    later = (1.4588 + 1.3175 + 1.3569 + 1.4149) / 4
    assert (shown.metric, shown.start, shown.end) == ("loss", 1.5104, pytest.approx(later))


def test_a_held_out_loss_whose_later_evaluations_are_each_under_its_first_shows_learning():
    # soureeshdalal_finetuned-phi2: one-step training losses at each evaluation, the validation loss 0.7413 -> 0.6575
    # (min) -> 0.6803 (last); the warning said 'no eval loss fell either'
    import pandas as pd

    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    from forensics.config import Thresholds

    steps = [36, 72, 108, 144, 180]
    run = {"loss": pd.Series([0.6093, 0.8043, 0.9194, 0.7057, 0.4706], index=steps),
           "eval_loss": pd.Series([0.7413, 0.6781, 0.6747, 0.6575, 0.6803], index=steps)}
    assert detect_no_learning_evidence(run, Thresholds()) == []


@pytest.mark.parametrize("values, steps", [
    ([1.5104, 1.4588, 1.3175, 1.3569, 1.4149], [1, 2, 3, 4, 5]),  # single steps, not windows (hiyouga_issue669)
    ([1.113, 1.079, 1.047, 1.163], [10, 20, 30, 40]),  # a later window above the first (sairaamspage's kind)
    ([3.5678, 3.5449, 3.54, 3.5425, 3.5397, 3.5388], [100, 200, 300, 400, 500, 600]),  # 0.7% under (faezeh)
    ([3.2387, 2.4802, 3.0505, 2.479, 2.7807, 1.821], [10, 20, 30, 40, 50, 60]),  # swings of 1.4 units (mlx-lm_pr326)
])
def test_a_short_log_whose_later_windows_are_not_clearly_under_its_first_still_warns(values, steps):
    assert [f.kind for f in _warned(values, steps)] == ["no_learning_evidence"]


def test_the_noise_a_warning_names_for_a_loss_swinging_by_turns_is_that_of_its_pair_means():
    import re

    from forensics.analyzers.fall_measure import pair_means_if_alternating
    from forensics.analyzers.metrics import point_noise
    import pandas as pd

    pair_means = [1.30, 1.36, 1.25, 1.33, 1.24, 1.31, 1.27, 1.22, 1.30, 1.24, 1.28, 1.25]  # 1.30 -> 1.25, noisily
    values = [mean + swing for mean in pair_means for swing in (-0.3, 0.3)]  # short and long batches by turns
    steps = list(range(10, 10 * len(values) + 1, 10))
    (found,) = _warned(values, steps)
    said = float(re.search(r"about ([0-9.]+) a point", found.message).group(1))
    pairs = pair_means_if_alternating(pd.Series(values, index=steps))
    assert said == pytest.approx(point_noise(pairs.to_numpy()), rel=0.01) and said < 0.1  # (the raw swings: ~0.4)
