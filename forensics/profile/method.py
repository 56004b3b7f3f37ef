"""The profile's method: full, lora, qlora or peft, from the config, DeepSpeed-Chat's --lora_dim, trained weights a
Megatron console loads, a model built from scratch (OpenNMT-py's build with no checkpoint loaded too), the trainers'
banners, a script's arguments that switch a pre-trained model off, the words in the run's own names, then a console
that saves the trained model whole (in shards, into its output_dir), and last a README that says its model was trained
from scratch."""
from __future__ import annotations

from ..config import RunConfig
from ..timeline import Timeline
from .model_start import _console_from_scratch, megatron_trained_start, readme_from_scratch
from .names import word_in
from .objective import DSCHAT_OBJECTIVES
from .record import UNKNOWN
from .size import ESTIMATE_SHARE
from .trainer_card import card_method

# (DoRA, AdaLoRA, LongLoRA, LoRA+, rsLoRA, PiSSA, OLoRA, MiLoRA; CLoRA: OddFunction0205's clora- run)
_LORA_VARIANTS = ("clora", "dora", "adalora", "longlora", "loraplus", "rslora", "pissa", "olora", "milora")
# (QDoRA: a DoRA adapter on a 4-bit base, as QLoRA is a LoRA on one; `q-lora` read before `lora` finds its tail)
_QUANTIZED_ADAPTER_WORDS = ("qlora", "q-lora", "qdora", "q-dora")
_METHOD_WORDS = tuple((w, "qlora") for w in _QUANTIZED_ADAPTER_WORDS) + (("lora", "lora"),) + tuple(
    (w, "lora") for w in _LORA_VARIANTS) + (("full", "full"),)
ADAPTERS = ("lora", "qlora", "peft")


def _method(config: RunConfig, timeline: Timeline, names, evidence: dict, model_params: int | None = None) -> str:
    for step in (_said_in_config, _deepspeed_chat_lora_dim, _megatron_loaded, _built_with_random_weights,
                 _from_banners, _pretrained_switched_off, _named_in_the_run, _from_the_saved_model):
        found = step(config, timeline, names, evidence, model_params)
        if found is not None:
            return found
    return _readme_from_scratch(config, timeline, evidence)


def _said_in_config(config: RunConfig, timeline: Timeline, names, evidence: dict,
                    model_params: int | None) -> str | None:
    """The method a configuration file names."""
    said = config.get("method")
    if said in ("full", "lora", "qlora", "peft"):
        evidence["method"] = str(config.source_of("method"))
        return said
    return None


def _deepspeed_chat_lora_dim(config: RunConfig, timeline: Timeline, names, evidence: dict,
                             model_params: int | None) -> str | None:
    """DeepSpeed-Chat's --lora_dim, where its step lines show the run is DeepSpeed-Chat's."""
    chat = next(((src, m) for src, m in timeline.meta.items() if "console_lora_dim" in m), None)
    if chat is not None and any(kind in DSCHAT_OBJECTIVES for kind in timeline.console_kinds):
        evidence["method"] = (f"DeepSpeed-Chat trains every weight unless a --lora_dim (step 3: --actor_lora_dim) "
                              f"is given ({chat[0]}: {chat[1]['console_lora_dim_line'][:120]})")
        return "lora" if chat[1]["console_lora_dim"] > 0 else "full"
    return None


def _megatron_loaded(config: RunConfig, timeline: Timeline, names, evidence: dict,
                     model_params: int | None) -> str | None:
    """"full" where a Megatron console shows trained weights loaded at iteration 0 and names no adapter."""
    loaded = megatron_trained_start(timeline)
    if loaded is not None and not any(m.get("console_lora_named") for m in timeline.meta.values()):
        # Megatron-LM's and Megatron-DeepSpeed's training scripts update every weight of the model they load
        evidence["method"] = (f"Megatron loads trained weights and trains them all ({loaded[0]}: {loaded[1][:120]}), "
                              "no adapter named")
        return "full"
    return None


