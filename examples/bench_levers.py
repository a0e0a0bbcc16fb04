"""What each performance lever of `rollscope bench model` gives, measured by switching it off.

Runs the benchmark binary in several configurations, interleaved round by round (a shared
machine drifts), and prints for every figure the median over rounds of each configuration,
wall clock and process CPU time, next to the all-levers configuration. Not part of CI.

    python examples/bench_levers.py target/release/rollscope --rounds 3
"""

import argparse
import json
import os
import statistics
import subprocess

CONFIGURATIONS = [
    ("all levers", [], {}),
    ("plain candle ops + tensor AdamW", ["--reference", "--unfused-optimizer"], {}),
    ("without flat_linears (rows + linear op)", ["--without", "flat_linears"], {}),
    ("without norm", ["--without", "norm"], {}),
    ("without attention", ["--without", "attention"], {}),
    ("without mlp (gated projection)", ["--without", "mlp"], {}),
    ("without mlp and swiglu", ["--without", "mlp,swiglu"], {}),
    ("without log_probs", ["--without", "log_probs"], {}),
    ("without decode kernels", ["--without", "decode"], {}),
    ("tensor AdamW", ["--unfused-optimizer"], {}),
    ("portable kernels (no AVX-512 intrinsics)", ["--portable"], {}),
    ("glibc malloc defaults", [], {"ROLLSCOPE_MALLOC_DEFAULTS": "1"}),
    ("candle elementwise pool of 2 threads", [], {"CANDLE_NUM_THREADS": "2"}),
]

FIGURES = ["train_step_ms", "grpo_step_ms", "decode_batch8_tps", "decode_batch1_tps"]


def run(binary, flags, environment, repeats, only):
    command = [binary, "--json", "bench", "model", "--repeats", str(repeats)] + flags
    if only:
        command += ["--only", only]
    env = dict(os.environ, **environment)
    output = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(output.strip().splitlines()[-1])["figures"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", help="figures to measure: decode,train,grpo")
    parser.add_argument("--configurations", help="comma-separated indexes into the list")
    args = parser.parse_args()
    chosen = CONFIGURATIONS
    if args.configurations:
        chosen = [CONFIGURATIONS[int(i)] for i in args.configurations.split(",")]
    results = {name: [] for name, _, _ in chosen}
    for round_index in range(args.rounds):
        for name, flags, environment in chosen:
            figures = run(args.binary, flags, environment, args.repeats, args.only)
            results[name].append(figures)
            print(json.dumps({"round": round_index, "configuration": name, "figures": figures}), flush=True)
    print("median over rounds: wall [CPU]; ms for steps, tokens/s for decoding")
    for name, _, _ in chosen:
        cells = []
        for key in FIGURES:
            walls = [r[key] for r in results[name] if key in r]
            cpu_key = key.replace("_ms", "_cpu_ms").replace("_tps", "_cpu_tps")
            cpus = [r[cpu_key] for r in results[name] if cpu_key in r]
            if walls:
                cells.append(f"{key} {statistics.median(walls):.0f} [{statistics.median(cpus):.0f}]")
        print(f"{name}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
