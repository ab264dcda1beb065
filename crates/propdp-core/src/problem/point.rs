//! One fully specified problem instance: a sweep point. Its fields are
//! private and every constructor validates, so a `Point` in hand is valid.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::budget::check_dpsgd_privacy_fields;
use super::{Algorithm, Budget, LossVariant, Model, NoiseLaw, Target};
use crate::covariance::Covariance;
use crate::error::ConfigError;
use crate::parameters;

pub use crate::parameters::{DMFT_MAX_STEPS, MAX_STEPS};

/// One problem instance: aspect ratio δ = d/n, prior energy s² = E(Θ²),
/// model and algorithm (and the budget its noise was calibrated to, if any).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PointFields")]
pub struct Point {
    delta: f64,
    s2: f64,
    model: Model,
    algorithm: Algorithm,
    budget: Option<Budget>,
    #[serde(skip_serializing_if = "Option::is_none")]
    intercept: Option<Intercept>,
    #[serde(skip_serializing_if = "Option::is_none")]
    two_cluster: Option<TwoCluster>,
}

/// The two-cluster data model (docs/theory.md §3.6, `problem.data_model =
/// "two_cluster"`): labels y = ±1 with P(y = +1) = p, independent of the
/// Gaussian part, centred rows x = (y − (2p − 1))·μ + g with g ~ N(0, κ²Σ/d) and class mean
/// μ = κ²Σθ*/d.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TwoCluster {
    /// p = P(y = +1) (`problem.balance`).
    pub balance: f64,
    /// κ², the within-class share of E‖x‖² (`problem.within`): Σ_w = κ²Σ.
    pub within: f64,
}

/// An intercept (docs/theory.md §3.5): the teacher's b* (labels of ν + b*:
/// P(y = 1 | ν) = sigmoid(ν + b*), or y = ν + b* + ε) and whether the
/// learner fits an unpenalised intercept on a constant feature 1/√d.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Intercept {
    /// The teacher's intercept b* (`problem.intercept`).
    pub teacher: f64,
    /// Whether the learner fits one (`algorithm.fit_intercept`).
    pub learned: bool,
}

/// The serialized form of a [`Point`], validated on the way in.
#[derive(Deserialize)]
struct PointFields {
    delta: f64,
    s2: f64,
    model: Model,
    algorithm: Algorithm,
    #[serde(default)]
    budget: Option<Budget>,
    #[serde(default)]
    intercept: Option<Intercept>,
    #[serde(default)]
    two_cluster: Option<TwoCluster>,
}

impl TryFrom<PointFields> for Point {
    type Error = ConfigError;
    fn try_from(f: PointFields) -> Result<Point, ConfigError> {
        let p = Point::new(f.delta, f.s2, f.model, f.algorithm)?;
        let p = match f.intercept {
            Some(i) => p.with_intercept(i)?,
            None => p,
        };
        let p = match f.two_cluster {
            Some(c) => p.with_two_cluster(c)?,
            None => p,
        };
        Ok(match f.budget {
            Some(b) => p.with_budget(b),
            None => p,
        })
    }
}

impl Point {
    /// A validated point.
    ///
    /// ```
    /// use propdp_core::{Point, Model, Algorithm, NoiseLaw};
    /// let huber = Model::Huber { huber_m: 1.0, noise: NoiseLaw::Gaussian { sd: 0.5 } };
    /// let ok = Point::new(0.5, 1.0, huber, Algorithm::Objective { lambda: 1.0, sigma: 2.0 });
    /// assert!(ok.is_ok());
    /// // λ = 0 with σ > 0: the objective is unbounded below.
    /// let bad = Point::new(0.5, 1.0, huber, Algorithm::Objective { lambda: 0.0, sigma: 2.0 });
    /// assert!(bad.unwrap_err().to_string().contains("algorithm.lambda"));
    /// ```
    pub fn new(delta: f64, s2: f64, model: Model, algorithm: Algorithm) -> Result<Self, ConfigError> {
        let p = Point {
            delta,
            s2,
            model,
            algorithm,
            budget: None,
            intercept: None,
            two_cluster: None,
        };
        p.check()?;
        Ok(p)
    }

