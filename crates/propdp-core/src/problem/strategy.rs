//! The noise strategy of correlated-noise DP-SGD (matrix-factorization
//! DP training, docs/correlated_noise.md): C lower-triangular Toeplitz with
//! first column c = (c₀, …, c_{b−1}), ‖c‖₂ = 1, and the noise added to the
//! summed clipped gradient at step t is σ·w_t with C·w = z, z_t ~ N(0, I_d)
//! i.i.d.:
//!
//!   w_t = (z_t − Σ_{k=1}^{b−1} c_k w_{t−k}) / c₀,
//!
//! O(b) per coordinate and step. The identity c = (1) is DP-SGD's
//! independent noise. w = C⁻¹z has covariance K = C⁻¹C⁻ᵀ in time;
//! C⁻¹ is lower-triangular Toeplitz with first column h, the impulse
//! response of the recurrence ([`Strategy::impulse_response`]).
//!
//! Coefficients are normalised to ‖c‖₂ = 1 (so σ/clip is jax_privacy's
//! `noise_multiplier`); the normalised c is what the algorithm, its records
//! and its manifests carry.
//!
//! # References
//! - C. A. Choquette-Choo, A. Ganesh, R. McKenna, H. B. McMahan, K. Rush,
//!   A. Thakurta, Z. Xu, "(Amplified) Banded Matrix Factorization: A
//!   unified approach to private training", arXiv:2306.08153 (2023).
//! - C. A. Choquette-Choo, K. Dvijotham, K. Pillutla, A. Ganesh, T. Steinke,
//!   A. Thakurta, "Correlated noise provably beats independent noise for
//!   differentially private learning", arXiv:2310.06771 (2023).

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// Most bands b a strategy may have: the coefficients are held inline, so
/// that an algorithm stays `Copy`.
pub const MAX_BANDS: usize = 64;

/// A banded Toeplitz noise strategy: its normalised first column c.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Strategy {
    bands: usize,
    coefs: [f64; MAX_BANDS],
}

impl Default for Strategy {
    /// The identity: DP-SGD's independent noise.
    fn default() -> Self {
        Strategy::IDENTITY
    }
}

impl Strategy {
    /// The identity c = (1): independent noise at every step.
    pub const IDENTITY: Strategy = {
        let mut coefs = [0.0; MAX_BANDS];
        coefs[0] = 1.0;
        Strategy { bands: 1, coefs }
    };

    /// The banded strategy of first column `coefficients` (b = its length),
    /// normalised to ‖c‖₂ = 1; refused (naming
    /// `algorithm.strategy.coefficients[i]`) unless 1 ≤ b ≤ [`MAX_BANDS`],
    /// every cᵢ is finite and c₀ > 0.
    ///
    /// ```
    /// use propdp_core::problem::Strategy;
    /// let s = Strategy::banded(&[3.0, 4.0]).unwrap();
    /// assert_eq!(s.coefficients(), &[0.6, 0.8]);
    /// assert!(Strategy::banded(&[1.0]).unwrap().is_identity());
    /// let e = Strategy::banded(&[0.0, 1.0]).unwrap_err().to_string();
    /// assert!(e.contains("algorithm.strategy.coefficients[0]") && e.contains("c₀ > 0"), "{e}");
    /// ```
    pub fn banded(coefficients: &[f64]) -> Result<Strategy, ConfigError> {
        const FIELD: &str = "algorithm.strategy.coefficients";
        let b = coefficients.len();
        if b == 0 || b > MAX_BANDS {
            return Err(ConfigError::range(
                FIELD,
                format!("{b} coefficients"),
                &format!("1 to {MAX_BANDS} coefficients (bands)"),
            ));
        }
        if let Some(i) = coefficients.iter().position(|c| !c.is_finite()) {
            return Err(ConfigError::range(
                &format!("{FIELD}[{i}]"),
                coefficients[i],
                "a finite number",
            ));
        }
        if coefficients[0] <= 0.0 {
            return Err(ConfigError::range(
                &format!("{FIELD}[0]"),
                coefficients[0],
                "c₀ > 0 (the strategy C must be invertible, its diagonal positive)",
            ));
        }
        // within rounding of 1 the coefficients are kept as given, so that
        // normalising is idempotent (a record's strategy reads back equal)
        let norm = coefficients.iter().map(|c| c * c).sum::<f64>().sqrt();
        let scale = if (norm - 1.0).abs() <= 8.0 * f64::EPSILON {
            1.0
        } else {
            norm
        };
        let mut coefs = [0.0; MAX_BANDS];
        for (c, &x) in coefs.iter_mut().zip(coefficients) {
            *c = x / scale;
        }
        Ok(Strategy { bands: b, coefs })
    }

    /// The prefix-sum-optimal strategy of `bands` bands for `steps` steps
    /// (`strategy = { bands = B }`; the objective in `prefix_sum.rs`:
    /// jax_privacy's `toeplitz.optimize_banded_toeplitz`), refused (naming
    /// `algorithm.strategy.bands`) unless 1 ≤ bands ≤ [`MAX_BANDS`].
    ///
    /// ```
    /// use propdp_core::problem::Strategy;
    /// let c = Strategy::prefix_sum_optimal(4, 1024).unwrap();
    /// assert!((c.coefficients()[0] - 0.5863).abs() < 1e-4);
    /// assert!(Strategy::prefix_sum_optimal(1, 10).unwrap().is_identity());
    /// ```
    pub fn prefix_sum_optimal(bands: usize, steps: usize) -> Result<Strategy, ConfigError> {
        if bands == 0 || bands > MAX_BANDS {
            return Err(ConfigError::range(
                "algorithm.strategy.bands",
                bands,
                &format!("an integer, 1 ≤ bands ≤ {MAX_BANDS}"),
            ));
        }
        if bands == 1 {
            return Ok(Strategy::IDENTITY);
        }
        Strategy::banded(&super::prefix_sum::optimal_coefficients(bands, steps))
    }

