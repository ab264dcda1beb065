//! The static estimators' fixed-point systems (docs/theory.md §2): Huber
//! regression ([`huber`], §2.1, its noise laws in [`noise`]), logistic
//! regression ([`logistic`], §2.2), both with a feature covariance
//! ([`spectral`], §2.4), and the fits the dynamics share: the spectrum rule of
//! a covariance (`covariance_spectrum`) and the training loss's control
//! variate (`train_loss`).

pub(crate) mod covariance_spectrum;
pub mod huber;
pub mod logistic;
pub mod noise;
pub mod spectral;
pub(crate) mod train_loss;
