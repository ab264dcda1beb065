//! The noise strategy of correlated-noise DP-SGD (matrix-factorization
//! DP training, docs/correlated_noise.md): C lower-triangular Toeplitz with
//! first column c = (c₀, c₁, …), ‖c‖₂ = 1, and the noise added to the
//! summed clipped gradient at step t is σ·w_t with C·w = z, z_t ~ N(0, I_d)
//! i.i.d. Two forms, each a recurrence with a small memory per coordinate:
//!
//! - **banded** (BandMF), c = (c₀, …, c_{b−1}):
//!   w_t = (z_t − Σ_{k=1}^{b−1} c_k w_{t−k}) / c₀, the memory the last b − 1 w;
//! - **buffered linear Toeplitz** (BLT), jax_privacy's `buf_decay` θ and
//!   `output_scale` ω of m buffers: c₀ = 1/s, c_k = Σᵢ ωᵢθᵢ^{k−1}/s (k ≥ 1),
//!   s² = 1 + Σᵢⱼ ωᵢωⱼ/(1 − θᵢθⱼ) (so ‖c‖₂ = 1 over k ≥ 0), and
//!   w_t = s·z_t − Σᵢ ωᵢ bᵢ,t with buffers bᵢ,t+1 = θᵢ bᵢ,t + w_t (bᵢ,₀ = 0),
//!   the memory the m buffers.
//!
//! O(memory) per coordinate and step ([`NoiseRecurrence`]). The identity
//! c = (1) is DP-SGD's independent noise. w = C⁻¹z has covariance
//! K = C⁻¹C⁻ᵀ in time; C⁻¹ is lower-triangular Toeplitz with first column
//! h, the impulse response of the recurrence ([`Strategy::impulse_response`]).
//!
//! Coefficients are normalised to ‖c‖₂ = 1 (so σ/clip is jax_privacy's
//! `noise_multiplier` for one participation); the normalised banded c, or
//! the BLT's (θ, ω) as given, is what the algorithm, its records and its
//! manifests carry.
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

/// Most bands b a banded strategy may have: the coefficients are held
/// inline, so that an algorithm stays `Copy`.
pub const MAX_BANDS: usize = 64;

/// Most buffers m a BLT strategy may have (jax_privacy's optimised BLTs
/// have 1–5).
pub const MAX_BUFFERS: usize = 8;

/// A Toeplitz noise strategy C (module docs): banded, or buffered linear
/// Toeplitz.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Strategy {
    form: Form,
}