    /// The same point with an intercept (validated): DP-GD and DP-SGD with
    /// the standard losses, objective and output perturbation (Huber: a
    /// teacher's intercept only when learned).
    ///
    /// ```
    /// use propdp_core::{Point, Model, Algorithm};
    /// use propdp_core::problem::Intercept;
    /// let icp = Intercept { teacher: 1.0, learned: true };
    /// let gd = Algorithm::Dpgd { lambda: 0.1, sigma: 0.0, eta: 0.2, steps: 10, loss_variant: Default::default() };
    /// let p = Point::new(2.0, 1.0, Model::Logistic, gd).unwrap().with_intercept(icp).unwrap();
    /// assert_eq!((p.params()["intercept"], p.params()["fit_intercept"]), (1.0, 1.0));
    /// let obj = Point::new(2.0, 1.0, Model::Logistic, Algorithm::Objective { lambda: 1.0, sigma: 0.0 }).unwrap();
    /// assert!(obj.with_intercept(icp).is_ok());
    /// let huber = Model::Huber { huber_m: 1.0, noise: propdp_core::NoiseLaw::Gaussian { sd: 0.5 } };
    /// let obj = Point::new(2.0, 1.0, huber, Algorithm::Objective { lambda: 1.0, sigma: 0.0 }).unwrap();
    /// let e = obj.with_intercept(Intercept { learned: false, ..icp }).unwrap_err().to_string();
    /// assert!(e.contains("problem.intercept") && e.contains("fit_intercept = true"), "{e}");
    /// ```
    pub fn with_intercept(self, intercept: Intercept) -> Result<Point, ConfigError> {
        let p = Point {
            intercept: Some(intercept),
            ..self
        };
        p.check_intercept()?;
        Ok(p)
    }

    /// The intercept, if the point has one (`None`: neither key was given).
    pub fn intercept(&self) -> Option<Intercept> {
        self.intercept
    }

    /// The same point with the two-cluster data model (validated): the
    /// standard logistic loss under DP-GD or DP-SGD, without a teacher's
    /// intercept (a learned one is allowed).
    ///
    /// ```
    /// use propdp_core::{Point, Model, Algorithm};
    /// use propdp_core::problem::TwoCluster;
    /// let mix = TwoCluster { balance: 0.75, within: 0.7 };
    /// let gd = Algorithm::Dpgd { lambda: 0.1, sigma: 0.0, eta: 0.2, steps: 10, loss_variant: Default::default() };
    /// let p = Point::new(2.0, 1.0, Model::Logistic, gd).unwrap().with_two_cluster(mix).unwrap();
    /// assert_eq!((p.params()["balance"], p.params()["within"]), (0.75, 0.7));
    /// let obj = Point::new(2.0, 1.0, Model::Logistic, Algorithm::Objective { lambda: 1.0, sigma: 0.0 }).unwrap();
    /// let e = obj.with_two_cluster(mix).unwrap_err().to_string();
    /// assert!(e.contains("problem.data_model") && e.contains("dpgd"), "{e}");
    /// let e = p.with_two_cluster(TwoCluster { balance: 0.99, within: 0.7 }).unwrap_err().to_string();
    /// assert!(e.contains("problem.balance") && e.contains("0.98"), "{e}");
    /// ```
    pub fn with_two_cluster(self, two_cluster: TwoCluster) -> Result<Point, ConfigError> {
        let p = Point {
            two_cluster: Some(two_cluster),
            ..self
        };
        p.check_two_cluster()?;
        Ok(p)
    }

    /// The two-cluster data model, if the point has it (`None`: the teacher's labels).
    pub fn two_cluster(&self) -> Option<TwoCluster> {
        self.two_cluster
    }

