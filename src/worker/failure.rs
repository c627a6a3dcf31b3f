//! What a worker reports when a value fails: [`Failure`], and the
//! [`Permanent`] marker for errors no retry can fix.

use std::fmt;
use std::time::Duration;

use crate::error::BoxError;

/// One value that failed in a [`Worker`](crate::Worker), as given to its
/// [`on_error`](crate::Worker::on_error) hook.
///
/// ```
/// use delayq::worker::{Failure, FailureAction};
///
/// fn alert(failure: &Failure) {
///     if failure.action() == FailureAction::DeadLettered {
///         eprintln!("{}: gave up after attempt {}: {}", failure.queue(), failure.attempt(), failure.error());
///     }
/// }
/// # let _ = alert;
/// ```
#[derive(Debug)]
pub struct Failure {
    pub(crate) queue: String,
    pub(crate) attempt: u32,
    pub(crate) error: BoxError,
    pub(crate) action: FailureAction,
}

/// What a worker did with a value that failed.
///
/// ```
/// use std::time::Duration;
/// use delayq::worker::FailureAction;
///
/// let action = FailureAction::Retry { after: Duration::from_secs(2) };
/// assert_ne!(action, FailureAction::DeadLettered);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureAction {
    /// Offered again through the delayed queue, due after this long.
    Retry {
        /// The backoff delay.
        after: Duration,
    },
    /// Moved to the queue's dead-letter list: its last attempt failed, its
    /// error was [`Permanent`], or it could not be decoded.
    DeadLettered,
    /// Could not be settled (Redis unreachable); the visibility timeout will
    /// give it back to the queue.
    Unsettled,
}

impl Failure {
    /// The queue's name.
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// Which attempt failed (1 for the first; 0 for a value that could not be decoded).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The handler's error (or the decoding error, a panic, a timeout).
    pub fn error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.error
    }

    /// What became of the value.
    pub fn action(&self) -> FailureAction {
        self.action
    }
}

/// Wraps a handler's error to say that retrying cannot help: the value goes
/// to the dead-letter list at once.
///
/// ```
/// use delayq::worker::Permanent;
///
/// async fn handle(order: String) -> Result<(), delayq::error::BoxError> {
///     if order.is_empty() {
///         return Err(Permanent::new("an empty order can never be processed").into());
///     }
///     Ok(())
/// }
/// # let _ = handle;
/// ```
#[derive(Debug)]
pub struct Permanent(BoxError);

impl Permanent {
    /// Marks `error` as permanent.
    pub fn new(error: impl Into<BoxError>) -> Self {
        Permanent(error.into())
    }

    /// Whether `error`, or any error in its source chain, is marked permanent.
    pub fn is_in(error: &(dyn std::error::Error + 'static)) -> bool {
        let mut next = Some(error);
        while let Some(error) = next {
            if error.is::<Permanent>() {
                return true;
            }
            next = error.source();
        }
        false
    }
}

impl fmt::Display for Permanent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (permanent)", self.0)
    }
}

impl std::error::Error for Permanent {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

/// Wraps a handler's error to say when to try again: the value is retried
/// after `after` instead of the [`RetryPolicy`](crate::worker::RetryPolicy)'s
/// delay (an upstream's `Retry-After`, a rate limit's reset). The attempt
/// still counts: after the policy's last attempt the value is dead-lettered
/// as any failure is.
///
/// ```
/// use std::time::Duration;
/// use delayq::worker::RetryAfter;
///
/// async fn call_api(order: String) -> Result<(), delayq::error::BoxError> {
///     let throttled = order.is_empty();
///     if throttled {
///         return Err(RetryAfter::new(Duration::from_secs(30), "429 from the payment API").into());
///     }
///     Ok(())
/// }
/// # let _ = call_api;
/// assert_eq!(
///     RetryAfter::find(&RetryAfter::new(Duration::from_secs(30), "429")),
///     Some(Duration::from_secs(30))
/// );
/// ```
#[derive(Debug)]
pub struct RetryAfter {
    after: Duration,
    error: BoxError,
}

impl RetryAfter {
    /// Retry after `after`, failing with `error` meanwhile.
    pub fn new(after: Duration, error: impl Into<BoxError>) -> Self {
        RetryAfter {
            after,
            error: error.into(),
        }
    }

    /// The delay asked for by `error` or by the first error of its source
    /// chain that is a `RetryAfter`.
    pub fn find(error: &(dyn std::error::Error + 'static)) -> Option<Duration> {
        let mut next = Some(error);
        while let Some(error) = next {
            if let Some(retry) = error.downcast_ref::<RetryAfter>() {
                return Some(retry.after);
            }
            next = error.source();
        }
        None
    }
}

impl fmt::Display for RetryAfter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (retry after {:?})", self.error, self.after)
    }
}

impl std::error::Error for RetryAfter {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.error)
    }
}

/// Wraps a handler's error with a backtrace of where it was made, for the
/// job's history (`delayq job`, the dashboard's job page): the worker
/// records the backtrace of the first `Backtraced` in a failed attempt's
/// source chain. The backtrace is captured whatever `RUST_BACKTRACE` says
/// (wrapping is the request); stable Rust gives no other way to read one out
/// of an arbitrary error.
///
/// ```
/// use delayq::worker::Backtraced;
///
/// async fn handle(order: String) -> Result<(), delayq::error::BoxError> {
///     if order.is_empty() {
///         return Err(Backtraced::new("an empty order").into());
///     }
///     Ok(())
/// }
/// # let _ = handle;
/// let error = Backtraced::new(std::io::Error::other("disk full"));
/// assert_eq!(error.to_string(), "disk full");
/// assert!(Backtraced::find(&error).is_some());
/// ```
#[derive(Debug)]
pub struct Backtraced {
    error: BoxError,
    backtrace: std::backtrace::Backtrace,
}

impl Backtraced {
    /// `error`, with a backtrace of this call.
    pub fn new(error: impl Into<BoxError>) -> Self {
        Backtraced {
            error: error.into(),
            backtrace: std::backtrace::Backtrace::force_capture(),
        }
    }

    /// The backtrace.
    pub fn backtrace(&self) -> &std::backtrace::Backtrace {
        &self.backtrace
    }

    /// The backtrace of `error` itself if it is a `Backtraced` (not its
    /// sources), as text.
    pub fn find(error: &(dyn std::error::Error + 'static)) -> Option<String> {
        error
            .downcast_ref::<Backtraced>()
            .map(|traced| traced.backtrace.to_string())
    }
}

impl fmt::Display for Backtraced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for Backtraced {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        // The wrapped error itself, so that `Permanent` and `RetryAfter`
        // inside are still found (a history skips the repeated text).
        Some(&*self.error)
    }
}

/// The error of a handler that did not finish.
#[derive(Debug)]
pub(crate) enum Abnormal {
    Panicked(String),
    TimedOut(Duration),
}

impl fmt::Display for Abnormal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Abnormal::Panicked(message) => write!(f, "the handler panicked: {message}"),
            Abnormal::TimedOut(limit) => write!(f, "the handler did not finish within {limit:?}"),
        }
    }
}

impl std::error::Error for Abnormal {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(Permanent);
    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("outer")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn permanent_is_found_anywhere_in_the_chain() {
        let direct: BoxError = Permanent::new("bad").into();
        assert!(Permanent::is_in(&*direct));
        let wrapped: BoxError = Box::new(Outer(Permanent::new("bad")));
        assert!(Permanent::is_in(&*wrapped));
        let plain: BoxError = "transient".into();
        assert!(!Permanent::is_in(&*plain));
        assert_eq!(direct.to_string(), "bad (permanent)");
    }
}
