//! Redis key names of a queue: Redisson's four, and the ones delayq adds.
//!
//! Every name is built here and nowhere else. All of them follow Redisson's
//! brace rule, so they hash to the Redis Cluster slot of the queue itself and
//! every multi-key script of a queue runs on one node.

use crate::error::Error;

/// Redisson's prefix for the timeout set (ZSET: element → due time in ms).
pub(crate) const TIMEOUT_PREFIX: &str = "redisson_delay_queue_timeout";
/// Redisson's prefix for the pending list (LIST of elements in offer order).
pub(crate) const PENDING_PREFIX: &str = "redisson_delay_queue";
/// Redisson's prefix for the wake-up channel.
pub(crate) const CHANNEL_PREFIX: &str = "redisson_delay_queue_channel";
/// delayq's prefix for elements the transfer could not unpack (LIST).
pub(crate) const QUARANTINE_PREFIX: &str = "delayq_quarantine";
/// delayq's prefix for values a reliable consumer moved (`BLMOVE`) and has
/// not claimed yet (LIST of raw values; only strays of dead consumers stay).
pub(crate) const STAGING_PREFIX: &str = "delayq_staging";
/// delayq's prefix for how much of the staging list the reaper watches (HASH:
/// `t` → ms, `k` → the first k values were there at time t).
pub(crate) const STAGING_MARK_PREFIX: &str = "delayq_staging_mark";
/// delayq's prefix for reliable deliveries by deadline (ZSET: 8-byte id,
/// 10-digit delivery count, value → deadline ms).
pub(crate) const LEASES_PREFIX: &str = "delayq_leases";
/// delayq's prefix for the delivery counts of given-back values, until their
/// next claim (HASH: SHA1 hex of the value → counts separated by spaces).
pub(crate) const COUNTS_PREFIX: &str = "delayq_counts";
/// delayq's prefix for when each count record expires (ZSET: SHA1 hex → ms).
pub(crate) const COUNTS_EXPIRY_PREFIX: &str = "delayq_counts_expiry";
/// delayq's prefix for recently acknowledged delivery ids (ZSET: id → ms;
/// bounded in time and size, expires when acks stop).
pub(crate) const ACKED_PREFIX: &str = "delayq_acked";
/// delayq's prefix for values delivered too often (LIST).
pub(crate) const DEAD_LETTER_PREFIX: &str = "delayq_dead_letter";
/// delayq's prefix for why each dead letter is one (LIST kept aligned with the
/// dead-letter list's tail: `<ms> <reason>` per value; older values may have none).
pub(crate) const DEAD_REASONS_PREFIX: &str = "delayq_dead_reasons";
/// delayq's prefix for when values moved to the destination were due, kept
/// while a worker tracks lateness (ZSET: value → due ms).
pub(crate) const DUE_PREFIX: &str = "delayq_due";
/// delayq's prefix for the marker that turns lateness tracking on (STRING, expires).
pub(crate) const DUE_TRACKING_PREFIX: &str = "delayq_due_tracking";
/// delayq's prefix for the lease of a queue's one sweep (STRING: the sweeping
/// client's id, expires unless renewed; `resting` for a moment after a sweep,
/// so that none starts again at once; see `lua/sweep_window.lua`).
pub(crate) const SWEEP_PREFIX: &str = "delayq_sweep";
/// delayq's prefix for the id index (HASH: 8 id bytes of an element offered
/// with an id → the element; see `DelayedQueue::offer_with_id`).
pub(crate) const IDS_PREFIX: &str = "delayq_ids";
/// delayq's prefix for the pause flag (STRING, ms since the epoch it was set:
/// delayq's transfers and reliable consumers wait while it exists).
pub(crate) const PAUSED_PREFIX: &str = "delayq_paused";
/// delayq's prefix for a queue's admission limits (HASH: `max_size`,
/// `max_payload`, `offers` = `off`, `takes` = `off`; see
/// `DelayedQueue::set_limits` and `lua/lib/limits.lua`).
pub(crate) const LIMITS_PREFIX: &str = "delayq_limits";
/// delayq's prefix for a queue's deduplication records (HASH: `i:<id>` or
/// `p:<payload SHA-1>` → the first 16 bytes of the element offered under it;
/// see `DelayedQueue::offer_dedup` and `lua/offer_dedup.lua`).
pub(crate) const DEDUP_PREFIX: &str = "delayq_dedup";
/// delayq's prefix for when each deduplication record expires, where the
/// server has no hash-field expiry (ZSET: record key → expiry ms).
pub(crate) const DEDUP_EXPIRY_PREFIX: &str = "delayq_dedup_expiry";
/// delayq's prefix for the reply of one request that may be resent (STRING:
/// a MessagePack record; replaced by a 60 s "consumed" mark once the reply is
/// read, else expires after an hour, or a day if it can still undo what it
/// removed; see `lua/lib/request.lua`).
pub(crate) const REQUEST_PREFIX: &str = "delayq_request";
/// delayq's prefix for the last reply of a lane of runs on the queue (STRING:
/// the run id, a space and the MessagePack reply of the lane's last transfer,
/// sweep window or reap that changed something, so that fred's resend of it
/// answers as it did; `delayq_runs:{N}:<lane>`, one per client lane, expires
/// 60 s after its last write; see `lua/lib/request.lua`).
pub(crate) const RUNS_PREFIX: &str = "delayq_runs";
/// delayq's prefix for a queue's recurring schedules (HASH: schedule name →
/// JSON record with its definition, payload, next occurrence and counts; see
/// `lua/schedule_fire.lua`).
pub(crate) const SCHEDULES_PREFIX: &str = "delayq_schedules";
/// delayq's prefix for the last schedule revision given on a queue (STRING,
/// never expires).
pub(crate) const SCHEDULE_REVISIONS_PREFIX: &str = "delayq_schedule_revs";
/// delayq's prefix for the heartbeats of a queue's schedule runners (ZSET:
/// runner id → its last beat).
pub(crate) const SCHEDULE_RUNNERS_PREFIX: &str = "delayq_schedule_runners";
/// delayq's prefix for the recent fires of a queue's schedules (HASH:
/// schedule name → JSON array of its last 20 fires, newest first; removed
/// with the schedule; see `lua/lib/schedules.lua`).
pub(crate) const SCHEDULE_FIRES_PREFIX: &str = "delayq_schedule_fires";
/// delayq's prefix for the state of a queue's shared worker rate limit
/// (STRING: the GCRA "theoretical arrival time" in µs on the Redis server's
/// clock; expires when idle; see `lua/rate_limit.lua`).
pub(crate) const RATE_PREFIX: &str = "delayq_rate";
/// delayq's prefix for the records of a queue's running workers (HASH:
/// worker id → a small JSON record of its settings, counts and what it runs,
/// as of its last beat; see `lua/worker_beat.lua`).
pub(crate) const WORKERS_PREFIX: &str = "delayq_workers";
/// delayq's prefix for when each of a queue's workers last beat (ZSET:
/// worker id → ms on the Redis server's clock; bounded, expires when no
/// worker beats).
pub(crate) const WORKER_BEATS_PREFIX: &str = "delayq_worker_beats";
/// delayq's prefix for a queue's lifecycle events (STREAM, trimmed with
/// `MAXLEN ~`; see `src/queue/events/`).
pub(crate) const EVENTS_PREFIX: &str = "delayq_events";
/// delayq's prefix for the switch of a queue's lifecycle events (STRING: the
/// stream's max length; absent: no events are written).
pub(crate) const EVENTS_CONFIG_PREFIX: &str = "delayq_events_config";
/// delayq's prefix for a queue's totals (HASH: `offered`, `transferred`,
/// `acked`, `failed`, `dead_lettered`, `timed_out`, `duplicate`, `expired`,
/// `cancelled` → counts since the key was made, added by the scripts that do each;
/// nine fields at most, expires
/// 35 days after the last count; see `lua/lib/events.lua`).
pub(crate) const STATS_PREFIX: &str = "delayq_stats";
/// delayq's prefix for a partitioned queue's layout (HASH: `version`,
/// `count`, `names` one a line, `hash`, `created`; see `wire/partitions.rs`
/// and `lua/partitions_create.lua`). Named after the logical queue, which
/// has no other key.
pub(crate) const PARTITIONS_PREFIX: &str = "delayq_partitions";
/// delayq's prefix for the trace contexts of offers made inside a span
/// (HASH: SHA1 hex of the payload → "due expires context" lines; the field
/// `skipped` counts contexts not stored for the bounds; see
/// `lua/lib/traces.lua`, feature `opentelemetry`).
pub(crate) const TRACES_PREFIX: &str = "delayq_traces";
/// delayq's prefix for when each trace record expires (ZSET: SHA1 hex → ms).
pub(crate) const TRACES_EXPIRY_PREFIX: &str = "delayq_traces_expiry";
/// delayq's prefix for the histories of jobs offered with an id (HASH:
/// `h:<id>` → a JSON record of where the job is and its last attempts,
/// `r:<SHA1 hex of a payload>` → the ids of the ready values with that
/// payload, oldest first, `l:<8-byte delivery id>` → the id of the job a
/// delivery runs; see `lua/lib/jobs.lua`).
pub(crate) const JOBS_PREFIX: &str = "delayq_jobs";
/// delayq's prefix for when each job field expires (ZSET: field → ms).
pub(crate) const JOBS_EXPIRY_PREFIX: &str = "delayq_jobs_expiry";
/// delayq's prefix for a queue's batches (HASH: `b:<batch>` → its record,
/// `d:<batch>` → its completion's data, `m:<job id>` → the batch of a
/// member; see `lua/lib/batches.lua`).
pub(crate) const BATCHES_PREFIX: &str = "delayq_batches";
/// delayq's prefix for the complete batches whose completion is not offered
/// yet (ZSET: batch id → ms it completed).
pub(crate) const BATCH_OUTBOX_PREFIX: &str = "delayq_batch_outbox";
/// delayq's prefix for when each batch field expires (ZSET: field → ms).
pub(crate) const BATCHES_EXPIRY_PREFIX: &str = "delayq_batches_expiry";
/// delayq's prefix for the lines of grouped values (ZSET, read by lex:
/// key length, key, sequence, payload; see `lua/lib/groups.lua`).
pub(crate) const GROUP_VALUES_PREFIX: &str = "delayq_group_values";
/// delayq's prefix for grouped values not due yet (ZSET → due ms).
pub(crate) const GROUP_DELAYED_PREFIX: &str = "delayq_group_delayed";
/// delayq's prefix for the group keys that may run (ZSET: key → turn).
pub(crate) const GROUP_RING_PREFIX: &str = "delayq_group_ring";
/// delayq's prefix for the group keys held (ZSET: key → ms they may run).
pub(crate) const GROUP_BLOCKED_PREFIX: &str = "delayq_group_blocked";
/// delayq's prefix for the groups' state (HASH: in flight per key, the key
/// of each grouped delivery, counters, settings).
pub(crate) const GROUP_STATE_PREFIX: &str = "delayq_group_state";

