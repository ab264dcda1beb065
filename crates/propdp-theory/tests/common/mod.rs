//! Helpers shared by the state-evolution comparisons (`long_horizon.rs`,
//! `long_horizon_spectrum.rs`): the checkpoints a user reads a path at, and
//! z-scores of one solver's path against another's.

use propdp_theory::dynamics::DmftPath;

/// Checkpoints 1, 2, 5, 10, 20, 50, … up to T, and T.
pub fn checkpoints(steps: usize) -> Vec<usize> {
    let mut out: Vec<usize> = (0..)
        .map(|k| [1, 2, 5][k % 3] * 10usize.pow(k as u32 / 3))
        .take_while(|&t| t < steps)
        .collect();
    out.push(steps);
    out
}

/// The rms z-score of `a` against `b` over every metric and step t ≥ 1, and
/// the largest |z| at the checkpoints (the largest printed with its metric
/// and step). Over thousands of steps the per-step standard errors, each
/// estimated from a few replicates, have heavy tails, so the maximum is
/// taken where a user reads the path, as the simulation tests do.
pub fn z_scores(a: &DmftPath, b: &DmftPath) -> (f64, f64) {
    z_scores_with(a, b, 0.0)
}

/// [`z_scores`] with `a`'s stated approximation error (e.g. a compressed
/// spectrum's measured effect) added to the standard errors in quadrature.
pub fn z_scores_with(a: &DmftPath, b: &DmftPath, approx_error: f64) -> (f64, f64) {
    let (mut sum, mut max, mut count) = (0.0, 0.0f64, 0.0);
    let mut worst = String::new();
    for (name, va) in &a.mean {
        let (vb, sa, sb) = (&b.mean[name], &a.stderr[name], &b.stderr[name]);
        let steps = va.len() - 1;
        let marks = checkpoints(steps);
        for t in 1..=steps {
            let se = (sa[t].powi(2) + sb[t].powi(2) + approx_error.powi(2)).sqrt();
            let z = (va[t] - vb[t]) / se.max(1e-12);
            sum += z * z;
            count += 1.0;
            if marks.contains(&t) && z.abs() > max {
                max = z.abs();
                worst = format!("{name} at t = {t}: {} ± {} vs {} ± {}", va[t], sa[t], vb[t], sb[t]);
            }
        }
    }
    println!("largest |z| at a checkpoint {max:.2}: {worst}");
    ((sum / count).sqrt(), max)
}
