//! One private fit and its intervals ([`Inference`]): what the release
//! certifies, the debiased estimate, its standard errors, the intervals and
//! their CSV and JSON reports.

use serde::Serialize;

use super::interval::{Interval, quantile};
use super::{Glm, MAX_RELATIVE_ERROR, Nuisance, Release, Rows, SIGNAL_Z, Spec, TestError, Whitening};
use crate::error::Argument;

/// What the release certifies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Privacy {
    /// The certified ε of everything released (the upper end of the
    /// accountant's bracket).
    pub epsilon: f64,
    /// A lower bound on that ε (the bracket's lower end).
    pub epsilon_lower: f64,
    /// δ.
    pub delta: f64,
    /// "replace-one" or "add/remove-one".
    pub neighbouring: &'static str,
    /// What was released, in the ledger's order.
    pub releases: Vec<String>,
    /// Objective perturbation: the extra ridge Δ added to λ where the
    /// floor exceeded half of ε (`extra_ridge = auto`; 0: none).
    pub extra_ridge: f64,
    /// The ridge fitted and solved at, λ + Δ.
    pub lambda: f64,
}

/// The released residual statistics of a Huber fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Residuals {
    /// P̂, the fraction of residuals inside ±M.
    pub inside: f64,
    /// β̂², the mean clipped squared residual.
    pub beta2: f64,
    /// The standard deviation of each release's noise (P̂, β̂²).
    pub noise_sd: (f64, f64),
    /// Output perturbation: the largest blur of a residual at θ̂ by its
    /// noise, τR/M, which the statistics were de-blurred from
    /// ([`super::deblur::alpha_bias`]); 0 for objective perturbation.
    pub blur: f64,
}

/// One private fit and its intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inference {
    /// The settings.
    pub spec: Spec,
    /// The released estimate θ̂, in the rows' coordinates.
    pub params: Vec<f64>,
    /// θ̂ in the coordinates of the fit (whitened by a public covariance:
    /// Σ^{1/2}θ̂; else θ̂ itself).
    #[serde(skip)]
    pub fitted: Vec<f64>,
    /// Σ^{-1/2} of the public covariance the rows were whitened by, if any
    /// ([`super::fit_whitened`]).
    #[serde(skip)]
    pub whitening: Option<Whitening>,
    /// Whether the rows were whitened by a public covariance.
    pub whitened: bool,
    /// The nuisances α̂, σ̂_eff, ŝ² and their errors.
    pub nuisance: Nuisance,
    /// σ (objective) or τ (output) of the estimator's noise.
    pub noise: f64,
    /// The residual statistics released (Huber objective perturbation).
    pub residuals: Option<Residuals>,
    /// The test error released on the held-out rows (holdout > 0).
    pub test_error: Option<TestError>,
    /// What the release certifies.
    pub privacy: Privacy,
    /// Rows fitted (without the held-out ones) as the release states them:
    /// exact under replace-one, where n is public; under add/remove the
    /// privately released count, rounded ([`Rows`]).
    pub n: usize,
    /// Features.
    pub d: usize,
    /// What was released of the rows: their count and their shrink by the
    /// projection onto ‖x‖ ≤ row_norm.
    pub rows: Rows,
}

impl Inference {
    /// θ̂/α̂, the debiased estimate (with a public covariance:
    /// Σ^{-1/2}θ̂'/α̂ from the whitened fit θ̂').
    pub fn debiased(&self) -> Vec<f64> {
        let fitted: Vec<f64> = self.fitted.iter().map(|t| t / self.nuisance.alpha).collect();
        match &self.whitening {
            Some(w) => w.apply(&fitted),
            None => fitted,
        }
    }

    /// The interval ⟨a, θ̂'⟩/α̂ ± z·se of a contrast `a` of the fit's own
    /// coordinates.
    fn interval_in_fit(&self, a: &[f64], z: f64) -> Interval {
        let norm2: f64 = a.iter().map(|v| v * v).sum();
        let x: f64 = a.iter().zip(&self.fitted).map(|(a, t)| a * t).sum();
        let estimate = x / self.nuisance.alpha;
        let se = self.se(self.energy(x, norm2), norm2);
        Interval {
            estimate,
            se,
            lower: estimate - z * se,
            upper: estimate + z * se,
        }
    }

    /// The standard error of θ̂_j/α̂ at a coefficient whose square is
    /// estimated by `energy`.
    fn se(&self, energy: f64, norm2: f64) -> f64 {
        let Nuisance {
            alpha,
            alpha_se,
            sigma_eff,
            sigma_eff_se,
            ..
        } = self.nuisance;
        let relative = (alpha_se / alpha).min(MAX_RELATIVE_ERROR);
        let noise2 = sigma_eff * sigma_eff + sigma_eff_se * sigma_eff_se;
        (noise2 * norm2 + relative * relative * alpha * alpha * energy).sqrt() / alpha
    }

