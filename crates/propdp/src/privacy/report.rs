//! The guarantee of a noise level in every notion ([`Report`]), checked,
//! and printed as text or JSON.

use super::query::{NoiseLevel, Participation, Query};
use crate::error::Argument;
use crate::error::Result;
use propdp_core::AlgorithmKind;

/// The guarantee of a noise level in every notion.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The query.
    pub query: Query,
    /// The noise assessed (calibrated when the query gave a target).
    pub noise: f64,
    /// μ of μ-GDP (output perturbation, DP-GD).
    pub mu: Option<f64>,
    /// ρ of ρ-zCDP.
    pub rho: f64,
    /// Objective perturbation's privacy-loss bound c + A|Z| (add/remove-one): (c, A).
    pub objective_bound: Option<(f64, f64)>,
    /// Objective perturbation's RDP ε(α) at α = 2, 8, 32 (add/remove-one).
    pub rdp: Vec<(f64, f64)>,
    /// ε at `delta_priv`, a certified upper bound; `None` when no finite ε
    /// reaches it (DP-SGD: the upper end of the PLD bracket, or the RDP or
    /// full-batch bound where smaller).
    pub epsilon: Option<f64>,
    /// A certified lower bound on ε at `delta_priv` (= `epsilon` for the
    /// closed-form curves; DP-SGD: the lower end of the PLD bracket).
    pub epsilon_lower: Option<f64>,
    /// DP-SGD: the grid width of the PLD bracket and whether it reached the
    /// requested relative width (0.1%).
    pub bracket: Option<(f64, bool)>,
    /// DP-SGD: the RDP accountant's ε at `delta_priv` (looser; a cross-check).
    pub rdp_epsilon: Option<f64>,
    /// Objective perturbation calibrated below twice its floor: (the λ
    /// asked for, the extra ridge Δ added to it); `query` and every number
    /// are at λ + Δ.
    pub extra_ridge: Option<(f64, f64)>,
    /// DP-SGD: ε at `delta_priv` of the same run under add/remove-one —
    /// what Opacus and dp_accounting report by default (the certified upper
    /// end; `None` where no finite ε reaches δ).
    pub epsilon_add_remove: Option<f64>,
}

impl Report {
    /// Every number finite and consistent: noise > 0, μ > 0, ρ > 0, and
    /// ε = 0 only where the mechanism's δ(0) is already within δ_priv.
    pub(super) fn check(&self) -> Result<()> {
        let numbers = [
            Some(self.noise),
            self.mu,
            Some(self.rho),
            self.epsilon,
            self.rdp_epsilon,
        ]
        .into_iter()
        .flatten()
        .chain(self.objective_bound.iter().flat_map(|(c, a)| [*c, *a]))
        .chain(self.rdp.iter().map(|r| r.1));
        let q = &self.query;
        let underflow = !(self.noise > 0.0 && self.rho > 0.0 && self.mu.is_none_or(|m| m > 0.0));
        if let (AlgorithmKind::Dpsgd, Some(c)) = (q.algorithm, q.clip)
            && (underflow || numbers.clone().any(|x| !x.is_finite()))
        {
            // the guarantee depends on σ/min(C, L): name both
            return Err(Argument::both(
                q.noise.argument(),
                "clip",
                format!(
                    ": the noise multiplier σ/min(C, L) = {:?}/{c:?} is beyond the range of the accountant \
                     (ρ = {:?}, μ = {:?}): no guarantee can be stated",
                    self.noise, self.rho, self.mu
                ),
            )
            .into());
        }
        if let Some(x) = numbers.into_iter().find(|x| !x.is_finite()) {
            return Err(Argument::new(
                self.query.noise.argument(),
                format!(
                    ": the guarantee is not a finite number ({x:?}); the arguments are beyond the accountant's range"
                ),
            )
            .into());
        }
        if underflow {
            return Err(Argument::new(
                self.query.noise.argument(),
                format!(
                    ": the noise {:?} gives ρ = {:?}, μ = {:?} (beyond the range of f64): no guarantee can be stated",
                    self.noise, self.rho, self.mu
                ),
            )
            .into());
        }
        // (subsampled DP-SGD: ε⁺ = 0 is the certified curve's own δ⁺(0) ≤ δ_priv, which the fixed-grid δ(0) may exceed)
        let subsampled = self.query.algorithm == AlgorithmKind::Dpsgd && self.query.sample_rate < 1.0;
        if !subsampled
            && self.epsilon == Some(0.0)
            && self.query.mechanism().log_delta(0.0, self.noise) > self.query.delta_priv.ln()
        {
            return Err(crate::error::Error::compute(
                "internal error: ε = 0 reported while δ(0) exceeds δ_priv".to_string(),
            ));
        }
        Ok(())
    }

