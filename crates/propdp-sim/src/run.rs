//! Repetitions of one sweep point, in parallel, summarised as mean and
//! standard error per metric.

use std::collections::BTreeMap;

use nalgebra::DVector;
use propdp_core::metrics::Metrics;
use propdp_core::record::TestMetrics;
use propdp_core::{Model, Point, Shape};
use rayon::prelude::*;
use thiserror::Error;

use crate::data::{self, Dataset};
use crate::evaluate;
use crate::gd::{Descent, Partition};
use crate::objective::{FitError, Objective};
use crate::real::RealData;
use crate::rng::stream;
use propdp_core::covariance::Covariance;
use propdp_core::loss::Loss;
use propdp_core::{Design, Prior};

/// Simulation settings of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSettings {
    /// Number of features; n = round(d/δ).
    pub d: usize,
    /// Independent repetitions per point (≥ 2 for a standard error).
    pub reps: usize,
    /// Law of the rows.
    pub design: Design,
    /// Law of θ*'s coordinates.
    pub prior: Prior,
    /// The seed every stream derives from.
    pub seed: u64,
    /// Newton stops when ‖∇F‖₂/√d ≤ grad_tol.
    pub grad_tol: f64,
    /// Newton step cap.
    pub max_iter: usize,
    /// The feature covariance (docs/theory.md §2.4); isotropic when `None`.
    pub covariance: Option<Covariance>,
    /// Real rows as the features (then `covariance` only gives the
    /// teacher's energies, and `design` is not used).
    pub real: Option<std::sync::Arc<RealData>>,
}

impl SimSettings {
    /// Settings with the default tolerance (1e-9) and step cap (100).
    ///
    /// ```
    /// use propdp_sim::{SimSettings, Design, Prior};
    /// let s = SimSettings::new(400, 10, Design::Gaussian, Prior::Gaussian, 1);
    /// assert!(s.check().is_ok());
    /// assert!(SimSettings { reps: 1, ..s }.check().is_err());
    /// ```
    pub fn new(d: usize, reps: usize, design: Design, prior: Prior, seed: u64) -> Self {
        SimSettings {
            d,
            reps,
            design,
            prior,
            seed,
            grad_tol: 1e-9,
            max_iter: 100,
            covariance: None,
            real: None,
        }
    }

    /// The same settings drawing the features from real rows.
    pub fn with_real(self, real: Option<std::sync::Arc<RealData>>) -> Self {
        SimSettings { real, ..self }
    }

    /// The same settings with features of covariance `covariance`.
    pub fn with_covariance(self, covariance: Option<Covariance>) -> Self {
        SimSettings { covariance, ..self }
    }

    /// Range checks, naming the field (as in the config's `[simulation]` table).
    pub fn check(&self) -> Result<(), SimError> {
        propdp_core::config::check_simulation(self.d, self.reps, self.prior, self.grad_tol).map_err(SimError::Invalid)
    }
}

/// Failures of a simulated point.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SimError {
    #[error(transparent)]
    /// The settings are out of range (the field is named).
    Invalid(propdp_core::ConfigError),
    #[error("repetition {rep} of point {point} (n = {n}, d = {d}): {source}")]
    /// A Newton fit failed.
    Fit {
        /// Sweep index of the point.
        point: u64,
        /// The repetition.
        rep: u64,
        /// Samples.
        n: usize,
        /// Features.
        d: usize,
        #[source]
        /// Why.
        source: FitError,
    },
    #[error("repetition {rep} of point {point} (n = {n}, d = {d}): {source}")]
    /// DP gradient descent failed.
    Descent {
        /// Sweep index of the point.
        point: u64,
        /// The repetition.
        rep: u64,
        /// Samples.
        n: usize,
        /// Features.
        d: usize,
        #[source]
        /// Why.
        source: crate::gd::GdError,
    },
}

/// Summary of the repetitions of one point.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSummary {
    /// Samples per repetition.
    pub n: usize,
    /// Features.
    pub d: usize,
    /// Repetitions.
    pub reps: usize,
    /// Mean of every metric.
    pub mean: Metrics,
    /// Standard error of every mean.
    pub stderr: Metrics,
    /// Every metric of every repetition.
    pub per_rep: BTreeMap<String, Vec<f64>>,
    /// DP-GD: mean and standard error of every metric at every evaluated
    /// step ([`crate::gd::evaluation_steps`]).
    pub per_step: Option<PerStep>,
    /// Largest final ‖∇F‖/√d over repetitions (0 for DP-GD, which runs a
    /// fixed number of steps).
    pub max_grad_norm: f64,
    /// Largest Newton step count over repetitions.
    pub max_iterations: usize,
}