/// delayq's prefix for a queue's ready values offered with a priority above
/// the default (ZSET: one level digit `1`-`9`, then the packed element →
/// a score that orders by level, highest first, then by arrival; see
/// `lua/lib/priority.lua`). Java never sees these: the default priority is
/// the destination list itself.
pub(crate) const PRIORITY_READY_PREFIX: &str = "delayq_priority_ready";
/// delayq's prefix for a queue's delayed values with a priority above the
/// default (ZSET: level digit and packed element → due ms), moved to the
/// ready set by the takes that look at priorities.
pub(crate) const PRIORITY_DELAYED_PREFIX: &str = "delayq_priority_delayed";
/// delayq's prefix for the marker that a queue has had priority values
/// (STRING: a counter that orders the ready set; never removed by delayq,
/// so that a consumer that saw it never has to look again).
pub(crate) const PRIORITY_MARKER_PREFIX: &str = "delayq_priority";
/// delayq's prefix for the TTL headers of a queue's deliveries of values
/// offered with a time to live (HASH: 8-byte delivery id → `T` or `t` and
/// the expiry as 13 digits, ms since the epoch; see `lua/lib/priority.lua`),
/// so that a give-back keeps the value's expiry. Written by the claim,
/// removed when the delivery is settled or given back.
pub(crate) const TTL_STORE_PREFIX: &str = "delayq_ttl";

