//! The parameters' table: every swept quantity by its config name, with the
//! TOML table it lives in, its symbol and its axis label — the one home
//! figures, tables and messages read them from (as [`crate::metrics`] is
//! for metrics).
//!
//! The table is being filled in: ranges, and the algorithms that take each
//! parameter, still live in `problem/` and `config/`.

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

/// Every key of `[problem]` and `[algorithm]`, and the simulation's `d`
/// and the gradient step `t` as axes (a test checks the tables' keys are
/// all here). Symbols are the keys' names where figures have used them so.
pub const PARAMETERS: [Parameter; 21] = [
    Parameter {
        name: "model",
        table: "problem",
        symbol: "model",
        label: "model",
    },
    Parameter {
        name: "delta",
        table: "problem",
        symbol: "δ",
        label: "δ = d/n",
    },
    Parameter {
        name: "kappa",
        table: "problem",
        symbol: "κ",
        label: "κ = d/n (another name of δ)",
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
        name: "noise",
        table: "problem",
        symbol: "noise",
        label: "noise",
    },
    Parameter {
        name: "kind",
        table: "algorithm",
        symbol: "kind",
        label: "kind",
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
        name: "steps",
        table: "algorithm",
        symbol: "steps",
        label: "steps",
    },
    Parameter {
        name: "loss_variant",
        table: "algorithm",
        symbol: "loss_variant",
        label: "loss_variant",
    },
    Parameter {
        name: "sample_rate",
        table: "algorithm",
        symbol: "sample_rate",
        label: "sample_rate",
    },
    Parameter {
        name: "clip",
        table: "algorithm",
        symbol: "clip",
        label: "clip",
    },
    Parameter {
        name: "epsilon",
        table: "algorithm",
        symbol: "ε",
        label: "ε (privacy budget)",
    },
    Parameter {
        name: "delta_priv",
        table: "algorithm",
        symbol: "delta_priv",
        label: "delta_priv",
    },
    Parameter {
        name: "rho",
        table: "algorithm",
        symbol: "ρ",
        label: "ρ (zCDP budget)",
    },
    Parameter {
        name: "neighbouring",
        table: "algorithm",
        symbol: "neighbouring",
        label: "neighbouring",
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
        let mut names: Vec<&str> = PARAMETERS.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PARAMETERS.len(), "a parameter has two rows");
    }
}
