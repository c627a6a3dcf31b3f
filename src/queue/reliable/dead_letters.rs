//! The dead-letter list: reading it and requeueing from it.

use bytes::Bytes;
use fred::interfaces::{ClientLike, ListInterface};
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::{Resend, SCRIPTS};
use crate::error::{Error, Result};
use crate::wire::codec;

use super::ReliableQueue;

impl<T: 'static> ReliableQueue<T> {
    /// Values in the dead-letter list.
    pub async fn dead_letter_len(&self) -> Result<usize> {
        let n: i64 = self
            .core
            .conn()?
            .llen(self.keys.dead_letter())
            .await
            .map_err(|e| Error::from_command(e, self.keys.dead_letter()))?;
        Ok(n as usize)
    }

    /// The dead-lettered values, oldest first, without removing them.
    pub async fn dead_letters(&self) -> Result<Vec<T>> {
        let raw: Vec<Bytes> = self
            .core
            .conn()?
            .lrange(self.keys.dead_letter(), 0, -1)
            .await
            .map_err(|e| Error::from_command(e, self.keys.dead_letter()))?;
        Ok(codec::decode_all(&*self.codec, raw)?)
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
            .core
            .conn()?
            .lrange(self.keys.dead_letter(), first, last)
            .await
            .map_err(|e| Error::from_command(e, self.keys.dead_letter()))?;
        Ok(codec::decode_all(&*self.codec, raw)?)
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
        let removed: Vec<Bytes> = self
            .core
            .conn()?
            .with_options(&Resend::Once.options())
            .lpop(self.keys.dead_letter(), Some(max))
            .await
            .map_err(|e| Error::from_command(e, self.keys.dead_letter()))?;
        Ok(removed.len())
    }

    /// Moves up to `max` dead-lettered values back to the queue's tail, to
    /// start over at delivery count 1; returns how many moved. At most 10,000 per call
    /// (one script run); `0` moves nothing.
    pub async fn requeue_dead_letters(&self, max: usize) -> Result<usize> {
        let keys = vec![self.keys.dead_letter().into(), self.name().into()];
        if max == 0 {
            return Ok(0);
        }
        let max = max.min(crate::queue::MAX_BATCH) as i64;
        let value = crate::connection::request::Request::new(self.name())
            .apply(
                self.core.conn()?,
                self.core.settling(),
                &SCRIPTS.requeue_dead_letters,
                keys,
                vec![Value::from(max)],
                self.name(),
            )
            .await?;
        Ok(reply::int(&value)? as usize)
    }
}
