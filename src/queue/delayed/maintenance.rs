//! Operating a queue: expiry, format migration, an explicit transfer, status.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::request::{Lane, Request};
use crate::connection::script::SCRIPTS;
use crate::error::Result;
use crate::queue::status::{QueueStatus, QueueTotals};
use crate::transfer::run_transfer;
use crate::wire::format::{ElementId, Format};
use crate::wire::time;

use super::DelayedQueue;

/// What [`DelayedQueue::migrate`] did.
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// let report = queue.migrate(delayq::format::Format::Modern, 500).await?;
/// println!("{} rewritten, {} were modern already", report.converted, report.already);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct MigrationReport {
    /// Elements rewritten in the target format, over all passes.
    pub converted: u64,
    /// Elements that were already in the target format (first pass).
    pub already: u64,
    /// Elements neither format can unpack, left as they are (last pass).
    pub malformed: u64,
    /// Elements of the pending list missing from the timeout set, left as they
    /// are (last pass): no transfer would ever deliver them.
    pub not_scheduled: u64,
    /// Passes over the pending list.
    pub passes: u32,
}

/// What one [`DelayedQueue::transfer_now`] did.
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// let report = queue.transfer_now().await?;
/// println!("moved {}, next due {:?}", report.moved, report.next_due);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransferReport {
    /// Elements moved to the destination list.
    pub moved: u64,
    /// Malformed elements moved to the quarantine list.
    pub quarantined: u64,
    /// Due time of the earliest element still pending.
    pub next_due: Option<SystemTime>,
}

