"""Tests of the notebook code reader (ingest/notebook_code.py): pretrained bases that are no
pre-training, fp32 of a classifier.

From the adversarial review of b03625a..HEAD (notebook from-scratch / fp32 rules, pairwise epochs, ORPO keys).
A failing test was a misfire; passing tests record shapes that held."""
from __future__ import annotations

import forensics
from forensics.ingest.notebook_code import code_values
from tests.support.review_runs import training_notebook


def _cells(*sources):
    return [{"cell_type": "code", "execution_count": i + 1, "metadata": {}, "source": s, "outputs": []}
            for i, s in enumerate(sources)]


def _profile(folder):
    return forensics.analyze(folder, check_checkpoints=False).run_profile


# ---- (1) model.built_here: a notebook that fine-tunes weights it loads is no pre-training ----------------------------


def test_llms_from_scratch_ch5_gpt_model_given_openai_weights_is_no_pretraining(tmp_path):
    """"Build a LLM from scratch" chapter 5 / 6 / 7 notebooks: `settings, params = download_and_load_gpt2("124M")`
    (its own gpt_download module), `model = GPTModel(BASE_CONFIG)`, `load_weights_into_gpt(model, params)`, then a
    hand-written loop fine-tunes it (classification / instruction SFT). The tool says objective pretrain, method full
    ("the notebook builds its model (GPTModel) and loads no trained weights"). Fix: forensics/ingest/notebook_code.py:
    _loads_weights (a call whose name says it loads weights or a pretrained model: `load_weights_into_*`,
    `download_and_load_*`, `load_gpt2`, any `*load*` helper of the notebook's own modules)."""
    folder = training_notebook(tmp_path / "run", [
        "from gpt_download import download_and_load_gpt2\nfrom previous_chapters import GPTModel, load_weights_into_gpt",
        "settings, params = download_and_load_gpt2(model_size='124M', models_dir='gpt2')\n"
        "model = GPTModel(BASE_CONFIG)\nload_weights_into_gpt(model, params)\nmodel.eval()",
        "for epoch in range(2):\n    for x, y in train_loader:\n        loss = calc_loss_batch(x, y, model, device)\n"
        "        loss.backward()\n        optimizer.step()",
    ])
    assert _profile(folder).objective != "pretrain"


def test_a_network_wrapping_a_timm_or_torchvision_pretrained_backbone_is_no_pretraining():
    """A vision / CLIP-style fine-tune: `class Net(nn.Module)` whose `__init__` takes
    `timm.create_model("resnet50", pretrained=True)` (or `torchvision.models.resnet50(weights="IMAGENET1K_V1")`),
    then a `loss.backward()` loop. The tool sets model.built_here = "Net" (-> pretrain, full). Fix:
    forensics/ingest/notebook_code.py:_loads_weights (`pretrained=True`, `weights=<anything but None>` keywords load
    trained weights)."""
    for backbone in ("timm.create_model('resnet50', pretrained=True)",
                     "torchvision.models.resnet50(weights='IMAGENET1K_V1')"):
        values = code_values(_cells(
            "import timm, torchvision\nimport torch.nn as nn",
            f"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.backbone = {backbone}\n"
            "        self.head = nn.Linear(1000, 10)\n\nmodel = Net()",
            "loss = crit(model(x), y)\nloss.backward()\nopt.step()"), "")
        assert "model.built_here" not in values, backbone


def test_keras_sequential_over_an_imagenet_or_hub_layer_is_no_pretraining():
    """A Keras transfer-learning notebook: `base = ResNet50(weights="imagenet", include_top=False)` or
    `hub.KerasLayer("https://tfhub.dev/...")` or keras_nlp's `GPT2Backbone.from_preset(...)`, stacked in
    `Sequential([...])`, then `model.fit(...)`. The tool sets model.built_here = "Sequential" (-> pretrain, full).
    Fix: forensics/ingest/notebook_code.py:_loads_weights (`weights="imagenet"`, `hub.KerasLayer`, `from_preset`)."""
    for layer in ("tf.keras.applications.ResNet50(weights='imagenet', include_top=False)",
                  "hub.KerasLayer('https://tfhub.dev/google/nnlm-en-dim50/2', trainable=True)",
                  "keras_nlp.models.GPT2Backbone.from_preset('gpt2_base_en')"):
        values = code_values(_cells(
            "import tensorflow as tf\nimport tensorflow_hub as hub\nimport keras_nlp",
            f"base = {layer}\nmodel = tf.keras.Sequential([base, tf.keras.layers.Dense(2)])",
            "model.compile(optimizer='adam', loss='sparse_categorical_crossentropy')\nmodel.fit(x, y, epochs=3)"), "")
        assert "model.built_here" not in values, layer


