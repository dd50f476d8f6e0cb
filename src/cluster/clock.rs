//! The clock leases are judged by on a node: `CLOCK_BOOTTIME`, which
//! goes on through a system suspend, where `Instant` (`CLOCK_MONOTONIC`)
//! stops. Redis's clock went on while the machine slept: a node judging
//! its leases by a clock that stopped would wake up believing it still
//! held partitions that Redis gave to others long ago. By this clock the
//! leases it held ran out while it slept, and it acts for none of them.
//!
//! Pure but for [`Moment::now`].

use std::ops::Add;
use std::time::Duration;

/// A moment of the boot clock: the time since the machine booted,
/// sleep included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct Moment(Duration);

impl Moment {
    /// Now, by `CLOCK_BOOTTIME`.
    pub(crate) fn now() -> Moment {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
        let secs = u64::try_from(t.tv_sec).unwrap_or(0);
        let nanos = u32::try_from(t.tv_nsec).unwrap_or(0);
        Moment(Duration::new(secs, nanos))
    }

    /// Nanoseconds since boot, for an atomic (saturating).
    pub(crate) fn as_nanos(self) -> u64 {
        u64::try_from(self.0.as_nanos()).unwrap_or(u64::MAX)
    }
}

impl Add<Duration> for Moment {
    type Output = Moment;

    fn add(self, d: Duration) -> Moment {
        Moment(self.0.saturating_add(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boot_clock_goes_forward_with_instant() {
        let (a, i) = (Moment::now(), std::time::Instant::now());
        std::thread::sleep(Duration::from_millis(5));
        let (b, j) = (Moment::now(), std::time::Instant::now());
        assert!(b > a);
        // Never slower than the monotonic clock (faster only across a
        // suspend).
        assert!(b.as_nanos() - a.as_nanos() + 1_000_000 >= (j - i).as_nanos() as u64);
    }
}