    /// The normalised first column c of C (‖c‖₂ = 1).
    pub fn coefficients(&self) -> &[f64] {
        &self.coefs[..self.bands]
    }

    /// The number of bands b.
    pub fn bands(&self) -> usize {
        self.bands
    }

    /// Whether this is the identity (independent noise).
    pub fn is_identity(&self) -> bool {
        self.bands == 1
    }

    /// w_t = (z_t − Σ_{k=1}^{b−1} c_k w_{t−k}) / c₀ for one coordinate:
    /// `past[k − 1]` is w_{t−k} (shorter than b − 1 at the first steps,
    /// where the missing w are 0). The identity returns z_t itself.
    ///
    /// ```
    /// use propdp_core::problem::Strategy;
    /// let s = Strategy::banded(&[0.6, 0.8]).unwrap();
    /// assert!((s.correlate(1.0, &[0.5]) - (1.0 - 0.8 * 0.5) / 0.6).abs() < 1e-15);
    /// assert_eq!(s.correlate(0.3, &[]), 0.3 / 0.6);
    /// ```
    pub fn correlate(&self, z: f64, past: &[f64]) -> f64 {
        if self.is_identity() {
            return z;
        }
        let c = self.coefficients();
        let memory: f64 = c[1..].iter().zip(past).map(|(ck, w)| ck * w).sum();
        (z - memory) / c[0]
    }

    /// The first `len` entries of C⁻¹'s first column h (w = Σ_u h_{t−u} z_u):
    /// h₀ = 1/c₀, h_m = −(Σ_{k=1}^{min(m, b−1)} c_k h_{m−k}) / c₀.
    ///
    /// ```
    /// use propdp_core::problem::Strategy;
    /// let h = Strategy::banded(&[0.6, 0.8]).unwrap().impulse_response(3);
    /// let want = [1.0 / 0.6, -0.8 / 0.36, 0.64 / 0.216];
    /// assert!(h.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12));
    /// ```
    pub fn impulse_response(&self, len: usize) -> Vec<f64> {
        let c = self.coefficients();
        let mut h: Vec<f64> = Vec::with_capacity(len);
        for m in 0..len {
            let z = if m == 0 { 1.0 } else { 0.0 };
            let past: Vec<f64> = h.iter().rev().take(self.bands - 1).copied().collect();
            h.push(if self.is_identity() {
                z
            } else {
                (z - c[1..].iter().zip(&past).map(|(ck, w)| ck * w).sum::<f64>()) / c[0]
            });
        }
        h
    }
}

/// The serialized form: `{ coefficients = [...] }`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StrategyFields {
    coefficients: Vec<f64>,
}

impl Serialize for Strategy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        StrategyFields {
            coefficients: self.coefficients().to_vec(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Strategy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = StrategyFields::deserialize(d)?;
        Strategy::banded(&f.coefficients).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recurrence_inverts_the_toeplitz_strategy() {
        // C·w = z row by row: Σ_k c_k w_{t−k} = z_t, for a fixed z
        let s = Strategy::banded(&[0.5863, 0.5036, 0.4685, 0.4279]).unwrap();
        let c = s.coefficients();
        let z = [0.3, -1.2, 0.7, 2.0, -0.4, 0.1, 0.9];
        let mut w: Vec<f64> = Vec::new();
        for &zt in &z {
            let past: Vec<f64> = w.iter().rev().take(3).copied().collect();
            w.push(s.correlate(zt, &past));
        }
        for t in 0..z.len() {
            let cw: f64 = (0..c.len().min(t + 1)).map(|k| c[k] * w[t - k]).sum();
            assert!((cw - z[t]).abs() < 1e-12, "t = {t}: {cw} vs {}", z[t]);
        }
        // and w = C⁻¹z by the impulse response
        let h = s.impulse_response(z.len());
        for t in 0..z.len() {
            let hz: f64 = (0..=t).map(|u| h[t - u] * z[u]).sum();
            assert!((hz - w[t]).abs() < 1e-12);
        }
        let norm: f64 = c.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-15);
    }

    #[test]
    fn refusals_name_the_field_and_the_range() {
        for (coefs, field) in [
            (vec![], "algorithm.strategy.coefficients"),
            (vec![-1.0, 0.5], "algorithm.strategy.coefficients[0]"),
            (vec![1.0, f64::NAN], "algorithm.strategy.coefficients[1]"),
            (vec![1.0; MAX_BANDS + 1], "algorithm.strategy.coefficients"),
        ] {
            let e = Strategy::banded(&coefs).unwrap_err();
            assert_eq!(e.field(), Some(field), "{e}");
        }
        let e: Result<Strategy, _> = serde_json::from_str(r#"{"coefficients": [0.0]}"#);
        assert!(e.unwrap_err().to_string().contains("c₀ > 0"));
    }

    #[test]
    fn serde_round_trips_the_normalised_coefficients() {
        let s = Strategy::banded(&[2.0, 1.0]).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        let back: Strategy = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        assert!(json.starts_with(r#"{"coefficients":[0.894427"#), "{json}");
    }
}
