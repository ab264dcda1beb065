//! The effective model a spectrum file carries (`propdp spectrum DATA
//! --label y --model …`, docs/covariance.md): one comment line
//!
//! ```text
//! # effective model: model = logistic, s2 = 2.5e0
//! # effective model: model = huber, s2 = 6.1e-1, noise_sd = 6.2e-1
//! # effective model: model = logistic, s2 = 3.1e0, data_model = two_cluster, balance = 6.3e-1, within = 7.2e-1
//! ```
//!
//! from which a config whose `problem.covariance = { file = … }` names the
//! file takes `problem.s2` (and, for Huber and least squares,
//! `problem.noise = { law = "gaussian", sd = noise_sd }`; for two clusters
//! `problem.data_model`, `problem.balance` and `problem.within`) when it
//! does not give them itself; values the config gives win. A file of another model
//! than `problem.model` is refused, naming `problem.model`. A file without
//! the line (every spectrum written before it existed) changes nothing.
//!
//! The values are filled into the config's text (after its `[problem]`
//! header, each with a comment naming the file), so the run's manifest
//! records the config as it was solved and `Config::from_recorded` needs
//! no file.

use std::path::{Path, PathBuf};

use crate::error::ConfigError;
use crate::problem::ModelKind;

/// The start of the line.
pub const PREFIX: &str = "# effective model:";

/// The model, s² and (regression) label noise sd of a spectrum file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EffectiveModel {
    /// The model the values are for.
    pub model: ModelKind,
    /// `problem.s2`.
    pub s2: f64,
    /// The sd of Gaussian label noise (Huber, least squares), `problem.noise.sd`.
    pub noise_sd: Option<f64>,
    /// Two clusters (logistic, `problem.data_model = "two_cluster"`).
    pub clusters: Option<Clusters>,
}

/// The two-cluster data model's parameters besides s² (docs/theory.md §3.6).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clusters {
    /// `problem.balance`, P(y = +1).
    pub balance: f64,
    /// `problem.within`, the within-class share κ² of E‖x‖².
    pub within: f64,
}

impl EffectiveModel {
    /// The comment line (no newline).
    ///
    /// ```
    /// use propdp_core::{ModelKind, effective_model::EffectiveModel};
    /// use propdp_core::effective_model::Clusters;
    /// let m = EffectiveModel { model: ModelKind::Huber, s2: 0.5, noise_sd: Some(0.25), clusters: None };
    /// assert_eq!(m.line(), "# effective model: model = huber, s2 = 5e-1, noise_sd = 2.5e-1");
    /// assert_eq!(EffectiveModel::parse(&format!("a\n{}\nb", m.line())), Ok(Some(m)));
    /// let clusters = Some(Clusters { balance: 0.625, within: 0.75 });
    /// let c = EffectiveModel { model: ModelKind::Logistic, s2: 3.0, noise_sd: None, clusters };
    /// assert_eq!(EffectiveModel::parse(&c.line()), Ok(Some(c)));
    /// ```
    pub fn line(&self) -> String {
        let mut out = format!("{PREFIX} model = {}, s2 = {:e}", self.model.name(), self.s2);
        if let Some(sd) = self.noise_sd {
            out += &format!(", noise_sd = {sd:e}");
        }
        if let Some(c) = self.clusters {
            out += &format!(
                ", data_model = two_cluster, balance = {:e}, within = {:e}",
                c.balance, c.within
            );
        }
        out
    }

    /// The line in a spectrum file's text, if any; an error (text) for a
    /// line that does not read.
    pub fn parse(text: &str) -> Result<Option<EffectiveModel>, String> {
        let Some(line) = text.lines().map(str::trim).find(|l| l.starts_with(PREFIX)) else {
            return Ok(None);
        };
        let bad = |why: &str| format!("the line {line:?}: {why}");
        let (mut model, mut s2, mut noise_sd) = (None, None, None);
        let (mut two_cluster, mut balance, mut within) = (false, None, None);
        for item in line[PREFIX.len()..].split(',') {
            let Some((k, v)) = item.split_once('=') else {
                return Err(bad(&format!("{item:?} is not key = value")));
            };
            let (k, v) = (k.trim(), v.trim());
            let number = || match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
                _ => Err(bad(&format!("{k} = {v} is not a positive number"))),
            };
            match k {
                "model" => {
                    model = Some(
                        v.parse::<ModelKind>()
                            .map_err(|_| bad(&format!("model = {v} is not huber, logistic or least_squares")))?,
                    )
                }
                "s2" => s2 = Some(number()?),
                "noise_sd" => noise_sd = Some(number()?),
                "data_model" if v == "two_cluster" => two_cluster = true,
                "data_model" => return Err(bad(&format!("data_model = {v} is not two_cluster"))),
                "balance" => {
                    balance = Some(
                        Some(number()?)
                            .filter(|b| *b < 1.0)
                            .ok_or_else(|| bad("balance is not in (0, 1)"))?,
                    )
                }
                "within" => {
                    within = Some(
                        Some(number()?)
                            .filter(|w| *w <= 1.0)
                            .ok_or_else(|| bad("within is not in (0, 1]"))?,
                    )
                }
                _ => return Err(bad(&format!("unknown key {k:?}"))),
            }
        }
        let (Some(model), Some(s2)) = (model, s2) else {
            return Err(bad("model and s2 are required"));
        };
        if (model == ModelKind::Logistic) != noise_sd.is_none() {
            return Err(bad("noise_sd is given for huber and least_squares, and only for them"));
        }
        let clusters = match (two_cluster, balance, within) {
            (false, None, None) => None,
            (true, Some(balance), Some(within)) if model == ModelKind::Logistic => Some(Clusters { balance, within }),
            _ => {
                return Err(bad(
                    "data_model = two_cluster comes with balance and within, for logistic only",
                ));
            }
        };
        Ok(Some(EffectiveModel {
            model,
            s2,
            noise_sd,
            clusters,
        }))
    }
}

