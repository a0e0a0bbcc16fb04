//! The sums of a register tile of the few-rows decoding kernel (`small_matmul`), shared by its
//! AVX-512 and AVX2 tiles.

/// The sums of a register tile: up to 4 input rows × 6 weight rows.
pub type TileSums = [[f32; 6]; 4];

/// A tile's `[MR][NR]` sums in the corner of a `TileSums`.
pub fn widen<const MR: usize, const NR: usize>(sums: [[f32; NR]; MR]) -> TileSums {
    let mut out = [[0.0; 6]; 4];
    for (row, sums) in out.iter_mut().zip(sums) {
        row[..NR].copy_from_slice(&sums);
    }
    out
}