/// Per-step summaries: metric name → values at the evaluated steps.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PerStep {
    /// Mean over repetitions of every metric at every step.
    pub mean: BTreeMap<String, Vec<f64>>,
    /// Its standard error.
    pub stderr: BTreeMap<String, Vec<f64>>,
}

/// One repetition's output.
#[derive(Debug, Clone, PartialEq)]
pub struct Repetition {
    /// Every metric of the fitted (or last-step) estimator.
    pub metrics: Metrics,
    /// DP-GD/DP-SGD: every metric at every evaluated step
    /// ([`crate::gd::evaluation_steps`]).
    pub per_step: Option<Vec<Metrics>>,
    /// Final ‖∇F‖/√d of the fit (0 for DP-GD).
    pub grad_norm: f64,
    /// Fit iterations (DP-GD: T).
    pub iterations: usize,
}

/// Mean and standard error of a sample.
/// Number of samples for dimension d at aspect ratio δ = d/n.
pub fn samples(d: usize, delta: f64) -> usize {
    ((d as f64 / delta).round() as usize).max(1)
}

/// Simulate `settings.reps` repetitions of `point`, the `point_index`-th point
/// of its sweep (which, with d and the repetition, selects the RNG stream).
pub fn simulate(point: &Point, settings: &SimSettings, point_index: u64) -> Result<SimSummary, SimError> {
    simulate_with_progress(point, settings, point_index, &|| {})
}

/// [`simulate`], calling `on_rep` after each finished repetition.
pub fn simulate_with_progress(
    point: &Point,
    settings: &SimSettings,
    point_index: u64,
    on_rep: &(dyn Fn() + Sync),
) -> Result<SimSummary, SimError> {
    let runs = simulate_reps(point, settings, point_index, 0..settings.reps, on_rep)?;
    Ok(summarise(samples(settings.d, point.delta()), settings.d, &runs))
}

/// Repetitions `reps` (a sub-range of `0..settings.reps`, e.g. one shard's
/// block) of `point`, in parallel, in repetition order; each draws from its
/// own stream, so any split of the range gives the same repetitions.
pub fn simulate_reps(
    point: &Point,
    settings: &SimSettings,
    point_index: u64,
    reps: std::ops::Range<usize>,
    on_rep: &(dyn Fn() + Sync),
) -> Result<Vec<Repetition>, SimError> {
    settings.check()?;
    if point.intercept().is_some() && settings.real.is_some() {
        return Err(SimError::Invalid(propdp_core::ConfigError::NotApplicable {
            field: "problem.intercept".into(),
            why: "an intercept is simulated with synthetic rows only (isotropic or of a covariance), not with \
                  simulation.data"
                .into(),
        }));
    }
    let own_labels = settings.real.as_ref().is_some_and(|r| r.labels.is_some());
    if point.two_cluster().is_some() && !own_labels && (settings.real.is_some() || settings.design != Design::Gaussian)
    {
        return Err(SimError::Invalid(propdp_core::ConfigError::NotApplicable {
            field: "problem.data_model".into(),
            why: "two clusters are simulated with synthetic Gaussian rows, or on real rows with their own labels \
                  (simulation.data.labels)"
                .into(),
        }));
    }
    let n = samples(settings.d, point.delta());
    let runs = (reps.start as u64..reps.end as u64)
        .into_par_iter()
        .map(|rep| {
            let r = one_rep(point, settings, n, point_index, rep);
            on_rep();
            r
        })
        .collect();
    data::release_spare_buffers();
    runs
}

