"""End-to-end GRPO steps with TRL's `GRPOTrainer` on the ~10M-parameter Qwen2 benchmark shape.

One step: 1 prompt (32 tokens) × G = 8 single-turn completions of exactly 128 tokens, sampled
at temperature 1, a rule reward, the GRPO loss with a k3 KL to the reference (β = 0.04),
backward and AdamW: what `rollscope` must beat end to end (issue 8: ≤ 0.75× TRL). The model
has random weights and a word-level tokenizer built in-process (no download), f32, 2 threads
on the CPU. Prints the median step time after warm-up as JSON. Not part of CI.

    pip install torch transformers trl datasets
    python examples/bench_trl_grpo.py --steps 6
"""

import argparse
import tempfile
import json
import statistics
import time

import torch
from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

VOCAB = 2048
PROMPT_TOKENS = 32
COMPLETION_TOKENS = 128
GROUP = 8


def tokenizer():
    vocab = {f"t{i}": i for i in range(VOCAB)}
    model = Tokenizer(models.WordLevel(vocab, unk_token="t2"))
    model.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=model, pad_token="t0", eos_token="t1", unk_token="t2")
    fast.padding_side = "left"
    return fast


def policy():
    config = Qwen2Config(
        vocab_size=VOCAB,
        hidden_size=256,
        intermediate_size=2816,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=None,
    )
    torch.manual_seed(0)
    return Qwen2ForCausalLM(config).to(torch.float32)


def reward_even_tokens(completions, **_):
    """A rule reward: the share of completion tokens with an even id."""
    return [sum(int(token[1:]) % 2 == 0 for token in text.split()) / max(len(text.split()), 1) for text in completions]


class StepTimes(TrainerCallback):
    def __init__(self):
        self.walls, self.cpus = [], []

    def on_step_begin(self, args, state, control, **kwargs):
        self.start = (time.perf_counter(), time.process_time())

    def on_step_end(self, args, state, control, **kwargs):
        self.walls.append(time.perf_counter() - self.start[0])
        self.cpus.append(time.process_time() - self.start[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="steps to run; the first is warm-up")
    args = parser.parse_args()
    torch.set_num_threads(2)
    prompt = " ".join(f"t{16 + (i * 37) % (VOCAB - 16)}" for i in range(PROMPT_TOKENS))
    dataset = Dataset.from_dict({"prompt": [prompt] * (args.steps * GROUP)})
    config = GRPOConfig(
        output_dir="/tmp/bench_trl_grpo",
        per_device_train_batch_size=GROUP,
        num_generations=GROUP,
        max_completion_length=COMPLETION_TOKENS,
        beta=0.04,
        temperature=1.0,
        learning_rate=1e-5,
        max_steps=args.steps,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        bf16=False,
        fp16=False,
        seed=0,
        dataloader_num_workers=0,
        generation_kwargs={"min_new_tokens": COMPLETION_TOKENS},
    )
    times = StepTimes()
    # TRL builds its reference model from the policy's path, so the random model is saved first.
    folder = tempfile.mkdtemp(prefix="bench_trl_grpo_model_")
    policy().save_pretrained(folder)
    tokenizer().save_pretrained(folder)
    trainer = GRPOTrainer(
        model=folder,
        reward_funcs=[reward_even_tokens],
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer(),
        callbacks=[times],
    )
    trainer.train()
    walls, cpus = times.walls[1:], times.cpus[1:]
    print(
        json.dumps(
            {
                "trl_grpo_step_ms": statistics.median(walls) * 1e3,
                "trl_grpo_step_cpu_ms": statistics.median(cpus) * 1e3,
                "steps_timed": len(walls),
                "all_step_ms": [w * 1e3 for w in times.walls],
            }
        )
    )


if __name__ == "__main__":
    main()
