//! One run of a transfer script: the regular transfer, or one step of a sweep.

use bytes::Bytes;
use fred::types::Value;

use super::Clock;
use crate::connection::reply;
use crate::connection::request::LaneRun;
use crate::connection::script::{Script, SCRIPTS};
use crate::error::{Error, Result};
use crate::wire::keys::{KeyRole, QueueKeys};
use crate::wire::time;

/// How far from either end of the pending list the regular transfer looks
/// for an element before calling it deep (each probe costs ~18 ns an element).
pub(crate) const PROBE: i64 = 1_000;
/// Most elements one sweep run reads.
pub(crate) const SWEEP_WINDOW: i64 = 10_000;
/// Most bytes of elements one sweep run reads: with large payloads this, not
/// [`SWEEP_WINDOW`], bounds a run (1 MiB: ~100 elements of 10 KB).
pub(crate) const SWEEP_BYTES: i64 = 1 << 20;
/// Most elements one sweep run moves.
pub(crate) const SWEEP_MOST: i64 = 2_000;
/// Time one sweep run may spend reading, marking and removing the marks (ms),
/// from its start; moving what it removed adds a few ms. The removal pass
/// scans the list from the nearer end to the window, so the time it took in
/// the last run is kept for it.
pub(crate) const SWEEP_BUDGET_MS: i64 = 30;
/// How long a sweep lease outlives its holder's last run (ms): after that
/// another client may take the sweep over.
pub(crate) const SWEEP_LEASE_MS: i64 = 10_000;

/// What one run of the regular transfer script did.
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
    /// It stopped at a due element deep inside a long pending list; this many
    /// elements are due.
    pub deep: Option<u64>,
    /// Due time (ms) of the first element moved, when any moved.
    pub first_moved_due_ms: Option<i64>,
    /// Elements still pending after the run.
    pub pending: u64,
    /// Elements in the destination list after the run.
    pub ready: u64,
}

impl TransferOutcome {
    /// Whether due elements remain (a backlog larger than one batch).
    pub(crate) fn backlog(&self) -> bool {
        self.head_due_ms.is_some_and(|head| head <= self.now_ms)
    }
}

/// Runs the regular transfer once for `keys`, as `run` of its lane (a
/// resend answers what the first run did); `full_scans` elements found
/// near neither end may be searched for through the whole pending list.
pub(crate) async fn run_transfer(
    conn: &fred::clients::Client,
    keys: &QueueKeys,
    run: &LaneRun,
    clock: Clock,
    batch: usize,
    full_scans: u32,
) -> Result<TransferOutcome> {
    let now_arg = match clock {
        Clock::Local => Value::from(time::now_ms()),
        Clock::Server => Value::Bytes(Bytes::new()),
    };
    let args = vec![
        now_arg,
        Value::from(batch as i64),
        Value::from(PROBE),
        Value::from(i64::from(full_scans)),
        run.id(),
    ];
    let value = run_script(&SCRIPTS.transfer, conn, keys, run, args).await?;
    let [moved, quarantined, head, now, deep, due, first, pending, ready] = reply::tuple::<9>(value)?;
    let head_due_ms = reply::opt_score(head)?;
    let first_moved_due_ms = reply::opt_score(first)?;
    let now_ms = match reply::opt_text(now)? {
        Some(text) => time::parse_score(&text).ok_or_else(|| Error::Protocol(format!("bad time {text:?}")))?,
        None => return Err(Error::Protocol("transfer returned no time".into())),
    };
    Ok(TransferOutcome {
        moved: reply::int(&moved)? as u64,
        quarantined: reply::int(&quarantined)? as u64,
        head_due_ms,
        now_ms,
        deep: (reply::int(&deep)? == 1).then(|| reply::int(&due).unwrap_or(0) as u64),
        first_moved_due_ms,
        pending: reply::int(&pending)? as u64,
        ready: reply::int(&ready)? as u64,
    })
}

/// What one sweep window did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WindowOutcome {
    pub next_cursor: i64,
    pub moved: u64,
    pub quarantined: u64,
    /// 0 once the cursor is past the end of the pending list (the sweep is
    /// over and its lease deleted), or when another client holds the lease.
    pub scanned: u64,
    /// `None`: this client holds the sweep lease (and `bytes` were read);
    /// `Some(ttl_ms)`: another client sweeps the queue, or it rests after a
    /// sweep, for at least this long.
    pub busy_ms: Option<i64>,
    /// The lease found held is a rest after a sweep (nobody sweeps).
    pub resting: bool,
    /// Bytes of elements read.
    pub bytes: u64,
    /// How long removing the marked elements took (µs).
    pub remove_us: i64,
    /// How long the run took in Redis (µs).
    pub took_us: i64,
}

/// Reads the window at `cursor` and moves the elements in it that are due,
/// as `run` of its lane, under the queue's sweep lease held as the lane's
/// token (taken when free), keeping `reserve_us` of the time budget for
/// removing the marks; when the sweep ends, the lease rests `rest_ms`
/// before any client may sweep again.
pub(crate) async fn sweep_window(
    conn: &fred::clients::Client,
    keys: &QueueKeys,
    run: &LaneRun,
    clock: Clock,
    cursor: i64,
    reserve_us: i64,
    rest_ms: i64,
) -> Result<WindowOutcome> {
    let now_arg = match clock {
        Clock::Local => Value::from(time::now_ms()),
        Clock::Server => Value::Bytes(Bytes::new()),
    };
    let args = vec![
        Value::from(cursor),
        now_arg,
        Value::from(run.lane()),
        Value::from(SWEEP_LEASE_MS),
        Value::from(SWEEP_BYTES),
        Value::from(SWEEP_BUDGET_MS),
        Value::from(SWEEP_MOST),
        Value::from(SWEEP_WINDOW),
        Value::from(reserve_us),
        Value::from(rest_ms),
        run.id(),
    ];
    let value = run_script(&SCRIPTS.sweep_window, conn, keys, run, args).await?;
    let [next, moved, quarantined, scanned, leased, last, remove_us, took_us] = reply::tuple::<8>(value)?;
    let last = reply::int(&last)?;
    let leased = reply::int(&leased)?;
    let (resting, leased) = (leased == 2, leased == 1);
    Ok(WindowOutcome {
        next_cursor: reply::int(&next)?,
        moved: reply::int(&moved)? as u64,
        quarantined: reply::int(&quarantined)? as u64,
        scanned: reply::int(&scanned)? as u64,
        busy_ms: (!leased).then_some(last),
        resting,
        bytes: if leased { last as u64 } else { 0 },
        remove_us: reply::int(&remove_us)?,
        took_us: reply::int(&took_us)?,
    })
}

/// Runs a script on the queue's destination, timeout set, pending list and
/// quarantine list, then `extra` keys.
/// Runs a transfer script on `keys`' queue as `run` of its lane (its
/// record is the script's lane key).
async fn run_script(
    script: &Script,
    conn: &fred::clients::Client,
    keys: &QueueKeys,
    run: &LaneRun,
    args: Vec<Value>,
) -> Result<Value> {
    let all = script.keys(keys).with(KeyRole::Lane, run.record()).build();
    Ok(script.run(conn, keys.destination(), all, args).await?)
}
