//! The feature covariance Σ of `[problem] covariance` (docs/theory.md §2.4):
//! its spectrum as atoms (ω_k, w_k, e_k) — eigenvalue of Σ, fraction of the
//! d coordinates, relative energy of the ground truth in those directions.
//!
//! Features are xᵢ = Σ^{1/2}zᵢ/√d with z ~ N(0, I_d); in Σ's eigenbasis a
//! coordinate of atom k has feature variance ω_k/d and E(θ*ⱼ)² = s²·e_k.
//! Every spectrum is normalised on the way in so that
//!
//!   Σ_k w_k = 1,   Σ_k w_k ω_k = 1 (E‖x‖² = 1, the scale of every privacy
//!   calibration),   Σ_k w_k e_k = 1 (s² keeps its meaning E Θ²),
//!
//! so the single atom is exactly today's isotropic problem ([`Covariance`]
//! is then `None` in a [`crate::Config`]). The teacher field xᵀθ* has
//! variance ρ = s²·Σ_k w_k ω_k e_k ([`Covariance::teacher_field`]).
//!
//! Three ways to give one, each refused with the field named when it cannot
//! be normalised:
//!
//! ```toml
//! covariance = { file = "spectrum.csv" }      # header eigenvalue,weight,teacher
//! covariance = { eigenvalue = [4.0, 1.0, 0.25], weight = [0.2, 0.3, 0.5], teacher = [1.0, 1.0, 1.0] }
//! covariance = { family = "power_law", exponent = 1.0, condition = 100.0, atoms = 100, teacher = "aligned" }
//! ```
//!
//! # References
//! - B. Loureiro, C. Gerbelot, H. Cui, S. Goldt, F. Krzakala, M. Mézard,
//!   L. Zdeborová, "Learning curves of generic features maps for realistic
//!   datasets with a teacher-student model", NeurIPS (2021) — the Gaussian
//!   covariate model.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::ConfigError;

mod quadrature;

pub use quadrature::Compressions;

/// The config field of every covariance error.
const FIELD: &str = "problem.covariance";

/// One atom of a spectrum: a group of eigen-directions of Σ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Atom {
    /// ω_k, the eigenvalue of Σ (> 0).
    pub eigenvalue: f64,
    /// w_k, the fraction of the d coordinates (Σ w = 1).
    pub weight: f64,
    /// e_k, the ground truth's energy per coordinate relative to s² (Σ w e = 1).
    pub teacher: f64,
}

/// A validated, normalised spectrum of at least two distinct atoms (the
/// isotropic case is no covariance at all).
#[derive(Debug, Clone, PartialEq)]
pub struct Covariance {
    atoms: Arc<[Atom]>,
    /// Σ w ω of the spectrum as given (the eigenvalues were divided by it).
    scale: f64,
    /// SHA-256 of the file it was read from, hex; none for inline and built-in spectra.
    sha256: Option<String>,
}

/// The teacher of a built-in family: its energy per eigen-direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TeacherShape {
    /// e ∝ 1: the same energy in every direction (θ* isotropic).
    Spread,
    /// e ∝ ω: the signal in the strong directions.
    Aligned,
    /// e ∝ 1/ω: the signal in the weak directions.
    AntiAligned,
}

impl TeacherShape {
    fn energy(self, eigenvalue: f64) -> f64 {
        match self {
            TeacherShape::Spread => 1.0,
            TeacherShape::Aligned => eigenvalue,
            TeacherShape::AntiAligned => 1.0 / eigenvalue,
        }
    }
}

