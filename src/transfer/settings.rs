//! How the scheduler runs the transfer, and which clock says what is due.

use std::time::Duration;

/// Which clock a [`Client`](crate::Client) reads "now" from, for the transfer and for
/// relative offers.
///
/// | | [`Local`](Clock::Local) (default) | [`Server`](Clock::Server) |
/// |---|---|---|
/// | transfer (scheduler, [`DelayedQueue::transfer_now`](crate::DelayedQueue::transfer_now)): what is due | this host's clock, sent to the script | Redis `TIME`, read inside the script |
/// | [`DelayedQueue::offer`](crate::DelayedQueue::offer) / [`offer_all`](crate::DelayedQueue::offer_all) (`delay` from now) | this host's clock + delay | Redis `TIME` + delay, computed inside the script |
/// | [`DelayedQueue::offer_at`](crate::DelayedQueue::offer_at) (absolute time) | stored as given | stored as given |
/// | reliable deliveries' visibility deadlines | Redis `TIME` | Redis `TIME` |
///
/// Due times are stored as ms since the epoch either way, so the queue stays
/// readable by Redisson; Java producers and Java transfers always use their
/// own host's clock. Under `Server`, the scheduler also learns the offset
/// between the two clocks from its runs and sets its timers by it, so a host
/// whose clock is off neither delays nor advances delivery of what it offers
/// or transfers (a delay is still range-checked on this host's clock before
/// sending, which only matters at the ~285,000-year limit).
///
/// ```
/// use delayq::{Client, Clock};
/// let builder = Client::builder().clock(Clock::Server);
/// # let _ = builder;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// This host's clock, as Redisson uses it for offers and transfers. Default.
    #[default]
    Local,
    /// The Redis server's clock (`TIME`), for the transfer and for offers
    /// with a delay (`offer`, `offer_all`): due time = server's now + delay.
    /// `offer_at` stores the absolute time it is given, whatever the clock.
    Server,
}

/// How the scheduler runs the transfer.
#[derive(Debug, Clone)]
pub(crate) struct TransferSettings {
    /// Elements moved per script run.
    pub batch: usize,
    /// Transfer scripts in flight at once, across all queues of the client.
    pub max_in_flight: usize,
    /// Every queue is transferred at least this often, whatever the channel says.
    pub resync_interval: Option<Duration>,
    /// Which clock says what is due.
    pub clock: Clock,
    /// First delay after a failed run; doubles up to `max_backoff`.
    pub min_backoff: Duration,
    /// Longest delay between retries of a failing run.
    pub max_backoff: Duration,
}

impl Default for TransferSettings {
    fn default() -> Self {
        TransferSettings {
            batch: 500,
            max_in_flight: 32,
            resync_interval: Some(Duration::from_secs(60)),
            clock: Clock::Local,
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        }
    }
}
