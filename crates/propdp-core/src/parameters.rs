//! The parameters' table: every swept quantity by its config name, with the
//! TOML table it lives in, its symbol and its axis label — the one home
//! figures, tables and messages read them from (as [`crate::metrics`] is
//! for metrics).
//! Each row also holds the parameter's allowed values ([`Domain`], checked
//! by [`check`] wherever the parameter is read: configs, tune, the
//! accountant) and the algorithms that take it.

use crate::AlgorithmKind;
use crate::error::ConfigError;

/// Most DP-GD/DP-SGD steps of a config: what the exact least-squares
/// solution serves (its cost grows like T·K, K ≤ T + 1 quadrature nodes).
pub const MAX_STEPS: usize = 100_000;

/// Most steps the full-memory state evolution serves: its cost grows like
/// N·T³ in time and N·T in memory (T = 1000: about half an hour).
pub const DMFT_MAX_STEPS: usize = 1000;

/// One parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parameter {
    /// The config key (`delta`, `sigma`, …).
    pub name: &'static str,
    /// The TOML table holding it (`problem`, `algorithm`, `simulation`; `-`
    /// for an axis no table sets, the gradient step `t`).
    pub table: &'static str,
    /// Its symbol in tables and legends (`δ`, `σ`).
    pub symbol: &'static str,
    /// Its axis label in figures.
    pub label: &'static str,
    /// The values it may take.
    pub domain: Domain,
    /// The algorithms (`kind`) that take it; empty: every algorithm.
    pub algorithms: &'static [AlgorithmKind],
}

/// The values a parameter may take, in words and as a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// One of named choices (checked by the config's schema).
    Choice,
    /// A finite number > 0.
    Positive,
    /// A finite number ≥ 0.
    NonNegative,
    /// A rate 0 < q ≤ 1.
    Rate,
    /// A probability 0 < p < 1.
    Probability,
    /// An integer 1 ≤ T ≤ [`MAX_STEPS`].
    Steps,
    /// A whole number ≥ 0 (a dimension or a step index).
    Count,
    /// A whole number ≥ 1 (cyclic participation groups).
    Whole,
    /// A teacher's intercept: finite, |b*| ≤ [`MAX_INTERCEPT`].
    Intercept,
    /// A switch: 0 (false) or 1 (true).
    Flag,
    /// The share of a class, within [`BALANCE_RANGE`].
    Balance,
    /// A share of a total: 0 < x ≤ 1.
    Share,
}

/// Largest teacher intercept |b*| (logistic labels: P(y = 1) = sigmoid(±10)
/// at ν = 0, a class of 1 in 22 000).
pub const MAX_INTERCEPT: f64 = 10.0;

/// Smallest and largest share P(y = +1) = p of the two-cluster data model
/// (docs/theory.md §3.6), so a simulation's n rows hold both classes.
pub const BALANCE_RANGE: (f64, f64) = (0.02, 0.98);

impl Domain {
    /// The allowed values in words (`0 < sample_rate ≤ 1`).
    pub fn allowed(self, name: &str) -> String {
        match self {
            Domain::Choice => format!("one of {name}'s choices"),
            Domain::Positive => format!("0 < {name} < ∞"),
            Domain::NonNegative => format!("0 ≤ {name} < ∞"),
            Domain::Rate => format!("0 < {name} ≤ 1"),
            Domain::Probability => format!("0 < {name} < 1"),
            Domain::Steps => format!("an integer, 1 ≤ {name} ≤ {}", MAX_STEPS),
            Domain::Count => format!("an integer, 0 ≤ {name}"),
            Domain::Whole => format!("an integer, 1 ≤ {name}"),
            Domain::Intercept => format!("−{MAX_INTERCEPT} ≤ {name} ≤ {MAX_INTERCEPT}"),
            Domain::Flag => format!("{name} = true or false"),
            Domain::Balance => format!("{} ≤ {name} ≤ {}", BALANCE_RANGE.0, BALANCE_RANGE.1),
            Domain::Share => format!("0 < {name} ≤ 1"),
        }
    }

