//! Groups: per-key order across every consumer (`OfferOptions::group`),
//! and the settings their keys share ([`GroupLimits`]). The keys and
//! scripts are `lua/lib/groups.lua`'s.

use std::time::Duration;

use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};

use crate::connection::reply;
use crate::error::{CommandResult, Error, Result};
use crate::queue::Core;
use crate::wire::keys::QueueKeys;

pub use crate::queue::delayed::MAX_GROUP_KEY;

/// What a failed grouped value does to its key ([`GroupLimits::on_failure`]).
///
/// ```
/// use delayq::groups::OnFailure;
/// assert_eq!(OnFailure::default(), OnFailure::Hold);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnFailure {
    /// The value waits at its key's head, and the key runs nothing until
    /// its retry is due: no later value of the key overtakes it (the
    /// default). A dead letter frees the key.
    #[default]
    Hold,
    /// The value waits for its retry apart, then rejoins the end of its
    /// key's line; the key's next values go on meanwhile.
    Skip,
}

/// The settings every group key of a queue shares: how many of a key's
/// values may run at once, how fast a key's values may start, and what a
/// failure does to its key. Kept in Redis for every client
/// ([`ReliableQueue::set_group_limits`](crate::ReliableQueue::set_group_limits)).
///
/// ```
/// use std::time::Duration;
/// use delayq::groups::{GroupLimits, OnFailure};
///
/// let limits = GroupLimits::new().concurrency(2).rate(10, Duration::from_secs(1)).on_failure(OnFailure::Skip);
/// assert_eq!(limits.concurrency_limit(), 2);
/// assert_eq!(limits.rate_limit(), Some((10, Duration::from_secs(1))));
/// assert_eq!(GroupLimits::new().concurrency_limit(), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupLimits {
    concurrency: u32,
    rate: Option<(u32, Duration)>,
    on_failure: OnFailure,
}

impl Default for GroupLimits {
    fn default() -> Self {
        GroupLimits::new()
    }
}

impl GroupLimits {
    /// One value of a key at a time, no rate limit, [`OnFailure::Hold`].
    pub fn new() -> GroupLimits {
        GroupLimits {
            concurrency: 1,
            rate: None,
            on_failure: OnFailure::Hold,
        }
    }

    /// At most `n` values of one key run at once (at least 1). Above 1 a
    /// key's values start in order but may end out of it.
    pub fn concurrency(mut self, n: u32) -> GroupLimits {
        self.concurrency = n.max(1);
        self
    }

    /// At most `count` values of one key start per `per` (a burst of
    /// `count`, then evenly; the Redis server's clock). A key at its rate
    /// waits, the others go on.
    pub fn rate(mut self, count: u32, per: Duration) -> GroupLimits {
        self.rate = (count > 0 && !per.is_zero()).then_some((count, per));
        self
    }

    /// What a failed value does to its key.
    pub fn on_failure(mut self, on_failure: OnFailure) -> GroupLimits {
        self.on_failure = on_failure;
        self
    }

    /// Values of one key that may run at once.
    pub fn concurrency_limit(&self) -> u32 {
        self.concurrency
    }

    /// The rate limit per key, if any.
    pub fn rate_limit(&self) -> Option<(u32, Duration)> {
        self.rate
    }

    /// What a failure does.
    pub fn failure_mode(&self) -> OnFailure {
        self.on_failure
    }

    /// As `lua/lib/groups.lua` reads the `cfg` field.
    fn field(&self) -> String {
        let (count, ms) = self
            .rate
            .map_or((0, 0), |(n, per)| (n, crate::wire::time::saturating_ms(per)));
        let mode = match self.on_failure {
            OnFailure::Hold => "hold",
            OnFailure::Skip => "skip",
        };
        format!("{} {count} {ms} {mode}", self.concurrency)
    }

    fn parse(raw: &str) -> Option<GroupLimits> {
        let mut words = raw.split(' ');
        let concurrency = words.next()?.parse().ok()?;
        let count: u32 = words.next()?.parse().ok()?;
        let ms: u64 = words.next()?.parse().ok()?;
        let on_failure = match words.next()? {
            "hold" => OnFailure::Hold,
            "skip" => OnFailure::Skip,
            _ => return None,
        };
        Some(
            GroupLimits::new()
                .concurrency(concurrency)
                .rate(count, Duration::from_millis(ms))
                .on_failure(on_failure),
        )
    }
}

/// Writes the queue's group settings (the state hash's `cfg`).
pub(crate) async fn set_limits(core: &Core, keys: &QueueKeys, limits: &GroupLimits) -> Result<()> {
    let key = keys.group_state();
    let _: Value = core
        .conn()?
        .custom(
            CustomCommand::new_static("HSET", ClusterHash::FirstKey, false),
            vec![
                Value::from(key.as_str()),
                Value::from("cfg"),
                Value::from(limits.field()),
            ],
        )
        .await
        .on_key(&key)?;
    Ok(())
}

/// Reads the queue's group settings (the defaults when none are set).
pub(crate) async fn limits(core: &Core, keys: &QueueKeys) -> Result<GroupLimits> {
    let key = keys.group_state();
    let raw: Value = core
        .conn()?
        .custom(
            CustomCommand::new_static("HGET", ClusterHash::FirstKey, false),
            vec![Value::from(key.as_str()), Value::from("cfg")],
        )
        .await
        .on_key(&key)?;
    match reply::opt_text(raw)? {
        None => Ok(GroupLimits::new()),
        Some(raw) => GroupLimits::parse(&raw)
            .ok_or_else(|| Error::Protocol(format!("the group settings of {} read {raw:?}", keys.destination()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_back() {
        let limits = GroupLimits::new()
            .concurrency(3)
            .rate(5, Duration::from_millis(1500))
            .on_failure(OnFailure::Skip);
        assert_eq!(limits.field(), "3 5 1500 skip");
        assert_eq!(GroupLimits::parse(&limits.field()), Some(limits));
        assert_eq!(GroupLimits::new().field(), "1 0 0 hold");
        assert_eq!(GroupLimits::parse("x"), None);
    }
}
