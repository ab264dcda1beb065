//! The discrete privacy-loss distribution on a grid ([`Pld`]): built by
//! connecting the dots of a pair's exact curve, read back as δ(ε) or ε(δ);
//! its composition is in the sibling module `compose`.

/// The width of the loss bins in which [`Pld::connect_the_dots`] sums the
/// mass-distance its rounding moved.
pub(crate) const MOVED_BIN: f64 = 0.25;

/// The most grid points one PLD is built with (2²⁸, 2 GB of f64 at once);
/// callers bound their own budget (`BracketSettings::max_points`) below it
/// with the `points` counts, which allocate nothing.
pub const MAX_ALLOCATION: usize = 1 << 28;

/// Standard deviations k beyond which a Gaussian's mass Φ(−k) ≤ φ(k)/k is
/// below `tail`: max(8.5, √(2 log(1/tail))).
pub(crate) fn sds(tail: f64) -> f64 {
    (-2.0 * tail.ln()).sqrt().max(8.5)
}

/// A privacy-loss distribution on the grid kΔ, k = offset, offset + 1, …,
/// with `infinity` the mass of infinite loss.
#[derive(Debug, Clone, PartialEq)]
pub struct Pld {
    /// Grid width Δ.
    pub grid: f64,
    /// The index k of `pmf[0]`.
    pub offset: i64,
    /// Mass at each grid point.
    pub pmf: Vec<f64>,
    /// Mass at +∞.
    pub infinity: f64,
}

impl Pld {
    /// The discrete PLD whose curve δ̃ passes through δ(ε_k) = `deltas[i]`,
    /// ε_k = (offset + i)Δ: on [ε_k, ε_{k+1}] δ̃ = A_k − e^ε B_k with
    /// B_k = d_k/(e^{ε_{k+1}} − e^{ε_k}), d_k = δ_k − δ_{k+1} (≥ 0), and the
    /// mass at ε_{k+1} is e^{ε_{k+1}}(B_k − B_{k+1}) = (e^Δ d_k − d_{k+1})/(e^Δ − 1)
    /// (d_{n−1} = 0: only +∞ above the last point) — free of e^{ε_k}, which
    /// overflows beyond a loss of 709; the last δ is the mass at +∞ and the
    /// first point takes what is left of the total mass 1.
    /// Returned with an estimate of how far its rounding moved mass. The
    /// masses are second differences of δ over e^Δ − 1 ≈ Δ, so δ's rounding
    /// (about u·δ, more where δ is a difference of larger terms) makes each
    /// mass err by about u·δ/Δ, and where a true mass is below that the
    /// computed one comes out negative. Set to 0 alone, each such mass
    /// would be made up from the bottom point, a bias up the whole support
    /// (at z = 30.81, q = 1.01·10⁻⁴ it grows as Δ⁻², 10⁻¹² of the mass at
    /// Δ = 10⁻⁶ and 5·10⁻⁸ at 6·10⁻⁹, and T = 10⁵ steps compose it). So a
    /// negative mass is carried down to the next point instead (scanning
    /// from the top), where the true mass absorbs it: what is moved, moves
    /// up (δ can only grow: the upper curve stays an upper bound) and only
    /// as far as the carry travels. Returned beside the PLD: the
    /// mass-distance moved across each grid interval, as (the interval's
    /// top loss, carry × Δ), summed into bins of width [`MOVED_BIN`] (each
    /// at its bin's top) — what the bracket weighs against the rest of the
    /// composition's slope there (`Rounding` in `crate::bracket`).
    pub(super) fn connect_the_dots(offset: i64, grid: f64, deltas: &[f64]) -> (Pld, Vec<(f64, f64)>) {
        let n = deltas.len();
        let drop = |i: usize| {
            if i + 1 < n {
                (deltas[i] - deltas[i + 1]).max(0.0)
            } else {
                0.0
            }
        };
        let (up, m) = (grid.exp(), grid.exp_m1());
        let mut pmf = vec![0.0; n];
        let mut carry = 0.0f64;
        let mut moved: Vec<(f64, f64)> = Vec::new();
        for i in (1..n).rev() {
            let raw = (up * drop(i - 1) - drop(i)) / m + carry;
            if raw < 0.0 {
                carry = raw;
                let top = ((((offset + i as i64) as f64 * grid) / MOVED_BIN).ceil()) * MOVED_BIN;
                match moved.last_mut() {
                    Some(last) if last.0 == top => last.1 -= raw * grid,
                    _ => moved.push((top, -raw * grid)),
                }
            } else {
                pmf[i] = raw;
                carry = 0.0;
            }
        }
        let last = deltas[n - 1];
        let rest: f64 = pmf.iter().sum::<f64>() + last;
        pmf[0] = (1.0 - rest).max(0.0);
        let pld = Pld {
            grid,
            offset,
            pmf,
            infinity: last,
        };
        (pld, moved)
    }

