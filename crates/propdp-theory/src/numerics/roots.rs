//! Bracketed 1-D root finding, every one by `roots::find_root_brent`: with a
//! convergence rule that is relative in x and counts iterations ([`brent`]),
//! or absolute in x and f ([`brent_absolute`]).

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
