//! What a certified bracket is asked for ([`BracketSettings`], by which
//! [`Method`] [`crate::epsilon`] reads the event) and what it returns
//! ([`EpsilonBracket`]).

/// What the bracket is asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BracketSettings {
    /// Largest accepted (upper − lower)/upper; > 0.
    pub relative_width: f64,
    /// Most points an FFT window may hold (memory: about 40 bytes each).
    pub max_points: usize,
    /// How [`crate::epsilon`] reads the event: the certified bracket (the
    /// default) or one DP-SGD run's faster upper bound.
    pub method: Method,
}

/// How [`crate::epsilon`] reads an event.
///
/// ```
/// use propdp_accountant::bracket::{BracketSettings, Method};
/// use propdp_accountant::events::Event;
/// use propdp_accountant::{epsilon, Neighbouring};
/// let (run, n) = (Event::dpsgd(1.0, 0.01, 1000), Neighbouring::AddRemoveOne);
/// let at = |method| BracketSettings { method, ..BracketSettings::default() };
/// let certified = epsilon(&run, 1e-5, n, at(Method::Certified)).unwrap().unwrap();
/// let fast = epsilon(&run, 1e-5, n, at(Method::FixedGrid)).unwrap().unwrap();
/// let rdp = epsilon(&run, 1e-5, n, at(Method::Rdp)).unwrap().unwrap();
/// // upper bounds only, no lower end: above the certified bracket
/// assert!(certified.upper <= fast.upper && fast.upper <= rdp.upper && fast.lower == 0.0);
/// // another event has no fast bound: refused naming the method
/// let gd = Event::gaussian(1.0).repeated(10);
/// assert_eq!(epsilon(&gd, 1e-5, n, at(Method::Rdp)).unwrap_err().argument(), "method");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// The certified bracket ([`crate::bracket`]; closed forms where the
    /// event has one).
    #[default]
    Certified,
    /// One DP-SGD run (a Poisson-sampled Gaussian, T-fold) alone: the
    /// smallest of the fixed-grid PLD's ε (grid 10⁻³, [`crate::DPSGD_GRID`];
    /// about 0.5% above the certified bracket's upper end), the RDP
    /// accountant's and the full batch's exact ε — an upper end only,
    /// [0, ε], not reached.
    FixedGrid,
    /// One DP-SGD run alone: the RDP accountant's ε (integer and fractional
    /// orders; replace-one by group privacy of size 2 below the full
    /// batch), looser than the PLD, a cross-check — an upper end only,
    /// [0, ε], not reached.
    Rdp,
}

impl Default for BracketSettings {
    /// Width 0.1%, windows up to 2²² points (~170 MB at once), certified.
    fn default() -> Self {
        BracketSettings {
            relative_width: 1e-3,
            max_points: 1 << 22,
            method: Method::Certified,
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
