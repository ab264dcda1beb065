//! Coverage of propdp's private intervals (docs/inference.md): draws data
//! sets with rows N(0, I/d) and θ* ~ N(0, s²I), fits each privately with
//! [`propdp::inference::fit`] and counts how often the intervals hold θ*_j —
//! over all coordinates, on the large ones (|θ*_j| ≥ 1.5s), and for the
//! naive private Wald interval θ̂_j ± z·σ̂_eff centred at θ̂ — at 95% and 90%,
//! with each miss side and the standard error over data sets. With
//! `--bootstrap B`, also the parametric bootstrap's 95% interval (Ferrando,
//! Wang, Sheldon 2022): B data sets drawn from the fitted model (θ* = θ̂,
//! fresh rows N(0, I/d), the true label-noise law — in its favour), each
//! fitted by the same mechanism at the same noise, and the pivotal interval
//! [θ̂_j − q_0.975(θ̂ᵇ_j − θ̂_j), θ̂_j − q_0.025(θ̂ᵇ_j − θ̂_j)].
//!
//! ```text
//! cargo run --release -p propdp --example inference_coverage -- \
//!     logistic objective|output|dpsgd:T:ETA:Q[:C] DELTA LAMBDA EPSILON S2 [NOISE] [--d 400] [--reps 60] [--row-norm R] [--seed 1] \
//!     [--known-noise] [--bootstrap B]
//! ```
//! NOISE (Huber): `gaussian:SD`, `student:DOF:SCALE` or
//! `contaminated:SD:P:OUTLIER_SD`; with --known-noise the fit is told the
//! law (Huber). `dpsgd:T:ETA:Q[:C]`: T steps of DP-SGD at step size ETA,
//! sample rate Q, clip C (no bootstrap). One line of JSON per run.

use nalgebra::{DMatrix, DVector};
use propdp::core::NoiseLaw;
use propdp::core::loss::Loss;
use propdp::core::{Algorithm, LossVariant, Shape};
use propdp::inference::{Glm, Inference, Spec, fit};
use propdp::sim::data::{draw_gaussian_vector, draw_noise, fill_gaussian};
use propdp::sim::objective::Objective;
use propdp::sim::rng::{SimRng, stream};
use propdp_core::accountant::Neighbouring;
use rand::RngExt;

/// Rows N(0, I/d) as columns of Xᵀ (d × n) and labels of the model at θ*.
fn draw(
    rng: &mut SimRng,
    n: usize,
    theta: &DVector<f64>,
    logistic: bool,
    noise: &NoiseLaw,
) -> (DMatrix<f64>, Vec<f64>) {
    let d = theta.len();
    let mut x = DMatrix::zeros(d, n);
    for mut col in x.column_iter_mut() {
        for v in col.iter_mut() {
            *v = rng.sample::<f64, _>(rand_distr::StandardNormal) / (d as f64).sqrt();
        }
    }
    let nu = x.tr_mul(theta);
    let y = nu
        .iter()
        .map(|&v| {
            if logistic {
                if rng.random::<f64>() < 1.0 / (1.0 + (-v).exp()) {
                    1.0
                } else {
                    -1.0
                }
            } else {
                v + draw_noise(noise, rng)
            }
        })
        .collect();
    (x, y)
}