    /// The estimated square of a contrast ⟨a, θ*⟩ from x = ⟨a, θ̂⟩, ‖a‖² =
    /// `norm2` (a coordinate: a = e_j). Where x stands out of the noise
    /// (|x| > [`SIGNAL_Z`]·σ̂_eff‖a‖: a large coordinate, a contrast aligned
    /// with θ*), the clipped unbiased estimate (x² − σ̂_eff²‖a‖²)/α̂²;
    /// below, the posterior second moment under the working law
    /// ⟨a, θ*⟩ ~ N(0, ŝ²‖a‖²), which stays near ŝ²‖a‖² where the noise swamps
    /// the signal — the unbiased estimate's clipping overshoots there and
    /// widened the intervals to 98% coverage for a 95% level.
    fn energy(&self, x: f64, norm2: f64) -> f64 {
        let Nuisance {
            alpha, sigma_eff, s2, ..
        } = self.nuisance;
        let noise2 = sigma_eff * sigma_eff * norm2;
        let unbiased = ((x * x - noise2) / (alpha * alpha)).max(0.0);
        let prior = s2 * norm2;
        let total = alpha * alpha * prior + noise2;
        let posterior = if total > 0.0 {
            let mean = alpha * prior * x / total;
            mean * mean + prior * noise2 / total
        } else {
            0.0
        };
        if x * x > SIGNAL_Z * SIGNAL_Z * noise2 {
            unbiased.max(posterior)
        } else {
            posterior
        }
    }

    /// The standard error of each coordinate's debiased estimate (with a
    /// public covariance, θ*_j = ⟨Σ^{-1/2}e_j, θ'*⟩ is a contrast of the
    /// whitened fit).
    pub fn standard_errors(&self) -> Vec<f64> {
        match &self.whitening {
            Some(w) => (0..self.d).map(|j| self.interval_in_fit(&w.row(j), 0.0).se).collect(),
            None => self.fitted.iter().map(|&t| self.se(self.energy(t, 1.0), 1.0)).collect(),
        }
    }

    /// The (1 − alpha) interval of every θ*_j: (lower, upper).
    pub fn conf_int(&self, alpha: f64) -> Result<Vec<(f64, f64)>, Argument> {
        let z = quantile(alpha)?;
        Ok(self
            .debiased()
            .iter()
            .zip(self.standard_errors())
            .map(|(&t, se)| (t - z * se, t + z * se))
            .collect())
    }

    /// The (1 − alpha) interval of ⟨a, θ*⟩ (the delta method carries α̂'s
    /// error, which a contrast aligned with θ* multiplies by up to √d).
    pub fn contrast(&self, a: &[f64], alpha: f64) -> Result<Interval, Argument> {
        if a.len() != self.d {
            return Err(Argument::new(
                "a",
                format!(" has {} entries; the model has d = {} coefficients", a.len(), self.d),
            ));
        }
        if a.iter().any(|v| !v.is_finite()) || a.iter().all(|&v| v == 0.0) {
            return Err(Argument::new("a", " must be finite and not all zero".into()));
        }
        let z = quantile(alpha)?;
        Ok(match &self.whitening {
            Some(w) => self.interval_in_fit(&w.apply(a), z),
            None => self.interval_in_fit(a, z),
        })
    }

    /// The (1 − alpha) interval of θ̂'s population test error, from the
    /// rows held out of the fit ([`super::test_error`]); an argument error when
    /// none were (holdout = 0).
    pub fn test_error_int(&self, alpha: f64) -> Result<Interval, Argument> {
        match &self.test_error {
            Some(t) => t.interval(alpha),
            None => Err(Argument::new(
                "holdout",
                " = 0: the test error's interval needs rows held out of the fit; fit with holdout > 0 (e.g. 0.2)"
                    .into(),
            )),
        }
    }
}

impl Inference {
    /// The intervals as CSV: one row per coefficient j with θ̂_j, θ̂_j/α̂,
    /// its standard error and the (1 − alpha) interval.
    pub fn intervals_csv(&self, alpha: f64) -> Result<String, Argument> {
        let ci = self.conf_int(alpha)?;
        let mut out = String::from("j,theta_hat,debiased,se,lower,upper\n");
        for (j, ((t, b), (se, (lo, hi)))) in self
            .params
            .iter()
            .zip(self.debiased())
            .zip(self.standard_errors().into_iter().zip(ci))
            .enumerate()
        {
            out += &format!("{j},{t:e},{b:e},{se:e},{lo:e},{hi:e}\n");
        }
        Ok(out)
    }

