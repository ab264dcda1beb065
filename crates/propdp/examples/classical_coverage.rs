//! Coverage of the classical private interval (d below 200, d/n small;
//! docs/inference.md): draws data sets with rows N(0, I/d), θ* ~ N(0, s²I)
//! and no intercept, fits each privately with [`propdp::inference::fit`]
//! and counts how often the 95% intervals hold the ridge target θ*_λ,j
//! (over all coordinates, with the standard error over data sets) and its
//! intercept 0, and how often they hold the model's θ*_j.
//!
//! The target: by rotation invariance θ*_λ = c·θ* (intercept 0 by the
//! labels' symmetry), c the root of n·E[ℓ'(y, cν)ν] + λc‖θ*‖² = 0 over
//! ν = xᵀθ* ~ N(0, ‖θ*‖²/d) and y given ν (a grid of 1601 points in ν, and
//! 401 in the Gaussian label noise for Huber; Brent's method).
//!
//! ```text
//! cargo run --release -p propdp --example classical_coverage -- \
//!     logistic|huber objective|output D N EPSILON [--reps 200] [--s2 S2] [--lambda L] \
//!     [--row-norm R] [--seed 1]
//! ```
//! Huber (M = 1) labels: xᵀθ* + N(0, 0.5²). λ defaults to `auto`,
//! [`propdp::inference::classical::sufficient_lambda`]. One line of JSON
//! per run.

use nalgebra::DVector;
use propdp::core::Algorithm;
use propdp::core::NoiseLaw;
use propdp::core::accountant::{ExtraRidge, Neighbouring};
use propdp::inference::{Glm, Spec, fit};
use propdp::sim::data::{draw_noise, fill_gaussian};
use propdp::sim::rng::stream;
use rand::RngExt;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: f64| -> f64 {
        args.iter()
            .position(|a| a == name)
            .map_or(default, |i| args[i + 1].parse().expect("a number"))
    };
    let (model, release) = (args[0].as_str(), args[1].as_str());
    let d: usize = args[2].parse().expect("D");
    let n: usize = args[3].parse().expect("N");
    let epsilon: f64 = args[4].parse().expect("EPSILON");
    let reps = flag("--reps", 200.0) as u64;
    let logistic = model == "logistic";
    let s2 = flag("--s2", if logistic { 4.0 } else { 1.0 });
    let seed = flag("--seed", 1.0) as u64;
    let spec = Spec {
        model: if logistic { Glm::Logistic } else { Glm::Huber { m: 1.0 } },
        // λ = 1 until chosen below; the noise is 0 until the budget calibrates it
        algorithm: if release == "output" {
            Algorithm::Output { lambda: 1.0, tau: 0.0 }
        } else {
            Algorithm::Objective {
                lambda: 1.0,
                sigma: 0.0,
            }
        },
        epsilon,
        delta_priv: 1e-6,
        neighbouring: Neighbouring::ReplaceOne,
        row_norm: flag("--row-norm", 1.5),
        noise: None,
        holdout: 0.0,
        test_clip: None,
        extra_ridge: ExtraRidge::Auto,
        standardize: false,
        intercept: false,
    };
    // λ: given, or the smallest never refused for its Hessian's noise
    let lambda = match args.iter().position(|a| a == "--lambda") {
        Some(i) if args[i + 1] != "auto" => args[i + 1].parse().expect("a number"),
        _ => propdp::inference::classical::sufficient_lambda(&spec, d).unwrap(),
    };
    let spec = Spec {
        algorithm: spec.algorithm.with_lambda(lambda),
        ..spec
    };
    let noise = NoiseLaw::Gaussian { sd: 0.5 };
    let (mut per_set, mut model_hits, mut intercept_hit, mut refused, mut width) = (vec![], 0.0, 0, 0, 0.0);
    for rep in 0..reps {
        let mut rng = stream(seed, &[rep]);
        let mut theta = DVector::zeros(d);
        fill_gaussian(&mut theta, &mut rng);
        theta *= s2.sqrt();
        let mut rows = vec![0.0; n * d];
        for v in &mut rows {
            *v = rng.sample::<f64, _>(rand_distr::StandardNormal) / (d as f64).sqrt();
        }
        let y: Vec<f64> = rows
            .chunks_exact(d)
            .map(|x| {
                let nu: f64 = x.iter().zip(theta.iter()).map(|(a, b)| a * b).sum::<f64>();
                if logistic {
                    if rng.random::<f64>() < 1.0 / (1.0 + (-nu).exp()) {
                        1.0
                    } else {
                        -1.0
                    }
                } else {
                    nu + draw_noise(&noise, &mut rng)
                }
            })
            .collect();
        let f = match fit(&rows, n, d, &y, &spec, Some(seed * 100_000 + rep)) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("rep {rep}: {e:#}");
                refused += 1;
                continue;
            }
        };
        assert_eq!(f.method, propdp::inference::Method::Classical);
        let c = shrink(logistic, n as f64, spec.lambda(), &theta);
        let target = &theta * c;
        let ci = f.conf_int(0.05).unwrap();
        let se = f.standard_errors();
        model_hits += ci
            .iter()
            .zip(theta.iter())
            .filter(|((lo, hi), t)| lo <= *t && *t <= hi)
            .count() as f64
            / d as f64;
        let hits = ci
            .iter()
            .zip(target.iter())
            .filter(|((lo, hi), t)| lo <= *t && *t <= hi)
            .count();
        per_set.push(hits as f64 / d as f64);
        width += se.iter().sum::<f64>() / d as f64;
        if std::env::var("VERBOSE").is_ok() {
            let c = f.classical.as_ref().expect("classical");
            eprintln!(
                "snr {:.2} cover {:.3}",
                c.hessian_min / c.hessian_noise,
                per_set[per_set.len() - 1]
            );
        }
        let b = f
            .intercept_int(0.05)
            .unwrap()
            .expect("a classical fit has an intercept");
        intercept_hit += usize::from(b.lower <= 0.0 && 0.0 <= b.upper);
    }
    let k = per_set.len() as f64;
    let mean = per_set.iter().sum::<f64>() / k;
    let var = per_set.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (k - 1.0).max(1.0);
    println!(
        "{}",
        serde_json::json!({
            "model": model, "release": release, "d": d, "n": n, "epsilon": epsilon, "s2": s2,
            "lambda": spec.lambda(), "row_norm": spec.row_norm, "reps": reps,
            "coverage": (mean * 1e4).round() / 1e4, "se": ((var / k).sqrt() * 1e4).round() / 1e4,
            "intercept_coverage": intercept_hit as f64 / k, "model_coverage": (model_hits / k * 1e4).round() / 1e4,
            "mean_se": (width / k * 1e4).round() / 1e4, "refused": refused,
        })
    );
}

