//! What a certified bracket is asked for ([`BracketSettings`]) and what it
//! returns ([`EpsilonBracket`]).

/// What the bracket is asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BracketSettings {
    /// Largest accepted (upper − lower)/upper; > 0.
    pub relative_width: f64,
    /// Most points an FFT window may hold (memory: about 40 bytes each).
    pub max_points: usize,
}

impl Default for BracketSettings {
    /// Width 0.1%, windows up to 2²² points (~170 MB at once).
    fn default() -> Self {
        BracketSettings {
            relative_width: 1e-3,
            max_points: 1 << 22,
        }
    }
}

/// A certified ε: the true ε (of the stated accounting) is in [lower, upper].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpsilonBracket {
    /// A lower bound on ε.
    pub lower: f64,
    /// An upper bound on ε: the guarantee to state.
    pub upper: f64,
    /// The grid width Δ of the last refinement (0: closed form).
    pub grid: f64,
    /// Whether (upper − lower) ≤ relative_width·upper was reached (if not,
    /// the point limit stopped the refinement).
    pub reached: bool,
}

impl BracketSettings {
    /// The width asked for, refused naming `relative_width` unless 0 < w < ∞.
    pub(crate) fn check(&self) -> Result<(), crate::AccountantError> {
        if !(self.relative_width > 0.0 && self.relative_width.is_finite()) {
            return Err(crate::AccountantError::range(
                "relative_width",
                self.relative_width,
                "0 < relative_width < ∞",
            ));
        }
        Ok(())
    }
}