/// `[problem] covariance` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RawCovariance {
    /// A CSV file `eigenvalue,weight,teacher` (relative to the config's directory).
    File {
        /// The path as written.
        file: String,
    },
    /// The atoms inline.
    Inline {
        /// ω_k.
        eigenvalue: Vec<f64>,
        /// w_k.
        weight: Vec<f64>,
        /// e_k.
        teacher: Vec<f64>,
    },
    /// A built-in family.
    Family {
        /// `power_law`.
        family: String,
        /// α: the eigenvalue at rank fraction x ∈ [0, 1] is ∝ (1 + (κ^{1/α} − 1)x)^{−α}.
        exponent: f64,
        /// κ = ω_max/ω_min ≥ 1.
        condition: f64,
        /// Atoms (equally spaced rank fractions, equal weights).
        atoms: usize,
        /// Where the ground truth's energy lies.
        teacher: TeacherShape,
    },
}

/// How far the weights (fractions of the coordinates) may sum from 1; they
/// are then divided by their sum.
pub const WEIGHT_TOL: f64 = 1e-6;

/// Default number of atoms of a built-in family.
pub const FAMILY_ATOMS: usize = 100;

/// The most atoms a spectrum may have (the theory's cost is linear in them).
pub const MAX_ATOMS: usize = 100_000;

impl RawCovariance {
    /// Read the inline table of `problem.covariance`, naming the key at fault.
    ///
    /// ```
    /// use propdp_core::covariance::RawCovariance;
    /// let t: toml::Value = toml::from_str::<toml::Table>("c = { family = \"power_law\", condition = 10.0 }").unwrap()["c"].clone();
    /// assert!(matches!(RawCovariance::from_value(&t).unwrap(), RawCovariance::Family { atoms: 100, .. }));
    /// let bad: toml::Value = toml::from_str::<toml::Table>("c = { file = \"a.csv\", weight = [1.0] }").unwrap()["c"].clone();
    /// assert!(RawCovariance::from_value(&bad).unwrap_err().to_string().contains("problem.covariance.weight"));
    /// ```
    pub fn from_value(value: &toml::Value) -> Result<RawCovariance, ConfigError> {
        let toml::Value::Table(t) = value else {
            return Err(ConfigError::range(
                FIELD,
                value,
                "a table: { file = \"…\" }, { eigenvalue = […], weight = […], teacher = […] } or { family = \"power_law\", … }",
            ));
        };
        let field = |k: &str| format!("{FIELD}.{k}");
        let only = |allowed: &[&str], what: &str| -> Result<(), ConfigError> {
            match t.keys().find(|k| !allowed.contains(&k.as_str())) {
                Some(k) => Err(ConfigError::not_applicable(
                    &field(k),
                    &format!("{what} takes {}", allowed.join(", ")),
                )),
                None => Ok(()),
            }
        };
        let number = |k: &str, v: &toml::Value| match v {
            toml::Value::Float(x) => Ok(*x),
            toml::Value::Integer(i) => Ok(*i as f64),
            other => Err(ConfigError::range(&field(k), other, "a number")),
        };
        if let Some(file) = t.get("file") {
            only(&["file"], "a spectrum file")?;
            let toml::Value::String(file) = file else {
                return Err(ConfigError::range(&field("file"), file, "a path (string)"));
            };
            return Ok(RawCovariance::File { file: file.clone() });
        }
        if let Some(family) = t.get("family") {
            only(&["family", "exponent", "condition", "atoms", "teacher"], "a family")?;
            let family = match family {
                toml::Value::String(s) if s == "power_law" => s.clone(),
                other => return Err(ConfigError::range(&field("family"), other, "\"power_law\"")),
            };
            let exponent = t.get("exponent").map_or(Ok(1.0), |v| number("exponent", v))?;
            let condition = t
                .get("condition")
                .ok_or_else(|| ConfigError::missing(&field("condition"), "κ = ω_max/ω_min of the power law"))
                .and_then(|v| number("condition", v))?;
            let atoms = match t.get("atoms") {
                None => FAMILY_ATOMS,
                Some(toml::Value::Integer(i)) if *i >= 1 && (*i as usize) <= MAX_ATOMS => *i as usize,
                Some(other) => {
                    return Err(ConfigError::range(
                        &field("atoms"),
                        other,
                        &format!("an integer in [1, {MAX_ATOMS}]"),
                    ));
                }
            };
            let teacher = match t.get("teacher") {
                None => TeacherShape::Spread,
                Some(toml::Value::String(s)) if s == "spread" => TeacherShape::Spread,
                Some(toml::Value::String(s)) if s == "aligned" => TeacherShape::Aligned,
                Some(toml::Value::String(s)) if s == "anti_aligned" => TeacherShape::AntiAligned,
                Some(other) => {
                    return Err(ConfigError::range(
                        &field("teacher"),
                        other,
                        "\"spread\" | \"aligned\" | \"anti_aligned\"",
                    ));
                }
            };
            return Ok(RawCovariance::Family {
                family,
                exponent,
                condition,
                atoms,
                teacher,
            });
        }
        only(&["eigenvalue", "weight", "teacher"], "an inline spectrum")?;
        let array = |k: &str| -> Result<Vec<f64>, ConfigError> {
            match t.get(k) {
                Some(toml::Value::Array(a)) => a.iter().map(|v| number(k, v)).collect(),
                Some(other) => Err(ConfigError::range(&field(k), other, "an array of numbers")),
                None => Err(ConfigError::missing(
                    &field(k),
                    "an inline spectrum gives eigenvalue, weight and teacher (or give file = … or family = …)",
                )),
            }
        };
        Ok(RawCovariance::Inline {
            eigenvalue: array("eigenvalue")?,
            weight: array("weight")?,
            teacher: array("teacher")?,
        })
    }

