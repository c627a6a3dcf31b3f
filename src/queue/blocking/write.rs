//! Writing to the list: offers, removals by value, clearing.

use std::borrow::Borrow;

use bytes::Bytes;
use fred::interfaces::{ClientLike, KeysInterface, ListInterface};
use fred::types::{Key, Value};

use crate::connection::reply;
use crate::connection::request::Request;
use crate::connection::script::{Resend, SCRIPTS};
use crate::error::{CommandResult, Result};
use crate::queue::by_value::ByValue;
use crate::wire::codec;

use super::BlockingQueue;

/// Values one `remove_all` script looks for (each costs a scan of the list).
const REMOVE_CHUNK: usize = 16;

impl<T: 'static> BlockingQueue<T> {
    /// Appends a value now, with no delay (Java's `offer(e)`/`add(e)` on the
    /// blocking queue: `RPUSH`). Sent once: a connection failure before the
    /// reply is an error, never a duplicate.
    pub async fn offer(&self, value: &T) -> Result<()> {
        let payload = codec::encode(&*self.codec, value)?;
        self.core.check_payload(&payload)?;
        let _: i64 = self
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
                let payload = codec::encode(&*self.codec, v.borrow())?;
                self.core.check_payload(&payload)?;
                Ok(Value::Bytes(payload))
            })
            .collect::<Result<_>>()?;
        if payloads.is_empty() {
            return Ok(());
        }
        let _: i64 = self
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
        let payload = codec::encode(&*self.codec, value)?;
        Ok(self.remove_by(ByValue::First, vec![payload]).await? == 1)
    }

    /// Removes every ready value equal to one of `values` (Java's
    /// `removeAll(c)`); returns how many were removed.
    pub async fn remove_all<I, B>(&self, values: I) -> Result<usize>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        let payloads = values
            .into_iter()
            .map(|v| codec::encode(&*self.codec, v.borrow()))
            .collect::<Result<Vec<_>>>()?;
        if payloads.is_empty() {
            return Ok(0);
        }
        self.remove_by(ByValue::All, payloads).await
    }

    pub(super) async fn remove_by(&self, mode: ByValue, payloads: Vec<Bytes>) -> Result<usize> {
        // Each value costs a scan of the list: a bounded number per script.
        let mut removed = 0;
        for chunk in payloads.chunks(REMOVE_CHUNK) {
            let mut args = Vec::with_capacity(chunk.len() + 1);
            args.push(mode.arg());
            args.extend(chunk.iter().cloned().map(Value::Bytes));
            let value = Request::new(self.name())
                .apply(
                    self.core.conn()?,
                    self.core.settling(),
                    &SCRIPTS.list_remove,
                    vec![Key::from(self.name())],
                    args,
                )
                .await?;
            removed += reply::int(&value)? as usize;
        }
        Ok(removed)
    }

    /// Deletes every ready value (Java's `clear()`); returns whether there
    /// was any. Pending values of the delayed queue are not touched. Sent
    /// once: a resend could delete values offered after the first run.
    pub async fn clear(&self) -> Result<bool> {
        let n: i64 = self
            .core
            .conn()?
            .with_options(&Resend::Once.options())
            .del(self.name())
            .await
            .on_key(self.name())?;
        Ok(n > 0)
    }
}
