//! A queue's worker rate limit, shared by every worker process of the queue:
//! one GCRA limiter in Redis (`delayq_rate:{N}`, `lua/rate_limit.lua`) on the
//! Redis server's clock.
//!
//! A permit is asked for only once a value is ready, and its value is taken
//! at once: a handler starts one take (a move and a claim) after its permit.
//! So no permit is held while the queue is empty (one held through an idle
//! spell used to start its value with the others' when values came, over
//! the limit), and no delivery waits out its visibility timeout while rate
//! limited: a value waits in the queue, where any consumer may take it.
//! Within one process the slots take their turn (a local lock held from the
//! wait for a ready value until the take returns), so waiting slots neither
//! stampede Redis nor lease a blocking connection each.

use std::sync::Arc;
use std::time::Duration;

use fred::types::Value;
use tokio::sync::Mutex;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::queue::reliable::{Delivery, Ready, ReliableQueue};
use crate::queue::Core;
use crate::telemetry;
use crate::wire::keys::QueueKeys;

/// Most time a late permit may catch up on (at most one interval): the
/// waiting slot wakes a little after its turn (timer granularity, a round
/// trip, a race with other processes), and without it every such delay
/// would be lost for good and the achieved rate would sit below the limit.
const CATCH_UP_US: f64 = 10_000.0;

/// How often a slot asks again while the queue is paused.
const PAUSED_RECHECK: Duration = Duration::from_secs(1);

/// The limit a worker was configured with: `limit` values per `per`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RateLimit {
    pub limit: u32,
    pub per: Duration,
    pub burst: u32,
}

impl RateLimit {
    /// µs between permits, the burst tolerance and the catch-up (see
    /// `lua/rate_limit.lua`): in any window of length t at most
    /// `burst + ⌊(t + catch-up) / interval⌋` permits are granted.
    fn gcra(&self) -> (i64, i64, i64) {
        let interval = (self.per.as_micros() as f64 / f64::from(self.limit.max(1))).max(1.0);
        let tolerance = interval * f64::from(self.burst.max(1) - 1);
        (
            interval.round() as i64,
            tolerance.round() as i64,
            interval.min(CATCH_UP_US).round() as i64,
        )
    }
}

/// Pause of a rate-limited take that found the concurrency limit full,
/// before the next: room made elsewhere is only seen by asking.
const FULL_PAUSE: Duration = Duration::from_millis(50);

/// A permit granted: the limiter's state before and after it, so that a
/// refund restores the state exactly (see `lua/rate_limit.lua`).
pub(crate) struct Permit {
    before: Value,
    after: Value,
}

/// What the limiter answered a take.
enum Answer {
    Granted(Permit),
    Wait(Duration),
    Paused,
}

/// One worker's handle on its queue's limiter.
pub(crate) struct Limiter {
    core: Arc<Core>,
    queue: String,
    interval_us: i64,
    tolerance_us: i64,
    catch_up_us: i64,
    /// This process's turn to wait for a value, a permit and the take; holds
    /// whether its last take found a value (then the next one does not wait
    /// for a ready value first: one is likely there).
    turn: Mutex<bool>,
}

impl Limiter {
    pub(super) fn new(core: Arc<Core>, queue: &str, limit: RateLimit) -> Limiter {
        let (interval_us, tolerance_us, catch_up_us) = limit.gcra();
        Limiter {
            core,
            queue: queue.to_owned(),
            interval_us,
            tolerance_us,
            catch_up_us,
            turn: Mutex::new(false),
        }
    }

    /// A value taken with a permit, in this process's turn: waits for a
    /// ready value, then for a permit, then takes without waiting. `None`
    /// when the value was gone by then (another consumer took it) or the
    /// queue was paused: the permit is given back.
    ///
    /// Cancel safe: the take gives back what it moved; a permit granted to
    /// a take dropped before its value came is spent.
    pub(super) async fn take<T: Send + 'static>(&self, queue: &ReliableQueue<T>) -> Result<Option<Delivery<T>>> {
        let mut found = self.turn.lock().await;
        if !std::mem::take(&mut *found) {
            // Waits for a value without taking one.
            queue.wait_ready(None).await?;
        }
        let permit = self.acquire(queue.keys()).await?;
        match queue.take_ready().await? {
            Ready::Taken(delivery) => {
                *found = true;
                Ok(Some(delivery))
            }
            Ready::Nothing | Ready::Paused => {
                self.refund(queue.keys(), permit).await;
                Ok(None)
            }
            Ready::Full => {
                // The concurrency limit had no room: the permit goes back,
                // and the next take waits a little first (a value is ready,
                // so its wait for one ends at once).
                self.refund(queue.keys(), permit).await;
                tokio::time::sleep(FULL_PAUSE).await;
                Ok(None)
            }
        }
    }

    async fn call(&self, keys: &QueueKeys, args: Vec<Value>) -> Result<Vec<Value>> {
        let script = &SCRIPTS.rate_limit;
        let mut argv = vec![
            Value::from(self.interval_us),
            Value::from(self.tolerance_us),
            Value::from(self.catch_up_us),
        ];
        argv.extend(args);
        let keys = script.keys(keys).build();
        let reply = script.run(self.core.conn()?, &self.queue, keys, argv).await?;
        reply::array(reply)
    }

    async fn ask(&self, keys: &QueueKeys) -> Result<Answer> {
        let reply = self.call(keys, vec![Value::from("take")]).await?;
        let mut reply = reply.into_iter();
        let status = reply.next().map(|v| reply::int(&v)).transpose()?;
        match (status, reply.next(), reply.next()) {
            (Some(0), Some(before), Some(after)) => Ok(Answer::Granted(Permit { before, after })),
            (Some(1), Some(wait), None) => Ok(Answer::Wait(Duration::from_micros(reply::int(&wait)?.max(1) as u64))),
            (Some(2), None, None) => Ok(Answer::Paused),
            _ => Err(Error::Protocol(format!(
                "{} answered {status:?}",
                SCRIPTS.rate_limit.name
            ))),
        }
    }

    /// Waits for a permit (asking again while the queue is paused).
    async fn acquire(&self, keys: &QueueKeys) -> Result<Permit> {
        let mut waited = Duration::ZERO;
        loop {
            match self.ask(keys).await? {
                Answer::Granted(permit) => {
                    if !waited.is_zero() {
                        telemetry::rate_limit_waited(&self.queue, waited);
                    }
                    return Ok(permit);
                }
                Answer::Wait(wait) => {
                    tokio::time::sleep(wait).await;
                    waited += wait;
                }
                Answer::Paused => tokio::time::sleep(PAUSED_RECHECK).await,
            }
        }
    }

    /// Gives back a permit that found nothing to take. Sent once: a refund
    /// applied twice could give back another's permit (a lost reply spends
    /// the permit instead).
    async fn refund(&self, keys: &QueueKeys, permit: Permit) {
        let args = vec![Value::from("refund"), permit.before, permit.after];
        if let Err(error) = self.call(keys, args).await {
            tracing::debug!(queue = self.queue, %error, "could not refund a rate-limit permit");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gcra_parameters() {
        let fifty = RateLimit {
            limit: 50,
            per: Duration::from_secs(1),
            burst: 1,
        };
        assert_eq!(fifty.gcra(), (20_000, 0, 10_000));
        let bursty = RateLimit { burst: 10, ..fifty };
        assert_eq!(bursty.gcra(), (20_000, 180_000, 10_000));
        let fast = RateLimit {
            limit: 1000,
            per: Duration::from_secs(1),
            burst: 1,
        };
        assert_eq!(fast.gcra(), (1_000, 0, 1_000));
    }
}
