//! Private inference in the proportional regime: confidence intervals for
//! the coefficients θ* of a GLM fitted privately — objective or output
//! perturbation of a logistic or Huber model with ridge λ, or T steps of
//! DP-GD/DP-SGD (α and σ_eff then from the state evolution) — that keep their
//! coverage when d/n is not small (docs/inference.md; the derivation in
//! docs/theory.md §6).
//!
//! For rows x ~ N(0, I/d) the released estimate is, per coordinate and per
//! fixed contrast (not only on average: a rotation fixing θ* leaves the
//! data's law unchanged and maps θ̂ to its rotation),
//!
//!   θ̂ ≈ α·θ* + σ_eff·Z,  Z ~ N(0, I_d),
//!
//! with α (the bias factor) and σ_eff from the fixed point. The classical
//! interval, centred at θ̂, misses α ≠ 1; this one is
//!
//!   θ*_j ∈ θ̂_j/α̂ ± z·√(σ̂_eff² + r²α̂²·θ*_j²)/α̂,  r = min(se(α̂)/α̂, 1),
//!
//! θ*_j² estimated by its posterior second moment under θ*_j ~ N(0, ŝ²),
//! or where θ̂_j stands out of the noise by max(0, θ̂_j² − σ̂_eff²)/α̂² (the
//! same for a contrast ⟨a, θ*⟩): the error of α̂, shared by the
//! coordinates of one fit, enters through (α − α̂)θ*_j and is carried into
//! the width by the delta method, its relative size capped at 1
//! ([`MAX_RELATIVE_ERROR`]). The nuisances come from what the
//! release makes public ([`nuisance`]): for logistic, ‖θ̂‖²/d (free, and
//! the label sum, released to check the no-intercept model); for
//! Huber, two residual statistics released by the Gaussian mechanism and
//! charged in the same certified ledger as θ̂ ([`release`]). With an
//! intercept ([`Spec::intercept`], logistic's default) the teacher's is a
//! second unknown, pinned by the released mean label ([`nuisance`]), and
//! labels off balance are served rather than refused.
//!
//! # References
//! - Chaudhuri, Monteleoni, Sarwate (2011), *Differentially private
//!   empirical risk minimization*, JMLR (objective and output perturbation).
//! - Sur, Candès (2019), *A modern maximum-likelihood theory for
//!   high-dimensional logistic regression*, PNAS (the debiased interval).
//! - Celentano, Montanari, Wei (2023), *The Lasso with general Gaussian
//!   designs with applications to hypothesis testing*, AoS (per-coordinate
//!   normality of regularised estimators).

pub mod classical;
pub mod deblur;
mod file;
mod interval;
mod labels;
pub mod nuisance;
pub(crate) mod refusal;
pub mod release;
mod report;
pub mod rows;
mod spec;
pub mod standardize;
pub mod test_error;
pub mod whitening;

use nalgebra::{DMatrix, DVector};
use propdp_core::accountant::Neighbouring;
use propdp_core::loss::Loss;
use propdp_core::{Model, Shape};
use propdp_sim::objective::Objective;
use propdp_theory::solve::TheorySolver;

use crate::error::Argument;
pub use classical::Classical;
pub use classical::MIN_FEATURES;
pub use file::fit_file;
pub use interval::{Interval, MAX_RELATIVE_ERROR, SIGNAL_Z};
pub use labels::LABEL_SDS;
pub use nuisance::Nuisance;
pub use refusal::{Reason, Refusal};
pub use report::{Inference, Method, Privacy, Residuals};
pub use rows::Rows;
pub use spec::{Glm, Spec};
pub use standardize::Standardization;
pub use test_error::TestError;
pub use whitening::Whitening;

/// The key of the inference's random streams ([`propdp_sim::rng::stream`]).
const STREAM: u64 = 0x1_F3E5;