def _built_with_random_weights(config: RunConfig, timeline: Timeline, names, evidence: dict,
                               model_params: int | None) -> str | None:
    """"full" where a console shows the model built from scratch, by OpenNMT-py with no checkpoint loaded, or by the
    TensorFlow seq2seq tutorial's create_model with none found."""
    scratch = _console_from_scratch(timeline)
    if scratch is not None:  # random weights: every one of them is trained
        evidence["method"] = f"a model built from scratch ({scratch[0]}: {scratch[1]}): every weight trained"
        return "full"
    onmt = next(((src, m["console_onmt_fresh"]) for src, m in timeline.meta.items() if m.get("console_onmt_fresh")),
                None)
    if onmt is not None:
        evidence["method"] = (f"OpenNMT-py builds its model ({onmt[0]}: {onmt[1]}) with no 'Loading checkpoint from' "
                              "line: random weights, every one trained")
        return "full"
    tf_fresh = next(((src, m["console_tf_fresh"]) for src, m in timeline.meta.items() if m.get("console_tf_fresh")),
                    None)
    if tf_fresh is not None:
        evidence["method"] = (f"the TensorFlow seq2seq tutorial's create_model found no checkpoint ({tf_fresh[0]}: "
                              f"{tf_fresh[1]}): random weights, every one trained")
        return "full"
    return None


def _from_banners(config: RunConfig, timeline: Timeline, names, evidence: dict, model_params: int | None) -> str | None:
    """The first trainer banner that tells: a LoRA-only trainer's, or a count of the trainable parameters against the
    model's (all of them: full; a small share: an adapter)."""
    for banner in timeline.banners:
        if banner.kind == "webui":
            evidence["method"] = (f"text-generation-webui LoRA training in {banner.source} "
                                  "(it trains LoRA adapters only)")
            return "lora"
        if banner.kind == "mlx_lora":
            evidence["method"] = (f"mlx-examples' lora.py in {banner.source} (it trains LoRA adapters only): "
                                  f"{banner.text.replace(chr(10), '; ')}")
            return "lora"
        if banner.kind == "fairseq" and banner.trainable_params != banner.all_params:
            continue  # fairseq has no adapters: fewer trained is a frozen part (encoder, embeddings), not an adapter
        if banner.trainable_params and banner.all_params and banner.trainable_params < 0.5 * banner.all_params:
            evidence["method"] = f"{banner.kind} banner in {banner.where}: {banner.trainable_params:,} of " \
                                 f"{banner.all_params:,} parameters trainable"
            return _adapter_kind(banner, names, timeline, evidence)
        if banner.trainable_params and banner.trainable_params == banner.all_params:
            evidence["method"] = (f"{banner.kind} banner in {banner.where}: "
                                  f"all {banner.all_params:,} parameters trainable")
            return "full"
        if banner.trainable_params and not banner.all_params and model_params \
                and banner.trainable_params >= (1 - ESTIMATE_SHARE) * model_params:
            evidence["method"] = (f"{banner.kind} banner in {banner.where}: {banner.trainable_params:,} trainable "
                                  f"parameters, the whole model (its size: see model_params)")
            return "full"
        if banner.trainable_params and not banner.all_params and model_params \
                and banner.trainable_params < 0.05 * model_params:  # Unsloth states the trainable count alone
            evidence["method"] = (f"{banner.kind} banner in {banner.where}: {banner.trainable_params:,} trainable "
                                  f"parameters of a model of about {model_params:,} ({evidence.get('model_params')})")
            return _adapter_kind(banner, names, timeline, evidence)
    return None


def _pretrained_switched_off(config: RunConfig, timeline: Timeline, names, evidence: dict,
                             model_params: int | None) -> str | None:
    """"full" where the script's own arguments switch a pre-trained model off: they outrank the words in the run's
    names."""
    switched_off = config.get("model.pretrained_off")
    if isinstance(switched_off, str):  # the script's own switch: arguments outrank the words in the run's names
        evidence["method"] = (f"the script's arguments switch a pre-trained model off ({switched_off}, "
                              f"{config.source_of('model.pretrained_off')}) and set no adapter: the model it builds "
                              "is trained whole")
        return "full"
    return None


def _named_in_the_run(config: RunConfig, timeline: Timeline, names, evidence: dict,
                      model_params: int | None) -> str | None:
    """The method a word in the run's own names says (`qlora`, `lora` and its variants, `full`)."""
    for word, method in _METHOD_WORDS:
        found = word_in(names, word)
        if found:
            evidence["method"] = found
            return method
    return None


def _from_the_saved_model(config: RunConfig, timeline: Timeline, names, evidence: dict,
                          model_params: int | None) -> str | None:
    """An adapter the console saves, the method the Trainer's model card shows, or the model saved whole in shards
    into the run's output_dir; None where none of them tells."""
    found = _console_saves_an_adapter(names, timeline, evidence) or card_method(timeline, evidence) \
        or _saved_whole_into_output_dir(config, timeline, evidence)
    return found if found != UNKNOWN else None


