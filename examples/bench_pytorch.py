"""The figures of `rollscope bench model` measured with PyTorch / transformers on the same CPU.

Runs the ~10M-parameter Qwen2 benchmark shape (hidden 256, 4 layers, 4/2 heads, MLP 2816,
vocab 2048, tied embeddings) with random weights in f32 on 2 threads:

- training step: 8×128 tokens, forward + mean next-token cross-entropy + backward + AdamW;
- GRPO step: 8×128 tokens, reference forward (no grad) + policy forward + the GRPO loss with
  a k3 KL (β = 0.04) + backward + AdamW, as TRL computes it for one iteration per batch;
- greedy decoding: 32-token prompts, 127 new tokens, batch 8, 1 and 64 (`generate`);
- greedy decoding at the rollout shape: 128 sequences of 32–352 prompt tokens and 16–127 new
  tokens (the lengths are the same functions of the index as `RaggedShape` in
  src/bench/ragged.rs), in static batches of 64 left-padded to the longest prompt, each
  generating as many tokens as its longest answer, as `generate` (and TRL) does; only each
  sequence's own new tokens count.

Alone it prints the PyTorch figures as one JSON line (what `rollscope bench all --python`
reads). With `--compare PATH/TO/rollscope` it interleaves runs of `rollscope bench model
--json` with its own, alternating which goes first, and prints for every figure the median of
the pairwise ratios (a single pair drifts ±10% on a shared machine).
Needs `pip install torch transformers`; not part of CI.

    python examples/bench_pytorch.py --compare target/release/rollscope --pairs 5
"""

import argparse
import copy
import json
import statistics
import subprocess
import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

FIGURES = [
    # (key, label, higher is better)
    ("train_step_ms", "training step 8×128 (fwd + bwd + AdamW), ms", False),
    ("grpo_step_ms", "GRPO step 8×128 (ref + policy + loss + bwd + AdamW), ms", False),
    ("decode_batch8_tps", "greedy decode batch 8, tokens/s", True),
    ("decode_batch1_tps", "greedy decode batch 1, tokens/s", True),
    ("decode_batch64_tps", "greedy decode batch 64, tokens/s", True),
    ("decode_ragged64_tps", "greedy decode at the rollout shape (64 in flight), tokens/s", True),
]

RAGGED_SEQUENCES, RAGGED_IN_FLIGHT = 128, 64


def ragged_prompt_tokens(index):
    return 32 + (index * 97) % 321


def ragged_new_tokens(index):
    return 16 + (index * 53) % 112


def bench_config():
    return Qwen2Config(
        vocab_size=2048,
        hidden_size=256,
        intermediate_size=2816,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        use_cache=True,
    )


def build_model(seed):
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(bench_config()).to(torch.float32)
    return model


def timed(work):
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def median_of(runs):
    walls = sorted(w for w, _ in runs)
    cpus = sorted(c for _, c in runs)
    return walls[len(walls) // 2], cpus[len(cpus) // 2]


def token_log_probs(model, ids):
    logits = model(input_ids=ids).logits[:, :-1]
    return torch.log_softmax(logits.float(), dim=-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)


def train_step(model, optimizer, ids):
    loss = -token_log_probs(model, ids).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def grpo_step(model, reference, optimizer, ids, advantages, beta=0.04, epsilon=0.2):
    with torch.no_grad():
        ref_logps = token_log_probs(reference, ids)
    logps = token_log_probs(model, ids)
    old_logps = logps.detach()
    ratio = torch.exp(logps - old_logps)
    clipped = torch.clamp(ratio, 1 - epsilon, 1 + epsilon)
    per_token = -torch.min(ratio * advantages, clipped * advantages)
    delta = ref_logps - logps
    per_token = per_token + beta * (torch.exp(delta) - delta - 1)
    mask = torch.ones_like(per_token)
    loss = ((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1)).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def decode(model, prompts, new_tokens):
    with torch.no_grad():
        model.generate(
            input_ids=prompts,
            attention_mask=torch.ones_like(prompts),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=0,
        )


def ragged_batches(generator):
    """The rollout shape as left-padded batches: (ids, attention mask, new tokens)."""
    batches = []
    for start in range(0, RAGGED_SEQUENCES, RAGGED_IN_FLIGHT):
        indices = range(start, min(start + RAGGED_IN_FLIGHT, RAGGED_SEQUENCES))
        longest = max(ragged_prompt_tokens(i) for i in indices)
        ids = torch.zeros(len(indices), longest, dtype=torch.long)
        mask = torch.zeros(len(indices), longest, dtype=torch.long)
        for row, index in enumerate(indices):
            length = ragged_prompt_tokens(index)
            ids[row, longest - length :] = torch.randint(16, 2048, (length,), generator=generator)
            mask[row, longest - length :] = 1
        batches.append((ids, mask, max(ragged_new_tokens(i) for i in indices)))
    return batches


def decode_ragged(model, batches):
    with torch.no_grad():
        for ids, mask, new_tokens in batches:
            model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=new_tokens,
                min_new_tokens=new_tokens,
                do_sample=False,
                pad_token_id=0,
            )


