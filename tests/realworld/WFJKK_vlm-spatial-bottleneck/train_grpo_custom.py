"""Minimal custom GRPO training loop for multimodal spatial measurement.

Bypasses TRL's GRPOTrainer to avoid multimodal batching bugs.
Implements GRPO directly: generate N completions, compute group-relative
advantages, update policy with weighted log-prob loss.
"""

import json, os, re, time, math
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader
from PIL import Image
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForImageTextToText, AutoProcessor

# ---- Config ----
MODEL_ID = "Qwen/Qwen2.5-VL-7B-Instruct"
DATASET_DIR = "dataset"
OUTPUT_DIR = "checkpoints"
LORA_RANK = 64
LORA_ALPHA = 128
NUM_GENERATIONS = 4
MAX_NEW_TOKENS = 32
LEARNING_RATE = 5e-6
NUM_EPOCHS = 1
SAVE_EVERY = 100  # steps
LOG_EVERY = 5
REWARD_CLIP_MIN = -5.0

SYSTEM_PROMPT = (
    "You are measuring a hole in a technical drawing. "
    "Use the scale bar to determine the diameter. "
    "Respond with ONLY the diameter in mm as a number, nothing else."
)
USER_PROMPT = "What is the diameter of hole H1 in mm?"


def parse_number(text):
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    match = re.search(r'(\d+\.?\d*)', text)
    return float(match.group(1)) if match else None


def compute_reward(text, gt):
    pred = parse_number(text)
    if pred is None or pred <= 0:
        return REWARD_CLIP_MIN
    return max(-abs(pred - gt) / gt, REWARD_CLIP_MIN)


def load_dataset(split="train"):
    meta_path = Path(DATASET_DIR) / split / "metadata.jsonl"
    with open(meta_path) as f:
        return [json.loads(l) for l in f]


def generate_one(model, processor, image_path, n=NUM_GENERATIONS):
    """Generate N completions for one image. Returns texts and per-token log probs."""
    image = Image.open(image_path).convert("RGB")
    messages = [{"role": "user", "content": [
        {"type": "image", "image": image},
        {"type": "text", "text": f"{SYSTEM_PROMPT}\n\n{USER_PROMPT}"},
    ]}]
    text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    inputs = processor(text=[text], images=[image], return_tensors="pt", padding=True)
    inputs = {k: v.to(model.device) for k, v in inputs.items()}
    
    input_len = inputs["input_ids"].shape[1]
    
    completions = []
    all_log_probs = []
    
    for _ in range(n):
        with torch.no_grad():
            outputs = model.generate(
                **inputs,
                max_new_tokens=MAX_NEW_TOKENS,
                do_sample=True,
                temperature=0.7,
                top_p=0.9,
                return_dict_in_generate=True,
                output_scores=True,
            )
        
        gen_ids = outputs.sequences[0, input_len:]
        text_out = processor.decode(gen_ids, skip_special_tokens=True).strip()
        completions.append(text_out)
        
        # Compute log probs of generated tokens
        scores = torch.stack(outputs.scores, dim=0)  # [gen_len, 1, vocab]
        log_probs = torch.log_softmax(scores[:, 0, :], dim=-1)
        token_log_probs = log_probs[range(len(gen_ids)), gen_ids]
        all_log_probs.append(token_log_probs.sum().item())
    
    return completions, all_log_probs


def grpo_loss(model, processor, image_path, gt_mm):
    """Compute GRPO loss for one sample."""
    image = Image.open(image_path).convert("RGB")
    messages = [{"role": "user", "content": [
        {"type": "image", "image": image},
        {"type": "text", "text": f"{SYSTEM_PROMPT}\n\n{USER_PROMPT}"},
    ]}]
    text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    inputs = processor(text=[text], images=[image], return_tensors="pt", padding=True)
    inputs = {k: v.to(model.device) for k, v in inputs.items()}
    input_len = inputs["input_ids"].shape[1]
    
    # Step 1: Generate N completions (no grad)
    completions = []
    gen_ids_list = []
    
    model.eval()
    for _ in range(NUM_GENERATIONS):
        with torch.no_grad():
            outputs = model.generate(
                **inputs,
                max_new_tokens=MAX_NEW_TOKENS,
                do_sample=True,
                temperature=0.7,
                top_p=0.9,
            )
        gen_ids = outputs[0, input_len:]
        gen_ids_list.append(gen_ids)
        completions.append(processor.decode(gen_ids, skip_special_tokens=True).strip())
    
    # Step 2: Compute rewards and advantages
    rewards = [compute_reward(c, gt_mm) for c in completions]
    mean_r = np.mean(rewards)
    std_r = np.std(rewards) + 1e-8
    advantages = [(r - mean_r) / std_r for r in rewards]
    
    # Step 3: Compute policy gradient loss (with grad)
    model.train()
    total_loss = torch.tensor(0.0, device=model.device)
    
    for gen_ids, advantage in zip(gen_ids_list, advantages):
        # Build full sequence: input + completion
        full_ids = torch.cat([inputs["input_ids"][0], gen_ids]).unsqueeze(0)
        
        # Forward pass to get log probs
        out = model(input_ids=full_ids, pixel_values=inputs.get("pixel_values"),
                    image_grid_thw=inputs.get("image_grid_thw"))
        logits = out.logits[0, input_len-1:-1, :]  # shifted for next-token prediction
        log_probs = torch.log_softmax(logits, dim=-1)
        token_log_probs = log_probs[range(len(gen_ids)), gen_ids]
        
        # Policy gradient: -advantage * log_prob
        total_loss += -advantage * token_log_probs.sum()
    
    total_loss = total_loss / NUM_GENERATIONS
    return total_loss, rewards, completions