    /// The report as data (`propdp privacy --json`, the Python package):
    /// every number of [`Report::text`] under a stable key, `null` where a
    /// notion does not apply.
    pub fn json(&self) -> serde_json::Value {
        let q = &self.query;
        let dpsgd = q.algorithm == AlgorithmKind::Dpsgd;
        let (target, level) = match q.noise {
            NoiseLevel::Given(_) => (None, None),
            NoiseLevel::Epsilon(e) => (Some("epsilon"), Some(e)),
            NoiseLevel::Rho(r) => (Some("rho"), Some(r)),
        };
        serde_json::json!({
            "algorithm": q.algorithm.name(),
            "model": q.model.kind().name(),
            "neighbouring": q.neighbouring.label(),
            "lambda": (!q.algorithm.is_iterative()).then_some(self.extra_ridge.map_or(q.lambda, |(l, _)| l)),
            "extra_ridge": (q.algorithm == AlgorithmKind::Objective).then_some(self.extra_ridge.map_or(0.0, |e| e.1)),
            "lambda_effective": (!q.algorithm.is_iterative()).then_some(q.lambda),
            "steps": q.algorithm.is_iterative().then_some(q.steps),
            "sample_rate": dpsgd.then_some(q.sample_rate),
            "clip": if dpsgd { q.clip } else { None },
            "groups": dpsgd.then_some(q.participation.groups),
            "bands": dpsgd.then_some(q.participation.bands),
            "rounds": q.algorithm.is_iterative().then_some(q.rounds()),
            "calibrated_to": target,
            "target": level,
            "noise": self.noise,
            "delta_priv": q.delta_priv,
            "epsilon": self.epsilon,
            "epsilon_lower": self.epsilon_lower,
            "bracket_grid": self.bracket.map(|b| b.0),
            "bracket_reached": self.bracket.map(|b| b.1),
            "rdp_epsilon": self.rdp_epsilon,
            "epsilon_add_remove": self.epsilon_add_remove,
            "rho": self.rho,
            "mu": self.mu,
            "objective_bound": self.objective_bound,
            "rdp": self.rdp,
        })
    }