/// delayq's registry of the queues it has seen (ZSET: queue name → ms of
/// its last registration; one key for the whole server, see
/// `queue/registry.rs`).
pub(crate) const REGISTRY_KEY: &str = "delayq_queues";

/// All key names of one queue.
///
/// ```
/// use delayq::QueueKeys;
/// let keys = QueueKeys::new("orders").unwrap();
/// assert_eq!(keys.destination(), "orders");
/// assert_eq!(keys.timeout(), "redisson_delay_queue_timeout:{orders}");
/// assert_eq!(keys.pending(), "redisson_delay_queue:{orders}");
/// assert_eq!(keys.channel(), "redisson_delay_queue_channel:{orders}");
/// // A name that already has a hash tag keeps it and gets no extra braces.
/// let tagged = QueueKeys::new("{shop}orders").unwrap();
/// assert_eq!(tagged.timeout(), "redisson_delay_queue_timeout:{shop}orders");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueueKeys {
    name: String,
    timeout: String,
    pending: String,
    channel: String,
    quarantine: String,
    staging: String,
    staging_mark: String,
    leases: String,
    counts: String,
    counts_expiry: String,
    acked: String,
    dead_letter: String,
    dead_reasons: String,
    due: String,
    due_tracking: String,
    ids: String,
    paused: String,
}

impl QueueKeys {
    /// Builds the names for the destination queue `name` (the name Java passes
    /// to `getBlockingQueue`, after any Redisson `NameMapper`).
    ///
    /// Fails with [`Error::InvalidQueueName`] for an empty name, or one whose
    /// braces would put Redisson's keys in another cluster slot than the queue
    /// (an unclosed or empty `{}` hash tag, or a `}` without a `{`).
    pub fn new(name: &str) -> Result<Self, Error> {
        validate_name(name)?;
        Ok(QueueKeys {
            name: name.to_owned(),
            timeout: key_for(TIMEOUT_PREFIX, name),
            pending: key_for(PENDING_PREFIX, name),
            channel: key_for(CHANNEL_PREFIX, name),
            quarantine: key_for(QUARANTINE_PREFIX, name),
            staging: key_for(STAGING_PREFIX, name),
            staging_mark: key_for(STAGING_MARK_PREFIX, name),
            leases: key_for(LEASES_PREFIX, name),
            counts: key_for(COUNTS_PREFIX, name),
            counts_expiry: key_for(COUNTS_EXPIRY_PREFIX, name),
            acked: key_for(ACKED_PREFIX, name),
            dead_letter: key_for(DEAD_LETTER_PREFIX, name),
            dead_reasons: key_for(DEAD_REASONS_PREFIX, name),
            due: key_for(DUE_PREFIX, name),
            due_tracking: key_for(DUE_TRACKING_PREFIX, name),
            ids: key_for(IDS_PREFIX, name),
            paused: key_for(PAUSED_PREFIX, name),
        })
    }

