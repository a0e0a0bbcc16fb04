//! f32 row primitives on the chosen instruction set: `exp` with a running sum, max, dot,
//! SwiGLU and its gradient. The AVX-512 `exp` is Cephes' `expf` (range reduction by ln 2, a
//! degree-6 polynomial, `scalef` for the power of two), within 2 ulp of the true value; the
//! AVX2 one (`avx2.rs`) is the same polynomial; the portable code calls the standard library.

use super::Isa;

/// `values[i] = exp(values[i] − shift)` in place; returns the sum of the results.
pub fn exp_sum(isa: Isa, values: &mut [f32], shift: f32) -> f32 {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` is only chosen when the CPU reports AVX-512F.
        Isa::Avx512 => unsafe { avx512::exp_sum(values, shift) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` is only chosen when the CPU reports AVX2 and FMA.
        Isa::Avx2 => unsafe { super::avx2::exp_sum(values, shift) },
        _ => {
            let mut sum = 0.0;
            for value in values.iter_mut() {
                *value = (*value - shift).exp();
                sum += *value;
            }
            sum
        }
    }
}

/// The largest element (−∞ for an empty row).
pub fn max(isa: Isa, src: &[f32]) -> f32 {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `exp_sum`.
        Isa::Avx512 => unsafe { avx512::max(src) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `exp_sum`.
        Isa::Avx2 => unsafe { super::avx2::max(src) },
        _ => src.iter().copied().fold(f32::NEG_INFINITY, f32::max),
    }
}

/// `Σ a[i]·b[i]`.
pub fn dot(isa: Isa, a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "dot: lengths differ");
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `exp_sum`.
        Isa::Avx512 => unsafe { avx512::dot(a, b) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `exp_sum`.
        Isa::Avx2 => unsafe { super::avx2::dot(a, b) },
        _ => {
            let mut lanes = [0.0f32; 8];
            let mut chunks_a = a.chunks_exact(8);
            for (chunk_a, chunk_b) in chunks_a.by_ref().zip(b.chunks_exact(8)) {
                for lane in 0..8 {
                    lanes[lane] += chunk_a[lane] * chunk_b[lane];
                }
            }
            let tail = a.len() - chunks_a.remainder().len();
            let rest: f32 = a[tail..].iter().zip(&b[tail..]).map(|(x, y)| x * y).sum();
            lanes.iter().sum::<f32>() + rest
        }
    }
}

