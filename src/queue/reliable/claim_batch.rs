//! Taking many ready values at once: one script pops up to
//! [`CLAIM_BATCH`] values from the destination's head and claims each as a
//! delivery (`lua/claim_batch.lua`), one round trip for the lot, where a
//! single take costs a move and a claim per value. Never waits: an empty
//! queue answers at once (a consumer then waits with a blocking take).

use bytes::Bytes;
use fred::types::Value;

use crate::connection::detached::{detach, Command};
use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{DecodeError, Error, Result};
use crate::queue::reliable::delivery::{member, Delivery, DeliveryLease, IN_BACKGROUND};
use crate::telemetry::DeadLettered;
use crate::wire::codec;

use super::ReliableQueue;

/// Most values one claim script takes: about a millisecond at most with
/// any number of deliveries in flight. 128 rather than 64: a claim's fixed
/// cost (a task, the keys, the round trip, the script's checks) over twice
/// the values took a worker's client CPU from about 3.7 to 3.0 µs a value.
pub(crate) const CLAIM_BATCH: usize = 128;

/// Most payload bytes one claim script takes (past the first value).
const CLAIM_BATCH_BYTES: i64 = 1 << 20;

/// What a batch claim came to.
pub(crate) enum Batch<T> {
    /// Deliveries in list order; a value that could not be decoded is given
    /// back (or dead-lettered, as the consumer chose) and is its error here.
    /// Empty when every value popped went to the dead letters.
    Taken(Vec<std::result::Result<Delivery<T>, DecodeError>>),
    /// No value was ready, or the claim failed through the connection
    /// (logged; what it claimed goes back, see `lost_claim`).
    Nothing,
    /// The queue is paused: nothing was taken.
    Paused,
    /// The queue's concurrency limit has no room: nothing was taken.
    Full,
}

/// One value of a batch claim's reply.
struct Claimed {
    value: Bytes,
    /// Delivery count; negative when dead-lettered after that many.
    count: i64,
    due: Option<String>,
    /// The id of the job it runs, when it was offered with one.
    job: Option<String>,
    /// Its priority level (0: the destination list's).
    level: u8,
    /// The headers it was offered with (JSON), if any.
    headers: Option<Bytes>,
}

/// A batch claim's reply, read.
enum Answered {
    /// Nothing taken: the queue is paused (or takes are off).
    Paused,
    /// Nothing taken: the concurrency limit has no room.
    Full,
    /// The server's time, the values, whether to claim again at once
    /// (expired values were skipped, as many as a call may), and the room
    /// the concurrency limit had left (`None`: no limit).
    Claimed(i64, Vec<Claimed>, bool, Option<i64>),
}

fn parse(reply: Value) -> Result<Answered> {
    let mut reply = reply::array(reply)?.into_iter();
    let status = reply
        .next()
        .map(reply::opt_text)
        .transpose()?
        .flatten()
        .unwrap_or_default();
    match status.as_str() {
        "paused" => return Ok(Answered::Paused),
        "full" => return Ok(Answered::Full),
        // 'more': it skipped as many expired values (message TTL) as a call
        // may; what it took is as for 'ok'.
        "ok" | "more" => {}
        other => return Err(Error::Protocol(format!("claim_batch answered {other:?}"))),
    }
    let now = reply.next().map(|v| reply::int(&v)).transpose()?.unwrap_or(0);
    let short = || Error::Protocol("claim_batch answered a short entry".into());
    let n = reply.next().map(|v| reply::int(&v)).transpose()?.unwrap_or(0);
    let n = usize::try_from(n).map_err(|_| Error::Protocol(format!("claim_batch answered {n} values")))?;
    let room = match reply.next() {
        None | Some(Value::Null) => None,
        Some(room) => Some(reply::int(&room)?),
    };
    let mut claimed = Vec::with_capacity(n.min(CLAIM_BATCH));
    for _ in 0..n {
        let (Some(value), Some(packed)) = (reply.next(), reply.next()) else {
            return Err(short());
        };
        // Delivery count * 10 + level; 0 or below: dead-lettered, no level.
        let packed = reply::int(&packed)?;
        claimed.push(Claimed {
            value: reply::bytes(value)?,
            count: packed / 10,
            due: None,
            job: None,
            level: if packed > 0 { (packed % 10) as u8 } else { 0 },
            headers: None,
        });
    }
    // The rare fields: (index from 1, kind, text) triples.
    while let Some(index) = reply.next() {
        let (Some(kind), Some(text)) = (reply.next(), reply.next()) else {
            return Err(short());
        };
        let index = reply::int(&index)?;
        let entry = usize::try_from(index)
            .ok()
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| claimed.get_mut(i))
            .ok_or_else(|| Error::Protocol(format!("claim_batch answered a field of value {index}")))?;
        match reply::opt_text(kind)?.as_deref() {
            Some("d") => entry.due = reply::opt_text(text)?,
            Some("j") => entry.job = reply::opt_text(text)?,
            Some("h") => entry.headers = Some(reply::bytes(text)?),
            other => return Err(Error::Protocol(format!("claim_batch answered a field {other:?}"))),
        }
    }
    Ok(Answered::Claimed(now, claimed, status == "more", room))
}