    /// The queue a key of it belongs to, from the key's name: the timeout
    /// set, the pending list, the dead-letter or quarantine list, or the
    /// schedules hash (what a `SCAN` finds of a queue: a queue that has only
    /// schedules has no other key yet). `None` for any other key. A name in braces
    /// with no other brace (`…:{orders}`) is the queue `orders`, as Redisson
    /// names it; a name that keeps its own hash tag comes back whole.
    ///
    /// ```
    /// use delayq::QueueKeys;
    /// let keys = QueueKeys::from_key("redisson_delay_queue_timeout:{orders}").unwrap();
    /// assert_eq!(keys.destination(), "orders");
    /// let tagged = QueueKeys::from_key("delayq_dead_letter:{shop}orders").unwrap();
    /// assert_eq!(tagged.destination(), "{shop}orders");
    /// let scheduled = QueueKeys::from_key("delayq_schedules:{reports}").unwrap();
    /// assert_eq!(scheduled.destination(), "reports");
    /// assert!(QueueKeys::from_key("orders").is_none());
    /// ```
    pub fn from_key(key: &str) -> Option<Self> {
        let rest = [
            TIMEOUT_PREFIX,
            PENDING_PREFIX,
            DEAD_LETTER_PREFIX,
            QUARANTINE_PREFIX,
            SCHEDULES_PREFIX,
        ]
        .iter()
        .find_map(|prefix| key.strip_prefix(prefix)?.strip_prefix(':'))?;
        let name = match rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            Some(inner) if !inner.contains(['{', '}']) => inner,
            _ => rest,
        };
        let keys = QueueKeys::new(name).ok()?;
        let found = [keys.timeout(), keys.pending(), keys.dead_letter(), keys.quarantine()].contains(&key)
            || keys.schedules() == key;
        found.then_some(keys)
    }

    /// The key patterns that find queues by `SCAN`, each with the type its
    /// keys hold: the timeout set (any queue with pending elements, Java's
    /// too), the dead-letter list and the schedules hash (a queue with only
    /// those). A queue holding only ready values has none of them: the
    /// registry of queues names it. [`from_key`](Self::from_key) turns what
    /// they find back into the queue.
    pub(crate) fn discovery_patterns() -> [(String, &'static str); 3] {
        [
            (format!("{TIMEOUT_PREFIX}:*"), "zset"),
            (format!("{DEAD_LETTER_PREFIX}:*"), "list"),
            (format!("{SCHEDULES_PREFIX}:*"), "hash"),
        ]
    }

    /// A key of a tool's own beside the queue: `delayq_<what>:{N}`, in the
    /// queue's cluster slot (the name's own hash tag if it has one), as
    /// every key delayq adds. For state Java does not know, kept by a tool
    /// built on delayq (the dashboard keeps its per-minute history in
    /// `companion("dashboard_history")`).
    ///
    /// ```
    /// use delayq::QueueKeys;
    /// let keys = QueueKeys::new("orders").unwrap();
    /// assert_eq!(keys.companion("dashboard_history"), "delayq_dashboard_history:{orders}");
    /// let tagged = QueueKeys::new("{shop}orders").unwrap();
    /// assert_eq!(tagged.companion("dashboard_history"), "delayq_dashboard_history:{shop}orders");
    /// ```
    pub fn companion(&self, what: &str) -> String {
        key_for(&format!("delayq_{what}"), &self.name)
    }

    /// The destination list consumers take from (`N`).
    pub fn destination(&self) -> &str {
        &self.name
    }

    /// The timeout set: element → due time (ms since the Unix epoch).
    pub fn timeout(&self) -> &str {
        &self.timeout
    }

    /// The pending list: elements in offer order.
    pub fn pending(&self) -> &str {
        &self.pending
    }

    /// The pub/sub channel offers publish new head due times on.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// delayq's list of elements moved aside because no format could unpack them.
    pub fn quarantine(&self) -> &str {
        &self.quarantine
    }

    /// Reliable consumption: values moved by a consumer's `BLMOVE` and not
    /// yet claimed (a plain list; normally empty or nearly so).
    pub fn staging(&self) -> &str {
        &self.staging
    }

    /// Reliable consumption: how much of the staging list the reaper watches.
    pub fn staging_mark(&self) -> &str {
        &self.staging_mark
    }

    /// Reliable consumption: the leases, one per delivery in flight (id,
    /// count and value) by visibility deadline (`delayq_leases:{N}`).
    pub fn leases(&self) -> &str {
        &self.leases
    }

    /// Reliable consumption: the delivery counts of given-back values, by
    /// the SHA1 of the value, until their next claim.
    pub fn counts(&self) -> &str {
        &self.counts
    }

    /// Reliable consumption: when each count record expires.
    pub fn counts_expiry(&self) -> &str {
        &self.counts_expiry
    }

    /// Reliable consumption: recently acknowledged delivery ids (makes `ack` idempotent).
    pub fn acked(&self) -> &str {
        &self.acked
    }

    /// Reliable consumption: values delivered more often than allowed.
    pub fn dead_letter(&self) -> &str {
        &self.dead_letter
    }

    /// delayq's reasons of the dead letters, aligned with the dead-letter list's tail.
    pub fn dead_reasons(&self) -> &str {
        &self.dead_reasons
    }

    /// Lateness tracking: when values recently moved to the destination were
    /// due, read by a reliable consumer's claim (see [`Worker`](crate::Worker)).
    pub fn due(&self) -> &str {
        &self.due
    }

    /// Lateness tracking: while this key exists, transfers record due times in [`due`](Self::due).
    pub fn due_tracking(&self) -> &str {
        &self.due_tracking
    }

    /// delayq's id index: the 8 id bytes of each element offered with an id → the element.
    pub fn ids(&self) -> &str {
        &self.ids
    }

    /// delayq's pause flag: while it exists, delayq's transfers and reliable
    /// consumers of the queue wait (Java's do not know it).
    pub fn paused(&self) -> &str {
        &self.paused
    }

    /// delayq's admission limits of the queue (a HASH; see
    /// [`DelayedQueue::set_limits`](crate::DelayedQueue::set_limits)): read by
    /// delayq's offers and consumers, not by Java's.
    pub fn limits(&self) -> String {
        key_for(LIMITS_PREFIX, &self.name)
    }

    /// delayq's deduplication records of the queue (a HASH; see
    /// [`DelayedQueue::offer_dedup`](crate::DelayedQueue::offer_dedup)).
    pub fn dedup(&self) -> String {
        key_for(DEDUP_PREFIX, &self.name)
    }

    /// When each deduplication record expires, on servers without hash-field
    /// expiry (a ZSET, swept a bounded step per deduplicated offer).
    pub fn dedup_expiry(&self) -> String {
        key_for(DEDUP_EXPIRY_PREFIX, &self.name)
    }

    /// delayq's ready values of a priority above the default (a ZSET; see
    /// [`DelayedQueue::offer_with_priority`](crate::DelayedQueue::offer_with_priority)).
    pub fn priority_ready(&self) -> String {
        key_for(PRIORITY_READY_PREFIX, &self.name)
    }

    /// delayq's delayed values of a priority above the default (a ZSET by
    /// due time).
    pub fn priority_delayed(&self) -> String {
        key_for(PRIORITY_DELAYED_PREFIX, &self.name)
    }

    /// The marker (and arrival counter) of a queue that has had priority
    /// values: consumers look at priorities only once it exists.
    pub fn priority_marker(&self) -> String {
        key_for(PRIORITY_MARKER_PREFIX, &self.name)
    }

    /// The TTL headers of deliveries of values offered with a time to live
    /// (a HASH by delivery id; see
    /// [`OfferOptions::ttl`](crate::OfferOptions::ttl)).
    pub fn ttl_store(&self) -> String {
        key_for(TTL_STORE_PREFIX, &self.name)
    }

    /// The layout of the partitioned queue of this name (see
    /// [`PartitionedQueue`](crate::PartitionedQueue)): a hash of its
    /// partition count and names.
    pub fn partitions(&self) -> String {
        key_for(PARTITIONS_PREFIX, &self.name)
    }

    /// The lease of the queue's sweep (a backlog drain of a long pending
    /// list): at most one client sweeps a queue at a time; expires on its own.
    pub fn sweep(&self) -> String {
        key_for(SWEEP_PREFIX, &self.name)
    }

    /// The queue's recurring schedules (see [`Client::schedule`](crate::Client::schedule)).
    pub fn schedules(&self) -> String {
        key_for(SCHEDULES_PREFIX, &self.name)
    }

    /// The last schedule revision given on the queue (never given twice;
    /// see `lua/schedule_save.lua`).
    pub(crate) fn schedule_revisions(&self) -> String {
        key_for(SCHEDULE_REVISIONS_PREFIX, &self.name)
    }

    /// The heartbeats of the queue's schedule runners (see
    /// `lua/schedule_beat.lua`).
    pub(crate) fn schedule_runners(&self) -> String {
        key_for(SCHEDULE_RUNNERS_PREFIX, &self.name)
    }

    /// The recent fires of the queue's schedules, by schedule name (see
    /// `lua/lib/schedules.lua`).
    pub(crate) fn schedule_fires(&self) -> String {
        key_for(SCHEDULE_FIRES_PREFIX, &self.name)
    }

    /// The trace contexts of offers made inside a span, by the SHA1 of the
    /// payload (feature `opentelemetry`; see `lua/lib/traces.lua`).
    pub fn traces(&self) -> String {
        key_for(TRACES_PREFIX, &self.name)
    }

    /// When each trace record expires.
    pub fn traces_expiry(&self) -> String {
        key_for(TRACES_EXPIRY_PREFIX, &self.name)
    }

    /// The histories of the jobs offered with an id: where each is, its
    /// last attempts (see `lua/lib/jobs.lua`).
    pub fn jobs(&self) -> String {
        key_for(JOBS_PREFIX, &self.name)
    }

    /// When each field of the job histories expires.
    pub fn jobs_expiry(&self) -> String {
        key_for(JOBS_EXPIRY_PREFIX, &self.name)
    }

    /// The queue's batches: their records and members (see
    /// [`DelayedQueue::offer_batch`](crate::DelayedQueue::offer_batch)).
    pub fn batches(&self) -> String {
        key_for(BATCHES_PREFIX, &self.name)
    }

    /// The complete batches whose completion is not offered yet.
    pub fn batch_outbox(&self) -> String {
        key_for(BATCH_OUTBOX_PREFIX, &self.name)
    }

    /// When each field of the batches expires.
    pub fn batches_expiry(&self) -> String {
        key_for(BATCHES_EXPIRY_PREFIX, &self.name)
    }

    /// The lines of grouped values (see
    /// [`OfferOptions::group`](crate::OfferOptions::group)).
    pub fn group_values(&self) -> String {
        key_for(GROUP_VALUES_PREFIX, &self.name)
    }

    /// Grouped values not due yet.
    pub fn group_delayed(&self) -> String {
        key_for(GROUP_DELAYED_PREFIX, &self.name)
    }

    /// The group keys that may run, in turn order.
    pub fn group_ring(&self) -> String {
        key_for(GROUP_RING_PREFIX, &self.name)
    }

    /// The group keys held until a time.
    pub fn group_blocked(&self) -> String {
        key_for(GROUP_BLOCKED_PREFIX, &self.name)
    }

    /// The groups' state: in flight per key, settings, counters.
    pub fn group_state(&self) -> String {
        key_for(GROUP_STATE_PREFIX, &self.name)
    }

    /// The state of the rate limit its workers share (see
    /// [`Worker::rate_limit`](crate::Worker::rate_limit)).
    pub fn rate(&self) -> String {
        key_for(RATE_PREFIX, &self.name)
    }

    /// The records of the queue's running workers, by worker id (see
    /// [`Client::workers`](crate::Client::workers)).
    pub fn workers(&self) -> String {
        key_for(WORKERS_PREFIX, &self.name)
    }

    /// When each of the queue's workers last beat, by worker id.
    pub fn worker_beats(&self) -> String {
        key_for(WORKER_BEATS_PREFIX, &self.name)
    }

    /// The queue's lifecycle events: a Redis Stream (see
    /// [`Client::events`](crate::Client::events)).
    pub fn events(&self) -> String {
        key_for(EVENTS_PREFIX, &self.name)
    }

    /// The queue's totals, counted on the server by delayq's scripts, so
    /// every process's work is counted (see
    /// [`QueueStatus::totals`](crate::QueueStatus::totals)).
    pub fn stats(&self) -> String {
        key_for(STATS_PREFIX, &self.name)
    }

    /// The switch of the queue's lifecycle events: while it exists, it holds
    /// the stream's max length and delayq's scripts write events (see
    /// [`Client::enable_events`](crate::Client::enable_events)).
    pub fn events_config(&self) -> String {
        key_for(EVENTS_CONFIG_PREFIX, &self.name)
    }

    /// The record of the lane `lane` (a client's random token) on this
    /// queue: the reply of its last run that changed something, for a
    /// resend (see `src/connection/request.rs`, `Lane`).
    pub(crate) fn runs(&self, lane: &str) -> String {
        format!("{}:{lane}", key_for(RUNS_PREFIX, &self.name))
    }
}