    /// The validated spectrum; a file path is taken relative to `base` (the
    /// config's directory; the current directory when `None`). `Ok(None)`
    /// for a spectrum that normalises to the single isotropic atom.
    pub fn resolve(&self, base: Option<&Path>) -> Result<Option<Covariance>, ConfigError> {
        match self {
            RawCovariance::File { file } => {
                let path = match base {
                    Some(dir) if Path::new(file).is_relative() => dir.join(file),
                    _ => PathBuf::from(file),
                };
                let bytes = crate::input::read_regular(&path).map_err(|e| {
                    ConfigError::range(
                        &format!("{FIELD}.file"),
                        format!("{file:?}"),
                        &format!("a readable CSV file ({}: {e})", path.display()),
                    )
                })?;
                let text = String::from_utf8(bytes.clone()).map_err(|_| {
                    ConfigError::range(&format!("{FIELD}.file"), format!("{file:?}"), "a UTF-8 CSV text file")
                })?;
                let (eigenvalue, weight, teacher) = read_csv(crate::input::without_bom(&text), &path)?;
                let label = format!("{FIELD}.file ({})", path.display());
                Ok(
                    Covariance::from_columns(&eigenvalue, &weight, &teacher, &label)?.map(|c| Covariance {
                        sha256: Some(sha256_hex(&bytes)),
                        ..c
                    }),
                )
            }
            RawCovariance::Inline {
                eigenvalue,
                weight,
                teacher,
            } => Covariance::from_columns(eigenvalue, weight, teacher, FIELD),
            RawCovariance::Family {
                exponent,
                condition,
                atoms,
                teacher,
                ..
            } => Covariance::power_law(*exponent, *condition, *atoms, *teacher),
        }
    }
}

/// SHA-256 of bytes, hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The eigenvalue, weight and teacher columns of a spectrum.
type Columns = (Vec<f64>, Vec<f64>, Vec<f64>);

