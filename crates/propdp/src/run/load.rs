//! Reading a config file for a run: as written, or with the long-horizon
//! theory's precision set from the command line (`propdp run --precision`).

use std::path::Path;

use propdp_core::Config;

use crate::error::Context;

/// Read and validate a config file.
pub fn load(path: &Path) -> crate::Result<Config> {
    let text =
        propdp_core::input::read_regular_text(path).with_context(|| format!("reading config {}", path.display()))?;
    Config::from_toml_str_in(&text, path.parent()).with_context(|| format!("in config {}", path.display()))
}

/// [`load`] with `solver.precision` set to `precision` (`propdp run
/// --precision`): the config's text gains the key (rendered again, a first
/// comment line saying so), so that the manifest records what ran.
pub fn load_at_precision(path: &Path, precision: f64) -> crate::Result<Config> {
    let text =
        propdp_core::input::read_regular_text(path).with_context(|| format!("reading config {}", path.display()))?;
    let mut table: toml::Table = toml::from_str(&text)
        .map_err(|e| propdp_core::ConfigError::Parse(e.to_string()))
        .with_context(|| format!("in config {}", path.display()))?;
    let solver = table
        .entry("solver")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let Some(solver) = solver.as_table_mut() else {
        return Err(propdp_core::ConfigError::Parse("[solver] is not a table".into()).into());
    };
    solver.insert("precision".into(), toml::Value::Float(precision));
    let text = format!(
        "# solver.precision = {precision:?} from the command line (--precision)\n{}",
        propdp_core::config::text::render(&table)
    );
    Config::from_toml_str_in(&text, path.parent()).with_context(|| format!("in config {}", path.display()))
}