    /// p and κ² in range; two clusters only with the standard logistic loss
    /// under DP-GD or DP-SGD and no teacher's intercept.
    fn check_two_cluster(&self) -> Result<(), ConfigError> {
        let Some(c) = self.two_cluster else {
            return Ok(());
        };
        parameters::check("balance", "problem.balance", c.balance)?;
        parameters::check("within", "problem.within", c.within)?;
        let kind = self.algorithm.kind();
        if self.model != Model::Logistic || !kind.is_iterative() {
            return Err(ConfigError::range(
                "problem.data_model",
                "\"two_cluster\"",
                &format!(
                    "\"teacher\" with model = \"{}\" and algorithm.kind = \"{}\" (two clusters are served for \
                     model = \"logistic\" with kind = \"dpgd\" or \"dpsgd\", docs/theory.md §3.6)",
                    self.model.name(),
                    kind.name()
                ),
            ));
        }
        if self
            .algorithm
            .gradient_steps()
            .is_some_and(|g| g.loss_variant == LossVariant::Conditional)
        {
            return Err(ConfigError::range(
                "algorithm.loss_variant",
                "\"conditional\"",
                "\"standard\" with data_model = \"two_cluster\" (the conditional loss averages over a teacher's labels)",
            ));
        }
        if self.intercept.is_some_and(|i| i.teacher != 0.0) {
            return Err(ConfigError::not_applicable(
                "problem.intercept",
                "data_model = \"two_cluster\" has no teacher's intercept (its class balance is problem.balance); \
                 algorithm.fit_intercept = true learns one",
            ));
        }
        Ok(())
    }

    /// b* in range; DP-GD and DP-SGD with their standard losses; objective
    /// and output perturbation, except Huber's b* ≠ 0 not learned.
    fn check_intercept(&self) -> Result<(), ConfigError> {
        let Some(icp) = self.intercept else {
            return Ok(());
        };
        parameters::check("intercept", "problem.intercept", icp.teacher)?;
        let kind = self.algorithm.kind();
        let Some(g) = self.algorithm.gradient_steps() else {
            // objective and output perturbation (docs/theory.md §2.6): a Huber teacher's intercept is
            // fitted exactly by a learned one; not learned, it is an off-centre noise law the
            // Huber fixed point does not take
            if !icp.learned && icp.teacher != 0.0 && matches!(self.model, Model::Huber { .. }) {
                return Err(ConfigError::not_applicable(
                    "problem.intercept",
                    &format!(
                        "{} of Huber regression with a teacher's intercept b* = {} not learned: the fixed point \
                         takes centred label noise only (docs/theory.md §2.6); set algorithm.fit_intercept = true \
                         or use kind = \"dpgd\" or \"dpsgd\"",
                        kind.title(),
                        icp.teacher
                    ),
                ));
            }
            return Ok(());
        };
        if g.loss_variant == LossVariant::Conditional {
            return Err(ConfigError::range(
                "algorithm.loss_variant",
                "\"conditional\"",
                "\"standard\" with an intercept (the conditional losses average over labels drawn without one)",
            ));
        }
        Ok(())
    }

    /// The same problem with another algorithm (validated), and no budget.
    ///
    /// ```
    /// use propdp_core::{Point, Model, Algorithm};
    /// let p = Point::new(2.0, 1.0, Model::Logistic, Algorithm::Objective { lambda: 1.0, sigma: 0.0 }).unwrap();
    /// let q = p.with_algorithm(Algorithm::Output { lambda: 0.5, tau: 1.0 }).unwrap();
    /// assert_eq!((q.delta(), q.algorithm().lambda()), (2.0, 0.5));
    /// assert!(p.with_algorithm(Algorithm::Output { lambda: 0.0, tau: 1.0 }).is_err());
    /// ```
    pub fn with_algorithm(&self, algorithm: Algorithm) -> Result<Point, ConfigError> {
        let p = Point::new(self.delta, self.s2, self.model, algorithm)?;
        let p = match self.intercept {
            Some(i) => p.with_intercept(i)?,
            None => p,
        };
        match self.two_cluster {
            Some(c) => p.with_two_cluster(c),
            None => Ok(p),
        }
    }

