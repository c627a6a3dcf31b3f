//! Writing to the list: offers, removals by value, clearing.

use std::borrow::Borrow;

use fred::interfaces::{ClientLike, KeysInterface, ListInterface};
use fred::types::Value;

use crate::connection::script::Resend;
use crate::error::{CommandResult, Result};
use crate::queue::by_value::Among;
use crate::wire::codec;

use super::BlockingQueue;

impl<T: 'static> BlockingQueue<T> {
    /// Appends a value now, with no delay (Java's `offer(e)`/`add(e)` on the
    /// blocking queue: `RPUSH`). Sent once: a connection failure before the
    /// reply is an error, never a duplicate.
    pub async fn offer(&self, value: &T) -> Result<()> {
        let payload = codec::encode(&*self.handle.codec, value)?;
        self.handle.core.check_payload(&payload)?;
        let _: i64 = self
            .handle
            .core
            .conn()?
            .with_options(&Resend::Once.options())
            .rpush(self.name(), payload)
            .await
            .sent_once("offer", self.name())?;
        Ok(())
    }

    /// Appends several values now, in one command, sent once (see [`offer`](Self::offer)).
    pub async fn offer_all<I, B>(&self, values: I) -> Result<()>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        let payloads: Vec<Value> = values
            .into_iter()
            .map(|v| {
                let payload = codec::encode(&*self.handle.codec, v.borrow())?;
                self.handle.core.check_payload(&payload)?;
                Ok(Value::Bytes(payload))
            })
            .collect::<Result<_>>()?;
        if payloads.is_empty() {
            return Ok(());
        }
        let _: i64 = self
            .handle
            .core
            .conn()?
            .with_options(&Resend::Once.options())
            .rpush(self.name(), payloads)
            .await
            .sent_once("offer_all", self.name())?;
        Ok(())
    }

    /// Removes the first ready value equal to `value` (Java's `remove(o)`);
    /// returns whether there was one. Equal values from different producers
    /// are separate values: one call removes one, even if its reply is lost
    /// and the call resent.
    pub async fn remove(&self, value: &T) -> Result<bool> {
        self.handle.remove(Among::Ready, value).await
    }

    /// Removes every ready value equal to one of `values` (Java's
    /// `removeAll(c)`); returns how many were removed.
    pub async fn remove_all<I, B>(&self, values: I) -> Result<usize>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        self.handle.remove_all(Among::Ready, values).await
    }

    /// Deletes every ready value (Java's `clear()`), those with a priority
    /// too; returns whether there was any. Pending values of the delayed
    /// queue are not touched. Sent
    /// once: a resend could delete values offered after the first run, so
    /// a lost reply is [`Error::OutcomeUnknown`](crate::Error::OutcomeUnknown).
    pub async fn clear(&self) -> Result<bool> {
        let conn = self.handle.core.conn()?.with_options(&Resend::Once.options());
        let keys = vec![self.name().to_owned(), self.handle.keys.priority_ready()];
        // Two keys: while the queue's Cluster slot moves, TRYAGAIN until it is done.
        let n: i64 = crate::connection::while_slot_moves(|| conn.del(keys.clone()))
            .await
            .sent_once("clear", self.name())?;
        Ok(n > 0)
    }
}
