//! Takes of a queue that has priority values (`lua/pop_priority.lua`):
//! the highest level first, the destination list (the default level) last.
//! Concurrent takes of a queue in one client share pops: one run pops for
//! each take waiting (`queue/joined.rs`), the first take alone.
//!
//! A queue without the marker is taken from as before (`take.rs`); its
//! blocked takes end their wait round once the marker is seen, and go on
//! here. Here a take pops with the script (which also moves due delayed
//! priority values), and when there is nothing waits on the list in rounds
//! of at most [`PRIORITY_ROUND`], or until the next delayed priority value
//! is due: a priority value offered meanwhile lands in a set no blocking
//! read can watch beside the list.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::types::Value;
use tokio::time::Instant;

use crate::connection::blocking_pool::RETRY_PAUSE;
use crate::connection::detached::{detach, until, Command};
use crate::connection::reply;
use crate::connection::request::Request;
use crate::connection::script::{ScriptError, SCRIPTS};
use crate::error::{Error, Result};
use crate::queue::joined::{reply_gone, Join, RunOutcome};
use crate::queue::priority::PRIORITY_ROUND;
use crate::queue::Core;
use crate::wire::codec;
use crate::wire::keys::QueueKeys;

use super::BlockingQueue;

/// Shortest round: a delayed value due sooner waits this long at least.
const SHORTEST_ROUND: Duration = Duration::from_millis(10);

/// A pop's reply: the value and where it came from, when the next delayed
/// priority value is due (ms on the server's clock), and whether to pop
/// again at once (it skipped as many expired values as a call may).
type Popped = (Option<(Bytes, Origin)>, Option<i64>, bool);

/// Where a popped value came from, so that a give-back puts it there again:
/// its level, and the section of a value offered with a time to live or
/// headers (`lua/lib/priority.lua`: `T` or `t` and the expiry, then `H`,
/// a length and the headers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Origin {
    level: u8,
    /// Bytes: headers that are not UTF-8 must still go back whole.
    section: Option<Bytes>,
}

impl Origin {
    /// The destination list (the default level, no TTL).
    pub(super) const LIST: Origin = Origin {
        level: 0,
        section: None,
    };

    /// `lua/priority_push_back.lua`'s first argument: the level digit and
    /// the section, if any.
    fn arg(&self) -> Bytes {
        let mut arg = vec![b'0' + self.level];
        arg.extend_from_slice(self.section.as_deref().unwrap_or_default());
        Bytes::from(arg)
    }

    /// The headers the value was offered with; a message when they do not
    /// read (written by hand).
    pub(super) fn headers(&self) -> std::result::Result<crate::Headers, String> {
        let section = self.section.as_deref().unwrap_or_default();
        match crate::queue::headers::section_headers(section) {
            Some(json) => crate::Headers::decode(json),
            None => Ok(crate::Headers::new()),
        }
    }
}