/// Mean and standard error of every metric (and, for DP-GD, at every step)
/// over `runs` (at least 2) of n × d problems, the largest ‖∇F‖/√d and iteration count.
///
/// ```
/// use propdp_sim::run::{summarise, Repetition};
/// let rep = |v: f64| Repetition { metrics: [("est_err2".to_string(), v)].into(), per_step: None, grad_norm: v / 10.0, iterations: 3 };
/// let s = summarise(20, 10, &[rep(1.0), rep(3.0)]);
/// assert_eq!((s.mean["est_err2"], s.stderr["est_err2"], s.max_grad_norm), (2.0, 1.0, 0.3));
/// ```
pub fn summarise(n: usize, d: usize, runs: &[Repetition]) -> SimSummary {
    let mut per_rep: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in runs {
        for (k, v) in &r.metrics {
            per_rep.entry(k.clone()).or_default().push(*v);
        }
    }
    let (mut mean, mut stderr) = (Metrics::new(), Metrics::new());
    for (k, vs) in &per_rep {
        let (mu, se) = propdp_core::metrics::mean_stderr(vs);
        mean.insert(k.clone(), mu);
        stderr.insert(k.clone(), se);
    }
    let per_step = runs[0].per_step.as_ref().map(|first| {
        let mut out = PerStep::default();
        for name in first[0].keys() {
            for t in 0..first.len() {
                let vs: Vec<f64> = runs
                    .iter()
                    .map(|r| r.per_step.as_ref().expect("all reps are DP-GD")[t][name])
                    .collect();
                let (mu, se) = propdp_core::metrics::mean_stderr(&vs);
                out.mean.entry(name.clone()).or_default().push(mu);
                out.stderr.entry(name.clone()).or_default().push(se);
            }
        }
        out
    });
    SimSummary {
        n,
        d,
        reps: runs.len(),
        mean,
        stderr,
        per_rep,
        per_step,
        max_grad_norm: runs.iter().map(|r| r.grad_norm).fold(0.0, f64::max),
        max_iterations: runs.iter().map(|r| r.iterations).max().unwrap_or(0),
    }
}

/// How the test metrics of `point` under `settings` are computed: exactly
/// from the population for a Gaussian design (whose labels have a finite
/// noise variance), on held-out rows otherwise (other designs, real rows).
pub fn test_metrics(point: &Point, settings: &SimSettings) -> TestMetrics {
    if settings.real.is_none() && settings.design == Design::Gaussian && noise_variance(point).is_some() {
        TestMetrics::Population
    } else {
        TestMetrics::HeldOut
    }
}

/// The label noise's variance: `Some(0)` for logistic labels (not used),
/// `None` when it is infinite (Student t with ≤ 2 degrees of freedom).
fn noise_variance(point: &Point) -> Option<f64> {
    match point.model() {
        Model::Huber { noise, .. } | Model::LeastSquares { noise } => noise.variance(),
        Model::Logistic => Some(0.0),
    }
}

/// The last key of the stream the rows' cyclic groups are drawn from
/// ([point, d, repetition, PARTITION_STREAM]: "groups" in ASCII), apart
/// from the repetition's own stream so that G = 1 draws as before.
const PARTITION_STREAM: u64 = 0x6772_6f75_7073;

/// The rows' cyclic participation groups of a repetition (none drawn for
/// static algorithms and G = 1).
fn partition(point: &Point, s: &SimSettings, n: usize, point_index: u64, rep: u64) -> Partition {
    let groups = point.algorithm().gradient_steps().map_or(1, |g| g.groups);
    let mut rng = stream(s.seed, &[point_index, s.d as u64, rep, PARTITION_STREAM]);
    Partition::draw(n, groups, &mut rng)
}

