//! Offers: single, at a time, and in bulk, with the due time on either clock.

use std::borrow::Borrow;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::transfer::Clock;
use crate::wire::format::{self};
use crate::wire::time;

use super::DelayedQueue;

/// Offers within one `offer_all` call sent per script run.
const OFFER_CHUNK: usize = 1_000;

/// When an offered element is due.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Due {
    /// At this time (ms since the epoch, the producer's clock, as Java).
    At(i64),
    /// This many ms after "now" on the Redis server's clock ([`Clock::Server`]).
    After(i64),
}

impl Due {
    /// The scripts' spelling: ms since the epoch, or "+ms" on the server's clock.
    pub(super) fn arg(self) -> Value {
        match self {
            Due::At(ms) => Value::from(ms),
            Due::After(ms) => Value::from(format!("+{ms}")),
        }
    }
}

impl<T: 'static> DelayedQueue<T> {
    /// Offers `value`, due `delay` from now (as Java's `offer(value, delay,
    /// unit)`: on this host's clock, or the Redis server's under
    /// [`Clock::Server`]).
    ///
    /// Fails with [`Error::InvalidDelay`] when the due time would pass the
    /// largest exact score (2^53 - 1 ms since the epoch), and with
    /// [`Error::PayloadTooLarge`] over the client's payload limit.
    pub async fn offer(&self, value: &T, delay: Duration) -> Result<()> {
        let due = self.due_after(delay)?;
        self.offer_encoded(vec![(due, self.encode(value)?)]).await
    }

    /// Offers `value`, due at `at`. A time in the past is a negative delay and
    /// fails with [`Error::InvalidDelay`], as a negative delay does in Java.
    pub async fn offer_at(&self, value: &T, at: SystemTime) -> Result<()> {
        let due = Due::At(time::due_at(time::now_ms(), at)?);
        self.offer_encoded(vec![(due, self.encode(value)?)]).await
    }

    /// Offers many values, each with its own delay, in one round trip per
    /// 1,000 values. Each value is added atomically with the others of its
    /// round trip; all delays and payloads are checked before anything is sent.
    pub async fn offer_all<I, B>(&self, items: I) -> Result<()>
    where
        I: IntoIterator<Item = (B, Duration)>,
        B: Borrow<T>,
    {
        let mut encoded = Vec::new();
        for (value, delay) in items {
            encoded.push((self.due_after(delay)?, self.encode(value.borrow())?));
        }
        self.offer_encoded(encoded).await
    }

    /// The due time `delay` from now, on the clock the client is set to.
    pub(super) fn due_after(&self, delay: Duration) -> Result<Due> {
        // Checked on this host's clock whatever the setting: it only guards the range.
        let local = time::due_after(time::now_ms(), delay)?;
        Ok(match self.core.transfer.clock {
            Clock::Local => Due::At(local),
            Clock::Server => Due::After(delay.as_millis() as i64),
        })
    }

    /// Offers encoded payloads.
    pub(crate) async fn offer_encoded(&self, items: Vec<(Due, Bytes)>) -> Result<()> {
        for chunk in items.chunks(OFFER_CHUNK) {
            let mut pending: Vec<(Due, &Bytes)> = chunk.iter().map(|(due, payload)| (*due, payload)).collect();
            // A collision of random ids is astronomically rare; re-pack and resend just those.
            for _ in 0..3 {
                if pending.is_empty() {
                    break;
                }
                let mut args = Vec::with_capacity(pending.len() * 2);
                for (due, payload) in &pending {
                    args.push(due.arg());
                    args.push(Value::Bytes(format::pack(self.format, payload)));
                }
                let collided = self.run_offer(args).await?;
                pending = collided
                    .into_iter()
                    .filter_map(|i| pending.get(i.wrapping_sub(1)).copied())
                    .collect();
            }
            if !pending.is_empty() {
                return Err(Error::Protocol("offer kept colliding with pending elements".into()));
            }
        }
        Ok(())
    }

    pub(super) async fn run_offer(&self, args: Vec<Value>) -> Result<Vec<usize>> {
        let script = &SCRIPTS.offer;
        // One attempt: a retried offer could be applied twice.
        let conn = self.conn()?; // sent once: the script is declared `Resend::Once`
        let keys = vec![
            self.keys.timeout().into(),
            self.keys.pending().into(),
            self.keys.channel().into(),
        ];
        let value = script
            .run(conn, keys, args)
            .await
            .map_err(|e| self.script_error(script, e))?;
        reply::array(value)?
            .iter()
            .map(|v| reply::int(v).map(|i| i as usize))
            .collect()
    }
}