/// The sub-streams of one fit, one per draw: no two releases share noise
/// (noise shared by two releases cancels in their difference).
#[derive(Clone, Copy)]
#[repr(u64)]
enum Draw {
    /// b of objective and output perturbation.
    Estimator = 0,
    /// The Huber residual statistics' noise.
    Residuals = 1,
    /// DP-SGD's batches and noise.
    Descent = 2,
    /// The label sum's noise.
    Labels = 3,
    /// Which rows are held out.
    HoldOut = 4,
    /// The test error's noise.
    TestError = 5,
    /// The rows' shrink and count ([`rows`]).
    Rows = 6,
    /// The columns' standardisation ([`standardize`]).
    Standardize = 7,
    /// The classical interval's Hessian and score covariance ([`classical`]).
    Matrices = 8,
}

/// The seeded stream of one draw of a fit.
fn draw_stream(seed: u64, draw: Draw) -> propdp_sim::rng::SimRng {
    propdp_sim::rng::stream(seed, &[STREAM, draw as u64])
}

/// Fits `spec`'s model privately to the n × d rows (`rows`, row-major) and
/// labels `y`, and estimates the nuisances of its intervals; `seed` fixes
/// the noise (fresh randomness when `None`). The seed is never part of the
/// result: anyone holding it regenerates the noise and subtracts it.
///
/// The rows are copied once (into the fit's matrix, asked for with
/// `try_reserve_exact`: [`crate::ErrorKind::Memory`] when that fails);
/// [`fit_owned`] takes them without the copy.
pub fn fit(rows: &[f64], n: usize, d: usize, y: &[f64], spec: &Spec, seed: Option<u64>) -> crate::Result<Inference> {
    spec.check()?;
    fit_owned(copy_rows(rows)?, n, d, y, spec, seed)
}

/// A copy of the rows, or [`crate::ErrorKind::Memory`] when it cannot be allocated.
fn copy_rows(rows: &[f64]) -> crate::Result<Vec<f64>> {
    let mut copy = crate::error::reserve(rows.len(), "the rows' copy")?;
    copy.extend_from_slice(rows);
    Ok(copy)
}