def train():
    print("=== Custom GRPO Training ===\n")
    
    device = torch.device("cuda")
    gpu_name = torch.cuda.get_device_name(0)
    print(f"GPU: {gpu_name}")
    
    # Load dataset
    samples = load_dataset("train")
    print(f"Train samples: {len(samples)}")
    
    # Load model
    print(f"Loading {MODEL_ID}...")
    model = AutoModelForImageTextToText.from_pretrained(
        MODEL_ID, torch_dtype=torch.bfloat16, device_map="auto", trust_remote_code=True,
    )
    processor = AutoProcessor.from_pretrained(MODEL_ID, trust_remote_code=True)
    
    # Apply LoRA
    lora_config = LoraConfig(
        r=LORA_RANK, lora_alpha=LORA_ALPHA,
        target_modules="all-linear", task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, lora_config)
    model.print_trainable_parameters()
    
    # Optimizer
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad],
        lr=LEARNING_RATE,
    )
    
    # Training loop
    os.makedirs(OUTPUT_DIR, exist_ok=True)
    log_path = os.path.join(OUTPUT_DIR, "training_log.jsonl")
    
    # Resume support
    start_step = 0
    if os.path.exists(log_path):
        with open(log_path) as f:
            lines = f.readlines()
        if lines:
            start_step = json.loads(lines[-1])["step"]
            print(f"Resuming from step {start_step}")
    
    global_step = 0
    running_reward = []
    running_loss = []
    
    for epoch in range(NUM_EPOCHS):
        # Shuffle
        rng = np.random.default_rng(42 + epoch)
        indices = rng.permutation(len(samples))
        
        for i, idx in enumerate(indices):
            global_step += 1
            if global_step <= start_step:
                continue
            
            sample = samples[idx]
            image_path = str(Path(DATASET_DIR) / "train" / f"image_{sample['idx']:04d}.png")
            gt_mm = sample["diameter_mm"]
            
            try:
                loss, rewards, completions = grpo_loss(model, processor, image_path, gt_mm)
                
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                
                running_reward.extend(rewards)
                running_loss.append(loss.item())
                
            except Exception as e:
                print(f"  Step {global_step}: ERROR {e}")
                continue
            
            # Logging
            if global_step % LOG_EVERY == 0:
                avg_r = np.mean(running_reward[-LOG_EVERY*NUM_GENERATIONS:])
                avg_l = np.mean(running_loss[-LOG_EVERY:])
                best_r = max(running_reward[-LOG_EVERY*NUM_GENERATIONS:])
                
                log_entry = {
                    "step": global_step, "epoch": epoch,
                    "avg_reward": round(avg_r, 4),
                    "best_reward": round(best_r, 4),
                    "avg_loss": round(avg_l, 4),
                    "gt_mm": gt_mm,
                    "completions": completions,
                    "rewards": [round(r, 3) for r in rewards],
                }
                
                with open(log_path, "a") as f:
                    f.write(json.dumps(log_entry) + "\n")
                
                elapsed = time.time() if global_step == LOG_EVERY else elapsed
                print(f"  Step {global_step}/{len(samples)} | "
                      f"loss={avg_l:.4f} | reward={avg_r:.3f} | "
                      f"best_r={best_r:.3f} | "
                      f"sample: gt={gt_mm:.1f} pred={completions[0]}")
            
            # Save checkpoint
            if global_step % SAVE_EVERY == 0:
                ckpt_path = os.path.join(OUTPUT_DIR, f"checkpoint-{global_step}")
                model.save_pretrained(ckpt_path)
                processor.save_pretrained(ckpt_path)
                print(f"  Saved checkpoint: {ckpt_path}")
    
    # Final save
    final_path = os.path.join(OUTPUT_DIR, "final")
    model.save_pretrained(final_path)
    processor.save_pretrained(final_path)
    print(f"\n✓ Training complete. Model saved to {final_path}")


if __name__ == "__main__":
    train()