/// `prefix + ":" + name` when the name has a hash tag already, else `prefix + ":{" + name + "}"`.
/// The key where the request `id` on the queue (or list) `name` leaves its
/// reply, so that fred's resend of it changes nothing (see
/// `lua/lib/request.lua`); in the queue's cluster slot.
pub(crate) fn request_key(name: &str, id: &str) -> String {
    format!("{}:{id}", key_for(REQUEST_PREFIX, name))
}

/// A queue's keys stand for the queue where the client takes a queue
/// handle ([`Client::events`](crate::Client::events), ...), for a tool that
/// has only the name.
impl AsRef<QueueKeys> for QueueKeys {
    fn as_ref(&self) -> &QueueKeys {
        self
    }
}

/// What one of a script's KEYS is. Each script declares its KEYS as a list
/// of these, beside its resend rule (`connection/script.rs`); a key of the
/// queue is built from its [`QueueKeys`] in one place ([`KeyRole::of`]),
/// the others are given by the call (a request key, a lane record, another
/// list). A unit test holds each declaration to the script's own `-- KEYS:`
/// header, where each key is named by its [`phrase`](KeyRole::phrase).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyRole {
    Destination,
    Timeout,
    Pending,
    Channel,
    Quarantine,
    Staging,
    StagingMark,
    Leases,
    Counts,
    CountsExpiry,
    Acked,
    DeadLetter,
    DeadReasons,
    Due,
    DueTracking,
    Ids,
    Paused,
    Limits,
    Dedup,
    DedupExpiry,
    Sweep,
    Schedules,
    ScheduleRevisions,
    ScheduleRunners,
    ScheduleFires,
    Rate,
    Workers,
    WorkerBeats,
    EventsConfig,
    Events,
    /// The queue's totals (`delayq_stats`).
    Stats,
    /// Only with a trace context (feature `opentelemetry`).
    Traces,
    /// Only with a trace context (feature `opentelemetry`).
    TracesExpiry,
    Jobs,
    JobsExpiry,
    Batches,
    BatchOutbox,
    BatchesExpiry,
    GroupValues,
    GroupDelayed,
    GroupRing,
    GroupBlocked,
    GroupState,
    PriorityReady,
    PriorityDelayed,
    PriorityMarker,
    TtlStore,
    /// A partitioned queue's layout (`delayq_partitions`).
    Partitions,
    /// Given by the call: its request key (`lua/lib/request.lua`).
    Request,
    /// Given by the call: its lane's record (`request::Lane`).
    Lane,
    /// Given by the call: delayq's registry of queues.
    Registry,
    /// Given by the call: the list acted on (a queue's, or any list).
    List,
    /// Given by the call: the list a value was moved from.
    Source,
    /// Given by the call: the list a value goes to.
    Target,
}