def test_a_head_trained_on_a_pretrained_encoder_loaded_by_other_calls_is_no_pretraining():
    """A probe / head over a frozen pretrained model loaded by calls outside the list: `clip.load("ViT-B/32")`,
    `SentenceTransformer("all-MiniLM-L6-v2")`, safetensors' `load_file(...)`, `th.load(...)` with torch imported as
    th, `from torch import load`. The tool sets model.built_here to the head's class (-> pretrain, full). Fix:
    forensics/ingest/notebook_code.py:_loads_weights (a load's owner by its import alias; `load_file`, `clip.load`,
    a SentenceTransformer given a name)."""
    for loader in ("import clip\nenc, preprocess = clip.load('ViT-B/32')",
                   "from sentence_transformers import SentenceTransformer\nenc = SentenceTransformer('all-MiniLM-L6-v2')",
                   "from safetensors.torch import load_file\nstate = load_file('model.safetensors')",
                   "import torch as th\nstate = th.load('encoder.pt')",
                   "from torch import load\nstate = load('encoder.pt')"):
        values = code_values(_cells(
            loader,
            "class Probe(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(512, 2)\n"
            "probe = Probe()",
            "loss = crit(probe(feats), y)\nloss.backward()\nopt.step()"), "")
        assert "model.built_here" not in values, loader


# ---- (2) precision.default_fp32 ---------------------------------------------------------------------------------------


def test_a_classifier_reporting_precision_metrics_still_trains_in_fp32():
    """A plain fp32 BERT-classification loop (no autocast, no half) whose evaluation computes
    `precision_recall_fscore_support` / `precision_score`, or a Lightning `Trainer(accelerator="gpu")` with no precision
    asked (Lightning's default is 32): the widened _LOWER_PRECISION_WORDS (`precision` anywhere, `accelerator`) now
    drops fp32 for them; before a220f5a it said fp32. A gap reopened, not a misfire. Fix:
    forensics/ingest/notebook_code.py:_LOWER_PRECISION_WORDS (`precision` as a keyword / key, not a metric's name;
    `Accelerator(` / `accelerate`, not Lightning's `accelerator=`)."""
    values = code_values(_cells(
        "from sklearn.metrics import precision_recall_fscore_support, accuracy_score",
        "for batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n    optimizer.step()",
        "p, r, f1, _ = precision_recall_fscore_support(labels, preds, average='binary')"), "")
    assert values.get("precision.default_fp32") is True


# ---- (1) shapes that held -----------------------------------------------------------------------------------------------


def test_shapes_that_held_for_built_here():
    """from_pretrained anywhere (even inside a class body), torch.load + load_state_dict, a Lightning
    load_from_checkpoint, keras load_model / load_weights, a tf.train.Checkpoint restore: no built_here.
    A library class given a config alone (LlamaForCausalLM(LlamaConfig(...))): built here."""
    loaded = [
        "class C(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.bert = BertModel.from_pretrained('bert-base-uncased')\nm = C()\nloss.backward()",
        "model = GPT(conf)\nckpt = torch.load(p)\nmodel.load_state_dict(ckpt['model'])\nloss.backward()",
        "m = LitModel.load_from_checkpoint('x.ckpt')\ntrainer.fit(m)",
        "model = tf.keras.Sequential([Dense(1)])\nmodel.load_weights('w.h5')\nmodel.fit(x, y)",
        "model = Sequential([Dense(1)])\nck = tf.train.Checkpoint(model=model)\nck.restore(mgr.latest_checkpoint)\nmodel.fit(x)",
    ]
    for src in loaded:
        assert "model.built_here" not in code_values(_cells(src), ""), src
    built = code_values(_cells("model = LlamaForCausalLM(LlamaConfig(hidden_size=256))\ntrainer.train()"), "")
    assert built.get("model.built_here") == "LlamaForCausalLM"


def test_a_model_class_from_the_notebooks_own_module_that_loads_a_backbone_out_of_sight_is_no_pretraining():
    """A Kaggle competition notebook: `from src.models import CustomModel`, `model = CustomModel(CFG)` (whose
    `__init__`, in src/models.py beside the notebook, does `AutoModel.from_pretrained(cfg.model)`), then a
    `loss.backward()` loop. The notebook's code cannot see the load, so nothing says from scratch; the tool sets
    model.built_here = "CustomModel" (-> pretrain, full). Fix: forensics/ingest/notebook_code.py:_builds_a_model
    (an own module's class is built here only where its source beside the notebook is read and loads nothing, or
    not at all)."""
    values = code_values(_cells(
        "from src.models import CustomModel",
        "model = CustomModel(CFG)\nfor batch in loader:\n    loss = model(batch)\n    loss.backward()\n    opt.step()"), "")
    assert "model.built_here" not in values
