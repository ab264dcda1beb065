//! The privacy guarantee of an algorithm's noise in every notion, or the
//! smallest noise meeting a target (ε, δ) or ρ (docs/theory.md §4) — what
//! `propdp privacy` prints.
//!
//! [`QueryArgs`] turns a front end's arguments into a [`Query`]; [`assess`]
//! and [`calibrate_knob`] make its [`Report`], [`assess_sampled`] the ε
//! under another batch-sampling scheme, and [`membership`] reads a report
//! as membership-inference bounds; each prints as text or JSON.

mod assess;
mod membership;
mod query;
mod report;
mod sampled;
pub mod schedule;

pub use crate::error::Argument;
pub use assess::{assess, calibrate_knob};
pub use membership::{FPRS, Membership, membership};
pub use propdp_core::parameters::python_keyword;
pub use query::{NoiseLevel, Participation, Query, QueryArgs, check};
pub use report::Report;
pub use sampled::{SampledReport, assess_sampled};