    /// The same point, labelled with the budget its noise was calibrated to.
    pub fn with_budget(self, budget: Budget) -> Point {
        Point {
            budget: Some(budget),
            ..self
        }
    }

    /// The aspect ratio δ = d/n.
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// The prior energy s² = E(Θ²).
    pub fn s2(&self) -> f64 {
        self.s2
    }

    /// The statistical model.
    pub fn model(&self) -> Model {
        self.model
    }

    /// The DP algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The budget the noise was calibrated to, if any.
    pub fn budget(&self) -> Option<Budget> {
        self.budget
    }

    /// Range checks of every field, naming the field, the value and the allowed range.
    fn check(&self) -> Result<(), ConfigError> {
        parameters::check("delta", "problem.delta", self.delta)?;
        parameters::check("s2", "problem.s2", self.s2)?;
        self.model.check()?;
        let kind = self.algorithm.kind();
        if let Model::LeastSquares { .. } = self.model
            && !kind.is_iterative()
        {
            return Err(ConfigError::range(
                "algorithm.kind",
                format!("\"{}\"", kind.name()),
                "\"dpgd\" or \"dpsgd\" with model = \"least_squares\" (the squared loss is not Lipschitz: \
                 objective and output perturbation have no finite sensitivity for it)",
            ));
        }
        if let (
            Model::LeastSquares { .. },
            Algorithm::Dpgd { loss_variant, .. } | Algorithm::Dpsgd { loss_variant, .. },
        ) = (self.model, self.algorithm)
            && loss_variant == LossVariant::Conditional
        {
            return Err(ConfigError::range(
                "algorithm.loss_variant",
                "\"conditional\"",
                "\"standard\" with model = \"least_squares\" (no conditional variant of the squared loss)",
            ));
        }
        if kind.is_iterative()
            && let Model::Huber { noise, .. } | Model::LeastSquares { noise } = self.model
            && !matches!(noise, NoiseLaw::Gaussian { .. })
        {
            return Err(ConfigError::range(
                "problem.noise",
                format!("law = \"{}\"", noise.name()),
                &format!(
                    "law = \"gaussian\" with algorithm.kind = \"{}\" (the DMFT of DP-GD and DP-SGD draws Gaussian \
                     label noise; Student-t, Laplace and contaminated noise are covered by objective and output \
                     perturbation)",
                    kind.name()
                ),
            ));
        }
        let noise = self.algorithm.noise();
        kind.check_lambda(self.algorithm.lambda(), noise > 0.0)?;
        parameters::check(kind.noise_param(), &format!("algorithm.{}", kind.noise_param()), noise)?;
        match self.algorithm {
            Algorithm::Objective { .. } | Algorithm::Output { .. } => Ok(()),
            Algorithm::Dpgd { .. } => self.check_dpgd(),
            Algorithm::Dpsgd { .. } => self.check_dpsgd(),
        }
    }

    /// Smoothness bound of F = Σℓ + (λ/2)‖θ‖² for Gaussian designs:
    /// L = β·λ_max(XᵀX) + λ with λ_max(XᵀX) → (1 + √δ)²/δ (Marchenko–Pastur
    /// edge) and β = sup ℓ'' ([`Model::curvature`]).
    pub fn smoothness(&self) -> f64 {
        smoothness(&self.model, self.delta, self.algorithm.lambda())
    }

    /// Smoothness of DP-SGD's mean step at sample rate q: L_q = q(L − λ) + λ
    /// (the expected batch gradient is q times the data term's).
    pub fn mean_step_smoothness(&self, sample_rate: f64) -> f64 {
        mean_step_smoothness(&self.model, self.delta, self.algorithm.lambda(), sample_rate)
    }

