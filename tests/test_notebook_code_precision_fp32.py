"""Tests of the notebook code reader (ingest/notebook_code.py): where fp32 is not said.

From the adversarial review of ca9d85f..HEAD (rules 1-8 of the day's second batch). A failing test was a
misfire; passing tests record shapes that held."""
from __future__ import annotations

import pytest
from forensics.ingest.notebook_code import code_values


def _cells(*sources):
    return [{"cell_type": "code", "execution_count": i + 1, "metadata": {}, "source": s, "outputs": []}
            for i, s in enumerate(sources)]


# ---- (2) a notebook that trains in float32 by default ----------------------------------------------------------------

_FP32_MISREAD = {
    "deepspeed_config_file": ("model_engine, opt, _, _ = deepspeed.initialize(model=model, config='ds_config.json')\n"
                              "for batch in loader:\n    loss = model_engine(batch)\n    model_engine.backward(loss)\n"
                              "    model_engine.step()\n"),
    "lightning_precision_in_a_dict": ("import lightning as L\ncfg = {'max_epochs': 3, 'precision': '16-mixed'}\n"
                                      "trainer = L.Trainer(**cfg)\ntrainer.fit(model, datamodule=dm)\n"),
    "lightning_trainer_from_yaml": ("import yaml\nimport pytorch_lightning as pl\n"
                                    "cfg = yaml.safe_load(open('config.yaml'))\ntrainer = pl.Trainer(**cfg['trainer'])\n"
                                    "trainer.fit(model)\n"),
    "trainer_args_from_json_beside_an_sklearn_fit": (
        "le = LabelEncoder()\nle.fit(df['label'])\nargs = TrainingArguments(**json.load(open('args.json')))\n"
        "trainer = Trainer(model=model, args=args, train_dataset=ds)\ntrainer.train()\n"),
    "xla_bf16_env": ("import os\nos.environ['XLA_USE_BF16'] = '1'\nimport torch_xla.core.xla_model as xm\n"
                     "for b in loader:\n    loss = model(b)\n    loss.backward()\n    xm.optimizer_step(opt)\n"),
}


@pytest.mark.parametrize("case", sorted(_FP32_MISREAD))
def test_a_notebook_whose_precision_comes_from_elsewhere_is_not_said_fp32(case):
    """A notebook that trains in its own code (`.backward(...)`, `.fit(...)`) but takes its precision from a config
    file, a dict unpacked into the trainer, or an environment variable: DeepSpeed's `config='ds_config.json'`
    (fp16.enabled in the JSON), Lightning's `Trainer(**cfg)` with `'precision': '16-mixed'`, XLA_USE_BF16 on a TPU.
    The tool sets precision.default_fp32 and the profile says fp32. Fix: forensics/ingest/notebook_code.py:
    _trains_in_default_float32 (a training call's object built from `**kwargs` / a config path, `deepspeed.
    initialize`, `XLA_USE_BF16`, a `'precision'` key: no default known; the `**` check must cover the backward/fit
    path, not only the Trainer path)."""
    assert code_values(_cells(_FP32_MISREAD[case]), "").get("precision.default_fp32") is None


@pytest.mark.parametrize("src", [
    "model = model.to(torch.float16)\nloss.backward()\n",
    "torch.set_default_dtype(torch.bfloat16)\nloss.backward()\n",
    "from tensorflow.keras import mixed_precision\nmixed_precision.set_global_policy('mixed_float16')\nmodel.fit(x, y)\n",
    "accelerator = Accelerator(mixed_precision='fp16')\naccelerator.backward(loss)\n",
    "trainer = L.Trainer(precision='bf16-mixed')\ntrainer.fit(model)\n",
    "!python train.py --epochs 3\nloss.backward()\n",
])
def test_lower_precision_notebooks_that_held(src):
    assert code_values(_cells(src), "").get("precision.default_fp32") is None
