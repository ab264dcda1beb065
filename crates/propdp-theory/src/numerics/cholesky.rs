//! Small dense symmetric positive definite systems (A + ρI)x = b by the
//! Cholesky factorisation A + ρI = LLᵀ — the long-horizon solver's Gaussian
//! conditionings, dimension 10–100, one or two every step of every replicate.
//!
//! Left to right by columns (the left-looking, gaxpy form), L stored by
//! columns:
//!
//!   L(j.., j) = [A(j.., j) + ρe₁ − Σ_{k<j} L_jk·L(j.., k)] / L_jj,   L_jj² the bracket's first entry,
//!
//! each column's bracket built 16 entries (`TILE`) at a time in registers over
//! every earlier column (compiled for AVX2; columns are padded by a tile so
//! that the last one runs whole), then Ly = b forward and Lᵀx = y backward
//! over L's columns. Written here rather than taken from nalgebra, whose
//! generic factorisation took 1.5–2× as long at these sizes (bench
//! `cholesky`: n = 30 3.57 against 2.35 µs, n = 66 19.4 against 9.74 µs),
//! and faer 0.22 was no faster than nalgebra (docs/performance.md,
//! "Session 45").
//!
//! # References
//! - Golub, Van Loan (2013), *Matrix Computations*, 4th ed., §4.2
//!   (the Cholesky factorisation, its gaxpy form).

use nalgebra::{DMatrix, DVector};

use super::dot_lanes;

/// x with (A + ρI)x = b, A's lower triangle read (as nalgebra's `cholesky`
/// reads it); `None` when A + ρI is not numerically positive definite (a
/// pivot ≤ 0 or not finite).
///
/// ```
/// use nalgebra::{DMatrix, DVector};
/// use propdp_theory::numerics::cholesky::spd_solve;
/// let a = DMatrix::from_row_slice(2, 2, &[4.0, 2.0, 2.0, 3.0]);
/// let x = spd_solve(&a, 0.0, &DVector::from_vec(vec![2.0, 1.0])).unwrap();
/// assert!((x[0] - 0.5).abs() < 1e-15 && x[1].abs() < 1e-15);
/// assert!(spd_solve(&DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]), 0.0, &x).is_none());
/// ```
pub fn spd_solve(a: &DMatrix<f64>, ridge: f64, b: &DVector<f64>) -> Option<DVector<f64>> {
    let n = a.nrows();
    assert!(a.ncols() == n && b.len() == n, "spd_solve: a square system");
    // by columns, each padded with TILE zeros: a column's last tile may run past its end
    let stride = n + TILE;
    let mut l = vec![0.0; stride * n];
    for (j, col) in l.chunks_exact_mut(stride).enumerate() {
        col[j..n].copy_from_slice(&a.column(j).as_slice()[j..]);
        col[j] += ridge;
    }
    let mut x: Vec<f64> = b.iter().copied().collect();
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { factor_solve_avx2(&mut l, n, &mut x) }.then(|| DVector::from_vec(x));
    }
    factor_solve(&mut l, n, &mut x).then(|| DVector::from_vec(x))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn factor_solve_avx2(l: &mut [f64], n: usize, x: &mut [f64]) -> bool {
    factor_solve(l, n, x)
}

/// Elements of a column updated in registers at once (four AVX2 registers).
const TILE: usize = 16;

/// Factor `l` (n columns of n + [`TILE`], lower triangle) in place, left
/// to right — column j's entries below the diagonal are
/// A(j.., j) − Σ_{k<j} L_jk·L(j.., k), a tile at a time in registers, then
/// divided by the pivot's root — and solve for `x` in place; false at a
/// pivot that is not positive.
#[inline(always)]
fn factor_solve(l: &mut [f64], n: usize, x: &mut [f64]) -> bool {
    let stride = n + TILE;
    for j in 0..n {
        let (done, rest) = l.split_at_mut(j * stride);
        let col = &mut rest[j..stride];
        for off in (0..n - j).step_by(TILE) {
            let mut acc: [f64; TILE] = col[off..off + TILE].try_into().expect("a tile");
            for lk in done.chunks_exact(stride) {
                let (c, xs) = (lk[j], &lk[j + off..j + off + TILE]);
                for (a, v) in acc.iter_mut().zip(xs) {
                    *a -= c * v;
                }
            }
            col[off..off + TILE].copy_from_slice(&acc);
        }
        let pivot = col[0];
        if !(pivot > 0.0 && pivot.is_finite()) {
            return false;
        }
        let d = pivot.sqrt();
        col[0] = d;
        col[1..n - j].iter_mut().for_each(|v| *v /= d);
    }
    // Ly = b by columns, then Lᵀx = y by L's columns (Lᵀ's rows)
    for k in 0..n {
        let col = &l[k * stride..k * stride + n];
        x[k] /= col[k];
        let xk = x[k];
        for (xi, &lik) in x[k + 1..].iter_mut().zip(&col[k + 1..]) {
            *xi -= lik * xk;
        }
    }
    for k in (0..n).rev() {
        let col = &l[k * stride..k * stride + n];
        x[k] = (x[k] - dot_lanes(&col[k + 1..], &x[k + 1..])) / col[k];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against nalgebra's Cholesky on random SPD matrices of the sizes the
    /// solver meets (ridged as its callers ridge), and refusing what is not
    /// positive definite as nalgebra does.
    #[test]
    fn solves_as_nalgebras_cholesky_does() {
        let mut seed = 7u64;
        let mut uniform = || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for n in [1, 2, 3, 4, 5, 7, 8, 9, 30, 66, 101] {
            let g = DMatrix::from_fn(n, n + 3, |_, _| uniform());
            let mut a = &g * g.transpose();
            // an upper triangle that disagrees is not read
            for j in 1..n {
                a[(0, j)] = f64::NAN;
            }
            let b = DVector::from_fn(n, |_, _| uniform());
            let ridge = 1e-12 * a.diagonal().sum() / n as f64;
            let got = spd_solve(&a, ridge, &b).expect("positive definite");
            let mut ridged = a.clone();
            ridged.fill_upper_triangle_with_lower_triangle();
            for i in 0..n {
                ridged[(i, i)] += ridge;
            }
            let want = ridged.clone().cholesky().expect("positive definite").solve(&b);
            let residual = (&ridged * &got - &b).amax();
            assert!(residual < 1e-10 * b.amax().max(1.0), "n = {n}: residual {residual}");
            assert!((&got - &want).amax() <= 1e-9 * want.amax(), "n = {n}");
        }
        let indefinite = DMatrix::from_row_slice(3, 3, &[2.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 3.0]);
        assert!(spd_solve(&indefinite, 0.0, &DVector::zeros(3)).is_none());
        assert!(indefinite.cholesky().is_none());
        let singular = DMatrix::from_element(2, 2, 1.0);
        assert!(spd_solve(&singular, 0.0, &DVector::zeros(2)).is_none());
        assert!(spd_solve(&DMatrix::from_element(1, 1, f64::NAN), 0.0, &DVector::zeros(1)).is_none());
    }
}
