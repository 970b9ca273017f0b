//! When a scenario's time is up: the one [`Deadline`] its time budget sets
//! for the run and its checks alike, which the checks (and the search for
//! a failure's focus, the costliest part of them) look at as they go.

use std::time::Duration;
use std::time::Instant;

/// The moment a scenario's time budget ends, and the budget it came from
/// (for the failure that says so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Deadline {
    /// `None`: the budget reaches past what an `Instant` can hold, so it
    /// never ends.
    at: Option<Instant>,
    budget: Duration,
}

impl Deadline {
    /// The end of `budget` counted from `start`.
    pub(crate) fn after(start: Instant, budget: Duration) -> Self {
        Self {
            at: start.checked_add(budget),
            budget,
        }
    }

    /// A deadline that never comes (for tests of checks).
    #[cfg(test)]
    pub(crate) fn never() -> Self {
        Self {
            at: None,
            budget: Duration::MAX,
        }
    }

    /// Whether the time is up. Once it is, it stays up.
    pub(crate) fn passed(&self) -> bool {
        self.at.is_some_and(|at| Instant::now() >= at)
    }

    /// The budget the deadline ends.
    pub(crate) fn budget(&self) -> Duration {
        self.budget
    }
}

/// What a search returns when the deadline passed before it was done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stopped;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_passes_once_its_budget_is_spent_and_never_without_one() {
        let start = Instant::now();
        let spent = Deadline::after(start, Duration::ZERO);
        assert!(spent.passed());
        assert_eq!(spent.budget(), Duration::ZERO);
        assert!(!Deadline::after(start, Duration::from_secs(3600)).passed());
        assert!(!Deadline::never().passed());
        // A budget past what an Instant holds never ends (and never panics).
        assert!(!Deadline::after(start, Duration::MAX).passed());
    }
}
