//! One run of the transfer script.

use bytes::Bytes;
use fred::types::Value;

use crate::client::Clock;
use crate::error::{Error, Result};
use crate::keys::QueueKeys;
use crate::reply;
use crate::script::SCRIPTS;
use crate::time;

/// What one run of the transfer script did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TransferOutcome {
    /// Elements pushed to the destination list.
    pub moved: u64,
    /// Malformed elements moved to the quarantine list.
    pub quarantined: u64,
    /// Due time (ms, producer clock) of the earliest element still pending.
    pub head_due_ms: Option<i64>,
    /// The "now" the script used (ms, local or server clock).
    pub now_ms: i64,
}

impl TransferOutcome {
    /// Whether due elements remain (a backlog larger than one batch).
    pub fn backlog(&self) -> bool {
        self.head_due_ms.is_some_and(|head| head <= self.now_ms)
    }
}

/// Runs the transfer script once for `keys`.
pub(crate) async fn run_transfer(
    conn: &fred::clients::Client,
    keys: &QueueKeys,
    clock: Clock,
    batch: usize,
) -> Result<TransferOutcome> {
    let script = &SCRIPTS.transfer;
    let now_arg = match clock {
        Clock::Local => Value::from(time::now_ms()),
        Clock::Server => Value::Bytes(Bytes::new()),
    };
    let value = script
        .run(
            conn,
            vec![
                keys.destination().into(),
                keys.timeout().into(),
                keys.pending().into(),
                keys.quarantine().into(),
            ],
            vec![now_arg, Value::from(batch as i64)],
        )
        .await
        .map_err(|e| Error::from_script(e, script.name, keys.destination()))?;
    let [moved, quarantined, head, now] = reply::tuple::<4>(value)?;
    let head_due_ms = match reply::opt_text(head)? {
        None => None,
        Some(text) => Some(time::parse_score(&text).ok_or_else(|| Error::Protocol(format!("bad score {text:?}")))?),
    };
    let now_ms = match reply::opt_text(now)? {
        Some(text) => time::parse_score(&text).ok_or_else(|| Error::Protocol(format!("bad time {text:?}")))?,
        None => return Err(Error::Protocol("transfer returned no time".into())),
    };
    Ok(TransferOutcome {
        moved: reply::int(&moved)? as u64,
        quarantined: reply::int(&quarantined)? as u64,
        head_due_ms,
        now_ms,
    })
}
