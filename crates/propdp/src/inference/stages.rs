//! The stages of one private fit ([`super::fit_owned`] chains them):
//! [`split`] the rows into fitted and held-out, [`plan`] the noise of every
//! release, [`prepare`] the fitted rows (their count, standardisation,
//! projection and intercept feature, the mean label), [`estimate`] θ̂
//! privately, then [`nuisances`] for its intervals. Each stage draws from
//! its own seeded stream ([`Draw`]).

use nalgebra::{DMatrix, DVector};
use propdp_core::accountant::Neighbouring;
use propdp_core::loss::Loss;
use propdp_core::{Algorithm, Model, Shape};
use propdp_sim::objective::Objective;
use propdp_theory::solve::TheorySolver;

use super::classical::{self, Classical};
use super::nuisance::{self, Nuisance};
use super::refusal::{Reason, Refusal};
use super::release::{self, Plan};
use super::report::Residuals;
use super::rows::{self, Rows};
use super::spec::{Glm, Spec};
use super::standardize::{self, Standardization};
use super::{deblur, labels, test_error};
use crate::error::Argument;

/// The key of the inference's random streams ([`propdp_sim::rng::stream`]).
const STREAM: u64 = 0x1_F3E5;

/// The sub-streams of one fit, one per draw: no two releases share noise
/// (noise shared by two releases cancels in their difference).
#[derive(Clone, Copy)]
#[repr(u64)]
pub(super) enum Draw {
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
pub(super) fn draw_stream(seed: u64, draw: Draw) -> propdp_sim::rng::SimRng {
    propdp_sim::rng::stream(seed, &[STREAM, draw as u64])
}

/// The rows after [`split`]: the fitted ones at the front of the caller's
/// buffer (row-major, their order kept), the held-out ones moved out.
pub(super) struct Split {
    /// The fitted rows, row-major.
    rows: Vec<f64>,
    /// How many rows are fitted.
    kept: usize,
    /// Their labels.
    labels: DVector<f64>,
    /// The held-out rows, row-major.
    test_rows: Vec<f64>,
    /// Their labels.
    pub test_labels: Vec<f64>,
    /// How many rows are held out.
    pub held: usize,
}

impl Split {
    /// How many rows are fitted.
    pub fn kept(&self) -> usize {
        self.kept
    }
}

/// Checks the rows and labels and splits off the held-out rows (drawn from
/// `seed`'s hold-out stream), in place.
pub(super) fn split(
    mut rows: Vec<f64>,
    n: usize,
    d: usize,
    y: &[f64],
    spec: &Spec,
    seed: u64,
    classical: bool,
) -> crate::Result<Split> {
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
    if classical {
        classical::served(spec, d).map_err(crate::Error::from)?;
    }
    finite_rows(&rows, d)?;
    let labels = labels::read(spec.model, y)?;
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
    Ok(Split {
        rows,
        kept,
        labels: DVector::from_vec(fitted_labels),
        test_rows,
        test_labels,
        held,
    })
}

/// What the stages after the split share: the request, its route and the
/// noise planned for every release.
pub(super) struct Fitting<'a> {
    /// The request.
    pub spec: &'a Spec,
    /// Features.
    pub d: usize,
    /// The classical interval (d below the proportional regime's minimum).
    pub classical: bool,
    /// A proportional fit with its own intercept.
    pub icp: bool,
    /// M of a Huber fit without a noise law, whose residual statistics are released.
    pub huber_m: Option<f64>,
    /// The spec whose row norm bounds the rows with their constant feature.
    pub fitted_spec: Spec,
    /// The noise of every release and what it certifies.
    pub plan: Plan,
    /// The ridge fitted and solved at: λ, plus objective perturbation's extra ridge.
    pub lambda: f64,
    /// The algorithm fitted: the spec's at that ridge, with the calibrated noise.
    pub algorithm: Algorithm,
    /// The noise multiplier of the rows' releases.
    pub z_rows: f64,
    /// σ and τ of a perturbed minimiser (0 for a descent).
    pub sigma: f64,
    /// τ of output perturbation.
    pub tau: f64,
    /// The loss descended or minimised.
    pub loss: Loss,
    /// The model the theory solves.
    pub model: Model,
}

