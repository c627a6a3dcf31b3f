//! The dead-letter list: reading it and requeueing from it.

use bytes::Bytes;
use fred::interfaces::ListInterface;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{CommandResult, Error, Result};
use crate::wire::codec;

use super::ReliableQueue;

impl<T: 'static> ReliableQueue<T> {
    /// Values in the dead-letter list.
    pub async fn dead_letter_len(&self) -> Result<usize> {
        let n: i64 = self
            .handle
            .core
            .conn()?
            .llen(self.handle.keys.dead_letter())
            .await
            .on_key(self.handle.keys.dead_letter())?;
        Ok(n as usize)
    }

    /// The dead-lettered values, oldest first, without removing them.
    pub async fn dead_letters(&self) -> Result<Vec<T>> {
        let raw: Vec<Bytes> = self
            .handle
            .core
            .conn()?
            .lrange(self.handle.keys.dead_letter(), 0, -1)
            .await
            .on_key(self.handle.keys.dead_letter())?;
        Ok(codec::decode_all(&*self.handle.codec, raw)?)
    }

    /// Up to `count` dead-lettered values from index `start` (0 is the
    /// oldest), without removing any: one `LRANGE`, for paging a long list.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let oldest = queue.dead_letters_range(0, 50).await?;
    /// # Ok(()) }
    /// ```
    pub async fn dead_letters_range(&self, start: usize, count: usize) -> Result<Vec<T>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let first = i64::try_from(start).unwrap_or(i64::MAX);
        let last = first.saturating_add(i64::try_from(count - 1).unwrap_or(i64::MAX));
        let raw: Vec<Bytes> = self
            .handle
            .core
            .conn()?
            .lrange(self.handle.keys.dead_letter(), first, last)
            .await
            .on_key(self.handle.keys.dead_letter())?;
        Ok(codec::decode_all(&*self.handle.codec, raw)?)
    }

    /// Deletes up to `max` dead-lettered values, oldest first (one `LPOP`
    /// with a count, at most 10,000; `0` deletes nothing), and returns how
    /// many it deleted. Sent once: a lost reply is an error, never a second
    /// deletion.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// while queue.remove_dead_letters(1_000).await? > 0 {}
    /// # Ok(()) }
    /// ```
    pub async fn remove_dead_letters(&self, max: usize) -> Result<usize> {
        if max == 0 {
            return Ok(0);
        }
        let max = max.min(crate::queue::MAX_BATCH);
        let script = &SCRIPTS.remove_dead_letters;
        let keys = vec![
            self.handle.keys.dead_letter().into(),
            self.handle.keys.dead_reasons().into(),
        ];
        let value = script
            .run(
                self.handle.core.conn()?,
                self.name(),
                keys,
                vec![Value::from(max as i64)],
            )
            .await?;
        Ok(reply::int(&value)? as usize)
    }

    /// Moves up to `max` dead-lettered values back to the queue's tail, to
    /// start over at delivery count 1; returns how many moved. At most 10,000
    /// and about 1 MiB of payload per call (one script run, kept short: call
    /// again for the rest); `0` moves nothing.
    pub async fn requeue_dead_letters(&self, max: usize) -> Result<usize> {
        let keys = vec![
            self.handle.keys.dead_letter().into(),
            self.name().into(),
            self.handle.keys.dead_reasons().into(),
        ];
        if max == 0 {
            return Ok(0);
        }
        let max = max.min(crate::queue::MAX_BATCH) as i64;
        let value = crate::connection::request::Request::new(self.name())
            .apply(
                self.handle.core.conn()?,
                self.handle.core.settling(),
                &SCRIPTS.requeue_dead_letters,
                keys,
                vec![Value::from(max)],
            )
            .await?;
        Ok(reply::int(&value)? as usize)
    }

    /// Up to `count` dead letters from index `start` (0 is the oldest), each
    /// with why it is one: the reason recorded when it was dead-lettered (a
    /// worker's last error, too many deliveries, undecodable, the consumer's
    /// `dead_letter()`) and when, or `None` for values dead-lettered before
    /// delayq recorded reasons (or by another writer). Reads only.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// for dead in queue.dead_letter_page(0, 50).await? {
    ///     println!("{:?}: {}", dead.value.as_ref().ok(), dead.reason.as_deref().unwrap_or("not recorded"));
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn dead_letter_page(&self, start: usize, count: usize) -> Result<Vec<DeadLetter<T>>> {
        let count = count.min(crate::queue::MAX_BATCH);
        if count == 0 {
            return Ok(Vec::new());
        }
        let keys = vec![
            self.handle.keys.dead_letter().into(),
            self.handle.keys.dead_reasons().into(),
        ];
        let args = vec![Value::from(start as i64), Value::from(count as i64)];
        let script = &SCRIPTS.dead_letter_page;
        let value = script.run(self.handle.core.conn()?, self.name(), keys, args).await?;
        let flat = reply::array(value)?;
        let mut page = Vec::with_capacity(flat.len() / 2);
        for pair in flat.chunks(2) {
            let [raw, reason] = pair else {
                return Err(Error::Protocol("dead_letter_page returned a partial entry".into()));
            };
            let raw = reply::bytes(raw.clone())?;
            let (at, reason) = match reply::opt_text(reason.clone())? {
                Some(text) => match text.split_once(' ') {
                    Some((ms, why)) => (
                        ms.parse::<i64>().ok().map(crate::wire::time::from_ms),
                        Some(why.to_owned()),
                    ),
                    None => (None, Some(text)),
                },
                None => (None, None),
            };
            page.push(DeadLetter {
                value: codec::decode(&*self.handle.codec, raw.clone()),
                raw,
                reason,
                at,
            });
        }
        Ok(page)
    }
}

/// One dead letter as [`ReliableQueue::dead_letter_page`] reads it.
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// let oldest = queue.dead_letter_page(0, 1).await?;
/// if let Some(dead) = oldest.first() {
///     println!("dead since {:?} because {:?}", dead.at, dead.reason);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct DeadLetter<T> {
    /// The value, or why the queue's codec cannot decode it (bytes kept).
    pub value: std::result::Result<T, crate::error::DecodeError>,
    /// The value's bytes.
    pub raw: Bytes,
    /// Why it was dead-lettered, when recorded.
    pub reason: Option<String>,
    /// When it was dead-lettered (the Redis server's clock), when recorded.
    pub at: Option<std::time::SystemTime>,
}
