//! `RetryPolicy`: how often a worker tries a value, and how long it waits
//! between attempts.

use std::time::Duration;

/// How many times a [`Worker`](crate::Worker) runs its handler for one value,
/// and the delay before each retry. A retry goes back through the delayed
/// queue (so it survives restarts and any worker may pick it up); after the
/// last attempt the value goes to the queue's dead-letter list.
///
/// The default: 5 attempts, exponential backoff from 1 s doubling up to
/// 5 min, with 20 % jitter.
///
/// ```
/// use std::time::Duration;
/// use delayq::worker::RetryPolicy;
///
/// let policy = RetryPolicy::exponential(Duration::from_secs(1), Duration::from_secs(60))
///     .factor(3.0)
///     .jitter(0.0)
///     .max_attempts(4);
/// assert_eq!(policy.delay_after(1), Duration::from_secs(1));
/// assert_eq!(policy.delay_after(2), Duration::from_secs(3));
/// assert_eq!(policy.delay_after(3), Duration::from_secs(9));
/// assert_eq!(policy.max_attempts_value(), 4);
///
/// let fixed = RetryPolicy::fixed(Duration::from_secs(10)).max_attempts(3);
/// assert_eq!(fixed.delay_after(2), Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    backoff: Backoff,
    jitter: f64,
    max_attempts: u32,
}

#[derive(Debug, Clone, PartialEq)]
enum Backoff {
    Fixed(Duration),
    Exponential {
        initial: Duration,
        max: Duration,
        factor: f64,
    },
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::exponential(Duration::from_secs(1), Duration::from_secs(300))
            .jitter(0.2)
            .max_attempts(5)
    }
}

impl RetryPolicy {
    /// The same delay before every retry; 5 attempts unless changed.
    pub fn fixed(delay: Duration) -> Self {
        RetryPolicy {
            backoff: Backoff::Fixed(delay),
            jitter: 0.0,
            max_attempts: 5,
        }
    }

    /// `initial` before the first retry, multiplied by the [`factor`](Self::factor)
    /// (default 2) for each next one, never more than `max`; 5 attempts unless changed.
    pub fn exponential(initial: Duration, max: Duration) -> Self {
        RetryPolicy {
            backoff: Backoff::Exponential {
                initial,
                max: max.max(initial),
                factor: 2.0,
            },
            jitter: 0.0,
            max_attempts: 5,
        }
    }

    /// One attempt: a failed value goes straight to the dead-letter list.
    pub fn none() -> Self {
        RetryPolicy::fixed(Duration::ZERO).max_attempts(1)
    }

    /// Growth factor of an exponential backoff (at least 1).
    pub fn factor(mut self, factor: f64) -> Self {
        if let Backoff::Exponential { factor: f, .. } = &mut self.backoff {
            *f = if factor.is_finite() { factor.max(1.0) } else { 1.0 };
        }
        self
    }

    /// Takes a random part, up to this fraction (0 to 1), off each delay, so
    /// values that failed together do not all come back at once.
    pub fn jitter(mut self, fraction: f64) -> Self {
        self.jitter = if fraction.is_finite() {
            fraction.clamp(0.0, 1.0)
        } else {
            0.0
        };
        self
    }

    /// Handler runs per value, the first included (at least 1). Deliveries
    /// that time out (a worker that died) count as attempts too. Attempts
    /// are counted per delivery, not per payload: identical payloads taken
    /// at once are separate jobs, each at attempt 1, and a job offered while
    /// an equal one waits out its retry delay starts at 1 too. A retried
    /// value's attempt count waits for it for the retry delay plus an hour
    /// ([`ReliableQueue::with_count_memory`](crate::ReliableQueue::with_count_memory)).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The configured number of attempts.
    pub fn max_attempts_value(&self) -> u32 {
        self.max_attempts
    }

    /// The delay before the attempt after `attempt` (1 for the first),
    /// without jitter.
    pub fn delay_after(&self, attempt: u32) -> Duration {
        match self.backoff {
            Backoff::Fixed(delay) => delay,
            Backoff::Exponential { initial, max, factor } => {
                let exponent = attempt.saturating_sub(1).min(1_000) as i32;
                let secs = initial.as_secs_f64() * factor.powi(exponent);
                if secs.is_finite() && secs < max.as_secs_f64() {
                    Duration::from_secs_f64(secs)
                } else {
                    max
                }
            }
        }
    }

    /// The delay to use after a failed `attempt`: [`delay_after`](Self::delay_after)
    /// less a random jitter.
    pub fn next_delay(&self, attempt: u32) -> Duration {
        let delay = self.delay_after(attempt);
        if self.jitter == 0.0 {
            return delay;
        }
        delay.mul_f64(1.0 - self.jitter * fastrand::f64())
    }

    /// Whether a value that failed its `attempt`-th run gets another one.
    pub fn retries_after(&self, attempt: u32) -> bool {
        attempt < self.max_attempts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_backoff_grows_to_its_cap() {
        let policy = RetryPolicy::exponential(Duration::from_millis(100), Duration::from_secs(1));
        let delays: Vec<_> = (1..=6).map(|a| policy.delay_after(a).as_millis()).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(policy.delay_after(u32::MAX), Duration::from_secs(1));
    }

    #[test]
    fn jitter_only_shortens_and_stays_within_its_fraction() {
        let policy = RetryPolicy::fixed(Duration::from_secs(10)).jitter(0.3);
        for _ in 0..1_000 {
            let delay = policy.next_delay(1);
            assert!(
                delay <= Duration::from_secs(10) && delay >= Duration::from_secs(7),
                "{delay:?}"
            );
        }
    }

    #[test]
    fn attempts_are_counted_from_one() {
        let policy = RetryPolicy::default();
        assert!(policy.retries_after(4));
        assert!(!policy.retries_after(5));
        assert!(!RetryPolicy::none().retries_after(1));
        assert_eq!(
            RetryPolicy::fixed(Duration::ZERO).max_attempts(0).max_attempts_value(),
            1
        );
    }
}