impl<T: 'static> DelayedQueue<T> {
    /// Makes the pending elements expire after `ttl` (both keys, as Java's
    /// `expire`); returns whether there was anything to expire.
    pub async fn expire(&self, ttl: Duration) -> Result<bool> {
        let at = time::due_after(time::now_ms(), ttl)?;
        self.run_expire(Some(at)).await
    }

    /// Makes the pending elements expire at `at`.
    pub async fn expire_at(&self, at: SystemTime) -> Result<bool> {
        self.run_expire(Some(time::to_ms(at))).await
    }

    /// Removes any expiry set by [`expire`](Self::expire); returns whether one was removed.
    pub async fn clear_expire(&self) -> Result<bool> {
        self.run_expire(None).await
    }

    /// Sets the expiry to `at` (ms since the epoch), or removes it (`None`).
    /// Keyed by a request: run again after a lost reply, a PERSIST would find
    /// no expiry left and an expiry in the past no keys, and answer false.
    async fn run_expire(&self, at: Option<i64>) -> Result<bool> {
        let args = match at {
            Some(at) => vec![Value::from("at"), Value::from(at)],
            None => vec![Value::from("persist")],
        };
        let value = self
            .handle
            .request(&SCRIPTS.expire, SCRIPTS.expire.keys(&self.handle.keys).build(), args)
            .await?;
        Ok(reply::int(&value)? == 1)
    }

    /// Rewrites every pending element in `format`, keeping its score and its
    /// place in the pending list, `batch` elements per atomic script.
    ///
    /// For a fleet moving across Redisson 3.21.1 (which changed the element
    /// layout and stalls older or newer Java transfers on the other layout):
    /// after the Java side is upgraded, migrate the queue to the format it
    /// reads. Elements offered meanwhile in the old format are picked up by
    /// further passes; it returns when a whole pass found nothing to convert.
    pub async fn migrate(&self, format: Format, batch: usize) -> Result<MigrationReport> {
        let batch = batch.clamp(1, 10_000);
        let mut report = MigrationReport::default();
        loop {
            let mut pass = MigrationReport {
                passes: 1,
                ..MigrationReport::default()
            };
            let mut start = 0i64;
            loop {
                let mut args = vec![
                    Value::from(format.as_str()),
                    Value::from(start),
                    Value::from(batch as i64),
                ];
                args.extend(
                    (0..batch).map(|_| Value::Bytes(Bytes::copy_from_slice(&ElementId::random(format).to_bytes()))),
                );
                let keys = SCRIPTS.migrate.keys(&self.handle.keys).build();
                // Keyed by a request: a resend after a lost reply returns
                // the first run's counts (run again, the elements it
                // converted would count as already in the format).
                let value = Request::new(self.name())
                    .remove(self.conn()?, self.handle.core.settling(), &SCRIPTS.migrate, keys, args)
                    .await?;
                let [next, converted, already, malformed, orphans] = reply::tuple::<5>(value)?;
                pass.converted += reply::int(&converted)? as u64;
                pass.already += reply::int(&already)? as u64;
                pass.malformed += reply::int(&malformed)? as u64;
                pass.not_scheduled += reply::int(&orphans)? as u64;
                let next = reply::int(&next)?;
                if next == start {
                    break;
                }
                start = next;
            }
            report = MigrationReport {
                converted: report.converted + pass.converted,
                already: if report.passes == 0 {
                    pass.already
                } else {
                    report.already
                },
                passes: report.passes + 1,
                ..pass
            };
            // Done when a pass converted nothing; elements offered in the old
            // format meanwhile make more passes, but never more than ten.
            if pass.converted == 0 || report.passes >= 10 {
                return Ok(report);
            }
        }
    }

    /// Runs the transfer once, now, without waiting for the scheduler: moves
    /// up to one batch of due elements to the destination.
    pub async fn transfer_now(&self) -> Result<TransferReport> {
        let settings = self.handle.core.transfer_settings();
        // A lane of its own: a resend answers what the first run moved.
        let run = Lane::new().next(&self.handle.keys);
        let outcome = run_transfer(self.conn()?, &self.handle.keys, &run, settings.clock, settings.batch, 0).await?;
        if outcome.quarantined > 0 {
            self.note_quarantined(outcome.quarantined as i64, "transfer");
        }
        Ok(TransferReport {
            moved: outcome.moved,
            quarantined: outcome.quarantined,
            next_due: outcome.head_due_ms.map(time::from_ms),
        })
    }

    /// How many elements the queue holds where (pending, ready, in flight,
    /// dead letters, quarantined) and when the next one is due, in one
    /// atomic read. Fails with [`Error::WrongType`](crate::Error::WrongType) when a key of the name
    /// holds something else than a queue's.
    pub async fn status(&self) -> Result<QueueStatus> {
        let keys = SCRIPTS.status.keys(&self.handle.keys).build();
        let value = self.run(&SCRIPTS.status, keys, vec![]).await?;
        let [pending, ready, in_flight, dead, quarantined, head, exists, paused, ids, oldest_due, paused_at, totals, priority_ready, priority_pending, priority_head, concurrency, lapsed, grouped_ready, grouped_pending] =
            reply::tuple::<19>(value)?;
        // A field never counted is nil; one a person set to anything else
        // than a count reads as none rather than failing the whole status.
        let mut fields = [0u64; 9];
        for (field, value) in fields.iter_mut().zip(reply::array(totals)?) {
            *field = reply::opt_text(value)
                .ok()
                .flatten()
                .and_then(|t| t.parse().ok())
                .unwrap_or(0);
        }
        let next_due = [reply::opt_score(head)?, reply::opt_score(priority_head)?]
            .into_iter()
            .flatten()
            .min()
            .map(time::from_ms);
        let (priority_ready, priority_pending) = (
            reply::int(&priority_ready)? as u64,
            reply::int(&priority_pending)? as u64,
        );
        let (grouped_ready, grouped_pending) =
            (reply::int(&grouped_ready)? as u64, reply::int(&grouped_pending)? as u64);
        // A flag set by hand may hold anything: paused, since unknown.
        let paused_since = reply::opt_score(paused_at).ok().flatten().map(time::from_ms);
        Ok(QueueStatus {
            pending: reply::int(&pending)? as u64 + priority_pending + grouped_pending,
            ready: reply::int(&ready)? as u64 + priority_ready + grouped_ready,
            priority_pending,
            priority_ready,
            grouped_pending,
            grouped_ready,
            in_flight: reply::int(&in_flight)? as u64,
            dead_letters: reply::int(&dead)? as u64,
            quarantined: reply::int(&quarantined)? as u64,
            next_due,
            exists: reply::int(&exists)? > 0,
            paused: reply::int(&paused)? == 1,
            ids: reply::int(&ids)? as u64,
            oldest_ready_due: reply::opt_score(oldest_due)?.map(time::from_ms),
            paused_since,
            totals: QueueTotals::from_fields(fields),
            // One set by hand that does not read is none here; `limits()`
            // says what is wrong with it.
            concurrency_limit: reply::opt_text(concurrency).ok().flatten().and_then(|t| t.parse().ok()),
            lapsed: reply::int(&lapsed)? as u64,
        })
    }
}