def measure(repeats, new_tokens=127, prompt_tokens=32):
    """One run of every figure: each the median of `repeats` timings after one warm-up."""
    model = build_model(0)
    reference = copy.deepcopy(model).eval()
    generator = torch.Generator().manual_seed(7)
    ids = torch.randint(16, 2048, (8, 128), generator=generator)
    advantages = torch.randn(8, 1, generator=generator)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    results = {}

    def repeat(work):
        work()
        return median_of([timed(work) for _ in range(repeats)])

    wall, cpu = repeat(lambda: train_step(model, optimizer, ids))
    results["train_step_ms"], results["train_step_cpu_ms"] = wall * 1e3, cpu * 1e3
    wall, cpu = repeat(lambda: grpo_step(model, reference, optimizer, ids, advantages))
    results["grpo_step_ms"], results["grpo_step_cpu_ms"] = wall * 1e3, cpu * 1e3
    model.eval()
    for batch in (8, 1, 64):
        prompts = torch.randint(16, 2048, (batch, prompt_tokens), generator=generator)
        wall, cpu = repeat(lambda: decode(model, prompts, new_tokens))
        tokens = batch * new_tokens
        results[f"decode_batch{batch}_tps"] = tokens / wall
        results[f"decode_batch{batch}_cpu_tps"] = tokens / cpu
    batches = ragged_batches(generator)
    wall, cpu = repeat(lambda: decode_ragged(model, batches))
    tokens = sum(ragged_new_tokens(i) for i in range(RAGGED_SEQUENCES))
    results["decode_ragged64_tps"] = tokens / wall
    results["decode_ragged64_cpu_tps"] = tokens / cpu
    return results


def ours(binary, repeats):
    command = [binary, "--json", "bench", "model", "--repeats", str(repeats)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])["figures"]


def ratio(key, higher_is_better, rollscope, pytorch):
    """How many times faster rollscope is (> 1 means faster)."""
    if higher_is_better:
        return rollscope[key] / pytorch[key]
    return pytorch[key] / rollscope[key]


def cpu_key(key):
    return key.replace("_ms", "_cpu_ms").replace("_tps", "_cpu_tps")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", metavar="ROLLSCOPE", help="interleave with this binary")
    parser.add_argument("--pairs", type=int, default=5, help="interleaved pairs to run")
    parser.add_argument("--repeats", type=int, default=3, help="timed repetitions per figure")
    args = parser.parse_args()
    torch.set_num_threads(2)
    if not args.compare:
        print(json.dumps(measure(args.repeats)))
        return
    pairs = []
    for index in range(args.pairs):
        if index % 2 == 0:
            first = ours(args.compare, args.repeats)
            pair = (first, measure(args.repeats))
        else:
            second = measure(args.repeats)
            pair = (ours(args.compare, args.repeats), second)
        pairs.append(pair)
        print(json.dumps({"pair": index, "rollscope": pair[0], "pytorch": pair[1]}), flush=True)
    print("speed-up of rollscope over PyTorch (> 1 is faster): median of pairwise ratios, wall [CPU]")
    for key, label, higher in FIGURES:
        walls = [ratio(key, higher, r, p) for r, p in pairs]
        cpus = [ratio(cpu_key(key), higher, r, p) for r, p in pairs]
        ours_median = statistics.median(r[key] for r, _ in pairs)
        theirs_median = statistics.median(p[key] for _, p in pairs)
        print(
            f"{label}: rollscope {ours_median:.0f}, PyTorch {theirs_median:.0f}; "
            f"{statistics.median(walls):.2f}× [{statistics.median(cpus):.2f}×] "
            f"(pairs: {', '.join(f'{w:.2f}' for w in walls)})"
        )


if __name__ == "__main__":
    main()