// both inline, so that a strategy (and an algorithm) stays `Copy`
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    /// The normalised first column c₀, …, c_{b−1}.
    Banded { bands: usize, coefs: [f64; MAX_BANDS] },
    /// θ and ω as given, and s = ‖(1, ω·θ^{k−1}…)‖₂.
    Blt {
        buffers: usize,
        decay: [f64; MAX_BUFFERS],
        scale: [f64; MAX_BUFFERS],
        norm: f64,
    },
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
        Strategy {
            form: Form::Banded { bands: 1, coefs },
        }
    };

    /// The banded strategy of first column `coefficients` (b = its length),
    /// normalised to ‖c‖₂ = 1; refused (naming
    /// `algorithm.strategy.coefficients[i]`) unless 1 ≤ b ≤ [`MAX_BANDS`],
    /// every cᵢ is finite and c₀ > 0.
    ///
    /// ```
    /// use propdp_core::problem::Strategy;
    /// let s = Strategy::banded(&[3.0, 4.0]).unwrap();
    /// assert_eq!(s.coefficients(), Some(&[0.6, 0.8][..]));
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
        Ok(Strategy {
            form: Form::Banded { bands: b, coefs },
        })
    }

    /// The buffered linear Toeplitz strategy of jax_privacy's `buf_decay` θ
    /// and `output_scale` ω (module docs), normalised to ‖c‖₂ = 1; refused
    /// (naming `algorithm.strategy.blt.buf_decay[i]` or `output_scale[i]`)
    /// unless both have the same length 1 ≤ m ≤ [`MAX_BUFFERS`], 0 ≤ θᵢ < 1
    /// and every ωᵢ is finite.
    ///
    /// ```
    /// use propdp_core::problem::Strategy;
    /// let s = Strategy::blt(&[0.5], &[0.3]).unwrap();
    /// // c = (1, 0.3, 0.15, 0.075, …)/s with s² = 1 + 0.09/(1 − 0.25)
    /// let s2: f64 = 1.0 + 0.09 / 0.75;
    /// let c = s.toeplitz(3);
    /// assert!((c[0] - 1.0 / s2.sqrt()).abs() < 1e-15 && (c[2] - 0.15 / s2.sqrt()).abs() < 1e-15);
    /// let e = Strategy::blt(&[1.0], &[0.3]).unwrap_err();
    /// assert_eq!(e.field(), Some("algorithm.strategy.blt.buf_decay[0]"));
    /// ```
    pub fn blt(buf_decay: &[f64], output_scale: &[f64]) -> Result<Strategy, ConfigError> {
        const FIELD: &str = "algorithm.strategy.blt";
        let m = buf_decay.len();
        if m == 0 || m > MAX_BUFFERS || output_scale.len() != m {
            return Err(ConfigError::range(
                FIELD,
                format!("{m} buf_decay and {} output_scale values", output_scale.len()),
                &format!("as many output_scale as buf_decay values, 1 to {MAX_BUFFERS} buffers"),
            ));
        }
        if let Some(i) = buf_decay.iter().position(|t| !(0.0..1.0).contains(t)) {
            return Err(ConfigError::range(
                &format!("{FIELD}.buf_decay[{i}]"),
                buf_decay[i],
                "0 ≤ θ < 1 (a decaying buffer)",
            ));
        }
        if let Some(i) = output_scale.iter().position(|w| !w.is_finite()) {
            return Err(ConfigError::range(
                &format!("{FIELD}.output_scale[{i}]"),
                output_scale[i],
                "a finite number",
            ));
        }
        let mut norm2 = 1.0;
        for (ti, wi) in buf_decay.iter().zip(output_scale) {
            for (tj, wj) in buf_decay.iter().zip(output_scale) {
                norm2 += wi * wj / (1.0 - ti * tj);
            }
        }
        let (mut decay, mut scale) = ([0.0; MAX_BUFFERS], [0.0; MAX_BUFFERS]);
        decay[..m].copy_from_slice(buf_decay);
        scale[..m].copy_from_slice(output_scale);
        Ok(Strategy {
            form: Form::Blt {
                buffers: m,
                decay,
                scale,
                norm: norm2.sqrt(),
            },
        })
    }

    /// The prefix-sum-optimal strategy of `bands` bands for `steps` steps
    /// (`strategy = { bands = B }`; the objective in `prefix_sum.rs`:
    /// jax_privacy's `toeplitz.optimize_banded_toeplitz`), refused (naming
    /// `algorithm.strategy.bands`) unless 1 ≤ bands ≤ [`MAX_BANDS`].
    ///
    /// ```
    /// use propdp_core::problem::Strategy;
    /// let c = Strategy::prefix_sum_optimal(4, 1024).unwrap();
    /// assert!((c.coefficients().unwrap()[0] - 0.5863).abs() < 1e-4);
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

    /// A banded strategy's normalised first column c (‖c‖₂ = 1); `None` for
    /// a BLT, whose column is infinite ([`Strategy::toeplitz`]).
    pub fn coefficients(&self) -> Option<&[f64]> {
        match &self.form {
            Form::Banded { bands, coefs } => Some(&coefs[..*bands]),
            Form::Blt { .. } => None,
        }
    }

    /// A BLT's (`buf_decay`, `output_scale`) as given; `None` when banded.
    pub fn blt_parameters(&self) -> Option<(&[f64], &[f64])> {
        match &self.form {
            Form::Banded { .. } => None,
            Form::Blt {
                buffers, decay, scale, ..
            } => Some((&decay[..*buffers], &scale[..*buffers])),
        }
    }

    /// The number of bands b of a banded strategy; `None` for a BLT (every
    /// entry below the diagonal may be non-zero).
    pub fn bands(&self) -> Option<usize> {
        match self.form {
            Form::Banded { bands, .. } => Some(bands),
            Form::Blt { .. } => None,
        }
    }

    /// Whether this is the identity (independent noise).
    pub fn is_identity(&self) -> bool {
        self.bands() == Some(1)
    }

    /// The number of values the noise recurrence keeps per coordinate:
    /// b − 1 past w (banded) or the m buffers (BLT).
    pub fn memory_len(&self) -> usize {
        match self.form {
            Form::Banded { bands, .. } => bands - 1,
            Form::Blt { buffers, .. } => buffers,
        }
    }

    /// C's diagonal c₀ (normalised).
    pub fn diagonal(&self) -> f64 {
        match self.form {
            Form::Banded { coefs, .. } => coefs[0],
            Form::Blt { norm, .. } => 1.0 / norm,
        }
    }

    /// The first `len` entries of C's normalised first column c.
    pub fn toeplitz(&self, len: usize) -> Vec<f64> {
        match &self.form {
            Form::Banded { bands, coefs } => (0..len).map(|k| if k < *bands { coefs[k] } else { 0.0 }).collect(),
            Form::Blt {
                buffers,
                decay,
                scale,
                norm,
            } => (0..len)
                .map(|k| match k {
                    0 => 1.0 / norm,
                    _ => {
                        let e = (k - 1) as i32;
                        (0..*buffers).map(|i| scale[i] * decay[i].powi(e)).sum::<f64>() / norm
                    }
                })
                .collect(),
        }
    }

    /// The L2 sensitivity of the noisy stream C·g + σz to one example in
    /// the fixed cyclic order (sample rate 1, `groups` = G groups, `steps` =
    /// T; gradients of norm ≤ 1): the largest ‖Σⱼ C e_{tⱼ} gⱼᵀ‖_F over the
    /// participations tⱼ = g, g + G, … < T of a group and ‖gⱼ‖ ≤ 1, bounded
    /// by ‖|C|u₀‖ (u₀ the indicator of 0, G, 2G, …: the first group's
    /// pattern holds every other's, truncated), and equal to it when c ≥ 0
    /// (every prefix-sum-optimal banded strategy and jax_privacy's optimised
    /// BLTs): jax_privacy's `minsep_sensitivity_squared` with min_sep = G,
    /// up to C's normalisation. One participation (G ≥ T) gives ‖c‖ over T
    /// steps ≤ 1.
    ///
    /// ```
    /// use propdp_core::problem::Strategy;
    /// // 2 bands in 2 groups: disjoint rows, √(participations) = √3 over T = 6
    /// let s = Strategy::banded(&[0.6, 0.8]).unwrap();
    /// assert!((s.sensitivity(6, 2) - 3f64.sqrt()).abs() < 1e-15);
    /// ```
    pub fn sensitivity(&self, steps: usize, groups: usize) -> f64 {
        let groups = groups.max(1);
        let c: Vec<f64> = self.toeplitz(steps).iter().map(|x| x.abs()).collect();
        let nonzero = c.iter().rposition(|&x| x != 0.0).map_or(0, |i| i + 1);
        let mut norm2 = 0.0;
        for s in 0..steps {
            // (|C|u₀)_s = Σ_{j: jG ≤ s, s − jG < nonzero} |c|_{s − jG}
            let first = (s + 1).saturating_sub(nonzero).div_ceil(groups);
            let v: f64 = (first..=s / groups).map(|j| c[s - j * groups]).sum();
            norm2 += v * v;
        }
        norm2.sqrt()
    }

    /// The first `len` entries of C⁻¹'s first column h (w = Σ_u h_{t−u} z_u):
    /// the recurrence's response to z = (1, 0, 0, …).
    ///
    /// ```
    /// use propdp_core::problem::Strategy;
    /// let h = Strategy::banded(&[0.6, 0.8]).unwrap().impulse_response(3);
    /// let want = [1.0 / 0.6, -0.8 / 0.36, 0.64 / 0.216];
    /// assert!(h.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12));
    /// ```
    pub fn impulse_response(&self, len: usize) -> Vec<f64> {
        let mut noise = NoiseRecurrence::new(*self, 1);
        (0..len)
            .map(|m| {
                let mut z = [if m == 0 { 1.0 } else { 0.0 }];
                noise.correlate(&mut z);
                z[0]
            })
            .collect()
    }
}

