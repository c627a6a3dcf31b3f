//! Offers the completions of a queue's complete batches, once each
//! (`lua/lib/batches.lua` puts a batch in the outbox in the script that
//! counts its last member).
//!
//! The target may sit in another slot (a Cluster), so the script that
//! completes a batch cannot write to it: a reaper pass of any client
//! offers the completion to the target with a deduplication id of the
//! batch, then marks the batch delivered (`lua/batch_delivered.lua`). A
//! mover that dies, or whose reply is lost, between the two leaves the
//! batch in the outbox; the next pass offers again, which the
//! deduplication answers as a duplicate, and marks it. So the target gets
//! the completion once unless a batch stays undelivered for longer than
//! the deduplication window ([`DEDUP_WINDOW`]).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{CommandResult, Error, Result};
use crate::queue::delayed::{BatchStatus, DelayedQueue};
use crate::queue::Core;
use crate::wire::codec::BytesCodec;
use crate::wire::keys::QueueKeys;

/// How long a completion's offer is deduplicated on its target.
pub(crate) const DEDUP_WINDOW: Duration = Duration::from_secs(30 * 24 * 3600);
/// Batches one pass delivers, at most.
const PER_PASS: i64 = 16;
/// How long a completion whose offer failed waits before it is tried again.
const RETRY_AFTER_MS: i64 = 60_000;

/// Offers the completions waiting in `keys`' outbox (at most 16): one
/// `EXISTS` when there are none. Returns how many it delivered.
pub(crate) async fn deliver(core: &Arc<Core>, keys: &QueueKeys) -> Result<usize> {
    let conn = core.conn()?;
    let outbox = keys.batch_outbox();
    // The due ones: one whose offer failed waits its backoff, so a few
    // stuck completions (a full target) cannot hold up the others.
    let waiting: Vec<Value> = conn
        .custom(
            CustomCommand::new_static("ZRANGE", ClusterHash::FirstKey, false),
            vec![
                Value::from(outbox.as_str()),
                Value::from("-inf"),
                // This host's clock against the server's: 10 s of skew
                // delays nothing.
                Value::from(crate::wire::time::now_ms() + 10_000),
                Value::from("BYSCORE"),
                Value::from("LIMIT"),
                Value::from(0),
                Value::from(PER_PASS),
            ],
        )
        .await
        .on_key(&outbox)?;
    let mut delivered = 0;
    for bid in waiting {
        let Some(bid) = reply::opt_text(bid)? else { continue };
        match deliver_one(core, keys, &bid).await {
            Ok(true) => delivered += 1,
            Ok(false) => {}
            Err(Error::Shutdown) => return Err(Error::Shutdown),
            Err(error) => {
                tracing::warn!(queue = keys.destination(), batch = bid, %error, "could not offer a batch's completion; it is tried again in a minute");
                // XX: only while it still waits (another mover may have
                // delivered it meanwhile).
                let _: Result<Value> = conn
                    .custom(
                        CustomCommand::new_static("ZADD", ClusterHash::FirstKey, false),
                        vec![
                            Value::from(outbox.as_str()),
                            Value::from("XX"),
                            Value::from(crate::wire::time::now_ms() + RETRY_AFTER_MS),
                            Value::from(bid.as_str()),
                        ],
                    )
                    .await
                    .on_key(&outbox);
            }
        }
    }
    Ok(delivered)
}

/// Offers batch `bid`'s completion and marks it delivered.
async fn deliver_one(core: &Arc<Core>, keys: &QueueKeys, bid: &str) -> Result<bool> {
    let key = keys.batches();
    let [record, data]: [Value; 2] = core
        .conn()?
        .custom::<Vec<Value>, _>(
            CustomCommand::new_static("HMGET", ClusterHash::FirstKey, false),
            vec![
                Value::from(key.as_str()),
                Value::from(format!("b:{bid}")),
                Value::from(format!("d:{bid}")),
            ],
        )
        .await
        .on_key(&key)?
        .try_into()
        .map_err(|_| Error::Protocol("HMGET answered another number of fields".into()))?;
    let status = match reply::opt_bytes(record)? {
        Some(raw) => BatchStatus::parse(bid, &raw)
            .ok_or_else(|| Error::Protocol(format!("the record of batch {bid:?} does not read")))?,
        None => return mark_delivered(core, keys, bid).await, // expired: nothing to offer
    };
    if let Some(target) = &status.target {
        let data: serde_json::Value = match reply::opt_bytes(data)? {
            Some(raw) => serde_json::from_slice(&raw).unwrap_or(serde_json::Value::Null),
            None => serde_json::Value::Null,
        };
        let completion = serde_json::json!({
            "batch": bid,
            "queue": keys.destination(),
            "total": status.total,
            "handled": status.handled,
            "dead_lettered": status.dead_lettered,
            "cancelled": status.cancelled,
            "data": data,
        });
        let payload = Bytes::from(serde_json::to_vec(&completion).expect("JSON values serialize"));
        // In the members' format: the Java fleet that read them reads it.
        let queue = DelayedQueue::<Bytes>::new(Arc::clone(core), target, Arc::new(BytesCodec))?
            .without_transfer()
            .with_format(status.format);
        // The batch's creation time in the id: a batch id used again after
        // its record expired is another batch, with a completion of its own.
        let created = crate::wire::time::to_ms(status.created);
        let dedup = crate::queue::delayed::Dedup::by_id(
            format!("delayq-batch:{}:{bid}:{created}", keys.destination()),
            DEDUP_WINDOW,
        );
        let offered = queue.offer_dedup(&payload, Duration::ZERO, &dedup).await?;
        tracing::info!(
            queue = keys.destination(),
            batch = bid,
            target,
            ?offered,
            "offered a batch's completion"
        );
    }
    mark_delivered(core, keys, bid).await
}

async fn mark_delivered(core: &Core, keys: &QueueKeys, bid: &str) -> Result<bool> {
    let script = &SCRIPTS.batch_delivered;
    let value = script
        .run(
            core.conn()?,
            keys.destination(),
            script.keys(keys).build(),
            vec![Value::from(bid)],
        )
        .await?;
    Ok(reply::int(&value)? == 1)
}
