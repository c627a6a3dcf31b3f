//! A queue's worker rate limit, shared by every worker process of the queue:
//! one GCRA limiter in Redis (`delayq_rate:{N}`, `lua/rate_limit.lua`) on the
//! Redis server's clock.
//!
//! A handler slot takes a permit before it takes a value, so no delivery
//! waits out its visibility timeout while rate limited. A permit whose take
//! finds nothing within [`HOLD`] is refunded. Within one process the slots
//! take their turn (a local lock held from asking for the permit until the
//! take returns): waiting slots do not stampede Redis, and after an idle
//! spell at most one permit per process was waiting for a value; that
//! permit is charged again when its value starts (`restamp`), so values
//! arriving after a quiet spell do not start in a burst.

use std::sync::Arc;
use std::time::Duration;

use fred::types::Value;
use tokio::sync::Mutex;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::queue::Core;
use crate::telemetry;

/// How long a slot holding a permit waits for a value before it refunds
/// the permit and asks again.
pub(crate) const HOLD: Duration = Duration::from_secs(1);

/// Time a late permit may catch up on (at most one interval): the waiting
/// slot wakes a little after its turn (timer granularity, a round trip, a
/// race with other processes), and without this slack every such delay
/// would be lost for good and the achieved rate would sit below the limit.
const SLACK_US: f64 = 10_000.0;

/// The limit a worker was configured with: `limit` values per `per`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RateLimit {
    pub limit: u32,
    pub per: Duration,
    pub burst: u32,
}

impl RateLimit {
    /// µs between permits, and the burst tolerance in µs (the burst, plus
    /// the slack for late askers). In any window of length t at most
    /// `t / interval + burst + 1` permits are granted.
    fn gcra(&self) -> (i64, i64) {
        let interval = (self.per.as_micros() as f64 / f64::from(self.limit.max(1))).max(1.0);
        let tolerance = interval * f64::from(self.burst.max(1) - 1) + interval.min(SLACK_US);
        (interval.round() as i64, tolerance.round() as i64)
    }
}

/// One worker's handle on its queue's limiter.
pub(crate) struct Limiter {
    core: Arc<Core>,
    queue: String,
    key: String,
    interval_us: i64,
    tolerance_us: i64,
    asking: Mutex<()>,
}

impl Limiter {
    pub fn new(core: Arc<Core>, queue: &str, key: String, limit: RateLimit) -> Limiter {
        let (interval_us, tolerance_us) = limit.gcra();
        Limiter {
            core,
            queue: queue.to_owned(),
            key,
            interval_us,
            tolerance_us,
            asking: Mutex::new(()),
        }
    }

    async fn call(&self, op: &'static str) -> Result<i64> {
        let script = &SCRIPTS.rate_limit;
        let args = vec![
            Value::from(self.interval_us),
            Value::from(self.tolerance_us),
            Value::from(op),
        ];
        let reply = script
            .run(self.core.conn()?, vec![self.key.as_str().into()], args)
            .await
            .map_err(|e| Error::from_script(e, script.name, &self.queue))?;
        reply::int(&reply)
    }

    /// This process's turn to take a permit and a value; hold it until the take returns.
    pub async fn turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.asking.lock().await
    }

    /// Waits for a permit (call during this process's [`turn`](Self::turn)).
    pub async fn acquire(&self) -> Result<()> {
        let mut waited = Duration::ZERO;
        loop {
            let wait_us = self.call("take").await?;
            if wait_us <= 0 {
                if !waited.is_zero() {
                    telemetry::rate_limit_waited(&self.queue, waited);
                }
                return Ok(());
            }
            let wait = Duration::from_micros(wait_us as u64);
            tokio::time::sleep(wait).await;
            waited += wait;
        }
    }

    /// Gives back a permit that found nothing to take.
    pub async fn refund(&self) {
        if let Err(error) = self.call("refund").await {
            tracing::debug!(queue = self.queue, %error, "could not refund a rate-limit permit");
        }
    }

    /// Whether a permit held for `held` waiting for a value is charged
    /// again as its value starts: held over two intervals and 100 ms (a
    /// quick take, even on a slow machine, keeps its permit as it is).
    pub fn is_stale(&self, held: Duration) -> bool {
        held.as_micros() as i64 > (2 * self.interval_us).max(100_000)
    }

    /// Charges a permit that waited long for its value again, now (see `lua/rate_limit.lua`).
    pub async fn restamp(&self) {
        if let Err(error) = self.call("restamp").await {
            tracing::debug!(queue = self.queue, %error, "could not restamp a rate-limit permit");
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
        assert_eq!(fifty.gcra(), (20_000, 10_000));
        let bursty = RateLimit { burst: 10, ..fifty };
        assert_eq!(bursty.gcra(), (20_000, 190_000));
        let fast = RateLimit {
            limit: 1000,
            per: Duration::from_secs(1),
            burst: 1,
        };
        assert_eq!(fast.gcra(), (1_000, 1_000));
    }
}