/// The strategy's noise recurrence over `width` coordinates (or paths):
/// z_t ↦ w_t in place, step after step, from its memory (module docs).
#[derive(Debug, Clone)]
pub struct NoiseRecurrence {
    strategy: Strategy,
    /// [`Strategy::memory_len`] rows of `width` values: w_{t−k} at row k − 1
    /// (banded), buffer i at row i (BLT).
    memory: Vec<Vec<f64>>,
}

impl NoiseRecurrence {
    /// A recurrence at t = 0 (its memory zero).
    pub fn new(strategy: Strategy, width: usize) -> Self {
        NoiseRecurrence {
            strategy,
            memory: vec![vec![0.0; width]; strategy.memory_len()],
        }
    }

    /// w_t from z_t (in place), and the memory advanced past t. The identity
    /// leaves z as it is.
    ///
    /// ```
    /// use propdp_core::problem::{NoiseRecurrence, Strategy};
    /// let mut r = NoiseRecurrence::new(Strategy::banded(&[0.6, 0.8]).unwrap(), 1);
    /// let (mut a, mut b) = ([0.3], [1.0]);
    /// r.correlate(&mut a);
    /// r.correlate(&mut b);
    /// assert_eq!(a[0], 0.3 / 0.6);
    /// assert!((b[0] - (1.0 - 0.8 * 0.5) / 0.6).abs() < 1e-15);
    /// ```
    pub fn correlate(&mut self, z: &mut [f64]) {
        match &self.strategy.form {
            Form::Banded { bands: 1, .. } => {}
            Form::Banded { bands, coefs } => {
                let c = &coefs[..*bands];
                for (i, x) in z.iter_mut().enumerate() {
                    let memory: f64 = c[1..].iter().zip(&self.memory).map(|(ck, w)| ck * w[i]).sum();
                    *x = (*x - memory) / c[0];
                }
                if let Some(mut oldest) = self.memory.pop() {
                    oldest.copy_from_slice(z);
                    self.memory.insert(0, oldest);
                }
            }
            Form::Blt {
                buffers,
                decay,
                scale,
                norm,
            } => {
                let m = *buffers;
                for (i, x) in z.iter_mut().enumerate() {
                    let memory: f64 = (0..m).map(|j| scale[j] * self.memory[j][i]).sum();
                    *x = norm * *x - memory;
                    for (b, theta) in self.memory.iter_mut().zip(&decay[..m]) {
                        b[i] = theta * b[i] + *x;
                    }
                }
            }
        }
    }
}