impl<T: 'static> BlockingQueue<T> {
    /// The next value of this queue and its level, until `deadline` (or
    /// forever): with priorities once the queue has the marker.
    pub(super) async fn pop_own(&self, deadline: Option<Instant>) -> Result<Option<(Bytes, Origin)>> {
        loop {
            if self.handle.marked(deadline).await {
                return self.pop_marked(deadline).await;
            }
            match self.pop_from(&[self.name()], deadline, true).await? {
                Some((_, raw)) => return Ok(Some((raw, Origin::LIST))),
                None if deadline.is_some_and(|at| Instant::now() >= at) => return Ok(None),
                // The wait ended for the marker: look again.
                None => continue,
            }
        }
    }

    /// A value without waiting: with priorities once the queue has the marker.
    pub(super) async fn try_pop_own(&self) -> Result<Option<(Bytes, Origin)>> {
        if self.handle.marked(None).await {
            loop {
                match self.pop_priority().await? {
                    (None, _, true) => continue,
                    (popped, _, _) => return Ok(popped),
                }
            }
        }
        Ok(self.lpop(self.name()).await?.map(|raw| (raw, Origin::LIST)))
    }

    /// Decodes a value from `origin` with its headers; if either cannot be
    /// decoded, gives it back to the head of its level and fails.
    pub(super) async fn decode_with_headers(&self, raw: Bytes, origin: Origin) -> Result<(T, crate::Headers)> {
        match origin.headers() {
            Ok(headers) => Ok((self.decode_or_give_back(raw, origin).await?, headers)),
            Err(why) => {
                let error = crate::error::DecodeError::new("headers", raw.clone(), why);
                let restored = self.give_back_level(&origin, vec![raw]).await;
                Err(Error::Decode(error.with_restored(restored)))
            }
        }
    }

    /// Decodes a value from `origin`; if it cannot be decoded, gives it back
    /// to the head of its level (decoding never consumes) and fails.
    pub(super) async fn decode_or_give_back(&self, raw: Bytes, origin: Origin) -> Result<T> {
        if origin == Origin::LIST {
            return self.decode_or_restore(self.name(), raw).await;
        }
        match codec::decode(&*self.handle.codec, raw.clone()) {
            Ok(value) => Ok(value),
            Err(error) => {
                let restored = self.give_back_level(&origin, vec![raw]).await;
                Err(Error::Decode(error.with_restored(restored)))
            }
        }
    }

    async fn pop_marked(&self, deadline: Option<Instant>) -> Result<Option<(Bytes, Origin)>> {
        let name = self.name();
        loop {
            if self.handle.core.is_shutting_down() {
                return Err(Error::Shutdown);
            }
            let next_due = match until(deadline, self.pop_priority()).await {
                Ok((Some(popped), _, _)) => return Ok(Some(popped)),
                Ok((None, _, true)) => continue,
                Ok((None, next_due, false)) => next_due,
                Err(error) if error.is_transient() && deadline.is_none_or(|at| Instant::now() < at) => {
                    tracing::warn!(queue = name, %error, "a priority pop failed; trying again (if Redis ran it and its reply was lost, a value was taken and lost: use a ReliableQueue for at-least-once)");
                    tokio::time::sleep(RETRY_PAUSE).await;
                    continue;
                }
                Err(error) => return Err(error),
            };
            let mut round = PRIORITY_ROUND;
            if let Some(due) = next_due {
                let in_ms = due.saturating_sub(crate::wire::time::now_ms()).max(0) as u64;
                round = round.min(Duration::from_millis(in_ms)).max(SHORTEST_ROUND);
            }
            let round_end = Instant::now() + round;
            let until = deadline.map_or(round_end, |at| at.min(round_end));
            if let Some(raw) = self.joined_wait(name, Some(until), false).await? {
                return Ok(Some((raw, Origin::LIST)));
            }
            if deadline.is_some_and(|at| Instant::now() >= at) {
                return Ok(None);
            }
        }
    }

    /// A pop of `lua/pop_priority.lua` for this take: alone, or with the
    /// takes of this queue that come while one is in flight, in one run.
    async fn pop_priority(&self) -> Result<Popped> {
        let target = PopTarget {
            core: self.handle.core.clone(),
            keys: self.handle.keys.clone(),
        };
        self.takes.priority_pops.send(target, ()).await
    }

    /// Gives values back to the head of their level (`lua/priority_push_back.lua`),
    /// the first first, with their section if they have one; whether it
    /// could.
    pub(super) async fn give_back_level(&self, origin: &Origin, raw: Vec<Bytes>) -> bool {
        give_back(&self.handle.core, &self.handle.keys, origin, raw).await
    }
}

/// Gives values of `keys`' queue back to the head of their level.
async fn give_back(core: &Core, keys: &QueueKeys, origin: &Origin, raw: Vec<Bytes>) -> bool {
    let Ok(conn) = core.conn_for(keys.destination()) else {
        return false;
    };
    let script_keys = SCRIPTS.priority_push_back.keys(keys).build();
    let mut args = vec![Value::Bytes(origin.arg())];
    args.extend(raw.into_iter().map(Value::Bytes));
    let pushed = Request::new(keys.destination())
        .apply_retrying(conn, core.settling(), &SCRIPTS.priority_push_back, script_keys, args)
        .await;
    match pushed {
        Ok(_) => true,
        Err(error) => {
            tracing::error!(queue = keys.destination(), level = origin.level, %error, "could not give values back to their priority level");
            false
        }
    }
}

/// Gives back every value of a pop's reply to the head of its level, so
/// that they end in the order they were popped: each run of values from
/// one origin in one script (it gives back the first first), the runs last
/// first.
async fn give_back_all(core: &Core, keys: &QueueKeys, reply: &Value) {
    let Ok(entries) = entries(reply) else {
        return;
    };
    let mut runs: Vec<(Origin, Vec<Bytes>)> = Vec::new();
    for (raw, origin) in entries {
        match runs.last_mut() {
            Some((last, values)) if *last == origin => values.push(raw),
            _ => runs.push((origin, vec![raw])),
        }
    }
    for (origin, values) in runs.into_iter().rev() {
        give_back(core, keys, &origin, values).await;
    }
}

/// Where a queue's pops go, for pops joined with others.
#[derive(Clone)]
pub(super) struct PopTarget {
    core: Arc<Core>,
    keys: Arc<QueueKeys>,
}

impl Join for PopTarget {
    /// A take waiting for a value.
    type Item = ();
    type Answer = Popped;
    /// Measured (scenario 20): one run at a time left Redis idle while the
    /// client served a run's takes.
    const RUNS: usize = 4;