/// The config text with `problem.s2` and `problem.noise` filled in from the
/// effective model of its covariance file (module docs), the file read
/// relative to `dir` (the current directory when `None`). The text is
/// returned unchanged when it does not parse, names no covariance file, the
/// file cannot be read (the config's own checks report those) or the file
/// has no effective model.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("propdp-effective-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("s.csv"), "# effective model: model = logistic, s2 = 2e0\neigenvalue,weight,teacher\n2,0.5,1\n1,0.5,1\n").unwrap();
/// let text = "[problem]\nmodel = \"logistic\"\ndelta = 0.5\ncovariance = { file = \"s.csv\" }\n";
/// let done = propdp_core::effective_model::complete(text, Some(&dir)).unwrap();
/// assert!(done.contains("s2 = 2.0"), "{done}");
/// let e = propdp_core::effective_model::complete(&text.replace("logistic", "huber"), Some(&dir)).unwrap_err();
/// assert_eq!(e.field(), Some("problem.model"));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn complete(text: &str, dir: Option<&Path>) -> Result<String, ConfigError> {
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        return Ok(text.to_string());
    };
    let Some(toml::Value::Table(problem)) = table.get("problem") else {
        return Ok(text.to_string());
    };
    let Some(file) = problem
        .get("covariance")
        .and_then(|c| c.get("file"))
        .and_then(|f| f.as_str())
    else {
        return Ok(text.to_string());
    };
    let path = match dir {
        Some(dir) if Path::new(file).is_relative() => dir.join(file),
        _ => PathBuf::from(file),
    };
    let Ok(bytes) = crate::input::read_regular(&path) else {
        return Ok(text.to_string());
    };
    let Ok(spectrum) = String::from_utf8(bytes) else {
        return Ok(text.to_string());
    };
    let eff = EffectiveModel::parse(&spectrum).map_err(|why| {
        ConfigError::range(
            "problem.covariance.file",
            format!("{file:?}"),
            &format!("a spectrum file whose effective model reads ({why})"),
        )
    })?;
    let Some(eff) = eff else {
        return Ok(text.to_string());
    };
    if let Some(model) = problem.get("model").and_then(|m| m.as_str())
        && model != eff.model.name()
    {
        return Err(ConfigError::range(
            "problem.model",
            format!("\"{model}\""),
            &format!(
                "\"{}\", the model whose s2 the covariance file {file:?} holds (`propdp spectrum --model {}`); \
                 write the spectrum for this model, or give a file without an effective model",
                eff.model.name(),
                eff.model.name()
            ),
        ));
    }
    let mut lines = Vec::new();
    if !problem.contains_key("s2") {
        lines.push(format!("s2 = {:?}  # the effective model of {file}", eff.s2));
    }
    if let Some(sd) = eff.noise_sd
        && !problem.contains_key("noise")
    {
        lines.push(format!(
            "noise = {{ law = \"gaussian\", sd = {sd:?} }}  # the effective model of {file}"
        ));
    }
    let cluster_keys = eff.clusters.map(|c| {
        [
            ("data_model", toml::Value::String("two_cluster".into())),
            ("balance", toml::Value::Float(c.balance)),
            ("within", toml::Value::Float(c.within)),
        ]
    });
    for (key, value) in cluster_keys.iter().flatten() {
        if !problem.contains_key(*key) {
            lines.push(format!("{key} = {value}  # the effective model of {file}"));
        }
    }
    if lines.is_empty() {
        return Ok(text.to_string());
    }
    // after the `[problem]` header, or the whole config rendered again when it has none (a dotted or inline table)
    let header = text.lines().position(|l| {
        let l = l.trim();
        l.strip_prefix("[problem]")
            .is_some_and(|rest| rest.trim().is_empty() || rest.trim().starts_with('#'))
    });
    Ok(match header {
        Some(i) => {
            let mut out: Vec<&str> = text.lines().collect();
            let added: Vec<&str> = lines.iter().map(String::as_str).collect();
            out.splice(i + 1..i + 1, added);
            out.join("\n") + "\n"
        }
        None => {
            let mut table = table.clone();
            let Some(toml::Value::Table(p)) = table.get_mut("problem") else {
                unreachable!("checked above")
            };
            p.entry("s2").or_insert(toml::Value::Float(eff.s2));
            if let Some(sd) = eff.noise_sd {
                p.entry("noise").or_insert_with(|| {
                    toml::Value::Table(toml::Table::from_iter([
                        ("law".to_string(), toml::Value::String("gaussian".into())),
                        ("sd".to_string(), toml::Value::Float(sd)),
                    ]))
                });
            }
            for (key, value) in cluster_keys.into_iter().flatten() {
                p.entry(key).or_insert(value);
            }
            crate::config::text::render(&table)
        }
    })
}
