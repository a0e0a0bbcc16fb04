//! The f32 row primitives and the few-rows tile on AVX2 with FMA (8 lanes), for CPUs without
//! AVX-512. `exp` is the AVX-512 path's Cephes `expf` (range reduction by ln 2, a degree-6
//! polynomial), the power of two applied as two exponent-field factors so results down to
//! the subnormals stay exact to 2 ulp. Tails are handled with masked loads and stores.
//!
//! Every function here requires a CPU that reports AVX2 and FMA (`Isa::Avx2`).

use super::tile::{TileSums, widen};
use std::arch::x86_64::*;

const LANES: usize = 8;

/// The start and width of each 8-lane step over `len` elements.
fn steps(len: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..len)
        .step_by(LANES)
        .map(move |i| (i, LANES.min(len - i)))
}

/// All-ones in the first `count` (≤ 8) lanes.
#[target_feature(enable = "avx2,fma")]
fn lane_mask(count: usize) -> __m256i {
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    _mm256_cmpgt_epi32(_mm256_set1_epi32(count as i32), lanes)
}

/// Loads lanes `i..i + count` (count ≤ 8) of `src`, zeros elsewhere.
#[target_feature(enable = "avx2,fma")]
fn load(src: &[f32], i: usize, count: usize) -> __m256 {
    assert!(i + count <= src.len());
    // SAFETY: the asserted range is inside `src`; masked-off lanes are not read.
    unsafe {
        if count == LANES {
            _mm256_loadu_ps(src.as_ptr().add(i))
        } else {
            _mm256_maskload_ps(src.as_ptr().add(i), lane_mask(count))
        }
    }
}

/// Stores the first `count` lanes of `value` at `dst[i..]`.
#[target_feature(enable = "avx2,fma")]
fn store(dst: &mut [f32], i: usize, count: usize, value: __m256) {
    assert!(i + count <= dst.len());
    // SAFETY: the asserted range is inside `dst`; masked-off lanes are not written.
    unsafe {
        if count == LANES {
            _mm256_storeu_ps(dst.as_mut_ptr().add(i), value)
        } else {
            _mm256_maskstore_ps(dst.as_mut_ptr().add(i), lane_mask(count), value)
        }
    }
}

/// The sum of the 8 lanes.
#[target_feature(enable = "avx2,fma")]
fn sum_lanes(v: __m256) -> f32 {
    let half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let pairs = _mm_add_ps(half, _mm_movehl_ps(half, half));
    _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps::<1>(pairs, pairs)))
}

/// The largest of the 8 lanes.
#[target_feature(enable = "avx2,fma")]
fn max_lanes(v: __m256) -> f32 {
    let half = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let pairs = _mm_max_ps(half, _mm_movehl_ps(half, half));
    _mm_cvtss_f32(_mm_max_ss(pairs, _mm_shuffle_ps::<1>(pairs, pairs)))
}

/// `2^k` for integer lanes `k` in [−126, 127].
#[target_feature(enable = "avx2,fma")]
fn power_of_two(k: __m256i) -> __m256 {
    _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_add_epi32(
        k,
        _mm256_set1_epi32(127),
    )))
}

/// `e^x` on 8 lanes: 0 from −104 down (below half the smallest subnormal), clamped at 88.7.
#[target_feature(enable = "avx2,fma")]
fn exp(x: __m256) -> __m256 {
    let x = _mm256_max_ps(
        _mm256_min_ps(x, _mm256_set1_ps(88.72)),
        _mm256_set1_ps(-104.0),
    );
    let n = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm256_mul_ps(
        x,
        _mm256_set1_ps(std::f32::consts::LOG2_E),
    ));
    let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693_359_4), x);
    let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.121_944_4e-4), r);
    let mut p = _mm256_set1_ps(1.987_569_1e-4);
    for c in [
        1.398_199_9e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        0.166_666_65,
        0.5,
    ] {
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
    }
    let r2 = _mm256_mul_ps(r, r);
    let p = _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), _mm256_set1_ps(1.0));
    let k = _mm256_cvtps_epi32(n);
    let low = _mm256_srai_epi32::<1>(k);
    let high = _mm256_sub_epi32(k, low);
    _mm256_mul_ps(_mm256_mul_ps(p, power_of_two(low)), power_of_two(high))
}

/// `σ(g) = 1 / (1 + e^−g)`.
#[target_feature(enable = "avx2,fma")]
fn sigmoid(g: __m256) -> __m256 {
    let one = _mm256_set1_ps(1.0);
    _mm256_div_ps(
        one,
        _mm256_add_ps(one, exp(_mm256_sub_ps(_mm256_setzero_ps(), g))),
    )
}

/// See `simd::exp_sum`.
#[target_feature(enable = "avx2,fma")]
pub fn exp_sum(values: &mut [f32], shift: f32) -> f32 {
    let shift = _mm256_set1_ps(shift);
    let mut sum = _mm256_setzero_ps();
    for (i, count) in steps(values.len()) {
        let value = exp(_mm256_sub_ps(load(values, i, count), shift));
        let value = if count == LANES {
            value
        } else {
            _mm256_and_ps(value, _mm256_castsi256_ps(lane_mask(count)))
        };
        store(values, i, count, value);
        sum = _mm256_add_ps(sum, value);
    }
    sum_lanes(sum)
}