impl KeyRole {
    /// How a script's `-- KEYS:` header names the key: each entry is its
    /// number, then this phrase (then any words of explanation). Read by
    /// the unit test that holds headers and declarations together.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn phrase(self) -> &'static str {
        match self {
            KeyRole::Destination => "destination list",
            KeyRole::Timeout => "timeout set",
            KeyRole::Pending => "pending list",
            KeyRole::Channel => "channel",
            KeyRole::Quarantine => "quarantine list",
            KeyRole::Staging => "staging list",
            KeyRole::StagingMark => "staging mark",
            KeyRole::Leases => "lease set",
            KeyRole::Counts => "count records",
            KeyRole::CountsExpiry => "count record expiry",
            KeyRole::Acked => "acked set",
            KeyRole::DeadLetter => "dead-letter list",
            KeyRole::DeadReasons => "dead-letter reasons",
            KeyRole::Due => "due-time set",
            KeyRole::DueTracking => "due-time marker",
            KeyRole::Ids => "id index",
            KeyRole::Paused => "pause flag",
            KeyRole::Limits => "limits hash",
            KeyRole::Dedup => "dedup records",
            KeyRole::DedupExpiry => "dedup expiry",
            KeyRole::Sweep => "sweep lease",
            KeyRole::Schedules => "schedules hash",
            KeyRole::ScheduleRevisions => "schedule revision",
            KeyRole::ScheduleRunners => "schedule runners",
            KeyRole::ScheduleFires => "schedule fires",
            KeyRole::Rate => "rate limiter",
            KeyRole::Workers => "worker records",
            KeyRole::WorkerBeats => "worker beats",
            KeyRole::EventsConfig => "events config",
            KeyRole::Events => "events stream",
            KeyRole::Stats => "stats hash",
            KeyRole::Traces => "trace records",
            KeyRole::TracesExpiry => "trace expiry",
            KeyRole::Jobs => "job records",
            KeyRole::JobsExpiry => "job record expiry",
            KeyRole::Batches => "batch records",
            KeyRole::BatchOutbox => "batch outbox",
            KeyRole::BatchesExpiry => "batch expiry",
            KeyRole::GroupValues => "group values",
            KeyRole::GroupDelayed => "group delayed",
            KeyRole::GroupRing => "group ring",
            KeyRole::GroupBlocked => "group blocked",
            KeyRole::GroupState => "group state",
            KeyRole::PriorityReady => "priority ready set",
            KeyRole::PriorityDelayed => "priority delayed set",
            KeyRole::PriorityMarker => "priority marker",
            KeyRole::TtlStore => "ttl store",
            KeyRole::Partitions => "partitions hash",
            KeyRole::Request => "request key",
            KeyRole::Lane => "lane record",
            KeyRole::Registry => "registry",
            KeyRole::List => "list",
            KeyRole::Source => "source list",
            KeyRole::Target => "target list",
        }
    }

    /// The key of `keys`' queue in this role; `None` for a key the call
    /// gives.
    pub(crate) fn of(self, keys: &QueueKeys) -> Option<String> {
        Some(match self {
            KeyRole::Destination => keys.destination().to_owned(),
            KeyRole::Timeout => keys.timeout().to_owned(),
            KeyRole::Pending => keys.pending().to_owned(),
            KeyRole::Channel => keys.channel().to_owned(),
            KeyRole::Quarantine => keys.quarantine().to_owned(),
            KeyRole::Staging => keys.staging().to_owned(),
            KeyRole::StagingMark => keys.staging_mark().to_owned(),
            KeyRole::Leases => keys.leases().to_owned(),
            KeyRole::Counts => keys.counts().to_owned(),
            KeyRole::CountsExpiry => keys.counts_expiry().to_owned(),
            KeyRole::Acked => keys.acked().to_owned(),
            KeyRole::DeadLetter => keys.dead_letter().to_owned(),
            KeyRole::DeadReasons => keys.dead_reasons().to_owned(),
            KeyRole::Due => keys.due().to_owned(),
            KeyRole::DueTracking => keys.due_tracking().to_owned(),
            KeyRole::Ids => keys.ids().to_owned(),
            KeyRole::Paused => keys.paused().to_owned(),
            KeyRole::Limits => keys.limits(),
            KeyRole::Dedup => keys.dedup(),
            KeyRole::DedupExpiry => keys.dedup_expiry(),
            KeyRole::Sweep => keys.sweep(),
            KeyRole::Schedules => keys.schedules(),
            KeyRole::ScheduleRevisions => keys.schedule_revisions(),
            KeyRole::ScheduleRunners => keys.schedule_runners(),
            KeyRole::ScheduleFires => keys.schedule_fires(),
            KeyRole::Rate => keys.rate(),
            KeyRole::Workers => keys.workers(),
            KeyRole::WorkerBeats => keys.worker_beats(),
            KeyRole::EventsConfig => keys.events_config(),
            KeyRole::Events => keys.events(),
            KeyRole::Stats => keys.stats(),
            KeyRole::Traces => keys.traces(),
            KeyRole::TracesExpiry => keys.traces_expiry(),
            KeyRole::Jobs => keys.jobs(),
            KeyRole::JobsExpiry => keys.jobs_expiry(),
            KeyRole::Batches => keys.batches(),
            KeyRole::BatchOutbox => keys.batch_outbox(),
            KeyRole::BatchesExpiry => keys.batches_expiry(),
            KeyRole::GroupValues => keys.group_values(),
            KeyRole::GroupDelayed => keys.group_delayed(),
            KeyRole::GroupRing => keys.group_ring(),
            KeyRole::GroupBlocked => keys.group_blocked(),
            KeyRole::GroupState => keys.group_state(),
            KeyRole::PriorityReady => keys.priority_ready(),
            KeyRole::PriorityDelayed => keys.priority_delayed(),
            KeyRole::PriorityMarker => keys.priority_marker(),
            KeyRole::TtlStore => keys.ttl_store(),
            KeyRole::Partitions => keys.partitions(),
            KeyRole::Request
            | KeyRole::Lane
            | KeyRole::Registry
            | KeyRole::List
            | KeyRole::Source
            | KeyRole::Target => return None,
        })
    }

    /// Whether the script gets the key only with a trace context.
    pub(crate) fn traced_only(self) -> bool {
        matches!(self, KeyRole::Traces | KeyRole::TracesExpiry)
    }
}