    /// The discrete PLD of the slopes B_k of its curve δ̃ = A_k − e^ε B_k on
    /// [ε_k, ε_{k+1}], ε_k = (offset + k)Δ (`slopes[n − 1]` = 0: only +∞
    /// above the last point), non-increasing: the mass at ε_{k+1} is
    /// e^{ε_{k+1}}(B_k − B_{k+1}), `last` is the mass at +∞, and the first
    /// point takes what is left of the total mass 1 (losses up to
    /// [`MAX_REPLACE_LOSS`], where e^ε is finite).
    pub(super) fn from_slopes(offset: i64, grid: f64, slopes: &[f64], last: f64) -> Pld {
        let n = slopes.len();
        let mut pmf = vec![0.0; n];
        for i in 1..n {
            let eps = (offset + i as i64) as f64 * grid;
            pmf[i] = (eps.exp() * (slopes[i - 1] - slopes[i])).max(0.0);
        }
        let rest: f64 = pmf.iter().sum::<f64>() + last;
        pmf[0] = (1.0 - rest).max(0.0);
        Pld {
            grid,
            offset,
            pmf,
            infinity: last,
        }
    }

    /// δ(ε) = P(∞) + Σ_k p_k (1 − e^{ε − kΔ})₊.
    pub fn delta(&self, eps: f64) -> f64 {
        let mut s = self.infinity;
        for (i, &p) in self.pmf.iter().enumerate() {
            let l = (self.offset + i as i64) as f64 * self.grid;
            if l > eps {
                s += p * -(eps - l).exp_m1();
            }
        }
        s
    }

    /// The smallest ε ≥ 0 with δ(ε) ≤ `delta`; `None` when the mass at +∞
    /// alone exceeds it. Exact for the discrete curve: scanning down the grid,
    /// at a grid point l, δ(l) = P(∞) + S₁ − S₂ with S₁ = Σ p_j and
    /// S₂ = Σ p_j e^{l − l_j} over the points above l (kept relative to l,
    /// so nothing overflows), and between l and the next point up
    /// δ(ε) = P(∞) + S₁ − S₂ e^{ε − l}.
    pub fn epsilon(&self, delta: f64) -> Option<f64> {
        if self.infinity > delta {
            return None;
        }
        let (mut s1, mut s2) = (0.0, 0.0);
        let decay = (-self.grid).exp();
        for i in (0..self.pmf.len()).rev() {
            let l = (self.offset + i as i64) as f64 * self.grid;
            let at_l = self.infinity + s1 - s2;
            if at_l > delta {
                // the root is in (l, l + Δ]
                let eps = l + ((self.infinity + s1 - delta) / s2).ln();
                return Some(eps.max(0.0));
            }
            if l <= 0.0 {
                return Some(0.0);
            }
            s1 += self.pmf[i];
            s2 = (s2 + self.pmf[i]) * decay;
        }
        Some(0.0)
    }
}
