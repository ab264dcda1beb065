//! State evolutions of DP full-batch gradient descent and mini-batch DP-SGD
//! (docs/theory.md §3): what they share — parameters, failures, the
//! predicted path and its metrics (`path`), RQMC points (`rqmc`) — then the
//! full-memory DMFT ([`full_memory`], §3, §3.1) with one coordinate mode per
//! atom of a covariance (`modes`, §3.4), the exact trajectory of unclipped
//! least squares ([`least_squares`], §3.2), and the long-horizon state
//! evolution ([`long_horizon`], §3.3) with its reverse-mode responses
//! (`reverse_mode`) and dyadic memory partitions (`dyadic`).

mod dyadic;
pub mod full_memory;
pub mod least_squares;
pub mod long_horizon;
mod modes;
mod noise_kernel;
mod path;
mod reverse_mode;
mod rqmc;

pub use path::{DmftError, DmftParams, DmftPath, INTERCEPT, Intercept, MAX_RELATIVE_SPREAD};