    /// Smoothness of a typical Poisson batch's step at sample rate q:
    /// L_B(q) = β·λ_max(X_BᵀX_B) + λ, the batch's q·n rows at aspect ratio
    /// δ/q, so λ_max → (1 + √(q/δ))² (L_B(1) = L; L_B(q) → β + λ as q → 0,
    /// one row of norm ≈ 1). L_q ≤ L_B(q): at small q a step's own
    /// curvature, not the mean step's, limits η (docs/dpsgd.md).
    pub fn batch_smoothness(&self, sample_rate: f64) -> f64 {
        smoothness(&self.model, self.delta / sample_rate, self.algorithm.lambda())
    }

    /// DP-GD checks: η > 0 and below the divergence threshold 2/L of
    /// noiseless gradient descent, 1 ≤ steps ≤ [`MAX_STEPS`], and the conditional
    /// Huber loss only with Gaussian noise.
    fn check_dpgd(&self) -> Result<(), ConfigError> {
        let Algorithm::Dpgd {
            eta,
            steps,
            loss_variant,
            ..
        } = self.algorithm
        else {
            unreachable!("called for DP-GD (Point::check)")
        };
        parameters::check("eta", "algorithm.eta", eta)?;
        let limit = 2.0 / self.smoothness();
        if eta >= limit {
            return Err(ConfigError::range(
                "algorithm.eta",
                eta,
                &format!(
                    "η < 2/L = {limit:?} at δ = {:?} (noiseless gradient descent diverges above)",
                    self.delta
                ),
            ));
        }
        parameters::check("steps", "algorithm.steps", steps as f64)?;
        self.check_loss_variant(loss_variant)
    }

    /// DP-SGD checks (docs/theory.md §3.1): 0 < q ≤ 1, C > 0 and finite,
    /// 1 ≤ steps ≤ [`MAX_STEPS`], η > 0, the conditional Huber loss only with
    /// Gaussian noise, and a step size that does not diverge. A bounded
    /// gradient (a Lipschitz loss, or any loss clipped) moves θ by at most
    /// η(C·|B_t| + σ‖ξ‖) per step, so with |1 − ηλ| < 1 the iterates stay
    /// bounded for every η: they may oscillate, never diverge, and only
    /// ηλ ≥ 2 is refused. An unbounded gradient (the squared loss unclipped)
    /// diverges in mean once η ≥ 2/L_q, L_q = q·β(1 + √δ)²/δ + λ (the mean
    /// step's Hessian q·XᵀX + λ), and in second moment once the batch's
    /// sampling-noise gain G ≥ 1 ([`crate::spectrum::MarchenkoPastur::sgd_noise_gain`]);
    /// both are refused.
    fn check_dpsgd(&self) -> Result<(), ConfigError> {
        let Algorithm::Dpsgd {
            lambda,
            eta,
            steps,
            loss_variant,
            sample_rate,
            clip,
            groups,
            ..
        } = self.algorithm
        else {
            unreachable!("called for DP-SGD (Point::check)")
        };
        check_dpsgd_privacy_fields(sample_rate, clip)?;
        parameters::check("groups", "algorithm.groups", groups as f64)?;
        parameters::check("eta", "algorithm.eta", eta)?;
        parameters::check("steps", "algorithm.steps", steps as f64)?;
        if eta * lambda >= 2.0 {
            return Err(ConfigError::range(
                "algorithm.eta",
                eta,
                &format!("η·λ < 2 (λ = {lambda:?}: the ridge's contraction 1 − ηλ must stay in (−1, 1])"),
            ));
        }
        // with G cyclic groups a step's batch comes from n/G rows: a group's step at δ·G
        let group_delta = self.delta * groups as f64;
        if clip.is_none() && self.model.lipschitz().is_infinite() {
            let limit = 2.0 / mean_step_smoothness(&self.model, group_delta, lambda, sample_rate);
            if eta >= limit {
                return Err(ConfigError::range(
                    "algorithm.eta",
                    eta,
                    &format!(
                        "η < 2/L_q = {limit:?} at δ = {:?}, q = {sample_rate:?} (the unclipped squared loss \
                         diverges in mean above; clip it or lower η)",
                        group_delta
                    ),
                ));
            }
            // the batch's sampling noise feeds the loss back into the variance
            let mp = crate::spectrum::MarchenkoPastur::new(group_delta)?;
            let gain = mp.sgd_noise_gain(lambda, eta, sample_rate);
            if gain >= 1.0 {
                return Err(ConfigError::range(
                    "algorithm.eta",
                    eta,
                    &format!(
                        "η < {:?} at δ = {:?}, λ = {lambda:?}, q = {sample_rate:?}: the unclipped squared loss's \
                         second moments diverge above (the batch's sampling-noise gain G = {gain:.4} ≥ 1, \
                         docs/theory.md §3.2); clip it or lower η",
                        mp.sgd_max_step(lambda, sample_rate, 1.0),
                        group_delta
                    ),
                ));
            }
        }
        self.check_loss_variant(loss_variant)
    }