    /// Whether `x` is allowed (a choice is not a number: never).
    pub fn contains(self, x: f64) -> bool {
        match self {
            Domain::Choice => false,
            Domain::Positive => x > 0.0 && x.is_finite(),
            Domain::NonNegative => x >= 0.0 && x.is_finite(),
            Domain::Rate => x > 0.0 && x <= 1.0,
            Domain::Probability => x > 0.0 && x < 1.0,
            Domain::Steps => x >= 1.0 && x.fract() == 0.0 && x <= MAX_STEPS as f64,
            Domain::Count => x >= 0.0 && x.fract() == 0.0 && x.is_finite(),
            Domain::Whole => x >= 1.0 && x.fract() == 0.0 && x.is_finite(),
            Domain::Intercept => x.abs() <= MAX_INTERCEPT,
            Domain::Flag => x == 0.0 || x == 1.0,
            Domain::Balance => (BALANCE_RANGE.0..=BALANCE_RANGE.1).contains(&x),
            Domain::Share => x > 0.0 && x <= 1.0,
        }
    }
}

/// Every key of `[problem]` and `[algorithm]`, and the simulation's `d`
/// and the gradient step `t` as axes (a test checks the tables' keys are
/// all here). Symbols are the keys' names where figures have used them so.
pub const PARAMETERS: [Parameter; 30] = [
    Parameter {
        name: "model",
        table: "problem",
        symbol: "model",
        label: "model",
        domain: Domain::Choice,
        algorithms: &[],
    },
    Parameter {
        name: "delta",
        table: "problem",
        symbol: "δ",
        label: "δ = d/n",
        domain: Domain::Positive,
        algorithms: &[],
    },
    Parameter {
        name: "kappa",
        table: "problem",
        symbol: "κ",
        label: "κ = d/n (another name of δ)",
        domain: Domain::Positive,
        algorithms: &[],
    },
    Parameter {
        name: "s2",
        table: "problem",
        symbol: "s²",
        label: "s²",
        domain: Domain::Positive,
        algorithms: &[],
    },
    Parameter {
        name: "huber_m",
        table: "problem",
        symbol: "M",
        label: "M",
        domain: Domain::Positive,
        algorithms: &[],
    },
    Parameter {
        name: "intercept",
        table: "problem",
        symbol: "b*",
        label: "b* (the teacher's intercept)",
        domain: Domain::Intercept,
        algorithms: &[],
    },
    Parameter {
        name: "data_model",
        table: "problem",
        symbol: "data_model",
        label: "data model (teacher | two_cluster)",
        domain: Domain::Choice,
        algorithms: &[],
    },
    Parameter {
        name: "balance",
        table: "problem",
        symbol: "p",
        label: "p = P(y = +1) (two clusters)",
        domain: Domain::Balance,
        algorithms: &[],
    },
    Parameter {
        name: "within",
        table: "problem",
        symbol: "κ²",
        label: "κ² (within-class share of E‖x‖², two clusters)",
        domain: Domain::Share,
        algorithms: &[],
    },
    Parameter {
        name: "noise",
        table: "problem",
        symbol: "noise",
        label: "noise",
        domain: Domain::Choice,
        algorithms: &[],
    },
    Parameter {
        name: "covariance",
        table: "problem",
        symbol: "Σ",
        label: "feature covariance Σ",
        domain: Domain::Choice,
        algorithms: &[],
    },
    Parameter {
        name: "kind",
        table: "algorithm",
        symbol: "kind",
        label: "kind",
        domain: Domain::Choice,
        algorithms: &[],
    },
    Parameter {
        name: "lambda",
        table: "algorithm",
        symbol: "λ",
        label: "λ (ridge)",
        domain: Domain::NonNegative,
        algorithms: &[],
    },
    Parameter {
        name: "sigma",
        table: "algorithm",
        symbol: "σ",
        label: "σ (objective-perturbation noise)",
        domain: Domain::NonNegative,
        algorithms: &[AlgorithmKind::Objective, AlgorithmKind::Dpgd, AlgorithmKind::Dpsgd],
    },
    Parameter {
        name: "tau",
        table: "algorithm",
        symbol: "τ",
        label: "τ (output-perturbation noise)",
        domain: Domain::NonNegative,
        algorithms: &[AlgorithmKind::Output],
    },
    Parameter {
        name: "eta",
        table: "algorithm",
        symbol: "η",
        label: "η",
        domain: Domain::Positive,
        algorithms: &[AlgorithmKind::Dpgd, AlgorithmKind::Dpsgd],
    },
    Parameter {
        name: "steps",
        table: "algorithm",
        symbol: "T",
        label: "T (steps)",
        domain: Domain::Steps,
        algorithms: &[AlgorithmKind::Dpgd, AlgorithmKind::Dpsgd],
    },
    Parameter {
        name: "loss_variant",
        table: "algorithm",
        symbol: "loss_variant",
        label: "loss_variant",
        domain: Domain::Choice,
        algorithms: &[AlgorithmKind::Dpgd, AlgorithmKind::Dpsgd],
    },
    Parameter {
        name: "fit_intercept",
        table: "algorithm",
        symbol: "fit_intercept",
        label: "fit_intercept (an unpenalised intercept learned)",
        domain: Domain::Flag,
        algorithms: &[
            AlgorithmKind::Objective,
            AlgorithmKind::Output,
            AlgorithmKind::Dpgd,
            AlgorithmKind::Dpsgd,
        ],
    },
    Parameter {
        name: "sample_rate",
        table: "algorithm",
        symbol: "q",
        label: "q (Poisson sample rate)",
        domain: Domain::Rate,
        algorithms: &[AlgorithmKind::Dpsgd],
    },
    Parameter {
        name: "clip",
        table: "algorithm",
        symbol: "C",
        label: "C (clipping norm)",
        domain: Domain::Positive,
        algorithms: &[AlgorithmKind::Dpsgd],
    },
    Parameter {
        name: "groups",
        table: "algorithm",
        symbol: "G",
        label: "G (cyclic participation groups)",
        domain: Domain::Whole,
        algorithms: &[AlgorithmKind::Dpsgd],
    },
    Parameter {
        name: "strategy",
        table: "algorithm",
        symbol: "strategy",
        label: "noise strategy (banded Toeplitz coefficients)",
        domain: Domain::Choice,
        algorithms: &[AlgorithmKind::Dpsgd],
    },
    Parameter {
        name: "epsilon",
        table: "algorithm",
        symbol: "ε",
        label: "ε (privacy budget)",
        domain: Domain::Positive,
        algorithms: &[],
    },
    Parameter {
        name: "delta_priv",
        table: "algorithm",
        symbol: "delta_priv",
        label: "delta_priv",
        domain: Domain::Probability,
        algorithms: &[],
    },
    Parameter {
        name: "rho",
        table: "algorithm",
        symbol: "ρ",
        label: "ρ (zCDP budget)",
        domain: Domain::Positive,
        algorithms: &[],
    },
    Parameter {
        name: "neighbouring",
        table: "algorithm",
        symbol: "neighbouring",
        label: "neighbouring",
        domain: Domain::Choice,
        algorithms: &[],
    },
    Parameter {
        name: "extra_ridge",
        table: "algorithm",
        symbol: "extra_ridge",
        label: "extra ridge (auto | refuse)",
        domain: Domain::Choice,
        algorithms: &[AlgorithmKind::Objective],
    },
    Parameter {
        name: "d",
        table: "simulation",
        symbol: "d",
        label: "d (features; n = d/δ)",
        domain: Domain::Count,
        algorithms: &[],
    },
    Parameter {
        name: "t",
        table: "-",
        symbol: "t",
        label: "t (gradient step)",
        domain: Domain::Count,
        algorithms: &[AlgorithmKind::Dpgd, AlgorithmKind::Dpsgd],
    },
];