/// The delivery id of the `index`-th value (from 1) of batch `batch`.
pub(crate) fn batch_id(batch: [u8; 6], index: usize) -> [u8; 8] {
    let mut id = [0; 8];
    id[..6].copy_from_slice(&batch);
    id[6..].copy_from_slice(&(index as u16).to_be_bytes());
    id
}

/// The lease set members of a parsed reply's deliveries, in list order.
fn members(batch: [u8; 6], claimed: &[Claimed]) -> Vec<Bytes> {
    (claimed.iter().enumerate())
        .filter(|(_, c)| c.count > 0)
        .map(|(i, c)| member(batch_id(batch, i + 1), c.count as u32, c.level, &c.value))
        .collect()
}

impl<T: 'static> ReliableQueue<T> {
    /// Takes up to `n` (at most [`CLAIM_BATCH`]) ready values in one
    /// script, without waiting. Cancel safe: a batch claimed for a caller
    /// that stopped waiting goes back to the head, uncounted.
    pub(crate) async fn take_ready_batch(&self, n: usize) -> Result<Batch<T>> {
        if self.handle.core.is_shutting_down() {
            return Err(Error::Shutdown);
        }
        self.handle.core.seen(&self.handle.keys);
        let batch: [u8; 6] = fastrand::u64(..).to_le_bytes()[..6].try_into().expect("6 bytes");
        let keys = &self.handle.keys;
        let redis_keys = SCRIPTS.claim_batch.keys(keys).build();
        let args = vec![
            Value::Bytes(Bytes::copy_from_slice(&batch)),
            Value::from(n.clamp(1, CLAIM_BATCH) as i64),
            Value::from(crate::wire::time::saturating_ms(self.settings.visibility)),
            Value::from(i64::from(self.settings.max_deliveries)),
            Value::from(CLAIM_BATCH_BYTES),
            Value::from(&**self.consumer()),
        ];
        let conn = self.handle.core.conn_for(keys.destination())?.clone();
        let command: Command<Result<Value>> = {
            let (core, queue, settings) = (self.handle.core.clone(), keys.clone(), self.settings);
            Box::pin(async move {
                // Sent once (`Resend::Once`): a lost reply is an unknown outcome.
                let reply = SCRIPTS
                    .claim_batch
                    .run(&conn, queue.destination(), redis_keys, args)
                    .await;
                let reply = reply.map_err(Error::from);
                if let Err(Error::OutcomeUnknown { .. }) = reply {
                    // Whether its caller still waits or not: the batch's
                    // deliveries, if it ran, are found by the batch id.
                    super::lost_claim::recover_batch_later(&core, &queue, settings, batch);
                }
                reply
            })
        };
        let undo = {
            let (core, keys, settings) = (self.handle.core.clone(), keys.clone(), self.settings);
            move |reply: Result<Value>| async move {
                let Ok(Answered::Claimed(_, claimed, ..)) = reply.and_then(parse) else {
                    return;
                };
                // In one release, so that the head is in list order again.
                let leases = (members(batch, &claimed).into_iter())
                    .map(|member| DeliveryLease::new(core.clone(), &keys, settings, member))
                    .collect();
                if let Err(error) = DeliveryLease::release_unhandled(leases, IN_BACKGROUND).await {
                    tracing::warn!(queue = keys.destination(), %error, "could not give back values claimed for a take that stopped waiting; their visibility timeout will");
                }
            }
        };
        let reply = detach(command, undo, self.handle.core.settling())
            .until_answered()
            .reply()
            .await;
        match reply {
            Ok(reply) => match parse(reply)? {
                Answered::Claimed(now, claimed, more, room) => {
                    self.batch_claimed(batch, now, claimed, more, room).await
                }
                Answered::Paused => Ok(Batch::Paused),
                Answered::Full => {
                    self.handle.limit_room(Some(0));
                    Ok(Batch::Full)
                }
            },
            Err(error) if error.is_transient() => {
                tracing::warn!(queue = self.name(), %error, "batch claim failed; what it took goes back to the queue");
                Ok(Batch::Nothing)
            }
            Err(error) => Err(error),
        }
    }

    /// What a batch claim that ran came to; notes the room the queue's
    /// concurrency limit has left.
    async fn batch_claimed(
        &self,
        batch: [u8; 6],
        now: i64,
        claimed: Vec<Claimed>,
        more: bool,
        room: Option<i64>,
    ) -> Result<Batch<T>> {
        self.handle.limit_room(room);
        match (claimed.is_empty(), more) {
            // Expired values skipped, as many as a call may: empty, as
            // when every value went to the dead letters (take again).
            (true, true) => Ok(Batch::Taken(Vec::new())),
            (true, false) => Ok(Batch::Nothing),
            (false, _) => {
                let taken = self.deliver_batch(batch, now, claimed).await;
                // Feature `opentelemetry`: the contexts offered with the values.
                #[cfg(feature = "opentelemetry")]
                let taken = self.adopt_traces(taken).await;
                Ok(Batch::Taken(taken))
            }
        }
    }

    /// The deliveries of a batch claim's values, decoded; counts lateness
    /// and dead letters as single claims do. Every decoded value is a
    /// `Delivery` (which gives its value back when dropped) before the first
    /// await, so a caller that stops waiting meanwhile loses none of them.
    async fn deliver_batch(
        &self,
        batch: [u8; 6],
        now: i64,
        claimed: Vec<Claimed>,
    ) -> Vec<std::result::Result<Delivery<T>, DecodeError>> {
        let mut delivered: Vec<Option<std::result::Result<Delivery<T>, DecodeError>>> =
            Vec::with_capacity(claimed.len());
        let mut undecodable = Vec::new();
        // One answer, one lease start for its values (a clock read each
        // showed in a busy worker's profile).
        let leased_at = tokio::time::Instant::now();
        for (
            i,
            Claimed {
                value,
                count,
                due,
                job,
                level,
                headers,
            },
        ) in claimed.into_iter().enumerate()
        {
            if count <= 0 {
                self.handle.core.count_dead_lettered(1);
                crate::telemetry::dead_lettered(self.name(), DeadLettered::Deliveries);
                tracing::warn!(
                    queue = self.name(),
                    deliveries = -count,
                    dead_letter = self.handle.keys.dead_letter(),
                    "value delivered too often without an ack; moved to the dead-letter list"
                );
                continue;
            }
            let lateness = due.as_deref().and_then(crate::wire::time::parse_score).map(|due| {
                let ms = (now - due).max(0);
                crate::telemetry::delivered(self.name(), ms);
                std::time::Duration::from_millis(ms as u64)
            });
            let count = u32::try_from(count).unwrap_or(u32::MAX);
            let member = member(batch_id(batch, i + 1), count, level, &value);
            // Headers that do not read (written by hand) fail the value as
            // a payload that does not decode would: nothing silently lost.
            let headers = match headers.as_deref().map(crate::Headers::decode).transpose() {
                Ok(headers) => headers,
                Err(why) => {
                    let error = DecodeError::new("headers", value, why);
                    undecodable.push((delivered.len(), member, error));
                    delivered.push(None);
                    continue;
                }
            };
            match codec::decode(&*self.handle.codec, value) {
                Ok(decoded) => delivered.push(Some(Ok(Delivery::new(
                    self, member, count, lateness, decoded, leased_at,
                )
                .with_job(job)
                .with_headers(headers)))),
                Err(error) => {
                    undecodable.push((delivered.len(), member, error));
                    delivered.push(None);
                }
            }
        }
        for (at, member, error) in undecodable {
            delivered[at] = Some(Err(self.give_back_undecodable(member, error).await));
        }
        delivered.into_iter().flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_ids_share_the_batch_and_differ_by_index() {
        let batch = [1, 2, 3, 4, 5, 6];
        assert_eq!(batch_id(batch, 1), [1, 2, 3, 4, 5, 6, 0, 1]);
        assert_eq!(batch_id(batch, 300), [1, 2, 3, 4, 5, 6, 1, 44]);
    }
}
