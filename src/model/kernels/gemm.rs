//! Matrix products on strided views, single-threaded for kernels that run many small
//! products in parallel tasks (attention per sequence and head) or spread over the pool. A
//! thin, bounds-checked layer over the `gemm` crate, on the micro-kernel of the instruction
//! set the caller names (`gemm_isa`).

use super::Isa;
use super::float::KernelFloat;
use super::gemm_isa::Product;

/// A read-only strided matrix: element `(i, j)` is `data[i·row_stride + j·col_stride]`.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<'a, F> {
    data: &'a [F],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a, F> MatRef<'a, F> {
    /// A strided view; panics when it reaches past `data`.
    pub fn new(
        data: &'a [F],
        rows: usize,
        cols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> Self {
        assert!(
            span(rows, cols, row_stride, col_stride) <= data.len(),
            "matrix view {rows}×{cols} (strides {row_stride}, {col_stride}) past {} elements",
            data.len()
        );
        Self {
            data,
            rows,
            cols,
            row_stride,
            col_stride,
        }
    }

    /// A row-major `rows × cols` view.
    pub fn rows(data: &'a [F], rows: usize, cols: usize) -> Self {
        Self::new(data, rows, cols, cols, 1)
    }

    /// The transposed view (no copy).
    pub fn t(self) -> Self {
        Self {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }
}

/// A writable strided matrix.
#[derive(Debug)]
pub struct MatMut<'a, F> {
    data: &'a mut [F],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a, F> MatMut<'a, F> {
    /// A strided view; panics when it reaches past `data`.
    pub fn new(
        data: &'a mut [F],
        rows: usize,
        cols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> Self {
        assert!(
            span(rows, cols, row_stride, col_stride) <= data.len(),
            "matrix view {rows}×{cols} (strides {row_stride}, {col_stride}) past {} elements",
            data.len()
        );
        Self {
            data,
            rows,
            cols,
            row_stride,
            col_stride,
        }
    }

    /// A row-major `rows × cols` view.
    pub fn rows(data: &'a mut [F], rows: usize, cols: usize) -> Self {
        Self::new(data, rows, cols, cols, 1)
    }
}

/// Elements a view needs: one past its last element.
fn span(rows: usize, cols: usize, row_stride: usize, col_stride: usize) -> usize {
    if rows == 0 || cols == 0 {
        0
    } else {
        (rows - 1) * row_stride + (cols - 1) * col_stride + 1
    }
}

/// `dst = lhs·rhs`, or `dst += lhs·rhs` when `accumulate`, on the calling thread.
pub fn matmul<F: KernelFloat>(
    isa: Isa,
    dst: MatMut<'_, F>,
    lhs: MatRef<'_, F>,
    rhs: MatRef<'_, F>,
    accumulate: bool,
) {
    product(isa, dst, lhs, rhs, accumulate, gemm::Parallelism::None);
}

/// `matmul` spread over the thread pool, for one large product.
pub fn matmul_parallel<F: KernelFloat>(
    isa: Isa,
    dst: MatMut<'_, F>,
    lhs: MatRef<'_, F>,
    rhs: MatRef<'_, F>,
    accumulate: bool,
) {
    product(isa, dst, lhs, rhs, accumulate, pool());
}

/// The thread pool as gemm takes it.
fn pool() -> gemm::Parallelism {
    let threads = rayon::current_num_threads();
    if threads > 1 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    }
}

/// `lhs·rhs` as a new row-major matrix, spread over the thread pool. gemm writes each element
/// of the fresh buffer once; it is never zeroed first (a large product's zeroing costs a
/// pass over memory as long as the product's own output).
pub fn new_product<F: KernelFloat>(isa: Isa, lhs: MatRef<'_, F>, rhs: MatRef<'_, F>) -> Vec<F> {
    assert_eq!(
        lhs.cols, rhs.rows,
        "matmul shapes: {}×{} · {}×{}",
        lhs.rows, lhs.cols, rhs.rows, rhs.cols
    );
    let (rows, cols, depth) = (lhs.rows, rhs.cols, lhs.cols);
    if rows == 0 || cols == 0 || depth == 0 {
        return vec![F::zero(); rows * cols];
    }
    let stride = |value: usize| value as isize;
    let mut out: Vec<F> = Vec::with_capacity(rows * cols);
    // SAFETY: the views were checked against their slices when built and the shapes agree;
    // the destination is the fresh `rows × cols` row-major allocation. With `read_dst` false
    // gemm reads no destination element and writes every one (depth > 0), so all elements
    // are initialised when the length is set.
    unsafe {
        F::product(
            isa,
            Product {
                m: rows,
                n: cols,
                k: depth,
                dst: out.as_mut_ptr(),
                dst_strides: (1, stride(cols)),
                read_dst: false,
                lhs: lhs.data.as_ptr(),
                lhs_strides: (stride(lhs.col_stride), stride(lhs.row_stride)),
                rhs: rhs.data.as_ptr(),
                rhs_strides: (stride(rhs.col_stride), stride(rhs.row_stride)),
            },
            pool(),
        );
        out.set_len(rows * cols);
    }
    out
}

fn product<F: KernelFloat>(
    isa: Isa,
    dst: MatMut<'_, F>,
    lhs: MatRef<'_, F>,
    rhs: MatRef<'_, F>,
    accumulate: bool,
    parallelism: gemm::Parallelism,
) {
    assert!(
        lhs.rows == dst.rows && rhs.cols == dst.cols && lhs.cols == rhs.rows,
        "matmul shapes: {}×{} · {}×{} into {}×{}",
        lhs.rows,
        lhs.cols,
        rhs.rows,
        rhs.cols,
        dst.rows,
        dst.cols
    );
    if dst.rows == 0 || dst.cols == 0 {
        return;
    }
    let stride = |value: usize| value as isize;
    // SAFETY: every view was checked against its slice when it was built, the shapes agree,
    // `dst` is borrowed mutably and so cannot alias `lhs` or `rhs`, and gemm reads and writes
    // only elements of these views.
    unsafe {
        F::product(
            isa,
            Product {
                m: dst.rows,
                n: dst.cols,
                k: lhs.cols,
                dst: dst.data.as_mut_ptr(),
                dst_strides: (stride(dst.col_stride), stride(dst.row_stride)),
                read_dst: accumulate,
                lhs: lhs.data.as_ptr(),
                lhs_strides: (stride(lhs.col_stride), stride(lhs.row_stride)),
                rhs: rhs.data.as_ptr(),
                rhs_strides: (stride(rhs.col_stride), stride(rhs.row_stride)),
            },
            parallelism,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_products_and_accumulation_match_a_naive_product() {
        let (m, k, n) = (5, 7, 3);
        let a: Vec<f64> = (0..m * k).map(|i| (i as f64 * 0.37).sin()).collect();
        let b: Vec<f64> = (0..n * k).map(|i| (i as f64 * 0.11).cos()).collect();
        // b is stored as [n, k]; the product uses its transpose.
        let mut out = vec![1.0f64; m * n];
        matmul(
            Isa::best(),
            MatMut::rows(&mut out, m, n),
            MatRef::rows(&a, m, k),
            MatRef::rows(&b, n, k).t(),
            true,
        );
        for i in 0..m {
            for j in 0..n {
                let want: f64 = 1.0 + (0..k).map(|l| a[i * k + l] * b[j * k + l]).sum::<f64>();
                assert!((out[i * n + j] - want).abs() < 1e-12);
            }
        }
    }
}
