//! Sweep expansion: the Cartesian product of every parameter's values.
//!
//! Axes are ordered with δ innermost, so consecutive points trace one curve
//! in δ and solvers can warm-start along it.

use std::collections::BTreeMap;

use crate::accountant::MechanismKind;
use crate::config::{NoiseSource, RawAlgorithm, RawConfig, RawProblem};
use crate::error::ConfigError;
use crate::param::ParamSpec;
use crate::problem::{Algorithm, Budget, Model, Point, Target};

/// One swept (or fixed) parameter: its config name and values.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The parameter's name (`delta`, `sigma`, `noise.sd`, …).
    pub name: String,
    /// Its values, in sweep order.
    pub values: Vec<f64>,
}

/// The expanded sweep of a config.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Outermost first; `delta` is last.
    pub axes: Vec<Axis>,
    points: Vec<Point>,
}

impl Sweep {
    /// Expand and validate every point of a structurally checked config.
    pub fn from_raw(raw: &RawConfig) -> Result<Sweep, ConfigError> {
        let a = &raw.algorithm;
        let source = a.noise_source()?;
        let named = raw
            .problem
            .axes()
            .into_iter()
            .chain(a.axes()?)
            .chain([("delta", raw.problem.delta())]);
        let axes = expand(named)?;
        let points = odometer(&axes, |v| point(&raw.problem, a, source, v))?;
        if let Some(p) = points.iter().find(|p| p.intercept().is_some()) {
            check_intercept(raw, p)?;
        }
        if points.iter().any(|p| p.two_cluster().is_some()) {
            check_two_cluster(raw)?;
        }
        Ok(Sweep { axes, points })
    }

    /// The points of a `[problem]` table alone (for `propdp tune`, whose
    /// searches choose the algorithm): each carries the non-private
    /// placeholder algorithm objective perturbation with λ = 1, σ = 0 — or,
    /// with `problem.intercept`, DP-GD (which takes any intercept) and the
    /// teacher's b* as an intercept not learned, for the caller to set the
    /// learner's choice ([`Point::with_intercept`]).
    pub fn problem_points(problem: &RawProblem) -> Result<Vec<Point>, ConfigError> {
        let named = problem.axes().into_iter().chain([("delta", problem.delta())]);
        let axes = expand(named)?;
        // any algorithm the model admits (least squares, two clusters, an intercept: the gradient
        // methods, with a step far below every 2/L: L grows as 1/δ, and tune's searches set their own η)
        let clusters = problem.data_model() == crate::problem::DataModel::TwoCluster;
        let gradient_only =
            clusters || problem.intercept().is_some() || problem.kind() == crate::ModelKind::LeastSquares;
        let placeholder = if gradient_only {
            Algorithm::Dpgd {
                lambda: 1.0,
                sigma: 0.0,
                eta: PLACEHOLDER_ETA,
                steps: 1,
                loss_variant: Default::default(),
            }
        } else {
            Algorithm::Objective {
                lambda: 1.0,
                sigma: 0.0,
            }
        };
        odometer(&axes, |v| {
            let point = Point::new(v["delta"], v["s2"], problem.model(v), placeholder)?;
            let point = match v.get("intercept") {
                Some(&teacher) => point.with_intercept(crate::problem::Intercept {
                    teacher,
                    learned: false,
                })?,
                None => point,
            };
            match (v.get("balance"), v.get("within")) {
                (Some(&balance), Some(&within)) if clusters => {
                    point.with_two_cluster(crate::problem::TwoCluster { balance, within })
                }
                _ => Ok(point),
            }
        })
    }

    /// The points, δ varying fastest.
    pub fn points(&self) -> &[Point] {
        &self.points
    }

    /// Names of the axes that take more than one value.
    pub fn swept_axes(&self) -> Vec<&str> {
        self.axes
            .iter()
            .filter(|a| a.values.len() > 1)
            .map(|a| a.name.as_str())
            .collect()
    }
}

/// The values of each named parameter.
fn expand<'a>(named: impl Iterator<Item = (&'static str, &'a ParamSpec)>) -> Result<Vec<Axis>, ConfigError> {
    named
        .map(|(name, spec)| {
            Ok(Axis {
                name: name.to_string(),
                values: spec.values_named(|| config_field(name))?,
            })
        })
        .collect()
}