/// The parametric bootstrap's pivotal (1 − a) intervals of every θ*_j from
/// `b` refits at θ* = θ̂ by the fit's own mechanism and noise.
fn bootstrap(fit: &Inference, rng: &mut SimRng, b: usize, noise: &NoiseLaw, a: f64) -> Vec<(f64, f64)> {
    let (d, n) = (fit.d, fit.n);
    let theta = DVector::from_column_slice(&fit.params);
    let (logistic, loss) = match fit.spec.model {
        Glm::Logistic => (true, Loss::Logistic),
        Glm::Huber { m } => (false, Loss::Huber { m }),
    };
    let Shape::Static { lambda, sigma, tau } = fit.spec.algorithm.with_noise(fit.noise).shape() else {
        panic!("--bootstrap refits by objective or output perturbation only")
    };
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(b); d];
    for _ in 0..b {
        let (mut xt, y) = draw(rng, n, &theta, logistic, noise);
        for mut row in xt.column_iter_mut() {
            let norm = row.norm();
            if norm > fit.spec.row_norm {
                row *= fit.spec.row_norm / norm;
            }
        }
        let noise_vector = draw_gaussian_vector(d, rng);
        let y = DVector::from_vec(y);
        let o = Objective {
            xt: &xt,
            y: &y,
            loss,
            lambda,
            sigma,
            b: &noise_vector,
        };
        let (mut refit, _) = o.minimize(1e-9, 200).expect("a bootstrap refit converges");
        if tau > 0.0 {
            refit += tau * &noise_vector;
        }
        for (j, v) in refit.iter().enumerate() {
            draws[j].push(v - theta[j]);
        }
    }
    draws
        .iter_mut()
        .enumerate()
        .map(|(j, e)| {
            e.sort_by(f64::total_cmp);
            let q = |p: f64| e[((p * (b - 1) as f64).round() as usize).min(b - 1)];
            (theta[j] - q(1.0 - a / 2.0), theta[j] - q(a / 2.0))
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: &str| -> String {
        args.iter()
            .position(|a| a == name)
            .map_or(default.to_string(), |i| args[i + 1].clone())
    };
    let pos: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || !args[i - 1].starts_with("--")))
        .map(|(_, a)| a)
        .collect();
    let num = |i: usize| pos[i].parse::<f64>().expect("a number");
    let (model, release) = (pos[0].as_str(), pos[1].as_str());
    let (delta, lambda, epsilon, s2) = (num(2), num(3), num(4), num(5));
    let noise = match pos.get(6).map(|s| s.split(':').collect::<Vec<_>>()) {
        Some(p) if p[0] == "student" => NoiseLaw::StudentT {
            dof: p[1].parse().unwrap(),
            scale: p[2].parse().unwrap(),
        },
        Some(p) if p[0] == "contaminated" => NoiseLaw::Contaminated {
            sd: p[1].parse().unwrap(),
            p: p[2].parse().unwrap(),
            outlier_sd: p[3].parse().unwrap(),
        },
        Some(p) => NoiseLaw::Gaussian {
            sd: p[1].parse().unwrap(),
        },
        None => NoiseLaw::Gaussian { sd: 0.5 },
    };
    let d: usize = flag("--d", "400").parse().unwrap();
    let reps: usize = flag("--reps", "60").parse().unwrap();
    let row_norm: f64 = flag("--row-norm", "1").parse().unwrap();
    let seed: u64 = flag("--seed", "1").parse().unwrap();
    let n = (d as f64 / delta).round() as usize;
    let spec = Spec {
        model: if model == "logistic" {
            Glm::Logistic
        } else {
            Glm::Huber { m: 1.0 }
        },
        // the noise is 0 until the budget calibrates it
        algorithm: match release.split(':').next() {
            Some("objective") => Algorithm::Objective { lambda, sigma: 0.0 },
            Some("dpsgd") => {
                let usage = "dpsgd:T:ETA:Q[:C]";
                let p: Vec<&str> = release.strip_prefix("dpsgd:").expect(usage).split(':').collect();
                Algorithm::Dpsgd {
                    lambda,
                    sigma: 0.0,
                    eta: p[1].parse().expect(usage),
                    steps: p[0].parse().expect(usage),
                    loss_variant: LossVariant::Standard,
                    sample_rate: p[2].parse().expect(usage),
                    clip: p.get(3).map(|c| c.parse().expect(usage)),
                    groups: 1,
                    strategy: propdp_core::problem::Strategy::IDENTITY,
                }
            }
            _ => Algorithm::Output { lambda, tau: 0.0 },
        },
        epsilon,
        delta_priv: 1e-6,
        neighbouring: Neighbouring::ReplaceOne,
        row_norm,
        noise: args.iter().any(|a| a == "--known-noise").then_some(noise),
        holdout: 0.0,
        test_clip: None,
        extra_ridge: propdp::core::accountant::ExtraRidge::Auto,
        standardize: false,
        intercept: false,
    };
    let z95 = 1.959_963_984_540_054;
    let z90 = 1.644_853_626_951_472_2;
    // per data set: [cover95, low95, high95, cover90, large95, naive95], counts of large
    let mut per_set: Vec<[f64; 11]> = Vec::new();
    let (mut large_n, mut large_hit, mut large_plain, mut large_boot) = (0usize, 0usize, 0usize, 0usize);
    let boot: usize = flag("--bootstrap", "0").parse().unwrap();
    assert!(
        boot == 0 || spec.algorithm.gradient_steps().is_none(),
        "--bootstrap refits by objective or output perturbation only"
    );
    let mut alphas = Vec::new();
    let start = std::time::Instant::now();
    let mut refused = 0;
    for rep in 0..reps {
        let mut rng = stream(seed, &[rep as u64]);
        let mut theta = DVector::zeros(d);
        fill_gaussian(&mut theta, &mut rng);
        theta *= s2.sqrt();
        let (x, y) = draw(&mut rng, n, &theta, model == "logistic", &noise);
        let inf = match fit(x.as_slice(), n, d, &y, &spec, Some(seed * 1000 + rep as u64)) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("rep {rep}: {e:#}");
                refused += 1;
                continue;
            }
        };
        let nu = inf.nuisance.expect("d ≥ 200: a proportional fit");
        alphas.push(nu.alpha);
        let (c95, c90) = (inf.conf_int(0.05).unwrap(), inf.conf_int(0.10).unwrap());
        let mut row = [0.0; 11];
        let s = s2.sqrt();
        let th_v = nalgebra::DVector::from_column_slice(&inf.params);
        let alpha_real = th_v.dot(&theta) / theta.norm_squared();
        let sigma_real = (&th_v - alpha_real * &theta).norm() / (d as f64).sqrt();
        row[7] = nu.sigma_eff / sigma_real * d as f64;
        row[8] = (nu.alpha - alpha_real).powi(2) * d as f64;
        row[9] = nu.alpha_se.powi(2) * d as f64;
        for j in 0..d {
            let t = theta[j];
            let (lo, hi) = c95[j];
            row[0] += f64::from(u8::from(lo <= t && t <= hi));
            row[1] += f64::from(u8::from(t < lo));
            row[2] += f64::from(u8::from(t > hi));
            row[3] += f64::from(u8::from(c90[j].0 <= t && t <= c90[j].1));
            let th = inf.params[j];
            row[4] += f64::from(u8::from((th - alpha_real * t).abs() <= z95 * sigma_real));
            row[6] += f64::from(u8::from((th - nu.alpha * t).abs() <= z95 * nu.sigma_eff));
            row[5] += f64::from(u8::from((th - t).abs() <= z95 * nu.sigma_eff));
            if t.abs() >= 1.5 * s {
                large_n += 1;
                large_hit += usize::from(lo <= t && t <= hi);
                large_plain += usize::from((th - nu.alpha * t).abs() <= z95 * nu.sigma_eff);
            }
        }
        if boot > 0 {
            let ci = bootstrap(&inf, &mut stream(seed, &[rep as u64, 1]), boot, &noise, 0.05);
            for (j, &(lo, hi)) in ci.iter().enumerate() {
                let t = theta[j];
                row[10] += f64::from(u8::from(lo <= t && t <= hi));
                if t.abs() >= 1.5 * s {
                    large_boot += usize::from(lo <= t && t <= hi);
                }
            }
        }
        row.iter_mut().for_each(|v| *v /= d as f64);
        if std::env::var("VERBOSE").is_ok() {
            eprintln!(
                "rep {rep}: s2 {:.3} range {:?} alpha {:.4} se {:.4} real {:.4} sigma {:.4} real {:.4} cover {:.3} plain {:.3}",
                nu.s2, nu.s2_range, nu.alpha, nu.alpha_se, alpha_real, nu.sigma_eff, sigma_real, row[0], row[6]
            );
        }
        per_set.push(row);
    }
    let _ = z90;
    let k = per_set.len() as f64;
    let mean = |i: usize| per_set.iter().map(|r| r[i]).sum::<f64>() / k;
    let se = |i: usize| {
        let m = mean(i);
        (per_set.iter().map(|r| (r[i] - m).powi(2)).sum::<f64>() / (k - 1.0) / k).sqrt()
    };
    let a_mean = alphas.iter().sum::<f64>() / k;
    let a_sd = (alphas.iter().map(|a| (a - a_mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
    println!(
        "{{\"model\":\"{model}\",\"release\":\"{release}\",\"delta\":{delta},\"lambda\":{lambda},\"epsilon\":{epsilon},\
         \"s2\":{s2},\"noise\":\"{}\",\"d\":{d},\"reps\":{reps},\"refused\":{refused},\"row_norm\":{row_norm},\
         \"cover95\":{:.4},\"cover95_se\":{:.4},\"miss_low95\":{:.4},\"miss_high95\":{:.4},\"cover90\":{:.4},\
         \"cover95_large\":{:.4},\"oracle95\":{:.4},\"plain95\":{:.4},\"plain95_large\":{:.4},\"sigma_ratio\":{:.4},\"alpha_err_rms\":{:.4},\"alpha_se_rms\":{:.4},\"large\":{large_n},\"naive95\":{:.4},\"bootstrap\":{boot},\"bootstrap95\":{:.4},\"bootstrap95_large\":{:.4},\"alpha_mean\":{a_mean:.4},\"alpha_sd\":{a_sd:.4},\
         \"seconds\":{:.1}}}",
        pos.get(6).map_or("gaussian:0.5", |s| s.as_str()),
        mean(0),
        se(0),
        mean(1),
        mean(2),
        mean(3),
        large_hit as f64 / large_n.max(1) as f64,
        mean(4),
        mean(6),
        large_plain as f64 / large_n.max(1) as f64,
        mean(7),
        mean(8).sqrt(),
        mean(9).sqrt(),
        mean(5),
        mean(10),
        large_boot as f64 / large_n.max(1) as f64,
        start.elapsed().as_secs_f64()
    );
}
