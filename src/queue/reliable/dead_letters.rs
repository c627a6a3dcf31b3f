//! The dead-letter list: reading it and requeueing from it.

use bytes::Bytes;
use fred::interfaces::ListInterface;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
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
