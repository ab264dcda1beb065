//! Bracketed 1-D root finding, every one by `roots::find_root_brent`: with a
//! convergence rule that is relative in x and counts iterations ([`brent`]),
//! absolute in x and f ([`brent_absolute`]), or 4 ulp of the bracket with
//! only an exact zero of f accepted early ([`brent_ulp`], the accountant's).

/// Relative/absolute tolerance in x, with an iteration counter.
pub struct Tol {
    /// Relative tolerance.
    pub rel: f64,
    /// Absolute tolerance.
    pub abs: f64,
    /// Iteration cap.
    pub max_iter: usize,
    /// Iterations used by the last call.
    pub iterations: usize,
}

impl ::roots::Convergency<f64> for Tol {
    fn is_root_found(&mut self, y: f64) -> bool {
        y == 0.0
    }
    fn is_converged(&mut self, a: f64, b: f64) -> bool {
        (a - b).abs() <= self.rel * a.abs().max(b.abs()) + self.abs
    }
    fn is_iteration_limit_reached(&mut self, iter: usize) -> bool {
        self.iterations = iter;
        iter >= self.max_iter
    }
}

/// Root of `f` in [a, b] (f(a), f(b) of opposite signs). Returns the root and
/// the iterations used, or `None` if there is no sign change or Brent stalls.
pub fn brent<F: Fn(f64) -> f64>(a: f64, b: f64, f: F, rel: f64, max_iter: usize) -> Option<(f64, usize)> {
    let mut tol = Tol {
        rel,
        abs: 1e-300,
        max_iter,
        iterations: 0,
    };
    ::roots::find_root_brent(a, b, &f, &mut tol)
        .ok()
        .map(|x| (x, tol.iterations))
}

/// Root of `f` in [a, b] (f(a), f(b) of opposite signs) to `eps` absolute in
/// x and in f (`roots::SimpleConvergency`), or `None` if there is no sign
/// change or Brent stalls.
pub fn brent_absolute<F: Fn(f64) -> f64>(a: f64, b: f64, f: F, eps: f64, max_iter: usize) -> Option<f64> {
    let mut tol = ::roots::SimpleConvergency { eps, max_iter };
    ::roots::find_root_brent(a, b, &f, &mut tol).ok()
}

/// Root of a monotone function on [lo, hi] by Brent, to 4 ulp
/// relative in x (or f exactly 0). `f` must be O(1)-scaled near the root:
/// `roots` tests signs by the product f(a)·f(s), which underflows to 0 for
/// values near 1e-161 and sends the bracket the wrong way (ε = 0.100001 was
/// reported for δ = 1e-161, ε = 0.1); callers pass log-space differences.
pub fn brent_ulp<F: Fn(f64) -> f64>(f: F, lo: f64, hi: f64) -> Option<f64> {
    ::roots::find_root_brent(lo, hi, &f, &mut Relative).ok()
}

/// Convergence of [`brent_ulp`]: an absolute x tolerance cannot be met by
/// roots far from 0 (at ε ≈ 1e4 the spacing of doubles is 2e-12), so the
/// bracket is asked to shrink to 4 ulp of its end points; and no absolute
/// |f| is small enough to stop on (at δ = 1e-75 every δ(ε) − δ is below
/// 1e-15), so only an exact 0 does.
struct Relative;

impl ::roots::Convergency<f64> for Relative {
    fn is_root_found(&mut self, y: f64) -> bool {
        y == 0.0
    }
    fn is_converged(&mut self, x1: f64, x2: f64) -> bool {
        (x1 - x2).abs() <= 4.0 * f64::EPSILON * x1.abs().max(x2.abs()) + f64::MIN_POSITIVE
    }
    fn is_iteration_limit_reached(&mut self, iter: usize) -> bool {
        iter >= 500
    }
}