/// The serialized form: `{ coefficients = [...] }` or
/// `{ blt = { buf_decay = [...], output_scale = [...] } }`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StrategyFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    coefficients: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blt: Option<BltFields>,
}

/// jax_privacy's names for a BLT's parameters.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BltFields {
    pub(crate) buf_decay: Vec<f64>,
    pub(crate) output_scale: Vec<f64>,
}

impl Serialize for Strategy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let fields = match self.blt_parameters() {
            Some((decay, scale)) => StrategyFields {
                coefficients: None,
                blt: Some(BltFields {
                    buf_decay: decay.to_vec(),
                    output_scale: scale.to_vec(),
                }),
            },
            None => StrategyFields {
                coefficients: self.coefficients().map(<[f64]>::to_vec),
                blt: None,
            },
        };
        fields.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Strategy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let strategy = match StrategyFields::deserialize(d)? {
            StrategyFields {
                coefficients: Some(c),
                blt: None,
            } => Strategy::banded(&c),
            StrategyFields {
                coefficients: None,
                blt: Some(b),
            } => Strategy::blt(&b.buf_decay, &b.output_scale),
            _ => {
                return Err(serde::de::Error::custom(
                    "a strategy is { coefficients = [...] } or { blt = { buf_decay = [...], output_scale = [...] } }",
                ));
            }
        };
        strategy.map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// w by the recurrence, and C·w row by row.
    fn check_inverts(s: Strategy, z: &[f64]) {
        let mut r = NoiseRecurrence::new(s, 1);
        let w: Vec<f64> = z
            .iter()
            .map(|&zt| {
                let mut x = [zt];
                r.correlate(&mut x);
                x[0]
            })
            .collect();
        let c = s.toeplitz(z.len());
        for t in 0..z.len() {
            let cw: f64 = (0..=t).map(|k| c[k] * w[t - k]).sum();
            assert!((cw - z[t]).abs() < 1e-12, "t = {t}: {cw} vs {}", z[t]);
        }
        // and w = C⁻¹z by the impulse response
        let h = s.impulse_response(z.len());
        for t in 0..z.len() {
            let hz: f64 = (0..=t).map(|u| h[t - u] * z[u]).sum();
            assert!((hz - w[t]).abs() < 1e-12);
        }
    }

    #[test]
    fn the_recurrences_invert_the_toeplitz_strategy() {
        let z = [0.3, -1.2, 0.7, 2.0, -0.4, 0.1, 0.9, 1.1, -0.6];
        let banded = Strategy::banded(&[0.5863, 0.5036, 0.4685, 0.4279]).unwrap();
        check_inverts(banded, &z);
        let norm: f64 = banded.coefficients().unwrap().iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-15);
        check_inverts(Strategy::blt(&[0.9, 0.5], &[0.3, 0.2]).unwrap(), &z);
        check_inverts(Strategy::blt(&[0.0, 0.99], &[-0.4, 0.05]).unwrap(), &z);
    }

    #[test]
    fn a_blt_is_jax_privacys_up_to_its_norm() {
        // jax_privacy 2.0 BufferedToeplitz(buf_decay = [0.9, 0.5], output_scale = [0.3, 0.2]):
        // toeplitz_coefs and inverse().toeplitz_coefs (c₀ = 1), exact fractions
        let s = Strategy::blt(&[0.9, 0.5], &[0.3, 0.2]).unwrap();
        let norm = 1.0 / s.diagonal();
        let c = [1.0, 0.5, 0.37, 0.293, 0.2437, 0.20933, 0.183397, 0.1625573];
        let h = [1.0, -0.5, -0.12, -0.048, -0.0288, -0.02016, -0.014688, -0.0108];
        for (got, want) in s.toeplitz(8).iter().zip(c) {
            assert!((got * norm - want).abs() < 1e-14, "{got} vs {want}");
        }
        for (got, want) in s.impulse_response(8).iter().zip(h) {
            assert!((got / norm - want).abs() < 1e-14, "{got} vs {want}");
        }
    }

    #[test]
    fn the_fixed_order_sensitivity_is_jax_privacys() {
        // jax_privacy 2.0 toeplitz.minsep_sensitivity_squared(blt.toeplitz_coefs(n), min_sep, k) (c₀ = 1)
        for (decay, scale, steps, groups, want) in [
            (vec![0.9, 0.5], vec![0.3, 0.2], 64, 8, 4.723108089387237),
            (
                vec![0.9638688021548572],
                vec![0.4395754230012441],
                1024,
                32,
                14.319160825567359,
            ),
        ] {
            let s = Strategy::blt(&decay, &scale).unwrap();
            let got = s.sensitivity(steps, groups) / s.diagonal();
            assert!((got / want - 1.0).abs() < 1e-12, "{got} vs {want}");
        }
        // banded, with and without overlapping rows, and negative coefficients bounded by |c|
        let brute = |c: &[f64], steps: usize, groups: usize| {
            let mut v = vec![0.0; steps];
            for t in (0..steps).step_by(groups) {
                for (k, ck) in c.iter().enumerate().filter(|&(k, _)| t + k < steps) {
                    v[t + k] += ck.abs();
                }
            }
            v.iter().map(|x| x * x).sum::<f64>().sqrt()
        };
        for (c, steps, groups) in [(&[0.5863, 0.5036, 0.4685, 0.4279][..], 50, 2), (&[0.8, -0.6][..], 9, 1)] {
            let s = Strategy::banded(c).unwrap();
            let want = brute(s.coefficients().unwrap(), steps, groups);
            assert!((s.sensitivity(steps, groups) - want).abs() < 1e-12);
        }
    }

    #[test]
    fn a_blt_column_has_unit_norm_and_one_memoryless_buffer_is_two_bands() {
        let s = Strategy::blt(&[0.9, 0.5], &[0.3, 0.2]).unwrap();
        let norm: f64 = s.toeplitz(2000).iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-14, "{norm}");
        // θ = 0: c = (1, ω, 0, 0, …), the banded (1, ω)
        let blt = Strategy::blt(&[0.0], &[0.7]).unwrap();
        let banded = Strategy::banded(&[1.0, 0.7]).unwrap();
        for (a, b) in blt.impulse_response(12).iter().zip(banded.impulse_response(12)) {
            assert!((a - b).abs() < 1e-13, "{a} vs {b}");
        }
        assert_eq!((blt.bands(), blt.memory_len(), banded.bands()), (None, 1, Some(2)));
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
        for (decay, scale, field) in [
            (vec![0.5], vec![], "algorithm.strategy.blt"),
            (
                vec![0.5; MAX_BUFFERS + 1],
                vec![0.1; MAX_BUFFERS + 1],
                "algorithm.strategy.blt",
            ),
            (vec![0.5, -0.1], vec![0.1, 0.1], "algorithm.strategy.blt.buf_decay[1]"),
            (vec![0.5], vec![f64::INFINITY], "algorithm.strategy.blt.output_scale[0]"),
        ] {
            let e = Strategy::blt(&decay, &scale).unwrap_err();
            assert_eq!(e.field(), Some(field), "{e}");
        }
        let e: Result<Strategy, _> = serde_json::from_str(r#"{"coefficients": [0.0]}"#);
        assert!(e.unwrap_err().to_string().contains("c₀ > 0"));
    }

    #[test]
    fn serde_round_trips_both_forms() {
        let s = Strategy::banded(&[2.0, 1.0]).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        let back: Strategy = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        assert!(json.starts_with(r#"{"coefficients":[0.894427"#), "{json}");
        let blt = Strategy::blt(&[0.9, 0.5], &[0.3, 0.2]).unwrap();
        let json = serde_json::to_string(&blt).unwrap();
        assert_eq!(json, r#"{"blt":{"buf_decay":[0.9,0.5],"output_scale":[0.3,0.2]}}"#);
        assert_eq!(serde_json::from_str::<Strategy>(&json).unwrap(), blt);
    }
}
