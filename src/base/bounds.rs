//! The one bound of every duration a file, a flag or a session gives:
//! a day. A scenario's time budget, a tool's timeout, a scripted
//! cancellation, an imported command's timeout and the schema's ranges
//! are all checked against it.

/// The most seconds any duration given from outside may be: one day.
pub(crate) const ONE_DAY_SECS: u64 = 86_400;

/// [`ONE_DAY_SECS`] in milliseconds.
pub(crate) const ONE_DAY_MS: u64 = ONE_DAY_SECS * 1000;

/// [`ONE_DAY_SECS`] as a number of seconds with a fraction.
#[allow(clippy::cast_precision_loss)] // 86,400 is exact in an f64.
pub(crate) const ONE_DAY: f64 = ONE_DAY_SECS as f64;

/// Whether `seconds` is a duration from outside that can be taken:
/// finite, more than 0 and at most [`ONE_DAY`].
pub(crate) fn seconds_fit(seconds: f64) -> bool {
    seconds.is_finite() && seconds > 0.0 && seconds <= ONE_DAY
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_is_the_bound_and_nothing_unending_fits() {
        assert_eq!((ONE_DAY, ONE_DAY_MS), (86_400.0, 86_400_000));
        let fits: Vec<bool> = [
            1e-12,
            86_400.0,
            0.0,
            -1.0,
            86_400.5,
            f64::NAN,
            f64::INFINITY,
        ]
        .into_iter()
        .map(seconds_fit)
        .collect();
        assert_eq!(fits, [true, true, false, false, false, false, false]);
    }
}
