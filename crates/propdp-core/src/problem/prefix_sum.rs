//! The prefix-sum-optimal banded Toeplitz strategy (`strategy = { bands = B }`,
//! docs/correlated_noise.md): the b coefficients c minimising the mean
//! squared error of the T noisy prefix sums of the matrix mechanism with
//! strategy C, per unit of sensitivity ‖c‖₂ (one participation, b ≤ G):
//!
//!   L(c) = ‖c‖² · (1/T) ‖A C⁻¹‖²_F = ‖c‖² · (1/T) Σ_{m<T} (T − m)·H_m²,
//!
//! A the T × T lower-triangular all-ones matrix (prefix sums), h the first
//! column of C⁻¹ and H_m = Σ_{k≤m} h_k (A C⁻¹ is Toeplitz with first column
//! H). This is jax_privacy's objective: at T = 1024 and 4 bands its
//! minimiser is (0.5863, 0.5036, 0.4685, 0.4279) to four digits, as
//! `toeplitz.optimize_banded_toeplitz` returns.
//!
//! L is scale invariant; it is minimised by BFGS on the unit sphere from
//! the first b Taylor coefficients of (1 − x)^(−1/2) (the T → ∞ optimum),
//! with the gradient by the adjoint: ∂h/∂c_k = −C⁻¹S_k h (S_k the shift by
//! k), so ∂(‖AC⁻¹‖²_F/T)/∂c_k = −Σ_m λ_m h_{m−k} with λ = C⁻ᵀ g,
//! g_m = (2/T) Σ_{m'≥m} (T − m')H_{m'}.
//!
//! # References
//! - C. A. Choquette-Choo, A. Ganesh, R. McKenna, H. B. McMahan, K. Rush,
//!   A. Thakurta, Z. Xu, "(Amplified) Banded Matrix Factorization: A
//!   unified approach to private training", arXiv:2306.08153 (2023).
//! - H. Fichtenberger, M. Henzinger, J. Upadhyay, "Constant matters:
//!   fine-grained error bound on differentially private continual
//!   observation", ICML 2023 (the (1 − x)^(−1/2) factorization).

/// The first column h of C⁻¹ over `n` steps (C banded Toeplitz with first column `c`).
fn inverse_column(c: &[f64], n: usize) -> Vec<f64> {
    let mut h = vec![0.0; n];
    for m in 0..n {
        let z = if m == 0 { 1.0 } else { 0.0 };
        let memory: f64 = (1..c.len().min(m + 1)).map(|k| c[k] * h[m - k]).sum();
        h[m] = (z - memory) / c[0];
    }
    h
}

/// L(c) and its gradient (see the module docs).
fn loss_and_gradient(c: &[f64], n: usize) -> (f64, Vec<f64>) {
    let h = inverse_column(c, n);
    let mut big_h = h.clone();
    for m in 1..n {
        big_h[m] += big_h[m - 1];
    }
    let nf = n as f64;
    let e: f64 = big_h
        .iter()
        .enumerate()
        .map(|(m, x)| (nf - m as f64) * x * x)
        .sum::<f64>()
        / nf;
    // g_m = (2/n) Σ_{m' ≥ m} (n − m') H_{m'}; λ = C⁻ᵀg by back substitution
    let mut g = vec![0.0; n];
    let mut acc = 0.0;
    for m in (0..n).rev() {
        acc += 2.0 * (nf - m as f64) * big_h[m] / nf;
        g[m] = acc;
    }
    let mut lam = vec![0.0; n];
    for m in (0..n).rev() {
        let later: f64 = (1..c.len()).filter(|k| m + k < n).map(|k| c[k] * lam[m + k]).sum();
        lam[m] = (g[m] - later) / c[0];
    }
    let norm2: f64 = c.iter().map(|x| x * x).sum();
    let grad = (0..c.len())
        .map(|k| {
            let de: f64 = -(k..n).map(|m| lam[m] * h[m - k]).sum::<f64>();
            2.0 * c[k] * e + norm2 * de
        })
        .collect();
    (norm2 * e, grad)
}