/// [`fit`] on rows the caller hands over (row-major n × d): they become the
/// fit's matrix in place — the held-out rows moved out, the rest projected
/// onto the ball — so the fit holds no second copy of them (the Python
/// binding fills them from X in chunks: X and one copy at the peak).
pub fn fit_owned(
    rows: Vec<f64>,
    n: usize,
    d: usize,
    y: &[f64],
    spec: &Spec,
    seed: Option<u64>,
) -> crate::Result<Inference> {
    spec.check()?;
    if rows.len() != n * d || y.len() != n || n < 2 {
        return Err(Argument::new(
            "y",
            format!(
                " has {} labels for {} rows of {d} features ({} values): one label per row, at least two rows",
                y.len(),
                n,
                rows.len()
            ),
        )
        .into());
    }
    // below the proportional regime's minimum: the classical interval, at small d/n ([`classical`])
    let classical = d < MIN_FEATURES;
    if classical {
        classical::served(spec, d).map_err(crate::Error::from)?;
    }
    // a proportional fit's own intercept (the classical fit always has one)
    let icp = spec.intercept && !classical;
    finite_rows(&rows, d)?;
    let labels = labels::read(spec.model, y)?;
    let seed = seed.unwrap_or_else(rand::random);
    let side = test_error::held_out(n, spec.holdout, &mut draw_stream(seed, Draw::HoldOut));
    let held = side.iter().filter(|&&h| h).count();
    if spec.holdout > 0.0 && (held < test_error::MIN_HELD_OUT || n - held < 2) {
        return Err(Argument::new(
            "holdout",
            // no exact count of the rows in the message: under add/remove n is private
            format!(
                " = {} held out too few rows (or left too few to fit): the test error's interval needs at least {} \
                 held out and two fitted; raise holdout or give more rows",
                spec.holdout,
                test_error::MIN_HELD_OUT
            ),
        )
        .into());
    }
    // the held-out rows moved out, the fitted ones to the front in place (row-major, their order kept)
    let mut rows = rows;
    let mut test_rows = crate::error::reserve(held * d, "the held-out rows")?;
    let (mut fitted_labels, mut test_labels) = (Vec::with_capacity(n - held), Vec::with_capacity(held));
    let mut kept = 0;
    for (i, (&h, &label)) in side.iter().zip(labels.iter()).enumerate() {
        if h {
            test_rows.extend_from_slice(&rows[i * d..(i + 1) * d]);
            test_labels.push(label);
        } else {
            rows.copy_within(i * d..(i + 1) * d, kept * d);
            fitted_labels.push(label);
            kept += 1;
        }
    }
    rows.truncate(kept * d);
    let labels = DVector::from_vec(fitted_labels);
    if classical && spec.neighbouring == Neighbouring::ReplaceOne {
        // n is public under replace-one: refused before anything is released
        classical::check_ratio(d, kept as f64, None).map_err(crate::Error::from)?;
    }
    if matches!(spec.model, Glm::Huber { .. }) && spec.is_descent() && spec.noise.is_none() {
        return Err(crate::Error::from(Refusal::new(
            Reason::NoiseLawNeeded,
            "Huber DP-SGD: the residual statistics' equations are the fixed point's, which T steps from θ₀ = 0 have \
             not reached, so the fraction inside ±M and the clipped residual at θ̂ do not give its bias factor \
             without the label noise's law; give the law (noise) or use algorithm = \"objective\""
                .into(),
        )));
    }
    // the residual statistics are released only for Huber without a noise law (proportional)
    let huber_m = match spec.model {
        Glm::Huber { m } if spec.noise.is_none() && !classical => Some(m),
        _ => None,
    };
    // the classical interval releases Ĥ and Ĵ; else Huber without a noise law two residual
    // statistics, logistic the label sum; every fit the rows' shrink by the projection (and under
    // add/remove their count), and the columns' standardisation if asked for
    let nuisances = rows::releases(spec)
        + if spec.standardize { standardize::RELEASES } else { 0 }
        + match (classical, spec.model, huber_m) {
            (true, _, _) => classical::RELEASES,
            (false, _, Some(_)) => 2,
            (false, Glm::Logistic, None) => 1,
            (false, Glm::Huber { .. }, None) => 0,
        };
    // the mechanism's bound is that of the rows with their constant feature
    let fitted_spec = if icp { with_constant(spec, d) } else { *spec };
    let plan = if classical {
        release::plan_with_share(&classical::augmented(spec), nuisances, classical::SHARE)?
    } else {
        release::plan(&fitted_spec, nuisances)?
    };
    // the ridge fitted and solved at: λ, plus objective perturbation's extra ridge
    let lambda = plan.lambda;
    // the algorithm fitted: the spec's at that ridge, with the calibrated noise
    let algorithm = spec.algorithm.with_lambda(lambda).with_noise(plan.noise);
    let z_rows = plan.nuisance_z.expect("every fit plans its rows' releases");
    let g = propdp_sim::data::draw_gaussian_vector(2, &mut draw_stream(seed, Draw::Rows));
    let count = rows::count(kept, spec, z_rows, g[1]);
    if classical && spec.neighbouring == Neighbouring::AddRemoveOne {
        // n is private under add/remove: its released count decides, and is all that was spent
        classical::check_ratio(d, count.0, release::spent(spec, z_rows, 1)).map_err(crate::Error::from)?;
    }
    let standardization = if spec.standardize {
        let g = propdp_sim::data::draw_gaussian_vector(3 * d, &mut draw_stream(seed, Draw::Standardize));
        let s = Standardization::release(&rows, d, count.0, z_rows, g.as_slice());
        s.apply(&mut rows, d);
        s.apply(&mut test_rows, d);
        Some(s)
    } else {
        None
    };
    // row-major n × d is column-major d × n: the rows become Xᵀ without a copy
    let mut xt = DMatrix::from_vec(d, kept, rows);
    let rows = rows::project_and_release(&mut xt, spec, z_rows, g[0], count).map_err(crate::Error::from)?;
    // the intercept's constant feature c: R for the classical fit and objective and output perturbation
    // (penalised like θ, inside the mechanism's bound), 1/√d for DP-SGD (its descent appends it)
    let constant = match (classical || icp, algorithm.shape()) {
        (false, _) => None,
        (true, Shape::Static { .. }) => Some(spec.row_norm),
        (true, Shape::Descent(_)) => Some(1.0 / (d as f64).sqrt()),
    };
    let test_rows = match constant {
        Some(c) => test_rows
            .chunks_exact(d)
            .flat_map(|x| x.iter().copied().chain([c]))
            .collect(),
        None => test_rows,
    };
    let xt = match constant {
        Some(c) if !spec.is_descent() => xt.insert_row(d, c),
        _ => xt,
    };
    let p = xt.nrows();
    // the rows fitted as released (exact under replace-one, where n is public)
    let nf = rows.fitted;
    let mut releases = vec![];
    let label_mean = if spec.model == Glm::Logistic && !classical {
        let g = propdp_sim::data::draw_gaussian_vector(1, &mut draw_stream(seed, Draw::Labels))[0];
        Some(labels::MeanLabel::release(&labels, nf, z_rows, g, icp).map_err(crate::Error::from)?)
    } else {
        None
    };
    let b = propdp_sim::data::draw_gaussian_vector(p, &mut draw_stream(seed, Draw::Estimator));
    let (sigma, tau) = match algorithm.shape() {
        Shape::Static { sigma, tau, .. } => (sigma, tau),
        Shape::Descent(_) => (0.0, 0.0),
    };
    let (loss, model) = match spec.model {
        Glm::Logistic => (Loss::Logistic, Model::Logistic),
        Glm::Huber { m } => (
            Loss::Huber { m },
            Model::Huber {
                huber_m: m,
                // the unknown-noise route never reads it
                noise: spec.noise.unwrap_or(propdp_core::NoiseLaw::Gaussian { sd: 0.0 }),
            },
        ),
    };
    let (theta, released) = match algorithm.shape() {
        Shape::Descent(g) => {
            let descent = propdp_sim::gd::Descent { loss, gradient: g };
            // a release's descent is plain DP-GD/DP-SGD: one group
            let single = propdp_sim::gd::Partition::single();
            let mut rng = draw_stream(seed, Draw::Descent);
            let mut beta = 0.0;
            let theta = match constant {
                Some(_) => descent.run_with_intercept(&xt, &labels, &single, &mut rng, |_, _, b, _| beta = b),
                None => descent.run(&xt, &labels, &single, &mut rng, |_, _, _| {}),
            }
            .map_err(|e| {
                anyhow::anyhow!(
                    "the private descent (d = {d}, lambda = {}, eta = {}, steps = {}, noise σ = {:.4}): {e}",
                    lambda,
                    g.eta,
                    g.steps,
                    plan.noise
                )
            })?;
            let text = format!(
                "θ̂ by DP-SGD ({} steps at sample rate {}, clip {}, noise σ = {:.6})",
                g.steps,
                g.sample_rate,
                if g.clip.is_finite() {
                    g.clip.to_string()
                } else {
                    "none".to_string()
                },
                plan.noise
            );
            // θ̃ = (θ, b) on the rows with the constant feature c: β = c·b
            let theta = match constant {
                Some(c) => theta.push(beta / c),
                None => theta,
            };
            (theta, text)
        }
        Shape::Static { .. } => {
            let objective = Objective {
                xt: &xt,
                y: &labels,
                loss,
                lambda,
                sigma,
                b: &b,
            };
            let (theta, _) = objective.minimize(1e-9, 200).map_err(|e| match e {
                // the Newton fallback's two copies of the rows: a MemoryError in Python
                propdp_sim::objective::FitError::OutOfMemory { bytes } => {
                    crate::Error::from(crate::error::OutOfMemory {
                        what: "the Newton fallback's two copies of the rows".into(),
                        bytes: 2 * bytes,
                    })
                }
                e => anyhow::anyhow!(
                    "the private fit (d = {d}, lambda = {}, noise = {:.4}) did not converge: {e}",
                    lambda,
                    plan.noise
                )
                .into(),
            })?;
            let text = format!(
                "θ̂ by {} (noise {} = {:.6})",
                algorithm.kind().title(),
                if algorithm.kind().noise_param() == "tau" {
                    "τ"
                } else {
                    "σ"
                },
                plan.noise
            );
            (theta + tau * &b, text)
        }
    };
    let delta = d as f64 / nf;
    // θ̂'s own coordinates (the intercept's, if any, is the last)
    let q_obs = theta.rows(0, d).norm_squared() / d as f64;
    releases.insert(0, released);
    if let Some(s) = &standardization {
        releases.push(s.release_text(z_rows));
    }
    releases.push(if rows.fitted_sd > 0.0 {
        format!(
            "the rows' mean shrink by the projection and their count (add/remove: n is private), by the Gaussian \
             mechanism (noise multiplier {z_rows:.3})"
        )
    } else {
        format!("the rows' mean shrink by the projection, by the Gaussian mechanism (noise multiplier {z_rows:.3})")
    });
    if let Some(labels::MeanLabel { mean, z, .. }) = label_mean {
        releases.push(if icp {
            format!(
                "the mean label ({mean:+.4}; it pins the teacher's intercept) by the Gaussian mechanism (noise \
                 multiplier {z:.3})"
            )
        } else {
            format!(
                "the mean label ({mean:+.4}; the fit has no intercept: checked against 0) by the Gaussian mechanism \
                 (noise multiplier {z:.3})"
            )
        });
    }
    let (nuisance, residuals, classical) = match huber_m {
        _ if classical => {
            let g = propdp_sim::data::draw_gaussian_vector(p * (p + 1), &mut draw_stream(seed, Draw::Matrices));
            let norm = classical::augmented(spec).row_norm;
            let c = classical::interval(
                &xt,
                &labels,
                &theta,
                spec,
                (lambda, sigma, tau),
                norm,
                z_rows,
                g.as_slice(),
            )
            .map_err(crate::Error::from)?;
            releases.push(c.release_text(z_rows));
            (None, None, Some(c))
        }
        None => {
            let solver = match algorithm.shape() {
                Shape::Descent(_) => TheorySolver::new(propdp_core::config::SolverOptions {
                    dmft_points: Some(nuisance::DESCENT_POINTS),
                    ..Default::default()
                }),
                Shape::Static { .. } => TheorySolver::default(),
            };
            let curve = nuisance::Curve::new(&solver, delta, model, algorithm);
            // with an intercept the teacher's is pinned by the mean label (Huber's learned one recovers
            // b* exactly and leaves θ̂'s law as without: docs/theory.md §2.6)
            let curve = match label_mean {
                Some(labels::MeanLabel { mean, sd, .. }) if icp => curve.with_mean_label(mean, sd),
                _ => curve,
            };
            (Some(curve.estimate(q_obs, d)?.map_err(crate::Error::from)?), None, None)
        }
        Some(m) => {
            let z = plan
                .nuisance_z
                .expect("Huber without a noise law plans its nuisance releases");
            let r = &labels - xt.tr_mul(&theta);
            // each residual's blur by the output noise, τ‖xᵢ‖ (0 for objective perturbation)
            let blur: Vec<f64> = xt.column_iter().map(|x| tau * x.norm()).collect();
            // the blur's bound: τ times the rows' norm bound, their constant feature included
            let bound = fitted_spec.row_norm;
            let g = propdp_sim::data::draw_gaussian_vector(2, &mut draw_stream(seed, Draw::Residuals));
            // the centred sum Σ(ψ(rᵢ) − mid) with noise z·half (its add/remove sensitivity)
            let release = |f: deblur::Functional, g: f64| {
                let (mid, half) = f.range(m, tau * bound);
                let sum: f64 = r.iter().zip(&blur).map(|(&ri, &si)| f.psi(ri, si, m) - mid).sum();
                ((sum + z * half * g) / nf + mid, z * half / nf)
            };
            let ((p, p_noise), (beta2, b_noise)) = (
                release(deblur::Functional::Inside, g[0]),
                release(deblur::Functional::Clipped, g[1]),
            );
            let (p, beta2) = (p.clamp(0.0, 1.0), beta2.clamp(0.0, m * m));
            let est = if tau > 0.0 {
                releases.push(format!(
                    "the fraction of residuals inside ±M and the mean clipped squared residual of the unperturbed \
                     fit, de-blurred from the residuals at θ̂ (blur τR/M = {:.3}), each by the Gaussian mechanism \
                     (noise multiplier {z:.3})",
                    tau * bound / m
                ));
                // the de-blurred fraction's own spread around the realised one (|ψ_P − 1{·}| ≤ 2 in
                // the mean) beside the release's noise, and the extrapolation's bias allowance
                let p_sd = (4.0 / nf + p_noise * p_noise).sqrt();
                let mut est =
                    nuisance::huber((p, p_sd), beta2, delta, lambda, sigma, tau, q_obs).map_err(crate::Error::from)?;
                est.alpha_se = est.alpha_se.hypot(deblur::alpha_bias(tau * bound / m) * est.alpha);
                est
            } else {
                releases.push(format!(
                    "the fraction of residuals inside ±M and the mean clipped squared residual at θ̂, each by the \
                     Gaussian mechanism (noise multiplier {z:.3})"
                ));
                nuisance::huber((p, p_noise), beta2, delta, lambda, sigma, 0.0, q_obs).map_err(crate::Error::from)?
            };
            (
                Some(est),
                Some(Residuals {
                    inside: p,
                    beta2,
                    noise_sd: (p_noise, b_noise),
                    blur: tau * bound / m,
                }),
                None,
            )
        }
    };
    let test_error = if held > 0 {
        let t = test_error::release(
            spec,
            theta.as_slice(),
            &test_rows,
            &test_labels,
            &mut draw_stream(seed, Draw::TestError),
        )?;
        releases.push(t.release_text());
        Some(t)
    } else {
        None
    };
    // the held-out release composes in parallel: the larger of the two
    let (lower, upper) = test_error.map_or((plan.bracket.lower, plan.bracket.upper), |t| {
        (
            plan.bracket.lower.max(t.epsilon_lower),
            plan.bracket.upper.max(t.epsilon),
        )
    });
    let inference = Inference {
        method: if classical.is_some() {
            Method::Classical
        } else {
            Method::Proportional
        },
        spec: *spec,
        params: theta.iter().take(d).copied().collect(),
        fitted: theta.iter().take(d).copied().collect(),
        intercept: if icp { constant.map(|c| c * theta[d]) } else { None },
        whitening: None,
        whitened: false,
        nuisance,
        classical,
        standardization,
        noise: plan.noise,
        residuals,
        test_error,
        privacy: Privacy {
            epsilon: upper,
            epsilon_lower: lower,
            delta: spec.delta_priv,
            neighbouring: spec.neighbouring.label(),
            releases,
            extra_ridge: plan.extra_ridge,
            lambda,
        },
        n: nf.round() as usize,
        d,
        rows,
    };
    finite(inference)
}