/// The parameter named `name`, if the table has it.
pub fn parameter(name: &str) -> Option<&'static Parameter> {
    PARAMETERS.iter().find(|p| p.name == name)
}

/// `value` of parameter `name` at `field` (its path: `algorithm.sample_rate`,
/// `tune.sample_rate`, `sample_rate`), or the error naming `field` and the
/// table's allowed range.
///
/// ```
/// use propdp_core::parameters::check;
/// assert!(check("sample_rate", "tune.sample_rate", 0.5).is_ok());
/// let e = check("sample_rate", "tune.sample_rate", 1.5).unwrap_err().to_string();
/// assert!(e.contains("tune.sample_rate") && e.contains("0 < sample_rate ≤ 1"), "{e}");
/// ```
///
/// # Panics
/// If `name` has no row: a bug (a test holds the table and its users together).
pub fn check(name: &str, field: &str, value: f64) -> Result<(), ConfigError> {
    let p = parameter(name).unwrap_or_else(|| panic!("{name} has no row in PARAMETERS"));
    if p.domain.contains(value) {
        Ok(())
    } else {
        Err(ConfigError::range(field, value, &p.domain.allowed(name)))
    }
}

// with the parameters' domains, so that the algorithm module does not
// depend on this one (whose rows name algorithms)
impl AlgorithmKind {
    /// The λ = 0 rule. Objective and output perturbation are private only
    /// with a ridge: with λ = 0 the perturbed objective is unbounded below
    /// (objective) and the sensitivity 2LR/λ is infinite (output). DP-GD
    /// runs a fixed number of steps, so λ = 0 is well defined there.
    /// `private` is true when the noise is positive or calibrated to a budget.
    ///
    /// ```
    /// use propdp_core::AlgorithmKind;
    /// assert!(AlgorithmKind::Objective.check_lambda(0.0, false).is_ok());
    /// let e = AlgorithmKind::Output.check_lambda(0.0, true).unwrap_err().to_string();
    /// assert!(e.contains("algorithm.lambda") && e.contains("λ > 0"));
    /// assert!(AlgorithmKind::Dpgd.check_lambda(0.0, true).is_ok());
    /// ```
    pub fn check_lambda(self, lambda: f64, private: bool) -> Result<(), ConfigError> {
        check("lambda", "algorithm.lambda", lambda)?;
        if lambda > 0.0 || !private {
            return Ok(());
        }
        let allowed = match self {
            AlgorithmKind::Objective => {
                "λ > 0 when σ > 0 or a budget is given (with λ = 0 the perturbed objective is unbounded below)"
            }
            AlgorithmKind::Output => {
                "λ > 0 when τ > 0 or a budget is given (output perturbation's sensitivity is 2LR/λ)"
            }
            AlgorithmKind::Dpgd | AlgorithmKind::Dpsgd => return Ok(()),
        };
        Err(ConfigError::range("algorithm.lambda", lambda, allowed))
    }
}