    /// Writes `intervals.csv` and `report.json` (settings, nuisances,
    /// privacy, level, provenance) into `dir`, created if missing; refuses
    /// to replace either file (propdp never replaces a file it did not write).
    pub fn write(&self, dir: &std::path::Path, alpha: f64) -> crate::Result<()> {
        let (csv, json) = (dir.join("intervals.csv"), dir.join("report.json"));
        for f in [&csv, &json] {
            if f.symlink_metadata().is_ok() {
                return Err(crate::error::Refused::new(
                    format!(
                        "{} exists: propdp does not replace a file it did not write; ",
                        f.display()
                    ),
                    Some(crate::error::Advice::ChooseOtherOut),
                )
                .into());
            }
        }
        let text = self.intervals_csv(alpha)?;
        crate::rundir::create_out_dir(dir)?;
        let mut report = serde_json::to_value(self).map_err(anyhow::Error::from)?;
        if let Some(o) = report.as_object_mut() {
            o.remove("params");
            o.insert("level".into(), (1.0 - alpha).into());
            if let Ok(i) = self.test_error_int(alpha) {
                o.insert(
                    "test_error_interval".into(),
                    serde_json::to_value(i).map_err(anyhow::Error::from)?,
                );
            }
            o.insert(
                "provenance".into(),
                serde_json::json!({
                    "git_commit": crate::provenance::GIT_COMMIT,
                    "crate_version": crate::provenance::CRATE_VERSION,
                }),
            );
        }
        crate::file::write_atomic(&csv, &text)?;
        crate::file::write_atomic(&json, &format!("{report:#}\n"))?;
        Ok(())
    }

    /// A short text report: settings, privacy, nuisances.
    pub fn text(&self) -> String {
        let n = &self.nuisance;
        let how = match self.spec.release {
            Release::Dpsgd => "DP-SGD",
            Release::Objective => "objective perturbation",
            Release::Output => "output perturbation",
        };
        let model = match self.spec.model {
            Glm::Logistic => "logistic regression".to_string(),
            Glm::Huber { m } => format!("Huber regression (M = {m})"),
        };
        let mut out = format!(
            "{model} by {how}, lambda = {}, n {} {}, d = {} (d/n = {:.3})\n",
            self.spec.lambda,
            if self.rows.fitted_sd > 0.0 { "≈" } else { "=" },
            self.n,
            self.d,
            self.d as f64 / self.n as f64
        );
        out += &format!(
            "privacy: epsilon ≤ {:.4} (lower bound {:.4}) at delta = {:e}, {}\n",
            self.privacy.epsilon, self.privacy.epsilon_lower, self.privacy.delta, self.privacy.neighbouring
        );
        for r in &self.privacy.releases {
            out += &format!("  released: {r}\n");
        }
        if self.privacy.extra_ridge > 0.0 {
            out += &format!(
                "  extra ridge Δ = {:.6} (objective perturbation's floor exceeded half of ε): fitted at λ + Δ = {:.6}\n",
                self.privacy.extra_ridge, self.privacy.lambda
            );
        }
        out += &format!("{}\n", self.rows.text(self.spec.row_norm));
        out += &format!(
            "bias factor α̂ = {:.4} (se {:.4}), σ̂_eff = {:.4}, signal ŝ² = {:.4}\n",
            n.alpha, n.alpha_se, n.sigma_eff, n.s2
        );
        if n.sigma_eff_se > 0.0 {
            out += &format!(
                "  from the state evolution at ŝ²: RQMC standard error of σ̂_eff {:.2e}, in the width\n",
                n.sigma_eff_se
            );
        }
        if let Some(t) = &self.test_error {
            let i = t.interval(0.05).expect("0.05 is a level");
            out += &format!(
                "test error ({}) of θ̂ on {}{} held-out rows: {:.4}, 95% interval [{:.4}, {:.4}]\n",
                t.metric.name(),
                if t.rows_sd > 0.0 { "about " } else { "" },
                t.rows,
                i.estimate,
                i.lower,
                i.upper
            );
        }
        out += if self.whitened {
            "rows whitened by the public covariance Σ (assumes rows N(0, Σ/d), no intercept; the fit's penalty is \
             (λ/2)θᵀΣθ, docs/inference.md)\n"
        } else {
            "assumes rows with isotropic covariance I/d and no intercept (docs/inference.md)\n"
        };
        out
    }
}
