//! What a private fit says of the rows themselves: how many were fitted,
//! and how far the projection onto ‖x‖ ≤ R moved them — each released by
//! the Gaussian mechanism and charged to the ledger, never as an exact
//! count (a count of private rows changes by one between neighbours).
//!
//! - **The shrink.** Row i is projected to xᵢ·min(1, R/‖xᵢ‖); its relative
//!   shrink is sᵢ = 1 − min(1, R/‖xᵢ‖) ∈ [0, 1]. The centred sum Σ(sᵢ − ½)
//!   has add/remove sensitivity ½ and replace-one sensitivity 1 (the factor
//!   two the accountant's replace-one pair assumes) and is released with
//!   noise z·½. Rows N(0, I/d) have ‖x‖² = 1 ± √(2/d), so at R = 1 about
//!   half are projected, each by ≈ √(1/(2d))·E[Z⁺] — a mean shrink near
//!   0.4/√(2d) (0.02 at d = 200), which the intervals were validated with.
//!   A row norm well below the rows' own scale projects every row by much
//!   more and breaks the intervals' assumption of rows N(0, I/d) (R = 10⁻³
//!   on rows of norm ≈ 1 covered 41–47% at a 95% level): the fit is
//!   refused ([`super::Reason::RowsProjected`]) when the released mean
//!   shrink exceeds [`MAX_SHRINK`] by more than [`SHRINK_SDS`] standard
//!   deviations of its noise.
//! - **The count.** Under replace-one the neighbours have the same n, so n
//!   (and the rows fitted, which the seeded hold-out split fixes
//!   independently of the data) is public. Under add/remove n itself is
//!   private: Σ 1 (sensitivity 1) is released with noise z, and the
//!   released ñ stands for n everywhere downstream (d/n of the fixed point,
//!   the released means): post-processing.
//!
//! # References
//! - Dwork, Roth (2014), *The algorithmic foundations of differential
//!   privacy*, §3.5 and Appendix A (the Gaussian mechanism).

use nalgebra::DMatrix;
use propdp_core::accountant::Neighbouring;
use serde::Serialize;

use super::{Reason, Refusal, Spec};

/// The largest mean relative shrink of the rows by the projection the
/// intervals are given for. Measured (d = 400; logistic objective
/// perturbation δ = 0.5, s² = 4; Huber objective δ = 1, Student-t labels;
/// 10–16 data sets each; docs/inference.md): at ε = 32 coverage 0.946–0.956
/// for R from 1 down to 0.6 (mean shrink 0.02–0.40) for logistic, Huber
/// 0.948–0.956 to R = 0.8 (0.20) and 0.98 at 0.6; at ε = 4 0.95 at R = 1,
/// 0.937–0.939 at R = 0.8 (0.22–0.25), 0.921–0.924 at R = 0.5, and down to
/// 0.89 (logistic) or up to 0.98–1.0 (Huber) at R = 0.2. The limit is where
/// every measured case still covered its level.
pub const MAX_SHRINK: f64 = 0.1;

/// Standard deviations of the shrink's release noise by which the released
/// mean shrink may exceed [`MAX_SHRINK`] before the fit is refused: at R = 1
/// (shrink 0.02–0.03) a false refusal needs the noise 3.5 s.d. out.
pub const SHRINK_SDS: f64 = 3.0;

/// What was released of the rows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rows {
    /// The rows fitted as the release states them: exact under replace-one
    /// (n is public there), the Gaussian mechanism's ñ under add/remove.
    pub fitted: f64,
    /// The standard deviation of `fitted`'s release noise (0: public).
    pub fitted_sd: f64,
    /// The released mean relative shrink of the rows by the projection,
    /// mean(1 − min(1, R/‖xᵢ‖)).
    pub shrink: f64,
    /// The standard deviation of `shrink`'s release noise.
    pub shrink_sd: f64,
}

/// How many scalar releases [`release`] makes under `spec`'s relation.
pub(super) fn releases(spec: &Spec) -> u64 {
    if spec.neighbouring == Neighbouring::AddRemoveOne {
        2
    } else {
        1
    }
}

/// The rows fitted as released: `n` exactly under replace-one (public
/// there), else n + z·`g` (the Gaussian mechanism, sensitivity 1) with its
/// noise sd z. Released before anything else reads the count.
pub(super) fn count(n: usize, spec: &Spec, z: f64, g: f64) -> (f64, f64) {
    if spec.neighbouring == Neighbouring::AddRemoveOne {
        ((n as f64 + z * g).max(2.0), z)
    } else {
        (n as f64, 0.0)
    }
}

/// Projects the columns of `xt` (d × n, one row of the data per column)
/// onto ‖x‖ ≤ R and releases the mean shrink with noise multiplier `z` and
/// the standard Gaussian `g`, over the rows' count as released
/// (`fitted`: [`count`]). Refuses when the shrink is far beyond
/// [`MAX_SHRINK`].
pub(super) fn project_and_release(
    xt: &mut DMatrix<f64>,
    spec: &Spec,
    z: f64,
    g: f64,
    (fitted, fitted_sd): (f64, f64),
) -> Result<Rows, Refusal> {
    let r = spec.row_norm;
    let mut centred = 0.0;
    for mut row in xt.column_iter_mut() {
        let norm = row.norm();
        let keep = if norm > r { r / norm } else { 1.0 };
        row *= keep;
        centred += (1.0 - keep) - 0.5;
    }
    let shrink_sd = 0.5 * z / fitted;
    let shrink = ((centred + 0.5 * z * g) / fitted + 0.5).clamp(0.0, 1.0);
    if shrink - SHRINK_SDS * shrink_sd > MAX_SHRINK {
        return Err(Refusal::new(
            Reason::RowsProjected,
            format!(
                "the projection onto ‖x‖ ≤ row_norm = {r} shrinks the rows by {:.1}% on average (released, noise \
                 sd {:.1}%), beyond the {:.0}% the intervals allow: they assume rows N(0, I/d), of norm about 1, and \
                 a row norm well below the rows' own scale rescales them all; raise row_norm to the rows' scale \
                 (about 1 for rows N(0, I/d)) or rescale the rows",
                100.0 * shrink,
                100.0 * shrink_sd,
                100.0 * MAX_SHRINK
            ),
        ));
    }
    Ok(Rows {
        fitted,
        fitted_sd,
        shrink,
        shrink_sd,
    })
}

impl Rows {
    /// The report's line on the rows.
    pub(super) fn text(&self, row_norm: f64) -> String {
        let count = if self.fitted_sd > 0.0 {
            format!(
                "about {:.0} rows fitted (add/remove: n is private, released with noise sd {:.1})",
                self.fitted, self.fitted_sd
            )
        } else {
            format!("{:.0} rows fitted", self.fitted)
        };
        format!(
            "{count}; projected onto ‖x‖ ≤ {row_norm}, which shrinks them by {:.2}% on average (released, noise sd \
             {:.2}%)",
            100.0 * self.shrink,
            100.0 * self.shrink_sd
        )
    }
}