fn key_for(prefix: &str, name: &str) -> String {
    if name.contains('{') {
        format!("{prefix}:{name}")
    } else {
        format!("{prefix}:{{{name}}}")
    }
}

fn validate_name(name: &str) -> Result<(), Error> {
    let invalid = |reason: &str| {
        Err(Error::InvalidQueueName {
            name: name.to_owned(),
            reason: reason.to_owned(),
        })
    };
    if name.is_empty() {
        return invalid("the name is empty");
    }
    match name.find('{') {
        Some(open) => match name[open + 1..].find('}') {
            Some(0) => invalid("its `{}` hash tag is empty, so Redisson's keys would hash to other cluster slots"),
            Some(_) => Ok(()),
            None => invalid("its `{` is never closed, so Redisson's keys would hash to other cluster slots"),
        },
        None if name.contains('}') => {
            invalid("it has a `}` but no `{`, so Redisson's `{name}` keys would hash to another cluster slot")
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fred::util::redis_keyslot;

    #[test]
    fn all_keys_share_the_queue_slot() {
        for name in [
            "orders",
            "vq_string",
            "{tenant-1}orders",
            "a{b}c{d}",
            "q:with:colons",
            "ünïcode",
        ] {
            let keys = QueueKeys::new(name).unwrap();
            let slot = redis_keyslot(name.as_bytes());
            let sweep = keys.sweep();
            let schedules = keys.schedules();
            let schedule_fires = keys.schedule_fires();
            let rate = keys.rate();
            let limits = keys.limits();
            let dedup = keys.dedup();
            let dedup_expiry = keys.dedup_expiry();
            let priority = [
                keys.priority_ready(),
                keys.priority_delayed(),
                keys.priority_marker(),
                keys.ttl_store(),
            ];
            let events = keys.events();
            let events_config = keys.events_config();
            let stats = keys.stats();
            let partitions = keys.partitions();
            let workers = keys.workers();
            let worker_beats = keys.worker_beats();
            let runs = keys.runs("0123456789abcdef");
            let batches = [
                keys.batches(),
                keys.batch_outbox(),
                keys.batches_expiry(),
                keys.jobs(),
                keys.jobs_expiry(),
                keys.group_values(),
                keys.group_delayed(),
                keys.group_ring(),
                keys.group_blocked(),
                keys.group_state(),
            ];
            let ours = [
                keys.quarantine(),
                keys.staging(),
                keys.staging_mark(),
                keys.leases(),
                keys.counts(),
                keys.counts_expiry(),
                keys.acked(),
                keys.due(),
                keys.due_tracking(),
                keys.ids(),
                keys.paused(),
                keys.dead_reasons(),
                &sweep,
                &schedules,
                &schedule_fires,
                &rate,
                &limits,
                &dedup,
                &dedup_expiry,
                &runs,
                &events,
                &events_config,
                &stats,
                &partitions,
                &workers,
                &worker_beats,
                &priority[0],
                &priority[1],
                &priority[2],
                &priority[3],
                &batches[0],
                &batches[1],
                &batches[2],
                &batches[3],
                &batches[4],
                &batches[5],
                &batches[6],
                &batches[7],
                &batches[8],
                &batches[9],
            ];

            for key in [keys.timeout(), keys.pending(), keys.channel(), keys.dead_letter()]
                .into_iter()
                .chain(ours)
            {
                assert_eq!(redis_keyslot(key.as_bytes()), slot, "{key} vs {name}");
            }
        }
    }

    /// Renaming an accessor renames no key: these are the names Redis holds.
    #[test]
    fn delayq_key_names_are_the_stored_ones() {
        let keys = QueueKeys::new("orders").unwrap();
        assert_eq!(keys.leases(), "delayq_leases:{orders}");
        assert_eq!(keys.staging(), "delayq_staging:{orders}");
        assert_eq!(keys.dead_letter(), "delayq_dead_letter:{orders}");
        assert_eq!(keys.workers(), "delayq_workers:{orders}");
        assert_eq!(keys.worker_beats(), "delayq_worker_beats:{orders}");
        assert_eq!(keys.schedule_fires(), "delayq_schedule_fires:{orders}");
        assert_eq!(keys.stats(), "delayq_stats:{orders}");
        assert_eq!(keys.batches(), "delayq_batches:{orders}");
        assert_eq!(keys.batch_outbox(), "delayq_batch_outbox:{orders}");
        assert_eq!(keys.batches_expiry(), "delayq_batches_expiry:{orders}");
        assert_eq!(keys.group_values(), "delayq_group_values:{orders}");
        assert_eq!(keys.group_state(), "delayq_group_state:{orders}");
        assert_eq!(keys.dedup(), "delayq_dedup:{orders}");
        assert_eq!(keys.dedup_expiry(), "delayq_dedup_expiry:{orders}");
        assert_eq!(keys.priority_ready(), "delayq_priority_ready:{orders}");
        assert_eq!(keys.priority_delayed(), "delayq_priority_delayed:{orders}");
        assert_eq!(keys.priority_marker(), "delayq_priority:{orders}");
        assert_eq!(keys.ttl_store(), "delayq_ttl:{orders}");
        assert_eq!(keys.partitions(), "delayq_partitions:{orders}");
        assert_eq!(
            QueueKeys::new("{shop}orders").unwrap().leases(),
            "delayq_leases:{shop}orders"
        );
    }

    /// Every key `SCAN` looks for maps back to its queue, the schedules
    /// hash included (a queue may have nothing else), and the keys delayq
    /// names after the schedules (revisions, runners) map to none.
    #[test]
    fn scanned_keys_map_back_to_their_queue() {
        for name in ["orders", "{shop}orders", "q:with:colons"] {
            let keys = QueueKeys::new(name).unwrap();
            for key in [
                keys.timeout().to_owned(),
                keys.pending().to_owned(),
                keys.dead_letter().to_owned(),
                keys.quarantine().to_owned(),
                keys.schedules(),
            ] {
                let found = QueueKeys::from_key(&key).unwrap_or_else(|| panic!("{key} maps to no queue"));
                assert_eq!(found.destination(), name, "{key}");
            }
        }
        assert!(QueueKeys::from_key("delayq_schedule_runners:{orders}").is_none());
        assert!(QueueKeys::from_key("delayq_schedule_revs:{orders}").is_none());
        assert!(QueueKeys::from_key("delayq_schedule_fires:{orders}").is_none());
        assert!(QueueKeys::from_key("delayq_schedules:").is_none());
    }

    #[test]
    fn names_that_break_the_brace_rule_are_rejected() {
        for name in ["", "a{b", "{}a", "a}b", "x{}y"] {
            assert!(
                matches!(QueueKeys::new(name), Err(Error::InvalidQueueName { .. })),
                "{name:?}"
            );
        }
    }
}
