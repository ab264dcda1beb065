//! Why a long-horizon replicate stops before its last step (docs/theory.md
//! §3.3): its response window is too short, another replicate's is
//! ([`Watch`]), the caller cancelled, or it failed.

use crate::dynamics::path::DmftError;

/// Why a replicate stopped.
pub(super) enum Stop {
    /// The response window is too short for the accuracy at `step`: the
    /// window the estimate's decay suggests.
    Window {
        window: usize,
        step: usize,
    },
    /// Another replicate stopped for its window at an earlier step ([`Watch`]).
    Halted,
    Failed(DmftError),
}

/// What stops a replicate between steps: the caller's cancellation, and
/// the earliest step at which any replicate of the same solve found its
/// window too short. A replicate past that step stops at once — the solve
/// restarts with a wider window and its run is discarded — while one not
/// yet there runs on to it, so the replicates that stop there, and the
/// window they ask for, do not depend on the threads' timing.
pub(super) struct Watch<'a> {
    pub(super) cancelled: &'a (dyn Fn() -> bool + Sync),
    /// The earliest step a replicate stopped for its window (usize::MAX: none).
    pub(super) first_stop: &'a std::sync::atomic::AtomicUsize,
}

impl Watch<'_> {
    /// Before step `t` of `steps`.
    pub(super) fn check(&self, t: usize, steps: usize) -> Result<(), Stop> {
        if (self.cancelled)() {
            return Err(DmftError::Cancelled { step: t, steps }.into());
        }
        if t > self.first_stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Stop::Halted);
        }
        Ok(())
    }
}

impl From<DmftError> for Stop {
    fn from(e: DmftError) -> Self {
        Stop::Failed(e)
    }
}