    /// A warning for a DP-SGD step size that is accepted (the gradient is
    /// bounded, so the iterates cannot diverge) but large enough that they
    /// may oscillate: η ≥ 2/L_q, the mean step's stability limit
    /// (docs/theory.md §3.1). `None` otherwise.
    ///
    /// ```
    /// use propdp_core::{Algorithm, LossVariant, Model, Point};
    /// let sgd = |eta| Algorithm::Dpsgd { lambda: 0.1, sigma: 1.0, eta, steps: 10,
    ///     loss_variant: LossVariant::Standard, sample_rate: 0.5, clip: None,
    ///     groups: 1, strategy: propdp_core::problem::Strategy::IDENTITY };
    /// let p = Point::new(1.0, 1.0, Model::Logistic, sgd(0.5)).unwrap();
    /// assert!(p.step_size_warning().is_none());
    /// let w = Point::new(1.0, 1.0, Model::Logistic, sgd(10.0)).unwrap().step_size_warning().unwrap();
    /// assert!(w.contains("algorithm.eta") && w.contains("oscillate"), "{w}");
    /// ```
    pub fn step_size_warning(&self) -> Option<String> {
        let (lambda, eta, sample_rate, groups) = match self.algorithm {
            Algorithm::Dpsgd {
                lambda,
                eta,
                sample_rate,
                groups,
                ..
            } => (lambda, eta, sample_rate, groups),
            // DP-GD's η is refused at the limit (Point::check)
            Algorithm::Objective { .. } | Algorithm::Output { .. } | Algorithm::Dpgd { .. } => return None,
        };
        // a group's step at δ·G (G = 1: δ)
        let limit = 2.0 / mean_step_smoothness(&self.model, self.delta * groups as f64, lambda, sample_rate);
        (eta >= limit).then(|| {
            format!(
                "algorithm.eta = {eta:?} ≥ 2/L_q = {limit:.4} at δ = {:?}, q = {sample_rate:?}: the gradient is \
                 bounded, so the iterates stay bounded, but they may oscillate",
                self.delta
            )
        })
    }

    /// The conditional Huber loss only with Gaussian noise (it averages over it).
    fn check_loss_variant(&self, loss_variant: LossVariant) -> Result<(), ConfigError> {
        if loss_variant == LossVariant::Conditional
            && let Model::Huber { noise, .. } = self.model
            && !matches!(noise, NoiseLaw::Gaussian { .. })
        {
            return Err(ConfigError::range(
                "algorithm.loss_variant",
                "\"conditional\"",
                "\"standard\" unless noise.law = \"gaussian\" (the conditional Huber loss averages over Gaussian noise)",
            ));
        }
        Ok(())
    }

