//! Every training kernel gives the same bits, forward and backward, whatever the size of the
//! thread pool it runs on and however its tasks are scheduled: each result is a fixed
//! function of the inputs (fixed-size tasks whose partial results are combined in task
//! order), which is what makes training bitwise reproducible.

use super::*;
use candle_core::{Device, Tensor, Var};
use std::sync::atomic::{AtomicBool, Ordering};

/// The raw bits of each tensor.
fn bits(tensors: &[Tensor]) -> Vec<Vec<u32>> {
    tensors
        .iter()
        .map(|tensor| {
            tensor
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
                .iter()
                .map(|value| value.to_bits())
                .collect()
        })
        .collect()
}

/// Sets the flag when dropped, a panic's unwinding included.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `work` on pools of 1 to 4 threads, a few times each, with a busy thread beside them so
/// that tasks are stolen at different moments: every run must give the 1-thread bits.
fn same_bits_on_every_pool(name: &str, work: impl Fn() -> Vec<Vec<u32>> + Sync) {
    let pool = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    };
    let want = pool(1).install(&work);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut spin = 0u64;
            while !stop.load(Ordering::Relaxed) {
                spin = std::hint::black_box(spin.wrapping_add(1));
            }
        });
        let _stop = StopOnDrop(&stop);
        for threads in [2, 3, 4] {
            let pool = pool(threads);
            for round in 0..3 {
                let got = pool.install(&work);
                assert!(
                    got == want,
                    "{name}: {threads} threads (round {round}) differ from 1 thread"
                );
            }
        }
    });
}

fn random(dims: &[usize]) -> Var {
    Var::from_tensor(&Tensor::randn(0f32, 1.0, dims, &Device::Cpu).unwrap()).unwrap()
}

/// The output and the gradients of `inputs` for the loss `Σ output·weights`.
fn forward_backward(output: &Tensor, weights: &Tensor, inputs: &[&Var]) -> Vec<Vec<u32>> {
    let loss = (output * weights).unwrap().sum_all().unwrap();
    let grads = loss.backward().unwrap();
    let mut tensors = vec![output.clone()];
    tensors.extend(
        inputs
            .iter()
            .map(|var| grads.get(var.as_tensor()).unwrap().clone()),
    );
    bits(&tensors)
}

#[test]
fn rms_norm_is_the_same_bits_on_any_pool() {
    let isa = Isa::best();
    // 100 tasks of 256 rows: enough for the pool size and timing to change any tree of sums.
    let (x, w) = (random(&[25_600, 64]), random(&[64]));
    let weights = Tensor::randn(0f32, 1.0, (25_600, 64), &Device::Cpu).unwrap();
    same_bits_on_every_pool("rms-norm", || {
        let y = rms_norm(x.as_tensor(), w.as_tensor(), 1e-6, isa).unwrap();
        forward_backward(&y, &weights, &[&x, &w])
    });
}

#[test]
fn linear_and_gated_projection_are_the_same_bits_on_any_pool() {
    let isa = Isa::best();
    let (x, w) = (random(&[600, 256]), random(&[384, 256]));
    let (gate, up) = (random(&[512, 256]), random(&[512, 256]));
    let linear_weights = Tensor::randn(0f32, 1.0, (600, 384), &Device::Cpu).unwrap();
    let mlp_weights = Tensor::randn(0f32, 1.0, (600, 512), &Device::Cpu).unwrap();
    same_bits_on_every_pool("linear", || {
        let y = linear_rows(x.as_tensor(), w.as_tensor(), isa).unwrap();
        forward_backward(&y, &linear_weights, &[&x, &w])
    });
    same_bits_on_every_pool("gated projection", || {
        let y = gated_projection(x.as_tensor(), gate.as_tensor(), up.as_tensor(), isa).unwrap();
        forward_backward(&y, &mlp_weights, &[&x, &gate, &up])
    });
    same_bits_on_every_pool("swiglu", || {
        let (g, u) = (
            Var::from_tensor(&mlp_weights.sin().unwrap()).unwrap(),
            Var::from_tensor(&mlp_weights.cos().unwrap()).unwrap(),
        );
        let y = swiglu(g.as_tensor(), u.as_tensor(), isa).unwrap();
        forward_backward(&y, &mlp_weights, &[&g, &u])
    });
}

#[test]
fn attention_is_the_same_bits_on_any_pool() {
    let isa = Isa::best();
    let geometry = AttentionGeometry {
        heads: 4,
        kv_heads: 2,
        head_dim: 16,
    };
    let (batch, len) = (6, 40);
    let tokens = batch * len;
    let (q, k, v) = (
        random(&[tokens, 4 * 16]),
        random(&[tokens, 2 * 16]),
        random(&[tokens, 2 * 16]),
    );
    let angles = Tensor::randn(0f32, 1.0, (tokens, 8), &Device::Cpu).unwrap();
    let (cos, sin) = (angles.cos().unwrap(), angles.sin().unwrap());
    let mask: Vec<u8> = (0..tokens)
        .map(|i| u8::from(i % len < len - (i / len) * 3))
        .collect();
    let weights = Tensor::randn(0f32, 1.0, (tokens, 4 * 16), &Device::Cpu).unwrap();
    same_bits_on_every_pool("attention", || {
        let tables = RotaryTables {
            cos: &cos,
            sin: &sin,
            mask: &mask,
            batch,
            len,
        };
        let y = rotary_attention(
            q.as_tensor(),
            k.as_tensor(),
            v.as_tensor(),
            &tables,
            geometry,
            isa,
        )
        .unwrap();
        forward_backward(&y, &weights, &[&q, &k, &v])
    });
}

#[test]
fn log_probs_and_entropy_are_the_same_bits_on_any_pool() {
    let isa = Isa::best();
    let logits = random(&[8, 50, 2048]);
    let targets: Vec<u32> = (0..400).map(|i| (i * 37 + 1) % 2048).collect();
    let targets = Tensor::from_vec(targets, (8, 50), &Device::Cpu).unwrap();
    let weights = Tensor::randn(0f32, 1.0, (8, 50), &Device::Cpu).unwrap();
    same_bits_on_every_pool("log-probs", || {
        let y = fused_token_log_probs(logits.as_tensor(), &targets, 0.7, isa).unwrap();
        forward_backward(&y, &weights, &[&logits])
    });
    same_bits_on_every_pool("entropy", || {
        let y = fused_entropy(logits.as_tensor(), 0.7, isa).unwrap();
        forward_backward(&y, &weights, &[&logits])
    });
}