README_FROM_SCRATCH = "the README says the model was trained from scratch"


def _readme_from_scratch(config: RunConfig, timeline: Timeline, evidence: dict) -> str:
    """"full" where a README of the run says in so many words its model was trained from scratch and nothing shows a
    trained start (`model_start.readme_from_scratch`): random weights are trained whole. Prose, so last of all; else
    unknown."""
    said = readme_from_scratch(config, timeline)
    if said is None:
        return UNKNOWN
    evidence["method"] = f"{README_FROM_SCRATCH} ('{said[0]}', {said[1]}): random weights, every one trained"
    return "full"


# Banners of trainers that train LoRA adapters only (Unsloth's get_peft_model, text-generation-webui, mlx's lora
# scripts: LoRA or DoRA): a part of the model trainable under them is a LoRA adapter
_LORA_ONLY_BANNERS = ("unsloth", "webui", "mlx", "mlx_lora")


def _adapter_kind(banner, names, timeline: Timeline, evidence: dict) -> str:
    """"lora" for an adapter a count banner shows where the banner is a LoRA-only trainer's or LoRA is named in it, the
    run's names or a console line; else "peft": PEFT's `trainable params: X || all params: Y` (or a Trainer's count far
    under the model) shows an adapter, not which kind (2025DL-TEAM3_skeleton_hw, TerryTong-Git_poisonshare and
    iamseungpil_gpt-oss name no LoRA anywhere: judged peft). `evidence["method"]` gets what said which."""
    if banner.kind in _LORA_ONLY_BANNERS:
        return "lora"
    return _lora_or_peft(names, timeline, evidence, ("the banner's own line", banner.text))


def _lora_or_peft(names, timeline: Timeline, evidence: dict, own_line: tuple[str, str]) -> str:
    """"lora" where the run's names, a console line or `own_line` (what it is, its text: the line that showed the
    adapter) name LoRA, else "peft"; `evidence["method"]` gets which."""
    said = next((found for word in ("lora",) + _LORA_VARIANTS if (found := word_in(names, word))), None) \
        or next((f"'{m['console_lora_named'][:120]}' ({source})" for source, m in timeline.meta.items()
                 if m.get("console_lora_named")), None) \
        or (own_line[0] if word_in([(own_line[1], "")], "lora") else None)
    if said is None:
        evidence["method"] += "; nothing in the run names the adapter's kind (no LoRA named): a PEFT adapter"
        return "peft"
    evidence["method"] += f"; LoRA named: {said}"
    return "lora"


def _console_saves_an_adapter(names, timeline: Timeline, evidence: dict) -> str | None:
    """"lora" or "peft" where a console saves, pushes or uploads an adapter, or the Trainer warns that the model it
    trains is a PeftModel, or a training step's traceback runs through PEFT's PeftModel (`console_adapter_saved`:
    aryan-gupta7_round2_sclr_l2's `Pushing adapter to ...`, rajiv143_NL-OpenScenario's `model class
    `PeftModelForCausalLM``, namwoam_dl-final's out-of-memory tracebacks): an adapter was trained; else None."""
    source, line = next(((src, m["console_adapter_saved"]) for src, m in timeline.meta.items()
                         if m.get("console_adapter_saved")), (None, None))
    if line is None:
        return None
    evidence["method"] = f"the console shows an adapter trained ({source}: {line[:120]})"
    return _lora_or_peft(names, timeline, evidence, ("the adapter's own line", line))


def _saved_whole_into_output_dir(config: RunConfig, timeline: Timeline, evidence: dict) -> str:
    """"full" where the console shows the trained model saved in shards into the run's own output_dir, with no adapter
    named anywhere in it (`console_sharded_save`: an adapter is never sharded), else unknown. A merged model saved
    elsewhere (an export folder) is not this run's save."""
    output_dir = config.get("output_dir")
    for source, meta in timeline.meta.items():
        index = meta.get("console_sharded_save")
        if isinstance(output_dir, str) and output_dir.strip() and isinstance(index, str) \
                and index.startswith(output_dir.rstrip("/") + "/"):
            evidence["method"] = (f"the console saves the trained model in shards into its output_dir, naming no "
                                  f"adapter anywhere ({source}: {index})")
            return "full"
    return UNKNOWN