fn one_rep(point: &Point, s: &SimSettings, n: usize, point_index: u64, rep: u64) -> Result<Repetition, SimError> {
    let mut rng = stream(s.seed, &[point_index, s.d as u64, rep]);
    let partition = partition(point, s, n, point_index, rep);
    // real rows with their own labels are simulated as they are, whatever the data model
    if let Some(mix) = point
        .two_cluster()
        .filter(|_| s.real.as_ref().is_none_or(|r| r.labels.is_none()))
    {
        return two_cluster_rep(point, &mix, s, n, &partition, &mut rng).map_err(|source| SimError::Descent {
            point: point_index,
            rep,
            n,
            d: s.d,
            source,
        });
    }
    // the teacher's intercept b* (0 without one: the draws of a point without the feature)
    let b_star = point.intercept().map_or(0.0, |i| i.teacher);
    let population = test_metrics(point, s) == TestMetrics::Population;
    let (train, test, coords) = match &s.real {
        Some(real) => {
            let (train_ix, test_ix) = real.split(n, &mut rng);
            let (xt, test_xt) = (real.rows_at(&train_ix), real.rows_at(&test_ix));
            let (theta_star, y, test_y) = match &real.labels {
                // the data's own labels: no θ* (its parameter metrics are left out below)
                Some(labels) => (
                    DVector::zeros(s.d),
                    DVector::from_iterator(n, train_ix.iter().map(|&i| labels[i])),
                    DVector::from_iterator(test_ix.len(), test_ix.iter().map(|&i| labels[i])),
                ),
                None => {
                    let mut theta_star = data::draw_theta(s.d, point.s2(), s.prior, &mut rng);
                    theta_star
                        .iter_mut()
                        .zip(&real.coords.teacher_sd)
                        .for_each(|(t, e)| *t *= e);
                    let y = data::draw_labels(&point.model(), &xt.tr_mul(&theta_star), &mut rng);
                    (theta_star, y, DVector::zeros(0))
                }
            };
            let test = Dataset {
                xt: test_xt,
                y: test_y,
                theta_star: theta_star.clone(),
            };
            (Dataset { xt, y, theta_star }, Some(test), Some(real.coords.clone()))
        }
        None => {
            let coords = s.covariance.as_ref().map(|c| data::Coordinates::draw(c, s.d, &mut rng));
            let train = data::draw_dataset_shifted(
                &point.model(),
                n,
                s.d,
                point.s2(),
                b_star,
                s.design,
                s.prior,
                coords.as_ref(),
                &mut rng,
            );
            // a Gaussian design's test metrics are exact: no test rows
            let test = (!population).then(|| Dataset {
                xt: data::draw_design_in(2 * n, s.d, s.design, coords.as_ref(), &mut rng),
                y: DVector::zeros(0),
                theta_star: train.theta_star.clone(),
            });
            (train, test, coords)
        }
    };
    let coords = coords.as_ref();
    // synthetic labels of the test rows (real ones came with them)
    let test = test.map(|test| {
        if test.y.is_empty() {
            Dataset {
                y: data::draw_labels_shifted(&point.model(), &test.xt.tr_mul(&test.theta_star), b_star, &mut rng),
                ..test
            }
        } else {
            test
        }
    });
    let test_set = match &test {
        Some(t) => evaluate::TestSet::Rows(t),
        None => evaluate::TestSet::Population {
            noise_variance: noise_variance(point),
        },
    };
    // the data's own labels have no ground truth θ*: no metric that needs one
    let own_labels = s.real.as_ref().is_some_and(|r| r.labels.is_some());
    let keep = |mut m: Metrics| {
        if own_labels {
            for k in propdp_core::metrics::NEED_TEACHER {
                m.remove(k);
            }
        }
        m
    };
    let (lambda, sigma, tau) = match point.algorithm().shape() {
        Shape::Static { lambda, sigma, tau } => (lambda, sigma, tau),
        Shape::Descent(gradient) => {
            let loss = Loss::for_dpgd(&point.model(), gradient.loss_variant);
            let labels = if loss.is_conditional() {
                train.xt.tr_mul(&train.theta_star)
            } else {
                train.y.clone()
            };
            let descent = Descent { loss, gradient };
            let mut per_step = Vec::with_capacity(gradient.steps + 1);
            let mut observe = |theta: &DVector<f64>, train_loss: f64, intercept: Option<(f64, f64)>| {
                per_step.push(keep(evaluate::dpgd_metrics(
                    &point.model(),
                    &train,
                    test_set,
                    theta,
                    train_loss,
                    coords,
                    intercept,
                )));
            };
            match point.intercept() {
                None => descent.run(&train.xt, &labels, &partition, &mut rng, |_, theta, train_loss| {
                    observe(theta, train_loss, None)
                }),
                // learned: the descent's β_t; not learned: β = 0 against the teacher's b*
                Some(icp) if icp.learned => descent.run_with_intercept(
                    &train.xt,
                    &labels,
                    &partition,
                    &mut rng,
                    |_, theta, beta, train_loss| observe(theta, train_loss, Some((beta, b_star))),
                ),
                Some(_) => descent.run(&train.xt, &labels, &partition, &mut rng, |_, theta, train_loss| {
                    observe(theta, train_loss, Some((0.0, b_star)))
                }),
            }
            .map_err(|source| SimError::Descent {
                point: point_index,
                rep,
                n,
                d: s.d,
                source,
            })?;
            data::recycle(train.xt);
            if let Some(test) = test {
                data::recycle(test.xt);
            }
            return Ok(Repetition {
                metrics: per_step.last().expect("the last step is evaluated").clone(),
                per_step: Some(per_step),
                grad_norm: 0.0,
                iterations: gradient.steps,
            });
        }
    };
    let b = data::draw_gaussian_vector(s.d, &mut rng);
    let obj = Objective {
        xt: &train.xt,
        y: &train.y,
        loss: Loss::of(&point.model()),
        lambda,
        sigma,
        b: &b,
    };
    let fit_error = |source| SimError::Fit {
        point: point_index,
        rep,
        n,
        d: s.d,
        source,
    };
    // a learned intercept (docs/theory.md §2.6): (θ, b) fitted jointly on rows with the constant
    // feature c = 1/√d, the intercept's own noise coordinate; its field β = c·b (+ c·τ·ξ_b released)
    let (theta, intercept, report) = match point.intercept() {
        Some(icp) if icp.learned => {
            let (c, noise) = (1.0 / (s.d as f64).sqrt(), data::draw_gaussian_vector(1, &mut rng)[0]);
            let fit = crate::intercept_objective::InterceptObjective { base: &obj, c, noise };
            let (theta, b_hat, report) = fit.minimize(s.grad_tol, s.max_iter).map_err(fit_error)?;
            (theta, Some((c * (b_hat + tau * noise), b_star)), report)
        }
        Some(_) => {
            let (theta, report) = obj.minimize(s.grad_tol, s.max_iter).map_err(fit_error)?;
            (theta, Some((0.0, b_star)), report)
        }
        None => {
            let (theta, report) = obj.minimize(s.grad_tol, s.max_iter).map_err(fit_error)?;
            (theta, None, report)
        }
    };
    let theta = theta + tau * &b;
    let metrics = keep(evaluate::metrics_with_intercept(
        &point.model(),
        &train,
        test_set,
        &theta,
        &b,
        coords,
        intercept,
    ));
    data::recycle(train.xt);
    if let Some(test) = test {
        data::recycle(test.xt);
    }
    Ok(Repetition {
        metrics,
        per_step: None,
        grad_norm: report.grad_norm,
        iterations: report.iterations,
    })
}