/// The step of tune's placeholder DP-GD point (least squares, two
/// clusters): below 2/L for every δ ≥ 10⁻⁶ (L ≤ (1 + 10³)²/4 < 3·10⁵).
const PLACEHOLDER_ETA: f64 = 1e-6;

/// Most points of one sweep.
pub const MAX_POINTS: usize = 1_000_000;

/// Every combination of the axes' values, the last axis fastest; refused
/// before any allocation when there are more than [`MAX_POINTS`].
fn odometer(
    axes: &[Axis],
    mut point: impl FnMut(&BTreeMap<&str, f64>) -> Result<Point, ConfigError>,
) -> Result<Vec<Point>, ConfigError> {
    let total = axes
        .iter()
        .try_fold(1usize, |acc, a| acc.checked_mul(a.values.len()))
        .filter(|&t| t <= MAX_POINTS)
        .ok_or_else(|| {
            let sizes: Vec<String> = axes
                .iter()
                .map(|a| format!("{} × {}", a.values.len(), a.name))
                .collect();
            ConfigError::range(
                "the sweep",
                sizes.join(" · "),
                "at most 1000000 points (the product of every parameter's number of values)",
            )
        })?;
    let mut points = Vec::with_capacity(total);
    let mut idx = vec![0usize; axes.len()];
    for _ in 0..total {
        let map: BTreeMap<&str, f64> = axes
            .iter()
            .zip(&idx)
            .map(|(ax, &i)| (ax.name.as_str(), ax.values[i]))
            .collect();
        points.push(point(&map)?);
        for k in (0..axes.len()).rev() {
            idx[k] += 1;
            if idx[k] < axes[k].values.len() {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(points)
}

/// Field path in the config file of a parameter name.
fn config_field(name: &str) -> String {
    match name {
        "lambda" | "sigma" | "tau" | "eta" | "steps" | "sample_rate" | "clip" | "epsilon" | "rho" | "fit_intercept" => {
            format!("algorithm.{name}")
        }
        _ => format!("problem.{name}"),
    }
}

/// The point at one combination of values; a budget's noise is calibrated.
fn point(
    problem: &RawProblem,
    a: &RawAlgorithm,
    source: NoiseSource<'_>,
    v: &BTreeMap<&str, f64>,
) -> Result<Point, ConfigError> {
    let model = problem.model(v);
    let kind = a.kind();
    let budget = match source {
        NoiseSource::Given(_) => None,
        NoiseSource::Approx {
            delta_priv,
            neighbouring,
            extra_ridge,
            ..
        } => Some(Budget {
            extra_ridge,
            ..Budget::new(
                Target::Approx {
                    epsilon: v["epsilon"],
                    delta_priv,
                },
                neighbouring,
            )
        }),
        NoiseSource::Zcdp {
            neighbouring,
            extra_ridge,
            ..
        } => Some(Budget {
            extra_ridge,
            ..Budget::new(Target::Zcdp { rho: v["rho"] }, neighbouring)
        }),
    };
    // objective perturbation below twice its floor: the theory and the noise at λ + Δ
    let mut v = v.clone();
    let (noise, budget) = match budget {
        None => (v[kind.noise_param()], None),
        Some(mut b) => {
            model.check()?;
            kind.check_lambda(v["lambda"], true)?;
            // validate the algorithm's fields before the accountant reads them
            let unit = a.algorithm(&v, 1.0)?;
            crate::problem::check_budget_applies(&model, &unit)?;
            b.added_ridge = b.ridge_to_add(&model, unit.mechanism());
            if b.added_ridge > 0.0 {
                *v.get_mut("lambda").expect("every algorithm has lambda") += b.added_ridge;
            }
            let mkind = a.algorithm(&v, 1.0)?.mechanism();
            (calibrated_noise(&model, mkind, b)?, Some(b))
        }
    };
    let v = &v;
    let point = Point::new(v["delta"], v["s2"], model, a.algorithm(v, noise)?)?;
    let point = match (v.get("intercept"), v.get("fit_intercept")) {
        (None, None) => point,
        (teacher, learned) => point.with_intercept(crate::problem::Intercept {
            teacher: teacher.copied().unwrap_or(0.0),
            learned: learned.is_some_and(|&l| l == 1.0),
        })?,
    };
    let point = match (v.get("balance"), v.get("within")) {
        (Some(&balance), Some(&within)) => point.with_two_cluster(crate::problem::TwoCluster { balance, within })?,
        _ => point,
    };
    if budget.is_some() && point.algorithm().gradient_steps().is_none() && point.intercept().is_some_and(|i| i.learned)
    {
        return Err(ConfigError::not_applicable(
            "algorithm.fit_intercept",
            &format!(
                "{} calibrated to a budget with a learned intercept: the intercept is unpenalised, so the \
                 objective's Hessian has no ridge along it (objective perturbation's Jacobian ratio, output \
                 perturbation's sensitivity of b̂ are unbounded) and the constant feature lifts the row norm \
                 past R (docs/theory.md §2.6); give the noise (sigma or tau) instead of a budget, or use \
                 kind = \"dpgd\" or \"dpsgd\" (their clipping bounds the gradient with the constant feature)",
                point.algorithm().kind().title()
            ),
        ));
    }
    Ok(match budget {
        Some(b) => point.with_budget(b),
        None => point,
    })
}

/// What the two-cluster data model (docs/theory.md §3.6: Gaussian clusters,
/// synthetic rows, or real rows with their own labels) does not serve: real
/// rows without labels, a non-Gaussian design.
fn check_two_cluster(raw: &RawConfig) -> Result<(), ConfigError> {
    let Some(sim) = raw.simulation.as_ref() else {
        return Ok(());
    };
    if sim.data.as_ref().is_some_and(|d| d.labels.is_none()) {
        return Err(ConfigError::not_applicable(
            "problem.data_model",
            "data_model = \"two_cluster\" with simulation.data but no simulation.data.labels: two clusters \
             cannot label real rows (give the data's own labels, labels = \"y\", to simulate on them)",
        ));
    }
    if sim.design != crate::Design::Gaussian {
        return Err(ConfigError::range(
            "simulation.design",
            format!("{:?}", sim.design),
            "\"gaussian\" with data_model = \"two_cluster\" (its clusters are Gaussian)",
        ));
    }
    Ok(())
}

/// What the intercept's simulation (docs/theory.md §3.5: synthetic rows,
/// isotropic or of a covariance) does not serve: real rows.
fn check_intercept(raw: &RawConfig, p: &Point) -> Result<(), ConfigError> {
    let field = if p.intercept().is_some_and(|i| i.learned) {
        "algorithm.fit_intercept"
    } else {
        "problem.intercept"
    };
    if raw.simulation.as_ref().is_some_and(|s| s.data.is_some()) {
        return Err(ConfigError::not_applicable(
            field,
            "an intercept with simulation.data: real rows with an intercept are not simulated yet (add a constant \
             column to the data instead)",
        ));
    }
    Ok(())
}

/// The smallest noise meeting the budget, or an error naming the budget's
/// field (with the floor objective perturbation cannot go below).
fn calibrated_noise(model: &Model, kind: MechanismKind, budget: Budget) -> Result<f64, ConfigError> {
    let (field, level, zcdp) = match budget.target {
        Target::Approx { epsilon, .. } => ("algorithm.epsilon", epsilon, false),
        Target::Zcdp { rho } => ("algorithm.rho", rho, true),
    };
    if !(level > 0.0 && level.is_finite()) {
        return Err(ConfigError::range(field, level, "> 0 and finite"));
    }
    let mech = model.mechanism(kind, budget.neighbouring);
    let floor = mech.floor(zcdp);
    if let MechanismKind::Objective { lambda } = kind
        && level <= floor
    {
        let what = if zcdp { "ρ" } else { "ε" };
        return Err(ConfigError::range(
            field,
            level,
            &format!(
                "{what} > {floor:.4}: objective perturbation cannot go below log(1 + βR²/λ) per neighbour \
                 (λ = {lambda}, β = {}) whatever σ; raise λ or {what}, or let algorithm.extra_ridge = \"auto\" \
                 (the default) add the ridge that halves the floor",
                model.curvature()
            ),
        ));
    }
    budget
        .calibrate(model, kind)
        .ok_or_else(|| ConfigError::range(field, level, "a budget some noise level meets"))
}
