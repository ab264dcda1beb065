//! The 1-D minimiser of the λ and η searches: Brent's method (argmin's
//! `BrentOpt`) on an interval. A leaf: it names nothing of `tune/`.

/// A value standing for +∞ (the budget is out of reach, or the theory has
/// no solution) in the 1-D searches: far above any metric, yet finite, so
/// Brent's parabolic steps stay finite and fall back to golden-section steps.
const UNREACHABLE: f64 = 1e100;

/// `f` as an argmin cost function of one variable.
struct Cost<F>(F);

impl<F: Fn(f64) -> f64> argmin::core::CostFunction for Cost<F> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, x: &f64) -> Result<f64, argmin::core::Error> {
        Ok((self.0)(*x).min(UNREACHABLE))
    }
}

/// A minimiser of `f` on [a, b] by Brent's method (argmin's `BrentOpt`,
/// parabolic interpolation with golden-section safeguard) to an absolute
/// accuracy of about `tol` in x (the searches run in log λ and log η). `f`
/// may return +∞ where the budget cannot be met.
pub(super) fn minimise<F: Fn(f64) -> f64>(f: F, a: f64, b: f64, tol: f64) -> f64 {
    let solver = argmin::solver::brent::BrentOpt::new(a, b).set_tolerance(f64::EPSILON.sqrt(), tol);
    match argmin::core::Executor::new(Cost(f), solver)
        .configure(|state| state.max_iters(200))
        .run()
    {
        Ok(res) => res.state.best_param.unwrap_or(0.5 * (a + b)),
        Err(_) => 0.5 * (a + b),
    }
}