/// A parameter's keyword in Python (`lambda` is a keyword of the language:
/// `lambda_`).
///
/// ```
/// assert_eq!(propdp_core::parameters::python_keyword("lambda"), "lambda_");
/// assert_eq!(propdp_core::parameters::python_keyword("sigma"), "sigma");
/// ```
pub fn python_keyword(name: &str) -> String {
    if name == "lambda" {
        "lambda_".into()
    } else {
        name.into()
    }
}

/// The symbol of a parameter (the name itself when the table has no such parameter).
///
/// ```
/// assert_eq!(propdp_core::parameters::symbol("delta"), "δ");
/// assert_eq!(propdp_core::parameters::symbol("clip"), "C");
/// assert_eq!(propdp_core::parameters::symbol("no_such"), "no_such");
/// ```
pub fn symbol(name: &str) -> String {
    parameter(name).map_or_else(|| name.to_string(), |p| p.symbol.to_string())
}

/// The axis label of a parameter (its symbol, or name, when it has none).
pub fn axis_label(name: &str) -> String {
    parameter(name).map_or_else(|| name.to_string(), |p| p.label.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_config_key_has_a_row_in_its_table_and_every_row_is_a_key() {
        let tables = crate::config::flat_keys();
        for (table, keys) in &tables {
            for key in keys {
                let row = parameter(key).unwrap_or_else(|| panic!("{table}.{key} has no row in PARAMETERS"));
                assert_eq!(row.table, *table, "{key}");
            }
        }
        for row in PARAMETERS
            .iter()
            .filter(|r| r.table == "problem" || r.table == "algorithm")
        {
            let keys = &tables.iter().find(|(t, _)| *t == row.table).expect("a table").1;
            assert!(
                keys.contains(&row.name),
                "{}.{} is not a key of the config",
                row.table,
                row.name
            );
        }
        // the kinds each [algorithm] key applies to are the row's
        let every: Vec<&str> = crate::AlgorithmKind::ALL.iter().map(|k| k.name()).collect();
        for row in PARAMETERS.iter().filter(|r| r.table == "algorithm" && r.name != "kind") {
            let want = if row.algorithms.is_empty() {
                every.clone()
            } else {
                row.algorithms.iter().map(|k| k.name()).collect()
            };
            assert_eq!(crate::config::algorithm::kinds_taking(row.name), want, "{}", row.name);
        }
        let mut names: Vec<&str> = PARAMETERS.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PARAMETERS.len(), "a parameter has two rows");
    }
}