/// Refuses what cannot be served, counts the nuisance releases and plans
/// the noise of every release for the `kept` fitted rows.
pub(super) fn plan<'a>(
    spec: &'a Spec,
    d: usize,
    kept: usize,
    classical: bool,
    icp: bool,
) -> crate::Result<Fitting<'a>> {
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
    Ok(Fitting {
        spec,
        d,
        classical,
        icp,
        huber_m,
        fitted_spec,
        plan,
        lambda,
        algorithm,
        z_rows,
        sigma,
        tau,
        loss,
        model,
    })
}

/// The fitted rows as the fit reads them, and what their preparation released.
pub(super) struct Prepared {
    /// Xᵀ (p × n_fitted), with the intercept's constant feature for a minimiser.
    pub xt: DMatrix<f64>,
    /// The fitted rows' labels.
    pub labels: DVector<f64>,
    /// The held-out rows, standardised and with the constant feature.
    pub test_rows: Vec<f64>,
    /// The rows' released shrink and count.
    pub rows: Rows,
    /// The intercept's constant feature c, if any.
    pub constant: Option<f64>,
    /// The columns' released standardisation, if asked for.
    pub standardization: Option<Standardization>,
    /// The mean label's release (logistic, proportional).
    pub label_mean: Option<labels::MeanLabel>,
}

