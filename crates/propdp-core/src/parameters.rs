//! The parameters' table: every swept quantity by its config name, with the
//! TOML table it lives in, its symbol and its axis label — the one home
//! figures, tables and messages read them from (as [`crate::metrics`] is
//! for metrics).
//!
//! The table is being filled in: ranges and the algorithms that take each
//! parameter still live in `problem/` and `config/` (issue "A codebase the
//! next person can carry").

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
}

/// Every parameter with a symbol.
pub const PARAMETERS: [Parameter; 11] = [
    Parameter {
        name: "delta",
        table: "problem",
        symbol: "δ",
        label: "δ = d/n",
    },
    Parameter {
        name: "s2",
        table: "problem",
        symbol: "s²",
        label: "s²",
    },
    Parameter {
        name: "huber_m",
        table: "problem",
        symbol: "M",
        label: "M",
    },
    Parameter {
        name: "lambda",
        table: "algorithm",
        symbol: "λ",
        label: "λ (ridge)",
    },
    Parameter {
        name: "sigma",
        table: "algorithm",
        symbol: "σ",
        label: "σ (objective-perturbation noise)",
    },
    Parameter {
        name: "tau",
        table: "algorithm",
        symbol: "τ",
        label: "τ (output-perturbation noise)",
    },
    Parameter {
        name: "eta",
        table: "algorithm",
        symbol: "η",
        label: "η",
    },
    Parameter {
        name: "epsilon",
        table: "algorithm",
        symbol: "ε",
        label: "ε (privacy budget)",
    },
    Parameter {
        name: "rho",
        table: "algorithm",
        symbol: "ρ",
        label: "ρ (zCDP budget)",
    },
    Parameter {
        name: "d",
        table: "simulation",
        symbol: "d",
        label: "d (features; n = d/δ)",
    },
    Parameter {
        name: "t",
        table: "-",
        symbol: "t",
        label: "t (gradient step)",
    },
];

/// The parameter named `name`, if the table has it.
pub fn parameter(name: &str) -> Option<&'static Parameter> {
    PARAMETERS.iter().find(|p| p.name == name)
}

/// The symbol of a parameter (its name when the table has none).
///
/// ```
/// assert_eq!(propdp_core::parameters::symbol("delta"), "δ");
/// assert_eq!(propdp_core::parameters::symbol("clip"), "clip");
/// ```
pub fn symbol(name: &str) -> String {
    parameter(name).map_or_else(|| name.to_string(), |p| p.symbol.to_string())
}

/// The axis label of a parameter (its symbol, or name, when it has none).
pub fn axis_label(name: &str) -> String {
    parameter(name).map_or_else(|| name.to_string(), |p| p.label.to_string())
}