/// The minimiser of L over b = `bands` coefficients for `steps` steps,
/// normalised (‖c‖₂ = 1, c₀ > 0).
pub(super) fn optimal_coefficients(bands: usize, steps: usize) -> Vec<f64> {
    let b = bands;
    // the (1 − x)^(−1/2) start: 1, 1/2, 3/8, …
    let mut c: Vec<f64> = Vec::with_capacity(b);
    for k in 0..b {
        c.push(if k == 0 {
            1.0
        } else {
            c[k - 1] * (2 * k - 1) as f64 / (2 * k) as f64
        });
    }
    normalise(&mut c);
    let (mut f, mut grad) = loss_and_gradient(&c, steps);
    // BFGS with an Armijo backtracking line search, the inverse Hessian approximation `inv`
    let mut inv: Vec<Vec<f64>> = (0..b)
        .map(|i| (0..b).map(|j| f64::from(u8::from(i == j))).collect())
        .collect();
    for _ in 0..500 {
        let dir: Vec<f64> = inv.iter().map(|row| -dot(row, &grad)).collect();
        let slope = dot(&dir, &grad);
        if slope >= 0.0 || grad.iter().map(|x| x.abs()).fold(0.0, f64::max) < 1e-12 * f {
            break;
        }
        let mut step = 1.0;
        let (next, f_next, grad_next) = loop {
            let trial: Vec<f64> = c.iter().zip(&dir).map(|(x, d)| x + step * d).collect();
            if trial[0] > 0.0 {
                let (ft, gt) = loss_and_gradient(&trial, steps);
                if ft <= f + 1e-4 * step * slope {
                    break (trial, ft, gt);
                }
            }
            step *= 0.5;
            if step < 1e-12 {
                return c;
            }
        };
        let s: Vec<f64> = next.iter().zip(&c).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = grad_next.iter().zip(&grad).map(|(a, b)| a - b).collect();
        let sy = dot(&s, &y);
        if sy > 0.0 {
            // inv ← (I − ρsyᵀ) inv (I − ρysᵀ) + ρssᵀ
            let rho = 1.0 / sy;
            let hy: Vec<f64> = inv.iter().map(|row| dot(row, &y)).collect();
            let yhy = dot(&y, &hy);
            for i in 0..b {
                for j in 0..b {
                    inv[i][j] += -rho * (hy[i] * s[j] + s[i] * hy[j]) + (rho * rho * yhy + rho) * s[i] * s[j];
                }
            }
        }
        let done = (f - f_next).abs() <= 1e-15 * f;
        (c, f, grad) = (next, f_next, grad_next);
        if done {
            break;
        }
    }
    normalise(&mut c);
    c
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn normalise(c: &mut [f64]) {
    let norm = dot(c, c).sqrt();
    c.iter_mut().for_each(|x| *x /= norm);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gradient_is_the_loss_s_derivative() {
        let c = [0.7, 0.4, 0.3, -0.1];
        let (_, grad) = loss_and_gradient(&c, 50);
        for k in 0..c.len() {
            let mut up = c;
            let mut down = c;
            up[k] += 1e-6;
            down[k] -= 1e-6;
            let fd = (loss_and_gradient(&up, 50).0 - loss_and_gradient(&down, 50).0) / 2e-6;
            assert!(
                (fd - grad[k]).abs() < 1e-6 * fd.abs().max(1.0),
                "{k}: {fd} vs {}",
                grad[k]
            );
        }
    }

    #[test]
    fn four_bands_at_1024_steps_are_jax_privacy_s() {
        // toeplitz.optimize_banded_toeplitz(1024, 4), as published to four digits
        let c = optimal_coefficients(4, 1024);
        for (got, want) in c.iter().zip([0.5863, 0.5036, 0.4685, 0.4279]) {
            assert!((got - want).abs() < 6e-5, "{c:?}");
        }
        // and the optimum beats independent noise's L = (T + 1)/2
        let (l, _) = loss_and_gradient(&c, 1024);
        assert!(l < 0.27 * 512.5, "{l}");
    }
}