/// c of the ridge target θ*_λ = c·θ*: the root of n·E[ℓ'(y, cν)ν] + λc‖θ*‖²
/// (logistic labels, or Huber M = 1 with Gaussian noise of sd 0.5).
fn shrink(logistic: bool, n: f64, lambda: f64, theta: &DVector<f64>) -> f64 {
    let norm2 = theta.norm_squared();
    let sd = (norm2 / theta.len() as f64).sqrt();
    // E over t ~ N(0, 1) on a grid: Σ w·f(t), w ∝ φ(t)
    let grid = |k: usize| -> Vec<(f64, f64)> {
        let h = 16.0 / (k - 1) as f64;
        let pts: Vec<(f64, f64)> = (0..k)
            .map(|i| {
                let t = -8.0 + i as f64 * h;
                (t, (-0.5 * t * t).exp())
            })
            .collect();
        let total: f64 = pts.iter().map(|p| p.1).sum();
        pts.into_iter().map(|(t, w)| (t, w / total)).collect()
    };
    let (outer, inner) = (grid(1601), grid(401));
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let gradient = |c: f64| -> f64 {
        let mean: f64 = outer
            .iter()
            .map(|&(t, w)| {
                let nu = sd * t;
                let slope = if logistic {
                    // ℓ'(y, η) = −y·σ(−yη), y = 1 with probability σ(ν)
                    -sigmoid(nu) * sigmoid(-c * nu) + sigmoid(-nu) * sigmoid(c * nu)
                } else {
                    // ℓ' = −ψ(y − cν), y − cν = (1 − c)ν + e
                    -inner
                        .iter()
                        .map(|&(u, v)| v * ((1.0 - c) * nu + 0.5 * u).clamp(-1.0, 1.0))
                        .sum::<f64>()
                };
                w * slope * nu
            })
            .sum();
        n * mean + lambda * c * norm2
    };
    propdp::theory::numerics::roots::brent_absolute(0.0, 2.0, gradient, 1e-12, 200)
        .expect("the ridge target's shrink lies in (0, 2)")
}