/// See `simd::max`.
#[target_feature(enable = "avx2,fma")]
pub fn max(src: &[f32]) -> f32 {
    let lowest = _mm256_set1_ps(f32::NEG_INFINITY);
    let mut best = lowest;
    for (i, count) in steps(src.len()) {
        let value = load(src, i, count);
        let value = if count == LANES {
            value
        } else {
            _mm256_blendv_ps(lowest, value, _mm256_castsi256_ps(lane_mask(count)))
        };
        best = _mm256_max_ps(best, value);
    }
    max_lanes(best)
}

/// See `simd::dot`.
#[target_feature(enable = "avx2,fma")]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut sum = _mm256_setzero_ps();
    for (i, count) in steps(a.len()) {
        sum = _mm256_fmadd_ps(load(a, i, count), load(b, i, count), sum);
    }
    sum_lanes(sum)
}

/// See `simd::silu_mul`.
#[target_feature(enable = "avx2,fma")]
pub fn silu_mul(gate: &[f32], up: &[f32], out: &mut [f32]) {
    for (i, count) in steps(gate.len()) {
        let g = load(gate, i, count);
        let value = _mm256_mul_ps(_mm256_mul_ps(g, sigmoid(g)), load(up, i, count));
        store(out, i, count, value);
    }
}

/// See `simd::swiglu_grad`.
#[target_feature(enable = "avx2,fma")]
pub fn swiglu_grad(gate: &[f32], up: &[f32], grad: &[f32], d_gate: &mut [f32], d_up: &mut [f32]) {
    let one = _mm256_set1_ps(1.0);
    for (i, count) in steps(gate.len()) {
        let g = load(gate, i, count);
        let dy = load(grad, i, count);
        let s = sigmoid(g);
        let silu = _mm256_mul_ps(g, s);
        let slope = _mm256_mul_ps(s, _mm256_fmadd_ps(g, _mm256_sub_ps(one, s), one));
        let dg = _mm256_mul_ps(_mm256_mul_ps(dy, load(up, i, count)), slope);
        store(d_gate, i, count, dg);
        store(d_up, i, count, _mm256_mul_ps(dy, silu));
    }
}

/// The weight rows of a tile for a block of `rows` input rows: as many as keep the
/// accumulators, the weights and one input in AVX2's sixteen registers (up to 4 rows × 2).
pub fn tile_width(rows: usize) -> usize {
    match rows {
        1 => 6,
        2 => 4,
        3 => 3,
        _ => 2,
    }
}

/// Sums `x[i]·w[j]` for `mr` (≤ 4) rows of `x` and `nr` (≤ 6) rows of `w`, all of width
/// `k`: 1×6, 2×4, 3×3 and 4×2 keep their accumulators, weights and input in AVX2's sixteen
/// registers (`tile_width`); other shapes run as 1×1 tiles. Each sum is accumulated the
/// same way in any shape.
#[target_feature(enable = "avx2,fma")]
pub fn tile(x: &[f32], w: &[f32], k: usize, mr: usize, nr: usize) -> TileSums {
    match (mr, nr) {
        (1, 6) => widen(tile_of::<1, 6>(x, w, k)),
        (2, 4) => widen(tile_of::<2, 4>(x, w, k)),
        (3, 3) => widen(tile_of::<3, 3>(x, w, k)),
        (4, 2) => widen(tile_of::<4, 2>(x, w, k)),
        (3, 2) => widen(tile_of::<3, 2>(x, w, k)),
        (2, 2) => widen(tile_of::<2, 2>(x, w, k)),
        (1, 2) => widen(tile_of::<1, 2>(x, w, k)),
        _ => {
            let mut sums = [[0.0; 6]; 4];
            for (i, row) in sums.iter_mut().enumerate().take(mr) {
                for (j, sum) in row.iter_mut().enumerate().take(nr) {
                    *sum = tile_of::<1, 1>(&x[i * k..], &w[j * k..], k)[0][0];
                }
            }
            sums
        }
    }
}

#[target_feature(enable = "avx2,fma")]
fn tile_of<const MR: usize, const NR: usize>(x: &[f32], w: &[f32], k: usize) -> [[f32; NR]; MR] {
    assert!(
        x.len() >= MR * k && w.len() >= NR * k,
        "tile past its inputs"
    );
    let mut acc = [[_mm256_setzero_ps(); NR]; MR];
    for (l, count) in steps(k) {
        let mut weights = [_mm256_setzero_ps(); NR];
        for (j, weight) in weights.iter_mut().enumerate() {
            *weight = load(w, j * k + l, count);
        }
        for (i, acc) in acc.iter_mut().enumerate() {
            let input = load(x, i * k + l, count);
            for (acc, weight) in acc.iter_mut().zip(&weights) {
                *acc = _mm256_fmadd_ps(input, *weight, *acc);
            }
        }
    }
    let mut sums = [[0.0; NR]; MR];
    for (sums, acc) in sums.iter_mut().zip(&acc) {
        for (sum, acc) in sums.iter_mut().zip(acc) {
            *sum = sum_lanes(*acc);
        }
    }
    sums
}
