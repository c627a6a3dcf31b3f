//! Reads that change nothing: length, membership, the pending elements.

use std::borrow::Borrow;
use std::time::SystemTime;

use bytes::Bytes;
use fred::interfaces::{ListInterface, SortedSetsInterface};
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{CommandResult, Result};
use crate::wire::codec::{self};

use crate::wire::time;

use super::DelayedQueue;

impl<T: 'static> DelayedQueue<T> {
    /// How many pending elements are due by each of `times` (scores up to
    /// and including it), read in one pipeline of `ZCOUNT`s, O(log n) each:
    /// differences of neighbours give a histogram of what falls due when.
    ///
    /// ```no_run
    /// # use std::time::{Duration, SystemTime};
    /// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// let now = SystemTime::now();
    /// let by = queue.count_due_by(&[now, now + Duration::from_secs(3600)]).await?;
    /// println!("{} overdue, {} due within the hour", by[0], by[1] - by[0]);
    /// # Ok(()) }
    /// ```
    pub async fn count_due_by(&self, times: &[SystemTime]) -> Result<Vec<u64>> {
        if times.is_empty() {
            return Ok(Vec::new());
        }
        let pipeline = self.handle.core.conn()?.pipeline();
        for at in times {
            let _: () = pipeline
                .zcount(self.handle.keys.timeout(), f64::NEG_INFINITY, time::to_ms(*at) as f64)
                .await
                .on_key(self.handle.keys.timeout())?;
        }
        let counts: Vec<i64> = pipeline.all().await.on_key(self.handle.keys.timeout())?;
        Ok(counts.into_iter().map(|n| n.max(0) as u64).collect())
    }

    /// Number of pending elements (`LLEN` of the pending list, as Java's `size()`).
    pub async fn len(&self) -> Result<usize> {
        let n: i64 = self
            .conn()?
            .llen(self.handle.keys.pending())
            .await
            .on_key(self.name())?;
        Ok(n as usize)
    }

    /// Whether nothing is pending.
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.len().await? == 0)
    }

    /// Whether a pending element's payload equals `value` encoded.
    pub async fn contains(&self, value: &T) -> Result<bool> {
        let payload = codec::encode(&*self.handle.codec, value)?;
        Ok(self.count_found(vec![payload]).await? == 1)
    }

    /// Whether every value is pending. An empty iterator is trivially contained.
    pub async fn contains_all<I, B>(&self, values: I) -> Result<bool>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        let mut payloads = self.handle.encode_all(values)?;
        payloads.sort();
        payloads.dedup();
        if payloads.is_empty() {
            return Ok(true);
        }
        let wanted = payloads.len();
        Ok(self.count_found(payloads).await? == wanted)
    }

    pub(super) async fn count_found(&self, payloads: Vec<Bytes>) -> Result<usize> {
        let value = self
            .run(
                &SCRIPTS.contains,
                SCRIPTS.contains.keys(&self.handle.keys).build(),
                payloads.into_iter().map(Value::Bytes).collect(),
            )
            .await?;
        Ok(reply::int(&value)? as usize)
    }

    /// Every pending value, in offer order (Java's `readAll()`).
    pub async fn read_all(&self) -> Result<Vec<T>> {
        let value = self
            .run(
                &SCRIPTS.read_all,
                SCRIPTS.read_all.keys(&self.handle.keys).build(),
                vec![],
            )
            .await?;
        let [payloads, malformed] = reply::tuple::<2>(value)?;
        self.warn_malformed(reply::int(&malformed)?, "read_all");
        Ok(codec::decode_all(&*self.handle.codec, reply::bytes_array(payloads)?)?)
    }

    /// The first pending value in offer order, without removing it (Java's `peek()`).
    pub async fn peek(&self) -> Result<Option<T>> {
        let value = self
            .run(&SCRIPTS.peek, SCRIPTS.peek.keys(&self.handle.keys).build(), vec![])
            .await?;
        let [payload, malformed] = reply::tuple::<2>(value)?;
        self.warn_malformed(reply::int(&malformed)?, "peek");
        match reply::opt_bytes(payload)? {
            Some(raw) => Ok(Some(codec::decode(&*self.handle.codec, raw)?)),
            None => Ok(None),
        }
    }
}
