//! Taking values: blocking and immediate pops, moves, drains and the stream; each cancel safe.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::interfaces::{ClientLike, ListInterface};
use fred::types::{Key, Value};
use futures_util::stream::Stream;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::connection::detached::{detach, pop_options, push_back, until, Command};
use crate::connection::reply;
use crate::connection::request::Request;
use crate::connection::script::{ScriptError, SCRIPTS};
use crate::error::{CommandResult, Error, Result};
use crate::queue::MAX_BATCH;
use crate::wire::codec;
use crate::wire::keys::KeyRole;

use super::joined_pops::{Batch, Entry, Served, Source};
use super::{BlockingQueue, FredResult};

/// A wait shorter than this always tries `LPOP` first (see `ready_hint`).
const SHORT_WAIT: Duration = Duration::from_millis(50);

impl<T: 'static> BlockingQueue<T> {
    /// Waits for a value and removes it (Java's `take()`). Keeps waiting
    /// across reconnects; fails only on bad data, a wrong key type, or
    /// [`Error::Shutdown`].
    ///
    /// Cancel safe: dropping the future (`tokio::time::timeout`, a `select!`
    /// branch that lost) loses nothing. A value the server popped for it
    /// anyway goes back to the head of the list. The same holds for
    /// [`take_timeout`](Self::take_timeout), [`try_take`](Self::try_take) and
    /// [`take_from_any`](Self::take_from_any).
    pub async fn take(&self) -> Result<T> {
        loop {
            if let Some((raw, level)) = self.pop_own(None).await? {
                return self.decode_or_give_back(raw, level).await;
            }
        }
    }

    /// Waits up to `timeout` for a value (Java's `poll(timeout, unit)`).
    /// Returns `None` when the time is up; if the connection was failing at
    /// that moment, returns that error instead, so "empty" and "unreachable"
    /// are told apart.
    pub async fn take_timeout(&self, timeout: Duration) -> Result<Option<T>> {
        match self.pop_own(Instant::now().checked_add(timeout)).await? {
            Some((raw, level)) => Ok(Some(self.decode_or_give_back(raw, level).await?)),
            None => Ok(None),
        }
    }

    /// [`take_timeout`](Self::take_timeout), with the headers the value was
    /// offered with ([`OfferOptions::header`](crate::OfferOptions::header);
    /// empty for a value offered without). The other takes drop them.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::BlockingQueue<String>) -> delayq::Result<()> {
    /// use std::time::Duration;
    /// if let Some((value, headers)) = queue.take_with_headers(Duration::from_secs(5)).await? {
    ///     println!("{value} for {:?}", headers.get("tenant"));
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn take_with_headers(&self, timeout: Duration) -> Result<Option<(T, crate::Headers)>> {
        match self.pop_own(Instant::now().checked_add(timeout)).await? {
            Some((raw, origin)) => Ok(Some(self.decode_with_headers(raw, origin).await?)),
            None => Ok(None),
        }
    }

    /// Removes a value if one is ready, without waiting (Java's `poll()`).
    pub async fn try_take(&self) -> Result<Option<T>> {
        match self.try_pop_own().await? {
            Some((raw, level)) => Ok(Some(self.decode_or_give_back(raw, level).await?)),
            None => Ok(None),
        }
    }

    /// Waits up to `timeout` for a value from this queue or any of `others`,
    /// whichever has one first, and returns the name of the queue it came from
    /// (Java's `pollFromAny`). On Redis Cluster all queues must share a slot.
    pub async fn take_from_any(&self, timeout: Duration, others: &[&BlockingQueue<T>]) -> Result<Option<(String, T)>> {
        let mut names = vec![self.name()];
        names.extend(others.iter().map(|q| q.name()));
        match self
            .pop_from(&names, Instant::now().checked_add(timeout), false)
            .await?
        {
            Some((i, raw)) => {
                let value = self.decode_or_restore(names[i], raw).await?;
                Ok(Some((names[i].to_owned(), value)))
            }
            None => Ok(None),
        }
    }

    /// Waits for a value, and atomically moves it from the tail of this list
    /// to the head of `target`, returning it (Java's `takeLastAndOfferFirstTo`).
    /// On Redis Cluster `target` must share this queue's slot.
    ///
    /// Cancel safe: a call dropped before it returns moves nothing (a value
    /// moved for it anyway is moved back to this list's tail).
    pub async fn take_last_and_offer_first_to(&self, target: &str) -> Result<T> {
        let args = |secs: f64| {
            let args = [self.name(), target, "RIGHT", "LEFT"];
            let mut args: Vec<Value> = args.into_iter().map(Value::from).collect();
            args.push(Value::from(secs));
            args
        };
        let moved = self
            .handle
            .core
            .blocking()
            .wait("BLMOVE", self.name(), None, args, None)
            .await?;
        // Without a deadline the wait only ends with a value or an error.
        let raw = moved
            .map(reply::bytes)
            .transpose()?
            .ok_or_else(|| Error::Protocol("BLMOVE wait ended empty".into()))?;
        Ok(codec::decode(&*self.handle.codec, raw)?)
    }

    /// Removes and returns up to `max` ready values at once, atomically (Java's
    /// `drainTo`), at most 10,000 per call (one script run, so that Redis is
    /// never held for long); `0` removes nothing. If one cannot be decoded,
    /// the error holds the raw bytes of all of them, and all go back.
    ///
    /// Cancel safe: values removed for a call dropped before it returns go
    /// back to the head of the list, in order. A lost reply loses nothing
    /// either: fred's resend of the call returns the same values, and if the
    /// connection stays down the call fails and its values go back.
    pub async fn drain(&self, max: usize) -> Result<Vec<T>> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let max = max.min(MAX_BATCH) as i64;
        let conn = self.handle.core.conn()?.clone();
        let key = self.name().to_owned();
        let keys = SCRIPTS
            .drain
            .keys(&self.handle.keys)
            .with(KeyRole::List, key.as_str())
            .build();
        let undo = {
            let (conn, key, settling) = (conn.clone(), key.clone(), self.handle.core.settling().clone());
            move |reply: std::result::Result<Value, ScriptError>| async move {
                match reply.map(reply::bytes_array) {
                    Ok(Ok(raw)) if !raw.is_empty() => drop(push_back(&conn, &settling, &key, raw).await),
                    _ => {}
                }
            }
        };
        let settling = self.handle.core.settling().clone();
        let drain: Command<_> = Box::pin(async move {
            Request::new(&key)
                .remove(&conn, &settling, &SCRIPTS.drain, keys, vec![Value::from(max)])
                .await
        });
        let value = detach(drain, undo, self.handle.core.settling()).reply().await?;
        let raw = reply::bytes_array(value)?;
        match codec::decode_batch(&*self.handle.codec, raw.clone()) {
            Ok(values) => Ok(values),
            Err(error) => {
                let restored = self.restore(self.name(), raw).await;
                Err(Error::Decode(error.with_restored(restored)))
            }
        }
    }

    /// The values as they arrive: an endless stream of [`take`](Self::take)s
    /// that ends after the client shuts down. A value that cannot be decoded
    /// is yielded as an error and stays at the head of the list (see
    /// [`DecodeError`](crate::error::DecodeError)). After any error the stream
    /// waits a second before reading on, so that a value no one here can
    /// read, or a key of the wrong type, does not make it spin.
    pub fn stream(&self) -> impl Stream<Item = Result<T>> + Send + 'static + use<T>
    where
        T: Send,
    {
        self.handle.stream(self.clone(), |queue: Self| async move {
            let taken = queue.take().await;
            (queue, taken)
        })
    }

    /// Blocking pop from the first of `names` that has a value, until
    /// `deadline` (or forever), across reconnects; the value and which of
    /// `names` it came from. With `for_marker`, also `None` between two
    /// rounds of a wait once the queue is known to have priority values.
    pub(super) async fn pop_from(
        &self,
        names: &[&str],
        deadline: Option<Instant>,
        for_marker: bool,
    ) -> Result<Option<(usize, Bytes)>> {
        self.handle.core.seen(&self.handle.keys);
        // When a value is ready, an LPOP on the shared, pipelined connections
        // is as good as a BLPOP and costs no dedicated connection. Sent once:
        // a retried pop could pop twice. Skipped mostly while the list is
        // found empty (see `ready_hint`).
        if let [name] = names {
            // A wait about to end could not even lease a connection: look, at least.
            let short = deadline.is_some_and(|at| at.saturating_duration_since(Instant::now()) < SHORT_WAIT);
            match (short || self.takes.ready.probe()).then(|| self.joined_lpop(name)) {
                None => {}
                Some(pop) => match until(deadline, pop).await {
                    Ok(Some(raw)) => {
                        self.takes.ready.found(true);
                        return Ok(Some((0, raw)));
                    }
                    Ok(None) => self.takes.ready.found(false),
                    Err(error) if !error.is_transient() => return Err(error),
                    Err(error) => {
                        // As with a BLPOP whose reply is lost, a value the LPOP
                        // took may be gone (plain takes are at most once); say
                        // so, unless it was never sent (the connection was down).
                        if !error.never_sent() {
                            tracing::warn!(queue = *name, %error, "a pop failed; if Redis ran it and its reply was lost, a value was taken and lost (use a ReliableQueue for at-least-once)");
                        }
                        if deadline.is_some_and(|at| Instant::now() >= at) {
                            return Err(error);
                        }
                    }
                },
            }
            if !self.takes.no_blmpop.load(Ordering::Relaxed) {
                return Ok(self.joined_wait(name, deadline, for_marker).await?.map(|raw| (0, raw)));
            }
        }
        self.blpop_wait(names, deadline).await
    }

    /// Waits with a `BLPOP` of its own for a value of the first of `names`
    /// that has one, until `deadline` (or forever), across reconnects.
    pub(super) async fn blpop_wait(&self, names: &[&str], deadline: Option<Instant>) -> Result<Option<(usize, Bytes)>> {
        let args = |secs: f64| {
            let mut args: Vec<Value> = names.iter().map(|n| Value::from(*n)).collect();
            args.push(Value::from(secs));
            args
        };
        match self
            .handle
            .core
            .blocking()
            .wait("BLPOP", self.name(), deadline, args, Some(&self.takes.failing))
            .await?
        {
            Some(value) => {
                let (key, raw) = reply::blpop(value)?;
                let Some(i) = names.iter().position(|name| *name == key) else {
                    // Not a key it was given: the value goes back where it came from.
                    let restored = self.restore(&key, vec![raw]).await;
                    return Err(Error::Protocol(format!(
                        "BLPOP answered from {key:?}, a key it was not given (value put back: {restored})"
                    )));
                };
                Ok(Some((i, raw)))
            }
            None => Ok(None),
        }
    }

    /// `LPOP` of a take, joined with the other takes of this queue in this
    /// process that wait meanwhile (see `joined_pops`).
    async fn joined_lpop(&self, name: &str) -> Result<Option<Bytes>> {
        let conn = self.handle.core.conn_for(name)?;
        // Made only for a take that waits or joins others, not on the lone path.
        let source = || Source::new(conn, self.handle.core.settling(), name);
        let slot = match self.takes.pops.enter(source, None) {
            Entry::Pop(slot) => slot,
            Entry::Wait(waiting) => match waiting.served().await {
                (Served::Value(raw), _) => return Ok(Some(raw)),
                (Served::Empty, _) => return Ok(None),
                (Served::Failed(error), _) => return Err(error).on_key(self.name()),
                (Served::Lead, slot) => slot.expect("a slot comes with the lead"),
            },
        };
        let joined = slot.joined();
        if joined.is_empty() {
            let popped = self.lpop(name).await;
            drop(slot); // after the pop: the next take waiting pops then
            return popped;
        }
        self.lpop_joined(source(), Batch { _slot: slot, joined }).await
    }

    /// `LPOP key n` for a take and the takes it joined, sent once and safe
    /// to cancel: if its caller stops waiting, the pop ends in the
    /// background, the joined takes are served all the same and its own
    /// value goes back to the head of the list.
    async fn lpop_joined(&self, source: Source, batch: Batch) -> Result<Option<Bytes>> {
        let count = batch.joined.len() + 1;
        let batch = Arc::new(Mutex::new(Some(batch)));
        let pop: Command<FredResult<Vec<Bytes>>> = {
            let (conn, key) = (source.conn.clone(), source.key.clone());
            Box::pin(async move {
                let conn = conn.with_options(&pop_options());
                let popped = conn.lpop::<Option<Vec<Bytes>>, _>(key, Some(count)).await;
                popped.map(Option::unwrap_or_default)
            })
        };
        let undo = {
            let (batch, source) = (batch.clone(), source.clone());
            move |reply: FredResult<Vec<Bytes>>| async move {
                if let Some(batch) = batch.lock().take() {
                    let _ = batch.serve(&source, reply, false);
                }
            }
        };
        let reply = detach(pop, undo, self.handle.core.settling())
            .until_answered()
            .reply()
            .await;
        let batch = batch.lock().take().expect("a pop is served once");
        batch.serve(&source, reply, true).on_key(self.name())
    }

    /// `LPOP`, sent once (a retried pop could pop twice) and safe to cancel:
    /// a value popped for a caller that has stopped waiting goes back to the
    /// head of the list (see `detached`). The fast path of every take: what
    /// it needs to give a value back is kept inline, not allocated.
    pub(super) async fn lpop(&self, name: &str) -> Result<Option<Bytes>> {
        let conn = self.handle.core.conn_for(name)?;
        let key = Key::from(name);
        let pop: Command<_> = {
            let (conn, key) = (conn.clone(), key.clone());
            Box::pin(async move {
                conn.with_options(&pop_options())
                    .lpop::<Option<Bytes>, _>(key, None)
                    .await
            })
        };
        let (conn, settling) = (conn.clone(), self.handle.core.settling().clone());
        let undo = move |reply: FredResult<Option<Bytes>>| async move {
            if let Ok(Some(raw)) = reply {
                push_back(&conn, &settling, &key.as_str_lossy(), vec![raw]).await;
            }
        };
        detach(pop, undo, self.handle.core.settling())
            .until_answered()
            .reply()
            .await
            .on_key(self.name())
    }

    /// Decodes a value popped from `key`; if it cannot be decoded, puts it
    /// back at the head of `key` (decoding never consumes) and fails.
    pub(super) async fn decode_or_restore(&self, key: &str, raw: Bytes) -> Result<T> {
        match codec::decode(&*self.handle.codec, raw.clone()) {
            Ok(value) => Ok(value),
            Err(error) => {
                let restored = self.restore(key, vec![raw]).await;
                Err(Error::Decode(error.with_restored(restored)))
            }
        }
    }

    /// Pushes values back at the head of `key`, in their original order.
    pub(super) async fn restore(&self, key: &str, raw: Vec<Bytes>) -> bool {
        let Ok(conn) = self.handle.core.conn() else {
            return false;
        };
        push_back(conn, self.handle.core.settling(), key, raw).await
    }
}
