//! The logistic solver's quadrature (one integral over the estimator's field
//! ω in prox space, the teacher field ν integrated out given ω, y ↦ −y
//! symmetry) against an independent integrator: nested adaptive double-exponential quadrature over (ν, ξ)
//! with both label terms written out. At a converged state the independent
//! channel expectations, pushed through the denoiser, must return the state.

use propdp_core::config::SolverOptions;
use propdp_theory::fixed_points::logistic::{LogisticParams, LogisticSolver, prox, sigmoid};

/// ∫ f(x) φ(x/sd)/sd dx over the real line, via x = t/(1 − t²).
fn gauss_integral<F: Fn(f64) -> f64>(sd: f64, f: F, tol: f64) -> f64 {
    let g = |t: f64| {
        let om = 1.0 - t * t;
        if om <= 0.0 {
            return 0.0;
        }
        let x = t / om;
        let z = x / sd;
        let w = (-0.5 * z * z).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt()) * (1.0 + t * t) / (om * om);
        if w == 0.0 { 0.0 } else { w * f(x) }
    };
    quadrature::integrate(g, -1.0, 1.0, tol).integral
}

/// ∫ f(x) φ(x) dx split at `breaks` (sorted): adaptive on each finite piece,
/// x = a ∓ t/(1 − t) on the two tails.
fn gauss_integral_split<F: Fn(f64) -> f64>(mut breaks: [f64; 3], f: F, tol: f64) -> f64 {
    let phi = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let g = |x: f64| {
        let w = phi(x);
        if w == 0.0 { 0.0 } else { w * f(x) }
    };
    let tail = |a: f64, dir: f64| {
        quadrature::integrate(
            |t: f64| {
                if t >= 1.0 {
                    return 0.0;
                }
                let om = 1.0 - t;
                g(a + dir * t / om) / (om * om)
            },
            0.0,
            1.0,
            tol,
        )
        .integral
    };
    breaks.sort_by(f64::total_cmp);
    let inner: f64 = breaks
        .windows(2)
        .map(|w| quadrature::integrate(g, w[0], w[1], tol).integral)
        .sum();
    tail(breaks[0], -1.0) + inner + tail(breaks[2], 1.0)
}

fn independent_map(p: &LogisticParams, m: f64, q: f64, v: f64) -> (f64, f64, f64) {
    let s = p.s2.sqrt();
    let b = m / p.s2;
    let tp = (q - m * m / p.s2).sqrt();
    let hat = |which: usize| {
        gauss_integral(
            s,
            |nu| {
                let sn = sigmoid(nu);
                // kinks of the two proxes where ω = bν + τξ crosses −V, 0, V
                let kinks = [(-v - b * nu) / tp, -b * nu / tp, (v - b * nu) / tp];
                gauss_integral_split(
                    kinks,
                    |xi| {
                        let w = b * nu + tp * xi;
                        let (pp, pm) = (prox(-w, v), prox(w, v));
                        let (sp, sm) = (sigmoid(pp), sigmoid(pm));
                        let h = |x: f64| {
                            let r = sigmoid(x) * (1.0 - sigmoid(x));
                            r / (1.0 + v * r)
                        };
                        match which {
                            0 => sn * (1.0 - sn) * (sp + sm),
                            1 => sn * sp * sp + (1.0 - sn) * sm * sm,
                            _ => sn * h(pp) + (1.0 - sn) * h(pm),
                        }
                    },
                    1e-12,
                )
            },
            1e-11,
        ) / p.delta
    };
    let (mh, qh, vh) = (hat(0), hat(1), hat(2));
    let den = p.lambda + vh;
    (
        mh * p.s2 / den,
        (mh * mh * p.s2 + qh + p.sigma * p.sigma) / (den * den),
        1.0 / den,
    )
}

#[test]
fn solutions_are_fixed_points_under_independent_quadrature() {
    let solver = LogisticSolver::new(SolverOptions::default().logistic());
    let cases = [
        LogisticParams {
            delta: 0.5,
            s2: 1.0,
            lambda: 1.0,
            sigma: 1.0,
        },
        LogisticParams {
            delta: 0.2,
            s2: 5.0,
            lambda: 0.0,
            sigma: 0.0,
        },
        LogisticParams {
            delta: 2.0,
            s2: 4.0,
            lambda: 1e-3,
            sigma: 0.0,
        },
        LogisticParams {
            delta: 1.0,
            s2: 1.0,
            lambda: 0.1,
            sigma: 5.0,
        },
        LogisticParams {
            delta: 0.3,
            s2: 9.0,
            lambda: 0.01,
            sigma: 2.0,
        },
    ];
    for p in cases {
        let (st, _) = solver.solve(&p, None).unwrap();
        let (m, q, v) = independent_map(&p, st.m, st.q, st.v);
        for (name, a, b) in [("m", st.m, m), ("q", st.q, q), ("V", st.v, v)] {
            assert!(
                (a - b).abs() <= 1e-6 * b.abs().max(1e-3),
                "{p:?}: {name} solver {a} vs independent {b}"
            );
        }
    }
}