    /// The report as `propdp privacy` prints it. Every ε names the
    /// neighbouring relation it holds for; DP-SGD's report leads with its
    /// (ε, δ) guarantee and ends with ρ-zCDP, explained (subsampling gives
    /// zCDP no amplification, so ρ is far looser than the ε above it). A
    /// DP-SGD run whose clip binds (C ≤ L) is the same for every model.
    pub fn text(&self) -> String {
        let q = &self.query;
        let relation = q.neighbouring.label();
        let delta_priv = format!("{:?}", q.delta_priv);
        let dpsgd = q.algorithm == AlgorithmKind::Dpsgd;
        let mut s = match q.noise {
            NoiseLevel::Given(_) => String::new(),
            NoiseLevel::Epsilon(eps) => {
                format!(
                    "calibrated noise for (ε = {eps:?}, δ = {delta_priv}, {relation}): {}\n",
                    num(self.noise)
                )
            }
            NoiseLevel::Rho(rho) => format!(
                "calibrated noise for ρ = {rho:?} (zCDP, {relation}): {}\n",
                num(self.noise)
            ),
        };
        let model = match q.model.kind() {
            propdp_core::ModelKind::Huber => "a Huber model",
            propdp_core::ModelKind::Logistic => "a Logistic model",
            propdp_core::ModelKind::LeastSquares => "a least-squares model",
        };
        // clipped below the loss's Lipschitz constant, DP-SGD's guarantee is the clip's alone
        let model = match q.clip {
            Some(c) if dpsgd && c <= q.model.lipschitz() => "any model",
            _ => model,
        };
        let what = match q.algorithm {
            AlgorithmKind::Dpgd => "DP-GD".to_string(),
            AlgorithmKind::Dpsgd => format!(
                "DP-SGD (T = {}, q = {:?}, {}{})",
                q.steps,
                q.sample_rate,
                q.clip.map_or("no clipping".to_string(), |c| format!("clip C = {c:?}")),
                match q.participation {
                    Participation::POISSON => String::new(),
                    Participation { groups, bands } => format!(
                        ", {groups} cyclic groups, noise of {bands} band{} ≤ groups: Poisson DP-SGD over ⌈T/G⌉ = {} \
                         rounds, amplified BandMF",
                        if bands == 1 { "" } else { "s" },
                        q.rounds()
                    ),
                }
            ),
            a @ (AlgorithmKind::Objective | AlgorithmKind::Output) => a.title().to_string(),
        };
        if let Some((asked, extra)) = self.extra_ridge {
            s += &format!(
                "extra ridge Δ = {} added to λ = {:?}: its floor exceeded half the target, so the mechanism runs at \
                 λ + Δ = {} (the floor is half the target there, the noise spends the other half)\n",
                num(extra),
                asked,
                num(q.lambda)
            );
        }
        s += &format!("{what} of {model}, noise {:?}, {relation} neighbours:\n", self.noise);
        // the closed forms' notions first; DP-SGD's after its (ε, δ)
        let mut notions = String::new();
        if let Some(mu) = self.mu {
            notions += &format!("  μ-GDP: μ = {} ({relation})\n", num(mu));
            notions += &format!("  zCDP: ρ = μ²/2 = {} ({relation})\n", num(self.rho));
            if dpsgd {
                // (its zCDP line comes last, below)
                notions = format!("  μ-GDP: μ = {} ({relation})\n", num(mu));
            }
        }
        if let Some((c, a)) = self.objective_bound {
            notions += &format!(
                "  loss bound c + A|Z|: c = {}, A = {} (add/remove-one)\n",
                num(c),
                num(a)
            );
            notions += &format!("  zCDP: ρ = {} ({relation})\n", num(self.rho));
            let parts: Vec<String> = self.rdp.iter().map(|(a, e)| format!("ε({a}) = {}", num(*e))).collect();
            notions += &format!("  RDP (add/remove-one): {}\n", parts.join(", "));
        }
        if !dpsgd {
            s += &notions;
        }
        let accountant = if dpsgd && q.sample_rate < 1.0 {
            " (PLD, or RDP where tighter)"
        } else {
            ""
        };
        s += &match self.epsilon {
            Some(e) => format!(
                "  (ε, δ)-DP{accountant}: ε = {} at δ = {delta_priv} ({relation})\n",
                num(e)
            ),
            None => format!("  (ε, δ)-DP{accountant}: no finite ε reaches δ = {delta_priv} ({relation})\n"),
        };
        if let (Some(lo), Some(hi), Some((grid, reached))) = (self.epsilon_lower, self.epsilon, self.bracket) {
            s += &format!(
                "  certified bracket: {} ≤ ε ≤ {} ({relation}; width {:.2}%, {}{})\n",
                num(lo),
                num(hi),
                if hi > 0.0 { 100.0 * (hi - lo) / hi } else { 0.0 },
                if grid > 0.0 {
                    format!("grid {grid:.1e}")
                } else {
                    "closed form".to_string()
                },
                if reached {
                    ""
                } else {
                    "; the 0.1% width was not reached (the memory limit, the grid's rounding, or ε beyond the PLD's \
                     range)"
                }
            );
        }
        if let Some(e) = self.rdp_epsilon {
            s += &format!(
                "  (ε, δ)-DP (RDP, looser): ε = {} at δ = {delta_priv} ({relation})\n",
                num(e)
            );
        }
        if dpsgd {
            // the same run in a training loop's knobs (docs/training_loop.md)
            let run = q.dpsgd_run(self.noise);
            if q.participation != Participation::POISSON {
                s += &format!(
                    "  as jax_privacy's amplified BandMF: noise_multiplier = {}, sampling_prob = {}, iterations = {}, \
                     num_bands = {} (its groups; the strategy's bands ≤ it)\n",
                    num(run.noise_multiplier),
                    q.sample_rate,
                    q.steps,
                    q.participation.groups
                );
            } else {
                s += &format!(
                    "  as a training loop (Opacus): noise_multiplier = {} (the noise over the per-example bound {}), \
                     max_grad_norm = {}, sample_rate = {} (Poisson batches of q·n rows on average), epochs = q·T = {}\n",
                    num(run.noise_multiplier),
                    num(self.noise / run.noise_multiplier),
                    num(self.noise / run.noise_multiplier),
                    q.sample_rate,
                    num(q.sample_rate * q.steps as f64)
                );
            }
            s += &format!(
                "  Opacus and dp_accounting (add/remove-one, their default) state this run as ε = {} at δ = \
                 {delta_priv}{}\n",
                self.epsilon_add_remove.map_or("∞ (no finite ε)".to_string(), num),
                if q.neighbouring == propdp_core::accountant::Neighbouring::ReplaceOne {
                    " — the ε above is replace-one, the stronger relation"
                } else {
                    ""
                }
            );
            s += &notions;
            s += &if q.sample_rate < 1.0 {
                format!(
                    "  zCDP: ρ = T·s²/(2z²) = {} ({relation}, s = {}): subsampling gives zCDP no amplification, so \
                     ρ is the full batch's and far looser than the ε above; it serves only to compose with other \
                     zCDP releases\n",
                    num(self.rho),
                    if q.neighbouring == propdp_core::accountant::Neighbouring::ReplaceOne {
                        2
                    } else {
                        1
                    }
                )
            } else {
                format!(
                    "  zCDP: ρ = μ²/2 = {} ({relation}; it serves to compose with other zCDP releases)\n",
                    num(self.rho)
                )
            };
        }
        s
    }
}

/// A number for people: 6 decimals between 1e-3 and 1e6, 6 significant
/// digits in exponent form outside (a small ε never reads as 0.000000).
pub(super) fn num(x: f64) -> String {
    if x == 0.0 || (1e-3..1e6).contains(&x.abs()) {
        format!("{x:.6}")
    } else {
        format!("{x:.5e}")
    }
}