/// The fit, or a computation error when anything it would release or
/// report is not finite (never a NaN interval).
fn finite(f: Inference) -> crate::Result<Inference> {
    let nuisances: Vec<f64> = match (&f.nuisance, &f.classical) {
        (Some(n), _) => vec![n.alpha, n.alpha_se, n.sigma_eff, n.sigma_eff_se, n.s2],
        (None, Some(c)) => c.centre.iter().chain(c.covariance.iter()).copied().collect(),
        (None, None) => vec![],
    };
    let bad = [
        ("θ̂", f.params.iter().copied().find(|v| !v.is_finite())),
        ("the nuisances", nuisances.into_iter().find(|v| !v.is_finite())),
        (
            "the standard errors",
            f.standard_errors().into_iter().find(|v| !v.is_finite()),
        ),
    ];
    match bad.iter().find(|(_, v)| v.is_some()) {
        Some((what, Some(v))) => Err(anyhow::anyhow!(
            "{what} of the private fit came out {v} (d = {}, lambda = {}, epsilon = {}, row_norm = {}): nothing is \
             released",
            f.d,
            f.spec.lambda(),
            f.spec.epsilon,
            f.spec.row_norm
        )
        .into()),
        _ => Ok(f),
    }
}

/// [`fit`] with a public feature covariance Σ (d × d, row-major; rows
/// x ~ N(0, Σ/d)): the rows are whitened, x' = Σ^{-1/2}x, the isotropic fit
/// and its intervals made there, and every interval for θ* read as a
/// contrast of it ([`whitening`]); `params` is θ̂ = Σ^{-1/2}θ̂'.
pub fn fit_whitened(
    rows: &[f64],
    n: usize,
    d: usize,
    y: &[f64],
    covariance: &[f64],
    spec: &Spec,
    seed: Option<u64>,
) -> crate::Result<Inference> {
    Whitening::new(covariance, d)?;
    check_rows(rows, n, d)?;
    fit_whitened_owned(copy_rows(rows)?, n, d, y, covariance, spec, seed)
}