/// One repetition of DP-GD/DP-SGD on two-cluster data (docs/theory.md
/// §3.6, [`crate::two_cluster`]): the standard logistic loss on the ±1
/// labels, with a learned intercept if the point has one; every metric
/// exact at every evaluated step.
fn two_cluster_rep<R: rand::Rng>(
    point: &Point,
    mix: &propdp_core::problem::TwoCluster,
    s: &SimSettings,
    n: usize,
    partition: &Partition,
    rng: &mut R,
) -> Result<Repetition, crate::gd::GdError> {
    let gradient = point
        .algorithm()
        .gradient_steps()
        .expect("two clusters only with DP-GD and DP-SGD (Point::with_two_cluster)");
    let coords = s.covariance.as_ref().map(|c| data::Coordinates::draw(c, s.d, rng));
    let clusters = crate::two_cluster::draw(mix, n, s.d, point.s2(), s.prior, coords.as_ref(), rng);
    let descent = Descent {
        loss: Loss::for_dpgd(&point.model(), gradient.loss_variant),
        gradient,
    };
    let (xt, y) = (&clusters.data.xt, &clusters.data.y);
    let mut per_step = Vec::with_capacity(gradient.steps + 1);
    if point.intercept().is_some_and(|i| i.learned) {
        descent.run_with_intercept(xt, y, partition, rng, |_, theta, beta, train_loss| {
            per_step.push(clusters.metrics(mix.balance, theta, train_loss, Some(beta)));
        })?;
    } else {
        descent.run(xt, y, partition, rng, |_, theta, train_loss| {
            per_step.push(clusters.metrics(mix.balance, theta, train_loss, None));
        })?;
    }
    data::recycle(clusters.data.xt);
    Ok(Repetition {
        metrics: per_step.last().expect("the last step is evaluated").clone(),
        per_step: Some(per_step),
        grad_norm: 0.0,
        iterations: gradient.steps,
    })
}