/// `out[i] = silu(gate[i])·up[i]`, `silu(g) = g / (1 + e^−g)`.
pub fn silu_mul(isa: Isa, gate: &[f32], up: &[f32], out: &mut [f32]) {
    assert!(
        gate.len() == up.len() && up.len() == out.len(),
        "silu_mul: lengths differ"
    );
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `exp_sum`.
        Isa::Avx512 => unsafe { avx512::silu_mul(gate, up, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `exp_sum`.
        Isa::Avx2 => unsafe { super::avx2::silu_mul(gate, up, out) },
        _ => {
            for ((out, &g), &u) in out.iter_mut().zip(gate).zip(up) {
                *out = g / (1.0 + (-g).exp()) * u;
            }
        }
    }
}

/// The gradient of `silu(gate)·up` given the output gradient `grad`:
/// `d_gate = grad·up·σ(g)(1 + g(1 − σ(g)))`, `d_up = grad·silu(g)`.
pub fn swiglu_grad(
    isa: Isa,
    gate: &[f32],
    up: &[f32],
    grad: &[f32],
    d_gate: &mut [f32],
    d_up: &mut [f32],
) {
    let n = gate.len();
    assert!(
        up.len() == n && grad.len() == n && d_gate.len() == n && d_up.len() == n,
        "swiglu_grad: lengths differ"
    );
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `exp_sum`.
        Isa::Avx512 => unsafe { avx512::swiglu_grad(gate, up, grad, d_gate, d_up) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `exp_sum`.
        Isa::Avx2 => unsafe { super::avx2::swiglu_grad(gate, up, grad, d_gate, d_up) },
        _ => {
            for i in 0..n {
                let g = gate[i];
                let sigmoid = 1.0 / (1.0 + (-g).exp());
                let silu = g * sigmoid;
                d_gate[i] = grad[i] * up[i] * sigmoid * (1.0 + g * (1.0 - sigmoid));
                d_up[i] = grad[i] * silu;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    const LANES: usize = 16;

    /// A mask selecting the first `count` (< 16) lanes.
    fn tail_mask(count: usize) -> __mmask16 {
        ((1u32 << count) - 1) as __mmask16
    }

    /// `e^x` on 16 lanes: 0 from −104 down (below half the smallest subnormal), clamped at 88.7.
    #[target_feature(enable = "avx512f")]
    fn exp(x: __m512) -> __m512 {
        let x = _mm512_max_ps(
            _mm512_min_ps(x, _mm512_set1_ps(88.72)),
            _mm512_set1_ps(-104.0),
        );
        let n = _mm512_roundscale_ps::<0x08>(_mm512_mul_ps(
            x,
            _mm512_set1_ps(std::f32::consts::LOG2_E),
        ));
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693_359_4), x);
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.121_944_4e-4), r);
        let mut p = _mm512_set1_ps(1.987_569_1e-4);
        for c in [
            1.398_199_9e-3,
            8.333_452e-3,
            4.166_579_6e-2,
            0.166_666_65,
            0.5,
        ] {
            p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
        }
        let r2 = _mm512_mul_ps(r, r);
        let p = _mm512_add_ps(_mm512_fmadd_ps(p, r2, r), _mm512_set1_ps(1.0));
        _mm512_scalef_ps(p, n)
    }

    /// `σ(g) = 1 / (1 + e^−g)`.
    #[target_feature(enable = "avx512f")]
    fn sigmoid(g: __m512) -> __m512 {
        let one = _mm512_set1_ps(1.0);
        _mm512_div_ps(
            one,
            _mm512_add_ps(one, exp(_mm512_sub_ps(_mm512_setzero_ps(), g))),
        )
    }

    /// Loads lanes `i..i + count` (count ≤ 16) of `src`, zeros elsewhere.
    #[target_feature(enable = "avx512f")]
    fn load(src: &[f32], i: usize, count: usize) -> __m512 {
        assert!(i + count <= src.len());
        // SAFETY: the asserted range is inside `src`; masked-off lanes are not read.
        unsafe {
            if count == LANES {
                _mm512_loadu_ps(src.as_ptr().add(i))
            } else {
                _mm512_maskz_loadu_ps(tail_mask(count), src.as_ptr().add(i))
            }
        }
    }

    /// Stores the first `count` lanes of `value` at `dst[i..]`.
    #[target_feature(enable = "avx512f")]
    fn store(dst: &mut [f32], i: usize, count: usize, value: __m512) {
        assert!(i + count <= dst.len());
        // SAFETY: the asserted range is inside `dst`; masked-off lanes are not written.
        unsafe {
            if count == LANES {
                _mm512_storeu_ps(dst.as_mut_ptr().add(i), value)
            } else {
                _mm512_mask_storeu_ps(dst.as_mut_ptr().add(i), tail_mask(count), value)
            }
        }
    }

    /// The start and width of each 16-lane step over `len` elements.
    fn steps(len: usize) -> impl Iterator<Item = (usize, usize)> {
        (0..len)
            .step_by(LANES)
            .map(move |i| (i, LANES.min(len - i)))
    }

    #[target_feature(enable = "avx512f")]
    pub fn exp_sum(values: &mut [f32], shift: f32) -> f32 {
        let shift = _mm512_set1_ps(shift);
        let mut sum = _mm512_setzero_ps();
        for (i, count) in steps(values.len()) {
            let value = exp(_mm512_sub_ps(load(values, i, count), shift));
            let value = if count == LANES {
                value
            } else {
                _mm512_maskz_mov_ps(tail_mask(count), value)
            };
            store(values, i, count, value);
            sum = _mm512_add_ps(sum, value);
        }
        _mm512_reduce_add_ps(sum)
    }

    #[target_feature(enable = "avx512f")]
    pub fn max(src: &[f32]) -> f32 {
        let mut best = _mm512_set1_ps(f32::NEG_INFINITY);
        for (i, count) in steps(src.len()) {
            let value = load(src, i, count);
            best = if count == LANES {
                _mm512_max_ps(best, value)
            } else {
                _mm512_mask_max_ps(best, tail_mask(count), best, value)
            };
        }
        _mm512_reduce_max_ps(best)
    }

    #[target_feature(enable = "avx512f")]
    pub fn dot(a: &[f32], b: &[f32]) -> f32 {
        let mut sum = _mm512_setzero_ps();
        for (i, count) in steps(a.len()) {
            sum = _mm512_fmadd_ps(load(a, i, count), load(b, i, count), sum);
        }
        _mm512_reduce_add_ps(sum)
    }

    #[target_feature(enable = "avx512f")]
    pub fn silu_mul(gate: &[f32], up: &[f32], out: &mut [f32]) {
        for (i, count) in steps(gate.len()) {
            let g = load(gate, i, count);
            let value = _mm512_mul_ps(_mm512_mul_ps(g, sigmoid(g)), load(up, i, count));
            store(out, i, count, value);
        }
    }

    #[target_feature(enable = "avx512f")]
    pub fn swiglu_grad(
        gate: &[f32],
        up: &[f32],
        grad: &[f32],
        d_gate: &mut [f32],
        d_up: &mut [f32],
    ) {
        let one = _mm512_set1_ps(1.0);
        for (i, count) in steps(gate.len()) {
            let g = load(gate, i, count);
            let dy = load(grad, i, count);
            let s = sigmoid(g);
            let silu = _mm512_mul_ps(g, s);
            let slope = _mm512_mul_ps(s, _mm512_fmadd_ps(g, _mm512_sub_ps(one, s), one));
            let dg = _mm512_mul_ps(_mm512_mul_ps(dy, load(up, i, count)), slope);
            store(d_gate, i, count, dg);
            store(d_up, i, count, _mm512_mul_ps(dy, silu));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i as f32 * 0.618_034).fract() - 0.5) * 40.0)
            .collect()
    }

    #[test]
    fn exp_is_within_two_ulp_on_each_instruction_set_and_zero_far_below() {
        let mut src = inputs(1000);
        src.extend([-200.0, -103.0, 0.0, 88.0, -87.0, 1e-8]);
        for isa in Isa::available() {
            let mut dst = src.clone();
            let sum = exp_sum(isa, &mut dst, 1.5);
            let mut want_sum = 0.0f64;
            for (&x, &got) in src.iter().zip(&dst) {
                let want = ((x - 1.5) as f64).exp();
                want_sum += want;
                let tolerance = 2.5 * f32::EPSILON as f64 * want + 1e-44;
                assert!(
                    (got as f64 - want).abs() <= tolerance,
                    "{isa:?}: exp({x} − 1.5) = {got}, want {want}"
                );
            }
            assert!(
                ((sum as f64) - want_sum).abs() < 1e-5 * want_sum,
                "{isa:?} sum"
            );
            assert_eq!(dst[1000], 0.0, "{isa:?}: e^−201.5 underflows to 0");
        }
    }

    #[test]
    fn every_instruction_set_computes_the_same_rows() {
        for len in [1, 15, 16, 17, 64, 2816] {
            let a = inputs(len);
            let b: Vec<f32> = a.iter().map(|x| x * 0.3 + 1.0).collect();
            let c: Vec<f32> = a.iter().map(|x| (x * 0.7).sin()).collect();
            let dot_want: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum();
            let max_want = a.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            for isa in Isa::available() {
                let scale: f64 = a
                    .iter()
                    .zip(&b)
                    .map(|(x, y)| (*x as f64 * *y as f64).abs())
                    .sum();
                assert!((dot(isa, &a, &b) as f64 - dot_want).abs() <= 1e-5 * scale + 1e-6);
                assert_eq!(max(isa, &a), max_want, "{isa:?} max of {len}");
                let mut out = vec![0.0; len];
                silu_mul(isa, &a, &b, &mut out);
                let (mut d_gate, mut d_up) = (vec![0.0; len], vec![0.0; len]);
                swiglu_grad(isa, &a, &b, &c, &mut d_gate, &mut d_up);
                for i in 0..len {
                    let (g, u, dy) = (a[i] as f64, b[i] as f64, c[i] as f64);
                    let s = 1.0 / (1.0 + (-g).exp());
                    let close = |got: f32, want: f64| {
                        (got as f64 - want).abs() <= 1e-6 * (1.0 + want.abs())
                    };
                    assert!(close(out[i], g * s * u), "{isa:?} silu_mul[{i}]");
                    assert!(close(d_up[i], dy * g * s), "{isa:?} d_up[{i}]");
                    assert!(
                        close(d_gate[i], dy * u * s * (1.0 + g * (1.0 - s))),
                        "{isa:?} d_gate[{i}]"
                    );
                }
            }
        }
    }
}
