//! propdp's privacy accountant (docs/theory.md §4). As in Google's
//! dp_accounting, events describe mechanisms and accountants compose them:
//!
//! - [`events`]: the validated events — DP-SGD segments, schedules and
//!   ledgers with objective-perturbation releases — and the one home of the
//!   range checks on q, δ, the noise multiplier and the steps;
//! - [`epsilon`]: the certified ε bracket of any events ([`bracket`]);
//!   [`sampling::sampled_epsilon`] the ε of DP-SGD under a batch-sampling
//!   scheme; [`calibrate::calibrate`] solves one knob of a run for a
//!   [`calibrate::Target`];
//! - [`Mechanism`]: the four algorithms (objective and output perturbation,
//!   DP-GD, DP-SGD) with their closed-form curves and noise calibration;
//! - the maths beneath: the Gaussian mechanism's curve and conversions,
//!   objective perturbation's bound, PLDs ([`pld`]), RDP ([`rdp`]), and
//!   trade-off curves ([`tradeoff`]).
//!
//! Conventions: rows have ‖xᵢ‖ ≤ R (= 1 here), the GLM loss has |f'| ≤ L and
//! 0 ≤ f'' ≤ β (Huber: L = M, β = 1; logistic: L = 1, β = 1/4).

#![warn(missing_docs)]

mod account;
pub mod bracket;
pub mod calibrate;
mod dpsgd;
mod error;
pub mod events;
mod gaussian;
mod mechanism;
mod neighbouring;
mod objective;
pub mod pld;
pub mod rdp;
pub mod sampling;
pub mod tradeoff;

pub use account::{admits, epsilon};
pub use dpsgd::{DPSGD_GRID, DPSGD_TAIL};
pub use error::AccountantError;
pub use gaussian::{
    delta_gaussian, gdp_to_eps, log_delta_gaussian, log_norm_cdf, mu_dpgd, mu_output, norm_cdf, rdp_to_eps, zcdp_to_eps,
};
pub use mechanism::{ExtraRidge, Mechanism, MechanismKind};
pub use neighbouring::{Neighbouring, relation_factor};
pub use objective::{ObjectiveBound, objective_replace_one};