/// Releases the fitted rows' count (and standardisation), projects them
/// onto the ball, appends the intercept's constant feature and releases
/// the mean label.
pub(super) fn prepare(f: &Fitting, split: Split, seed: u64) -> crate::Result<Prepared> {
    let Fitting {
        spec,
        d,
        classical,
        icp,
        z_rows,
        ..
    } = *f;
    let Split {
        mut rows,
        kept,
        labels,
        mut test_rows,
        ..
    } = split;
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
    let constant = match (classical || icp, f.algorithm.shape()) {
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
    // the rows fitted as released (exact under replace-one, where n is public)
    let nf = rows.fitted;
    let label_mean = if spec.model == Glm::Logistic && !classical {
        let g = propdp_sim::data::draw_gaussian_vector(1, &mut draw_stream(seed, Draw::Labels))[0];
        Some(labels::MeanLabel::release(&labels, nf, z_rows, g, icp).map_err(crate::Error::from)?)
    } else {
        None
    };
    Ok(Prepared {
        xt,
        labels,
        test_rows,
        rows,
        constant,
        standardization,
        label_mean,
    })
}

/// θ̂ by the planned mechanism (its b drawn from the estimator's stream,
/// a descent's batches and noise from the descent's), and its release's
/// description.
pub(super) fn estimate(f: &Fitting, x: &Prepared, seed: u64) -> crate::Result<(DVector<f64>, String)> {
    let Fitting {
        d,
        lambda,
        sigma,
        tau,
        loss,
        plan,
        ..
    } = *f;
    let (xt, labels, constant) = (&x.xt, &x.labels, x.constant);
    let algorithm = f.algorithm;
    let p = xt.nrows();
    let b = propdp_sim::data::draw_gaussian_vector(p, &mut draw_stream(seed, Draw::Estimator));
    Ok(match algorithm.shape() {
        Shape::Descent(g) => {
            let descent = propdp_sim::gd::Descent { loss, gradient: g };
            // a release's descent is plain DP-GD/DP-SGD: one group
            let single = propdp_sim::gd::Partition::single();
            let mut rng = draw_stream(seed, Draw::Descent);
            let mut beta = 0.0;
            let theta = match constant {
                Some(_) => descent.run_with_intercept(xt, labels, &single, &mut rng, |_, _, b, _| beta = b),
                None => descent.run(xt, labels, &single, &mut rng, |_, _, _| {}),
            }
            .map_err(|e| {
                crate::error::Error::compute(format!(
                    "the private descent (d = {d}, lambda = {}, eta = {}, steps = {}, noise σ = {:.4}): {e}",
                    lambda, g.eta, g.steps, plan.noise
                ))
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
                xt,
                y: labels,
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
                e => crate::error::Error::compute(format!(
                    "the private fit (d = {d}, lambda = {}, noise = {:.4}) did not converge: {e}",
                    lambda, plan.noise
                )),
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
    })
}

/// The descriptions of what the estimator and the rows' preparation
/// released, θ̂'s (`estimator`) first.
pub(super) fn release_texts(f: &Fitting, x: &Prepared, estimator: String) -> Vec<String> {
    let (icp, z_rows) = (f.icp, f.z_rows);
    let mut releases = vec![estimator];
    if let Some(s) = &x.standardization {
        releases.push(s.release_text(z_rows));
    }
    releases.push(if x.rows.fitted_sd > 0.0 {
        format!(
            "the rows' mean shrink by the projection and their count (add/remove: n is private), by the Gaussian \
             mechanism (noise multiplier {z_rows:.3})"
        )
    } else {
        format!("the rows' mean shrink by the projection, by the Gaussian mechanism (noise multiplier {z_rows:.3})")
    });
    if let Some(labels::MeanLabel { mean, z, .. }) = x.label_mean {
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
    releases
}

/// The nuisances of θ̂'s intervals: the classical interval's, the theory's
/// curve inverted at θ̂'s norm, or Huber's residual statistics released
/// and de-blurred; each release's description goes to `releases`.
pub(super) fn nuisances(
    f: &Fitting,
    x: &Prepared,
    theta: &DVector<f64>,
    seed: u64,
    releases: &mut Vec<String>,
) -> crate::Result<(Option<Nuisance>, Option<Residuals>, Option<Classical>)> {
    let Fitting {
        spec,
        d,
        classical,
        icp,
        huber_m,
        fitted_spec,
        plan,
        lambda,
        z_rows,
        sigma,
        tau,
        model,
        ..
    } = *f;
    let (xt, labels) = (&x.xt, &x.labels);
    let p = xt.nrows();
    let nf = x.rows.fitted;
    let delta = d as f64 / nf;
    // θ̂'s own coordinates (the intercept's, if any, is the last)
    let q_obs = theta.rows(0, d).norm_squared() / d as f64;
    Ok(match huber_m {
        _ if classical => {
            let g = propdp_sim::data::draw_gaussian_vector(p * (p + 1), &mut draw_stream(seed, Draw::Matrices));
            let norm = classical::augmented(spec).row_norm;
            let c = classical::interval(
                xt,
                labels,
                theta,
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
            let solver = match f.algorithm.shape() {
                Shape::Descent(_) => TheorySolver::new(propdp_core::config::SolverOptions {
                    dmft_points: Some(nuisance::DESCENT_POINTS),
                    ..Default::default()
                }),
                Shape::Static { .. } => TheorySolver::default(),
            };
            let curve = nuisance::Curve::new(&solver, delta, model, f.algorithm);
            // with an intercept the teacher's is pinned by the mean label (Huber's learned one recovers
            // b* exactly and leaves θ̂'s law as without: docs/theory.md §2.6)
            let curve = match x.label_mean {
                Some(labels::MeanLabel { mean, sd, .. }) if icp => curve.with_mean_label(mean, sd),
                _ => curve,
            };
            (Some(curve.estimate(q_obs, d)?.map_err(crate::Error::from)?), None, None)
        }
        Some(m) => {
            let z = plan
                .nuisance_z
                .expect("Huber without a noise law plans its nuisance releases");
            let r = labels - xt.tr_mul(theta);
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
    })
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

/// Every value of the rows finite, or the first that is not, named by row and column.
pub(super) fn finite_rows(rows: &[f64], d: usize) -> Result<(), Argument> {
    match rows.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(Argument::new(
            "X",
            format!(" row {}, column {}: {} is not finite", i / d, i % d, rows[i]),
        )),
        None => Ok(()),
    }
}