/// [`fit_whitened`] on rows the caller hands over: whitened in place, then
/// [`fit_owned`] (no second copy of the rows).
pub fn fit_whitened_owned(
    mut rows: Vec<f64>,
    n: usize,
    d: usize,
    y: &[f64],
    covariance: &[f64],
    spec: &Spec,
    seed: Option<u64>,
) -> crate::Result<Inference> {
    let w = Whitening::new(covariance, d)?;
    check_rows(&rows, n, d)?;
    w.whiten(&mut rows, d);
    let mut f = fit_owned(rows, n, d, y, spec, seed)?;
    f.params = w.apply(&f.fitted);
    f.whitening = Some(w);
    f.whitened = true;
    Ok(f)
}

/// n × d values, all finite.
fn check_rows(rows: &[f64], n: usize, d: usize) -> Result<(), Argument> {
    if rows.len() != n * d {
        return Err(Argument::new(
            "X",
            format!(" has {} values; {n} rows of {d} features have {}", rows.len(), n * d),
        ));
    }
    finite_rows(rows, d)
}

/// Every value of the rows finite, or the first that is not, named by row and column.
fn finite_rows(rows: &[f64], d: usize) -> Result<(), Argument> {
    match rows.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(Argument::new(
            "X",
            format!(" row {}, column {}: {} is not finite", i / d, i % d, rows[i]),
        )),
        None => Ok(()),
    }
}

/// The spec whose row norm bounds the rows with the intercept's constant
/// feature: √2·R for objective and output perturbation (c = R), and
/// √(R² + 1/d) for DP-SGD without a clip (c = 1/√d; a clip bounds the
/// joint gradient itself).
fn with_constant(spec: &Spec, d: usize) -> Spec {
    let r = spec.row_norm;
    match spec.algorithm.shape() {
        Shape::Static { .. } => classical::augmented(spec),
        Shape::Descent(_) => Spec {
            row_norm: (r * r + 1.0 / d as f64).sqrt(),
            ..*spec
        },
    }
}