/// The columns of a spectrum CSV: a header naming `eigenvalue`, `weight`
/// and `teacher` (any order, nothing else), one atom per line; blank lines
/// and lines starting with `#` are skipped.
fn read_csv(text: &str, path: &Path) -> Result<Columns, ConfigError> {
    let at = |line: usize| format!("{FIELD}.file ({}, line {line})", path.display());
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let Some((hline, header)) = lines.next() else {
        return Err(ConfigError::range(
            &format!("{FIELD}.file ({})", path.display()),
            "an empty file",
            "a header eigenvalue,weight,teacher and one line per atom",
        ));
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| names.iter().position(|n| *n == name);
    let (Some(ie), Some(iw), Some(it)) = (col("eigenvalue"), col("weight"), col("teacher")) else {
        return Err(ConfigError::range(
            &at(hline),
            format!("{header:?}"),
            "a header naming the columns eigenvalue, weight and teacher",
        ));
    };
    if names.len() != 3 {
        return Err(ConfigError::range(
            &at(hline),
            format!("{header:?}"),
            "exactly the three columns eigenvalue, weight, teacher",
        ));
    }
    let (mut e, mut w, mut t) = (Vec::new(), Vec::new(), Vec::new());
    for (line, l) in lines {
        let cells: Vec<&str> = l.split(',').map(str::trim).collect();
        if cells.len() != 3 {
            return Err(ConfigError::range(
                &at(line),
                format!("{l:?}"),
                "three comma-separated numbers",
            ));
        }
        let num = |i: usize| {
            cells[i]
                .parse::<f64>()
                .map_err(|_| ConfigError::range(&format!("{} {}", at(line), names[i]), cells[i], "a number"))
        };
        e.push(num(ie)?);
        w.push(num(iw)?);
        t.push(num(it)?);
    }
    Ok((e, w, t))
}

impl Covariance {
    /// Validate and normalise atoms given as columns (`field` names them in
    /// errors): eigenvalues > 0, weights and teacher energies ≥ 0, all
    /// finite, Σ w = 1 within [`WEIGHT_TOL`] and Σ w e > 0. `Ok(None)` when every atom with weight
    /// has the same eigenvalue and teacher energy: that is the isotropic problem.
    ///
    /// ```
    /// use propdp_core::covariance::Covariance;
    /// let c = Covariance::from_columns(&[4.0, 1.0], &[0.25, 0.75], &[2.0, 0.0], "c").unwrap().unwrap();
    /// assert!(Covariance::from_columns(&[4.0, 1.0], &[1.0, 3.0], &[2.0, 0.0], "c").unwrap_err().to_string().contains("c.weight"));
    /// // weights 1/4, 3/4; eigenvalues over Σwω = 7/4; teacher over Σwe = 1/2
    /// assert_eq!(c.atoms()[0].weight, 0.25);
    /// assert!((c.atoms()[0].eigenvalue - 16.0 / 7.0).abs() < 1e-15 && c.atoms()[0].teacher == 4.0);
    /// assert!(Covariance::from_columns(&[2.0], &[1.0], &[3.0], "c").unwrap().is_none());
    /// assert!(Covariance::from_columns(&[1.0, -1.0], &[0.5, 0.5], &[1.0, 1.0], "c").unwrap_err().to_string().contains("c.eigenvalue"));
    /// // 1e-300 beside 1e300 underflows to 0 once normalised: refused, not solved as another spectrum
    /// let e = Covariance::from_columns(&[1e300, 1e-300], &[0.5, 0.5], &[1.0, 1.0], "c").unwrap_err();
    /// assert!(e.to_string().contains("c.eigenvalue[1]"), "{e}");
    /// ```
    pub fn from_columns(
        eigenvalue: &[f64],
        weight: &[f64],
        teacher: &[f64],
        field: &str,
    ) -> Result<Option<Covariance>, ConfigError> {
        let k = eigenvalue.len();
        if k == 0 || k > MAX_ATOMS {
            return Err(ConfigError::range(
                &format!("{field}.eigenvalue"),
                format!("{k} atoms"),
                &format!("1 to {MAX_ATOMS} atoms"),
            ));
        }
        for (name, col) in [("weight", weight), ("teacher", teacher)] {
            if col.len() != k {
                return Err(ConfigError::range(
                    &format!("{field}.{name}"),
                    format!("{} values", col.len()),
                    &format!("as many as eigenvalue ({k})"),
                ));
            }
        }
        let check = |name: &str, col: &[f64], allowed: &str, ok: fn(f64) -> bool| match col
            .iter()
            .position(|&x| !(x.is_finite() && ok(x)))
        {
            Some(i) => Err(ConfigError::range(&format!("{field}.{name}[{i}]"), col[i], allowed)),
            None => Ok(()),
        };
        check("eigenvalue", eigenvalue, "> 0 and finite", |x| x > 0.0)?;
        check("weight", weight, "≥ 0 and finite", |x| x >= 0.0)?;
        check("teacher", teacher, "≥ 0 and finite", |x| x >= 0.0)?;
        let sw: f64 = weight.iter().sum();
        if !sw.is_finite() || (sw - 1.0).abs() > WEIGHT_TOL {
            return Err(ConfigError::range(
                &format!("{field}.weight"),
                format!("{k} weights summing to {sw}"),
                &format!("fractions of the coordinates, summing to 1 (within {WEIGHT_TOL:e})"),
            ));
        }
        let mut atoms: Vec<Atom> = (0..k)
            .filter(|&i| weight[i] > 0.0)
            .map(|i| Atom {
                eigenvalue: eigenvalue[i],
                weight: weight[i] / sw,
                teacher: teacher[i],
            })
            .collect();
        let scale: f64 = atoms.iter().map(|a| a.weight * a.eigenvalue).sum();
        let energy: f64 = atoms.iter().map(|a| a.weight * a.teacher).sum();
        if !(energy > 0.0 && energy.is_finite()) {
            return Err(ConfigError::range(
                &format!("{field}.teacher"),
                energy,
                "Σ weight·teacher > 0 and finite (the ground truth needs energy somewhere)",
            ));
        }
        if !scale.is_finite() {
            return Err(ConfigError::range(
                &format!("{field}.eigenvalue"),
                scale,
                "Σ weight·eigenvalue finite",
            ));
        }
        for a in &mut atoms {
            a.eigenvalue /= scale;
            a.teacher /= energy;
        }
        // a value that normalisation takes below f64's normal range is lost (1e-300 beside 1e300
        // became 0): refused, naming it, rather than solved as another spectrum
        for (i, a) in (0..k).filter(|&i| weight[i] > 0.0).zip(&atoms) {
            for (name, given, value) in [
                ("eigenvalue", eigenvalue[i], a.eigenvalue),
                ("teacher", teacher[i], a.teacher),
            ] {
                if given > 0.0 && !value.is_normal() {
                    let allowed = format!("within ~1e300 of the spectrum's other values (normalised it is {value:e})");
                    return Err(ConfigError::range(&format!("{field}.{name}[{i}]"), given, &allowed));
                }
            }
        }
        let first = atoms[0];
        if atoms
            .iter()
            .all(|a| a.eigenvalue == first.eigenvalue && a.teacher == first.teacher)
        {
            return Ok(None);
        }
        Ok(Some(Covariance {
            atoms: atoms.into(),
            scale,
            sha256: None,
        }))
    }

    /// The rank power law: the eigenvalue at rank fraction x ∈ [0, 1] is
    /// ∝ (1 + (κ^{1/α} − 1)x)^{−α} (so ω_max/ω_min = κ, and for large κ a
    /// power law x^{−α} over most ranks), at `atoms` equally spaced rank
    /// fractions x = k/(atoms − 1) with equal weights (the first and last
    /// atoms are ω_max and ω_min); the teacher's energy per direction
    /// follows `teacher`.
    ///
    /// ```
    /// use propdp_core::covariance::{Covariance, TeacherShape};
    /// let c = Covariance::power_law(1.0, 100.0, 50, TeacherShape::Aligned).unwrap().unwrap();
    /// let w: f64 = c.atoms().iter().map(|a| a.weight * a.eigenvalue).sum();
    /// assert!((w - 1.0).abs() < 1e-12 && c.atoms().len() == 50);
    /// assert!(Covariance::power_law(1.0, 1.0, 50, TeacherShape::Spread).unwrap().is_none());
    /// // the condition holds at extreme exponents too
    /// for exponent in [1e-3, 1e16, 1e20] {
    ///     let a = Covariance::power_law(exponent, 100.0, 10, TeacherShape::Spread).unwrap().unwrap();
    ///     let (top, bottom) = (a.atoms()[0].eigenvalue, a.atoms()[9].eigenvalue);
    ///     assert!((top / bottom / 100.0 - 1.0).abs() < 1e-9, "{exponent}: {}", top / bottom);
    /// }
    /// ```
    pub fn power_law(
        exponent: f64,
        condition: f64,
        atoms: usize,
        teacher: TeacherShape,
    ) -> Result<Option<Covariance>, ConfigError> {
        if !(exponent > 0.0 && exponent.is_finite()) {
            return Err(ConfigError::range(
                &format!("{FIELD}.exponent"),
                exponent,
                "> 0 and finite",
            ));
        }
        if !(condition >= 1.0 && condition.is_finite() && condition <= 1e12) {
            return Err(ConfigError::range(
                &format!("{FIELD}.condition"),
                condition,
                "1 ≤ κ ≤ 1e12",
            ));
        }
        if atoms == 0 || atoms > MAX_ATOMS {
            return Err(ConfigError::range(
                &format!("{FIELD}.atoms"),
                atoms,
                &format!("an integer in [1, {MAX_ATOMS}]"),
            ));
        }
        // ω = exp(−α·log(1 + c·x)), c = κ^{1/α} − 1 = expm1(a), a = log κ/α, in a
        // form that neither rounds c to 0 (α ≫ log κ) nor overflows it (α ≪ log κ)
        let a = condition.ln() / exponent;
        let log_1p_cx = |x: f64| {
            if x == 0.0 || a == 0.0 {
                0.0
            } else if a < 30.0 {
                (a.exp_m1() * x).ln_1p()
            } else {
                // log(c·x) + log(1 + 1/(c·x)), log c = a + log(1 − e^{−a})
                let log_cx = a + (-(-a).exp_m1()).ln() + x.ln();
                log_cx + (-log_cx).exp().ln_1p()
            }
        };
        let x = |k: usize| if atoms == 1 { 0.0 } else { k as f64 / (atoms - 1) as f64 };
        let omega: Vec<f64> = (0..atoms).map(|k| (-exponent * log_1p_cx(x(k))).exp()).collect();
        let weight = vec![1.0 / atoms as f64; atoms];
        let energy: Vec<f64> = omega.iter().map(|&w| teacher.energy(w)).collect();
        Covariance::from_columns(&omega, &weight, &energy, FIELD)
    }

    /// The atoms, normalised (module docs).
    pub fn atoms(&self) -> &[Atom] {
        &self.atoms
    }

    /// ρ/s² = Σ w ω e: the variance of the teacher field xᵀθ* per unit s².
    pub fn teacher_field(&self) -> f64 {
        self.atoms.iter().map(|a| a.weight * a.eigenvalue * a.teacher).sum()
    }

    /// Σ w ω of the spectrum as given, before normalisation.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// SHA-256 (hex) of the file the spectrum was read from.
    pub fn sha256(&self) -> Option<&str> {
        self.sha256.as_deref()
    }

    /// λ₊, the largest eigenvalue of XᵀX in the limit at aspect ratio δ for
    /// rows Σ^{1/2}z/√d: the right edge of the generalised Marchenko–Pastur
    /// law over δ (Bai & Silverstein 2010, §6.2), the minimum over
    /// m ∈ (−1/ω_max, 0) of x(m) = −1/m + δ⟨ω/(1 + ωm)⟩ (convex there; its
    /// derivative's root found by bisection). One atom: (1 + √δ)²/δ.
    ///
    /// ```
    /// use propdp_core::covariance::Covariance;
    /// let c = Covariance::from_columns(&[2.0, 2.0 + 1e-9], &[0.5, 0.5], &[1.0, 1.0], "c").unwrap().unwrap();
    /// // (nearly) one atom of eigenvalue 1 after normalisation: the Marchenko–Pastur edge
    /// let mp = (1.0 + 0.5f64.sqrt()).powi(2) / 0.5;
    /// assert!((c.right_edge(0.5) / mp - 1.0).abs() < 1e-8);
    /// ```
    pub fn right_edge(&self, delta: f64) -> f64 {
        let top = self.atoms.iter().map(|a| a.eigenvalue).fold(0.0, f64::max);
        let slope = |m: f64| {
            1.0 / (m * m)
                - delta
                    * self
                        .atoms
                        .iter()
                        .map(|a| a.weight * a.eigenvalue * a.eigenvalue / (1.0 + a.eigenvalue * m).powi(2))
                        .sum::<f64>()
        };
        // x'(m) increases from −∞ (at −1/ω_max) to +∞ (at 0⁻)
        let (mut lo, mut hi) = (-1.0 / top, 0.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if slope(mid) < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let m = 0.5 * (lo + hi);
        let x = -1.0 / m
            + delta
                * self
                    .atoms
                    .iter()
                    .map(|a| a.weight * a.eigenvalue / (1.0 + a.eigenvalue * m))
                    .sum::<f64>();
        x / delta
    }

    /// The number of coordinates of each atom at dimension d, in atom order,
    /// by systematic allocation at `offset` u ∈ [0, 1): with the boundaries
    /// C_k = d·Σ_{j≤k} w_j (snapped to an integer within 10⁻⁹), count_k =
    /// ⌊C_k + u⌋ − ⌊C_{k−1} + u⌋. They sum to d, each is ⌊d·w_k⌋ or ⌈d·w_k⌉,
    /// an integer d·w_k is kept whatever u, and with u uniform each count is
    /// d·w_k in expectation — so a simulation that draws u per repetition
    /// realises the spectrum without bias (largest-remainder rounding
    /// realises another one: at d = 1000 with 15 atoms of equal weight
    /// spanning a condition of 30 and an anti-aligned teacher, a teacher
    /// energy 0.58% low in every repetition).
    ///
    /// ```
    /// use propdp_core::covariance::Covariance;
    /// let c = Covariance::from_columns(&[1.0, 2.0, 3.0], &[1.0 / 3.0; 3], &[1.0; 3], "c").unwrap().unwrap();
    /// assert_eq!(c.counts(10, 0.0), vec![3, 3, 4]);
    /// assert_eq!(c.counts(10, 0.5), vec![3, 4, 3]);
    /// assert_eq!(c.counts(10, 0.9), vec![4, 3, 3]);
    /// assert_eq!(c.counts(9, 0.7), vec![3, 3, 3]);
    /// assert!(!c.has_fractional_counts(9) && c.has_fractional_counts(10));
    /// ```
    pub fn counts(&self, d: usize, offset: f64) -> Vec<usize> {
        let boundaries = self.boundaries(d);
        let at = |c: f64| (c + offset).floor() as usize;
        let mut prev = 0;
        boundaries
            .iter()
            .map(|&c| {
                let next = at(c).min(d);
                let count = next - prev;
                prev = next;
                count
            })
            .collect()
    }

    /// Whether some count d·w_k is fractional (then [`Self::counts`] depends on its offset).
    pub fn has_fractional_counts(&self, d: usize) -> bool {
        self.boundaries(d).iter().any(|c| c.fract() != 0.0)
    }

    /// C_k = d·Σ_{j≤k} w_j, snapped to the nearest integer within 10⁻⁹ (the last is d).
    fn boundaries(&self, d: usize) -> Vec<f64> {
        let mut sum = 0.0;
        let mut out: Vec<f64> = self
            .atoms
            .iter()
            .map(|a| {
                sum += a.weight * d as f64;
                if (sum - sum.round()).abs() < 1e-9 {
                    sum.round()
                } else {
                    sum
                }
            })
            .collect();
        if let Some(last) = out.last_mut() {
            *last = d as f64;
        }
        out
    }
}
