//! Removals: by value, from the head before due, moves, and clearing; each one request that may be resent.

use std::borrow::Borrow;

use bytes::Bytes;
use fred::interfaces::{ClientLike, KeysInterface};
use fred::types::{Key, Value};

use crate::connection::detached::{detach, Command};
use crate::connection::reply;
use crate::connection::request::Request;
use crate::connection::script::{Resend, ScriptError, SCRIPTS};
use crate::connection::while_slot_moves;
use crate::error::{CommandResult, Error, Result};
use crate::wire::codec;
use crate::wire::format;
use crate::wire::keys::KeyRole;

use super::DelayedQueue;
use crate::queue::by_value::{Among, ByValue};
use crate::queue::MAX_BATCH;

/// What one [`DelayedQueue::remove_pending`] call did.
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// loop {
///     let purged = queue.remove_pending(1_000).await?;
///     if purged.remaining == 0 {
///         break;
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Purged {
    /// Pending elements this call removed.
    pub removed: u64,
    /// Pending elements left after it.
    pub remaining: u64,
}

impl<T: 'static> DelayedQueue<T> {
    /// Removes the first pending element (in offer order) whose payload equals
    /// `value`; returns whether one was removed. It will not be delivered.
    pub async fn remove(&self, value: &T) -> Result<bool> {
        self.handle.remove(Among::Pending, value).await
    }

    /// Removes every pending element whose payload equals one of `values`;
    /// returns how many were removed.
    pub async fn remove_all<I, B>(&self, values: I) -> Result<usize>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        self.handle.remove_all(Among::Pending, values).await
    }

    /// Removes every pending element whose payload is not one of `values`
    /// (malformed elements are kept); returns how many were removed.
    pub async fn retain_all<I, B>(&self, values: I) -> Result<usize>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        let payloads = self.handle.encode_all(values)?;
        self.handle.remove_by(Among::Pending, ByValue::AllBut, payloads).await
    }

    /// Removes and returns the first pending value in offer order, before it
    /// is due; it will not be delivered (Java's `poll()`).
    pub async fn remove_first(&self) -> Result<Option<T>> {
        Ok(self.remove_first_n(1).await?.pop())
    }

    /// Removes and returns up to `limit` pending values in offer order (Java's
    /// `poll(limit)`). If one cannot be decoded, all of them go back where
    /// they were, scores included, and the error holds their raw bytes.
    ///
    /// Cancel safe (and so is [`remove_first`](Self::remove_first)): values removed for a
    /// call dropped before it returns go back where they were, scores included.
    pub async fn remove_first_n(&self, limit: usize) -> Result<Vec<T>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        // Bounded: one script moves at most this many (Redis is shared).
        let limit = limit.min(MAX_BATCH);
        let keys = SCRIPTS.poll.keys(&self.handle.keys).build();
        // Removed values go back, scores included, if the call is dropped
        // before it returns (and, through the request, if its reply is lost).
        let conn = self.conn()?.clone();
        let restore_keys = self.restore_keys();
        let undo = {
            let (conn, keys, name, settling) = (
                conn.clone(),
                restore_keys.clone(),
                self.name().to_owned(),
                self.handle.core.settling().clone(),
            );
            move |reply: std::result::Result<Value, ScriptError>| async move {
                let Ok(Ok([elements, scores, _, ids])) = reply.map(reply::tuple::<4>) else {
                    return;
                };
                let args = reply::bytes_array(elements).and_then(|elements| restore_args(elements, scores, ids));
                if let Ok(args) = args
                    && !args.is_empty()
                {
                    let restored = Request::new(&name)
                        .apply_retrying(&conn, &settling, &SCRIPTS.restore, keys, args)
                        .await;
                    if let Err(error) = restored {
                        tracing::error!(%error, "could not give back values polled for a dropped call");
                    }
                }
            }
        };
        let args = vec![Value::from(limit as i64)];
        let (name, settling) = (self.name().to_owned(), self.handle.core.settling().clone());
        let poll: Command<_> = Box::pin(async move {
            Request::new(&name)
                .remove(&conn, &settling, &SCRIPTS.poll, keys, args)
                .await
        });
        let value = detach(poll, undo, self.handle.core.settling()).reply().await?;
        let [elements, scores, quarantined, ids] = reply::tuple::<4>(value)?;
        self.note_quarantined(reply::int(&quarantined)?, "poll");
        let elements = reply::bytes_array(elements)?;
        let payloads = elements
            .iter()
            .map(|e| format::unpack(e).map(|element| Bytes::copy_from_slice(element.payload)))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| Error::Protocol("poll returned an element it could not unpack".into()))?;
        match codec::decode_batch(&*self.handle.codec, payloads) {
            Ok(values) => Ok(values),
            Err(error) => {
                let args = restore_args(elements, scores, ids)?;
                let restored = Request::new(self.name())
                    .apply_retrying(
                        self.conn()?,
                        self.handle.core.settling(),
                        &SCRIPTS.restore,
                        self.restore_keys(),
                        args,
                    )
                    .await
                    .is_ok();
                Err(Error::Decode(error.with_restored(restored)))
            }
        }
    }

    /// Keys of `lua/restore.lua` (without its request key).
    pub(super) fn restore_keys(&self) -> Vec<Key> {
        SCRIPTS.restore.keys(&self.handle.keys).build()
    }

    /// Removes the last pending value (in offer order) and pushes it to the
    /// head of the list `target`, atomically (Java's `pollLastAndOfferFirstTo`).
    /// On Redis Cluster `target` must hash to the same slot as this queue.
    pub async fn poll_last_and_offer_first_to(&self, target: &str) -> Result<Option<T>> {
        let keys = SCRIPTS
            .poll_last_and_offer_first_to
            .keys(&self.handle.keys)
            .with(KeyRole::Target, target)
            .build();
        let value = self
            .handle
            .request(&SCRIPTS.poll_last_and_offer_first_to, keys, vec![])
            .await?;
        let [payload, quarantined] = reply::tuple::<2>(value)?;
        self.note_quarantined(reply::int(&quarantined)?, "poll_last_and_offer_first_to");
        match reply::opt_bytes(payload)? {
            Some(raw) => Ok(Some(codec::decode(&*self.handle.codec, raw)?)),
            None => Ok(None),
        }
    }

    /// Deletes every pending element (the timeout set and the pending list, as
    /// Java's `clear()`/`delete()`, delayq's id index, and the delayed values
    /// with a priority or a group key); returns whether there was anything. The
    /// destination list is not touched.
    pub async fn clear(&self) -> Result<bool> {
        let conn = self.conn()?.with_options(&Resend::Once.options());
        let keys = &self.handle.keys;
        let (priority_delayed, group_delayed) = (keys.priority_delayed(), keys.group_delayed());
        // Several keys: while the queue's Cluster slot moves, TRYAGAIN until it is done.
        let n = while_slot_moves(|| {
            conn.del::<i64, _>(vec![
                keys.timeout(),
                keys.pending(),
                keys.ids(),
                &priority_delayed,
                &group_delayed,
            ])
        })
        .await
        .sent_once("clear", self.name())?;
        Ok(n > 0)
    }

    /// Removes up to `max` pending elements, first offered first, in one
    /// atomic script, and returns how many it removed and how many are still
    /// pending. Empties a large queue in steps that never block Redis for
    /// long, where [`clear`](Self::clear) deletes everything at once. At most
    /// 10,000 per call; `0` removes nothing.
    pub async fn remove_pending(&self, max: usize) -> Result<Purged> {
        if max == 0 {
            let remaining = self.len().await? as u64;
            return Ok(Purged { removed: 0, remaining });
        }
        let keys = SCRIPTS.remove_pending.keys(&self.handle.keys).build();
        let args = vec![Value::from(max.min(MAX_BATCH) as i64)];
        let script = &SCRIPTS.remove_pending;
        let value = Request::new(self.name())
            .remove(self.conn()?, self.handle.core.settling(), script, keys, args)
            .await?;
        let [removed, left] = reply::tuple::<2>(value)?;
        Ok(Purged {
            removed: reply::int(&removed)? as u64,
            remaining: reply::int(&left)? as u64,
        })
    }
}

/// Arguments of `lua/restore.lua` for elements a poll removed: score,
/// element and id, by threes (an empty score for an element the set lacked,
/// an empty id for one offered without).
fn restore_args(elements: Vec<Bytes>, scores: Value, ids: Value) -> Result<Vec<Value>> {
    let (scores, ids) = (reply::array(scores)?, reply::array(ids)?);
    if scores.len() != elements.len() || ids.len() != elements.len() {
        return Err(Error::Protocol(
            "poll returned scores or ids that do not match its elements".into(),
        ));
    }
    let or_empty = |v: Value| -> Result<Value> {
        Ok(match reply::opt_bytes(v)? {
            Some(bytes) => Value::Bytes(bytes),
            None => Value::from(""),
        })
    };
    let mut args = Vec::with_capacity(elements.len() * 3);
    for ((element, score), id) in elements.into_iter().zip(scores).zip(ids) {
        args.push(or_empty(score)?);
        args.push(Value::Bytes(element));
        args.push(or_empty(id)?);
    }
    Ok(args)
}
