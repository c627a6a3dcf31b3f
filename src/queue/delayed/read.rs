//! Reads that change nothing: length, membership, the pending elements.

use std::borrow::Borrow;
use std::time::SystemTime;

use bytes::Bytes;
use fred::interfaces::{ListInterface, SortedSetsInterface};
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::wire::codec::{self};
use crate::wire::format::{self, Format};
use crate::wire::time;

use super::DelayedQueue;

/// One pending element as Redis holds it: its packed bytes and due time
/// (see [`DelayedQueue::pending_page`]).
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// for element in queue.pending_page(0, 20).await? {
///     let text = element.payload().map(String::from_utf8_lossy);
///     println!("{:?} {:?} {:?}", element.due, element.format(), text);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PendingElement {
    /// When it falls due (its score in the timeout set).
    pub due: SystemTime,
    /// The packed element, as stored (Redisson's layout around the payload).
    pub raw: Bytes,
}

impl PendingElement {
    /// The layout it is packed in, or `None` if no format unpacks it.
    pub fn format(&self) -> Option<Format> {
        format::unpack(&self.raw).ok().map(|element| element.format())
    }

    /// The codec's bytes inside the packing, or `None` if no format unpacks it.
    pub fn payload(&self) -> Option<&[u8]> {
        format::unpack(&self.raw).ok().map(|element| element.payload)
    }
}

impl<T: 'static> DelayedQueue<T> {
    /// Up to `limit` pending elements (at most 1,000) in due order, starting
    /// at the `offset`-th: one `ZRANGE` by index (O(log n + limit)), so any
    /// page of a million-element queue costs the same. Nothing is decoded:
    /// the caller decides what to do with bytes its codec cannot read.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// let second_page = queue.pending_page(50, 50).await?;
    /// # Ok(()) }
    /// ```
    pub async fn pending_page(&self, offset: usize, limit: usize) -> Result<Vec<PendingElement>> {
        let limit = limit.min(1_000);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let first = i64::try_from(offset).unwrap_or(i64::MAX);
        let last = first.saturating_add(limit as i64 - 1);
        let flat: Vec<Value> = self
            .core
            .conn()?
            .zrange(self.keys.timeout(), first, last, None, false, None, true)
            .await
            .map_err(|e| Error::from_command(e, self.keys.timeout()))?;
        // RESP2 answers member, score, member, score...; RESP3 [member, score] pairs.
        let mut items = flat.into_iter().flat_map(|v| match v {
            Value::Array(pair) => pair,
            other => vec![other],
        });
        let mut page = Vec::with_capacity(limit);
        while let (Some(member), Some(score)) = (items.next(), items.next()) {
            let raw = member.as_bytes().map(Bytes::copy_from_slice).unwrap_or_default();
            let due = time::from_ms(score.as_f64().unwrap_or_default() as i64);
            page.push(PendingElement { due, raw });
        }
        Ok(page)
    }

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
        let pipeline = self.core.conn()?.pipeline();
        for at in times {
            let _: () = pipeline
                .zcount(self.keys.timeout(), f64::NEG_INFINITY, time::to_ms(*at) as f64)
                .await
                .map_err(|e| Error::from_command(e, self.keys.timeout()))?;
        }
        let counts: Vec<i64> = pipeline
            .all()
            .await
            .map_err(|e| Error::from_command(e, self.keys.timeout()))?;
        Ok(counts.into_iter().map(|n| n.max(0) as u64).collect())
    }

    /// Number of pending elements (`LLEN` of the pending list, as Java's `size()`).
    pub async fn len(&self) -> Result<usize> {
        let n: i64 = self
            .core
            .conn()?
            .llen(self.keys.pending())
            .await
            .map_err(|e| self.command_error(e))?;
        Ok(n as usize)
    }

    /// Whether nothing is pending.
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.len().await? == 0)
    }

    /// Whether a pending element's payload equals `value` encoded.
    pub async fn contains(&self, value: &T) -> Result<bool> {
        let payload = codec::encode(&*self.codec, value)?;
        Ok(self.count_found(vec![payload]).await? == 1)
    }

    /// Whether every value is pending. An empty iterator is trivially contained.
    pub async fn contains_all<I, B>(&self, values: I) -> Result<bool>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        let mut payloads = self.encode_all(values)?;
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
                vec![self.keys.pending().into()],
                payloads.into_iter().map(Value::Bytes).collect(),
            )
            .await?;
        Ok(reply::int(&value)? as usize)
    }

    /// Every pending value, in offer order (Java's `readAll()`).
    pub async fn read_all(&self) -> Result<Vec<T>> {
        let value = self
            .run(&SCRIPTS.read_all, vec![self.keys.pending().into()], vec![])
            .await?;
        let [payloads, malformed] = reply::tuple::<2>(value)?;
        self.warn_malformed(reply::int(&malformed)?, "read_all");
        Ok(codec::decode_all(&*self.codec, reply::bytes_array(payloads)?)?)
    }

    /// The first pending value in offer order, without removing it (Java's `peek()`).
    pub async fn peek(&self) -> Result<Option<T>> {
        let value = self
            .run(&SCRIPTS.peek, vec![self.keys.pending().into()], vec![])
            .await?;
        let [payload, malformed] = reply::tuple::<2>(value)?;
        self.warn_malformed(reply::int(&malformed)?, "peek");
        match reply::opt_bytes(payload)? {
            Some(raw) => Ok(Some(codec::decode(&*self.codec, raw)?)),
            None => Ok(None),
        }
    }
}
