//! Returning what dead consumers left: timed-out deliveries and unclaimed values.

use std::sync::Arc;
use std::time::Duration;

use fred::types::Value;

use crate::connection::reply;
use crate::connection::request::Lane;
use crate::connection::script::SCRIPTS;
use crate::error::Result;
use crate::queue::Core;
use crate::wire::keys::{KeyRole, QueueKeys};

use super::ReliableQueue;

/// Most deliveries (or stray copies) one reap call returns ...
const REAP_BATCH: i64 = 100;
/// ... and most payload bytes (at least one value).
const REAP_BYTES: i64 = 128 << 10;
/// Most reap calls in a row while each says there is more to do.
const REAP_CALLS: usize = 1000;

/// What one run of the reaper returned to the queue.
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// let reaped = queue.reap_now().await?;
/// println!("{} timed out, {} never claimed", reaped.timed_out, reaped.unclaimed);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Reaped {
    /// Deliveries whose visibility timeout ran out.
    pub timed_out: u64,
    /// Values moved to the staging list but never claimed, for a whole timeout.
    pub unclaimed: u64,
}

impl<T: 'static> ReliableQueue<T> {
    /// Runs the reaper once now (it also runs on its own while a handle lives).
    pub async fn reap_now(&self) -> Result<Reaped> {
        reap(
            &self.handle.core,
            &self.handle.keys,
            &Lane::new(),
            self.settings.visibility,
            self.settings.count_memory,
        )
        .await
    }
}

/// Runs the reap script until a call leaves nothing to do now (at most
/// [`REAP_CALLS`] calls: each is bounded, so Redis serves others in between),
/// each call a run of `lane` (one call at a time on the queue): fred's resend
/// of a call answers what the call returned, and is counted.
pub(crate) async fn reap(
    core: &Arc<Core>,
    keys: &QueueKeys,
    lane: &Lane,
    grace: Duration,
    count_memory: Duration,
) -> Result<Reaped> {
    let script = &SCRIPTS.reap;
    let mut total = Reaped::default();
    for _ in 0..REAP_CALLS {
        let run = lane.next(keys);
        let value = script
            .run(
                core.conn()?,
                keys.destination(),
                SCRIPTS.reap.keys(keys).with(KeyRole::Lane, run.record()).build(),
                vec![
                    Value::from(crate::wire::time::saturating_ms(grace)),
                    Value::from(crate::wire::time::saturating_ms(count_memory)),
                    Value::from(REAP_BATCH),
                    Value::from(REAP_BYTES),
                    run.id(),
                ],
            )
            .await?;
        let [timed_out, unclaimed, more] = reply::tuple::<3>(value)?;
        total.timed_out += reply::int(&timed_out)? as u64;
        total.unclaimed += reply::int(&unclaimed)? as u64;
        if reply::int(&more)? == 0 {
            break;
        }
    }
    Ok(total)
}