    fn core(&self) -> &Arc<Core> {
        &self.core
    }

    /// Nothing to count: a run pops at most as many values as it has takes
    /// (bounded as an offering run is, `queue/batch.rs`).
    fn payload(_: &()) -> usize {
        0
    }

    /// One run for `items.len()` takes, sent once (a second run would pop
    /// other values) and safe to cancel: a run whose caller stopped waiting
    /// (a take alone) gives every value it popped back to the head of its
    /// level.
    async fn run(&self, items: Vec<()>) -> RunOutcome {
        let conn = self.core.conn_for(self.keys.destination())?.clone();
        let script_keys = SCRIPTS.pop_priority.keys(&self.keys).build();
        let name = self.keys.destination().to_owned();
        let args = vec![Value::from(items.len() as i64)];
        let pop: Command<std::result::Result<Value, ScriptError>> =
            Box::pin(async move { SCRIPTS.pop_priority.run(&conn, &name, script_keys, args).await });
        let undo = {
            let (core, keys) = (self.core.clone(), self.keys.clone());
            move |reply: std::result::Result<Value, ScriptError>| async move {
                if let Ok(reply) = reply {
                    give_back_all(&core, &keys, &reply).await;
                }
            }
        };
        Ok(detach(pop, undo, self.core.settling()).until_answered().reply().await)
    }

    /// The `position`th value of the run (none when it popped fewer), and
    /// what every take of the run learns: when the next delayed value is
    /// due, and whether to pop again at once.
    fn answer(&self, reply: &Value, position: usize, _: &()) -> Result<Popped> {
        let (due, more) = shared(reply)?;
        Ok((entry_at(reply, position)?, due, more))
    }

    fn unknown_outcome(&self) -> Error {
        reply_gone(&SCRIPTS.pop_priority, self.keys.destination())
    }

    /// A value popped for a take that stopped waiting: back to the head of
    /// its level, from a task of its own.
    fn unclaimed(&self, (popped, _, _): Popped) {
        let Some((raw, origin)) = popped else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::error!(
                queue = self.keys.destination(),
                "no runtime left to give a popped value back"
            );
            return;
        };
        let (core, keys) = (self.core.clone(), self.keys.clone());
        let counted = core.settling().enter();
        drop(runtime.spawn(async move {
            give_back(&core, &keys, &origin, vec![raw]).await;
            drop(counted);
        }));
    }
}

/// `lua/pop_priority.lua`'s reply: `{value or false, level, next due or
/// false, section or false, 1 to pop again, then value, level, section for
/// each further value}`: when the next delayed value is due, and whether
/// to pop again.
fn shared(reply: &Value) -> Result<(Option<i64>, bool)> {
    let Value::Array(parts) = reply else {
        return Err(Error::Protocol(format!("pop_priority answered {reply:?}")));
    };
    if parts.len() < 3 {
        return Err(Error::Protocol("pop_priority answered a short reply".into()));
    }
    let due = match &parts[2] {
        Value::Null | Value::Boolean(false) => None,
        due => Some(reply::int(due)?),
    };
    let more = match parts.get(4) {
        Some(more) => reply::int(more)? == 1,
        None => false,
    };
    Ok((due, more))
}

/// The values of a pop's reply, in take order, each with where it came from.
fn entries(reply: &Value) -> Result<Vec<(Bytes, Origin)>> {
    let mut values = Vec::new();
    while let Some(entry) = entry_at(reply, values.len())? {
        values.push(entry);
    }
    Ok(values)
}

/// The `position`th value of a pop's reply (from 0), with where it came
/// from; `None` past the last. Read where it lies: a run serves each of its
/// takes from one reply.
fn entry_at(reply: &Value, position: usize) -> Result<Option<(Bytes, Origin)>> {
    let Value::Array(parts) = reply else {
        return Err(Error::Protocol(format!("pop_priority answered {reply:?}")));
    };
    // The first value's fields are 0, 1 and 3; the others' follow the
    // shared ones, three each.
    let (value, level, section) = match position {
        0 => (parts.first(), parts.get(1), parts.get(3)),
        p => {
            let at = 5 + 3 * (p - 1);
            (parts.get(at), parts.get(at + 1), parts.get(at + 2))
        }
    };
    let raw = match value {
        None | Some(Value::Null | Value::Boolean(false)) => return Ok(None),
        Some(value) => reply::bytes(value.clone())?,
    };
    let level = level.map(reply::int).transpose()?.unwrap_or(0);
    let section = match section {
        None | Some(Value::Null | Value::Boolean(false)) => None,
        Some(section) => reply::opt_bytes(section.clone())?,
    };
    let level = u8::try_from(level).unwrap_or(0).min(9);
    Ok(Some((raw, Origin { level, section })))
}