    /// Every parameter of the point by its config name.
    pub fn params(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        match self.budget.map(|b| b.target) {
            Some(Target::Approx { epsilon, delta_priv }) => {
                m.insert("epsilon".into(), epsilon);
                m.insert("delta_priv".into(), delta_priv);
            }
            Some(Target::Zcdp { rho }) => {
                m.insert("rho".into(), rho);
            }
            None => {}
        }
        m.insert("delta".into(), self.delta);
        m.insert("s2".into(), self.s2);
        let noise = match self.model {
            Model::Huber { huber_m, noise } => {
                m.insert("huber_m".into(), huber_m);
                Some(noise)
            }
            Model::LeastSquares { noise } => Some(noise),
            Model::Logistic => None,
        };
        for (k, v) in noise.iter().flat_map(|n| n.params()) {
            m.insert(k.into(), v);
        }
        m.extend(
            algorithm_params(&self.algorithm)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v)),
        );
        if let Some(icp) = self.intercept {
            m.insert("intercept".into(), icp.teacher);
            m.insert("fit_intercept".into(), f64::from(u8::from(icp.learned)));
        }
        if let Some(c) = self.two_cluster {
            m.insert("balance".into(), c.balance);
            m.insert("within".into(), c.within);
        }
        m
    }

    /// The problem's parameters by config name, without the algorithm's
    /// (its hyperparameters and noise).
    pub fn problem_params(&self) -> BTreeMap<String, f64> {
        let algorithm: Vec<&str> = algorithm_params(&self.algorithm).iter().map(|p| p.0).collect();
        self.params()
            .into_iter()
            .filter(|(k, _)| !algorithm.contains(&k.as_str()) && k != "fit_intercept")
            .collect()
    }
}

/// The smoothness bound of [`Point::smoothness`] for a model, δ and λ.
pub(crate) fn smoothness(model: &Model, delta: f64, lambda: f64) -> f64 {
    // the largest eigenvalue of XᵀX: the Marchenko–Pastur law's right edge
    model.curvature() * crate::spectrum::right_edge(delta) + lambda
}

/// L_q = q(L − λ) + λ ([`Point::mean_step_smoothness`]).
fn mean_step_smoothness(model: &Model, delta: f64, lambda: f64, sample_rate: f64) -> f64 {
    mean_step_smoothness_at(model.curvature(), delta, lambda, sample_rate, None)
}

/// L_q = q·β·λ₊(δ) + λ, the smoothness of DP-SGD's mean step for a loss of
/// curvature β = sup ℓ'' at sample rate q (q = 1: full batch; a typical
/// Poisson batch's own step is this at q = 1 and aspect ratio δ/q), λ₊ the
/// right edge of XᵀX's spectrum: the Marchenko–Pastur edge, or with a
/// feature covariance its generalised edge ([`Covariance::right_edge`]).
/// Beyond η = 2/L_q the iterates may oscillate ([`Point::step_size_warning`]).
///
/// ```
/// // Huber (β = 1), δ = 1, λ = 0.5, q = 0.05: 2/L_q = 2/(0.05·4 + 0.5)
/// let l = propdp_core::problem::mean_step_smoothness_at(1.0, 1.0, 0.5, 0.05, None);
/// assert!((2.0 / l - 2.0 / 0.7).abs() < 1e-12);
/// ```
pub fn mean_step_smoothness_at(
    curvature: f64,
    delta: f64,
    lambda: f64,
    sample_rate: f64,
    covariance: Option<&Covariance>,
) -> f64 {
    let edge = covariance.map_or_else(|| crate::spectrum::right_edge(delta), |c| c.right_edge(delta));
    sample_rate * curvature * edge + lambda
}

/// An algorithm's parameters by config name.
fn algorithm_params(a: &Algorithm) -> Vec<(&'static str, f64)> {
    let mut v = vec![("lambda", a.lambda()), (a.kind().noise_param(), a.noise())];
    match *a {
        Algorithm::Dpgd { eta, steps, .. } => v.extend([("eta", eta), ("steps", steps as f64)]),
        Algorithm::Dpsgd {
            eta,
            steps,
            sample_rate,
            clip,
            groups,
            strategy,
            ..
        } => {
            v.extend([("eta", eta), ("steps", steps as f64), ("sample_rate", sample_rate)]);
            v.extend(clip.map(|c| ("clip", c)));
            // plain DP-SGD's parameters are as before; correlated noise names its groups
            if groups > 1 || !strategy.is_identity() {
                v.push(("groups", groups as f64));
            }
        }
        Algorithm::Objective { .. } | Algorithm::Output { .. } => {}
    }
    v
}
