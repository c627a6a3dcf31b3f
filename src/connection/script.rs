//! The Lua scripts under `lua/`, and how they are run.
//!
//! Each script is the shared Lua of `lua/lib/` it names on its first line
//! (`-- LIBS: element offer events`), in the order of [`LIBS`] (a Lua local
//! is visible only after its definition): `element.lua` (packing,
//! unpacking, removal and chunking helpers), `offer.lua` (Redisson's offer
//! step: ZADD, RPUSH and the publish of a new head, the only PUBLISH of the
//! crate), `request.lua` (request keys, give-backs, lanes), `counts.lua`
//! (delivery counts), `ids.lua` (the id index), `jobs.lua` (job histories), `events.lua` (lifecycle
//! events), `limits.lua` (admission limits), `schedules.lua` (a schedule's recent fires) and `traces.lua` (trace contexts, feature `opentelemetry`),
//! followed by the operation's own file; a unit test holds each script to
//! naming every lib it calls into, and none it does not. Scripts run by
//! `EVALSHA`; when the server does not know
//! the script yet (`NOSCRIPT`: a restart, a failover, `SCRIPT FLUSH`), the same
//! call is sent once more as `EVAL`, which also caches it. `NOSCRIPT` means
//! the script did not run, so the fallback never applies an operation twice.
//!
//! fred sends a command again when its connection drops before the reply
//! came (`max_command_attempts`); the command may have run already. So each
//! script declares here whether that is harmless ([`Resend`]), and
//! [`Script::run`] is the one place that tells fred: scripts that remove or
//! give back values are made harmless to repeat by a request key
//! (`lua/lib/request.lua`, `src/connection/request.rs`), every other one is sent once.
//! A failed run is a [`ScriptError`], which names the script and its queue;
//! `?` makes it delayq's [`Error`] by one rule (`From<ScriptError>`): the
//! lost reply of a run sent once is [`Error::OutcomeUnknown`].
//! A resent script also answers as its first run did: by its request key, or,
//! for the frequent runs whose counts the caller adds up (transfers, sweep
//! windows, reaps), by its lane's record (`request::Lane`).

use std::sync::LazyLock;

use fred::interfaces::ClientLike;
use fred::prelude::Options;
use fred::types::{ClusterHash, CustomCommand, Key, Value};
use fred::util::redis_keyslot;

use super::durable::{Durable, Shortfall, Watch};
use crate::error::{outcome_unknown, slot_moving, Error};
use crate::wire::keys::{KeyRole, QueueKeys};

/// A script of `lua/`, by its file name, with its resend rule and its KEYS
/// (each a [`KeyRole`], in order, as its `-- KEYS:` header names them).
macro_rules! lua {
    ($name:literal, $resend:ident, [$($role:ident),* $(,)?] $(,)?) => {
        Script::new(
            $name,
            include_str!(concat!("../../lua/", $name, ".lua")),
            Resend::$resend,
            &[$(KeyRole::$role),*],
        )
    };
}

/// The shared Lua of `lua/lib/`, by name, in the one order a script may
/// load them (a Lua local is visible only after its definition: `offer`
/// uses `element`, `request` uses `offer`, ...). Each script names the ones
/// it needs on its first line, `-- LIBS: element offer events`, in this
/// order; its body is those files, then its own (see [`body`]).
pub(crate) const LIBS: [(&str, &str); 13] = [
    ("element", include_str!("../../lua/lib/element.lua")),
    ("offer", include_str!("../../lua/lib/offer.lua")),
    ("request", include_str!("../../lua/lib/request.lua")),
    ("counts", include_str!("../../lua/lib/counts.lua")),
    ("ids", include_str!("../../lua/lib/ids.lua")),
    ("jobs", include_str!("../../lua/lib/jobs.lua")),
    ("events", include_str!("../../lua/lib/events.lua")),
    ("batches", include_str!("../../lua/lib/batches.lua")),
    ("limits", include_str!("../../lua/lib/limits.lua")),
    ("schedules", include_str!("../../lua/lib/schedules.lua")),
    ("traces", include_str!("../../lua/lib/traces.lua")),
    ("priority", include_str!("../../lua/lib/priority.lua")),
    ("groups", include_str!("../../lua/lib/groups.lua")),
];

/// The libs a script's first line names (`-- LIBS: a b`, or `(none)`).
fn declared_libs(source: &str) -> Vec<&str> {
    let first = source.lines().next().unwrap_or_default();
    let names = first.strip_prefix("-- LIBS:").unwrap_or_default();
    names.split_whitespace().filter(|n| *n != "(none)").collect()
}

/// What is sent for a script: the libs its first line names, in their
/// order, then the script. `traces` is left out without the
/// `opentelemetry` feature: a script calls it only for a trace context,
/// which no caller sends then (Lua looks a function up only when it runs).
///
/// A script that names a lib `LIBS` does not hold, or names them out of
/// order, fails the unit tests below: every script is built by them.
pub(crate) fn body(source: &str) -> String {
    let declared = declared_libs(source);
    let mut body = String::new();
    for (name, text) in LIBS {
        if declared.contains(&name) && (name != "traces" || cfg!(feature = "opentelemetry")) {
            body.push_str(text);
        }
    }
    body.push_str(source);
    body
}

/// Whether fred may send a script again after its connection dropped with
/// the reply outstanding (the script may have run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resend {
    /// Running it twice does what running it once does: reads, idempotent
    /// writes, and scripts keyed by a request (a repeat returns the first
    /// run's reply). fred resends it.
    Safe,
    /// Sent once: a lost reply is an error and the outcome is unknown
    /// (offers: a second run would offer twice).
    Once,
}

impl Resend {
    /// fred's options for a command sent this way.
    pub(crate) fn options(self) -> Options {
        match self {
            Resend::Safe => Options::default(),
            Resend::Once => Options {
                max_attempts: Some(1),
                ..Options::default()
            },
        }
    }
}

/// A script's KEYS being put together (see [`Script::keys`]).
pub(crate) struct ScriptKeys<'a> {
    script: &'a Script,
    queue: Option<&'a QueueKeys>,
    given: Vec<(KeyRole, Key)>,
    traced: bool,
}

impl ScriptKeys<'_> {
    /// The key the call gives for `role` (a request key, a lane record,
    /// another list).
    pub(crate) fn with(mut self, role: KeyRole, key: impl Into<Key>) -> Self {
        self.given.push((role, key.into()));
        self
    }

    /// Whether the run carries a trace context: the trace keys are sent
    /// only then.
    pub(crate) fn traced(mut self, traced: bool) -> Self {
        self.traced = traced;
        self
    }

    /// The KEYS, in the script's order. A request key or lane record the
    /// call did not give must come last: the request or lane that runs
    /// the script appends it (`request.rs`). Any other role missing is a
    /// bug in delayq, caught by the unit tests that build every script's
    /// keys.
    pub(crate) fn build(self) -> Vec<Key> {
        let roles = self.script.roles;
        let mut keys = Vec::with_capacity(roles.len());
        for (at, role) in roles.iter().enumerate() {
            if role.traced_only() && !self.traced {
                continue;
            }
            if let Some(key) = self.queue.and_then(|queue| role.of(queue)) {
                keys.push(Key::from(key));
            } else if let Some((_, key)) = self.given.iter().find(|(given, _)| given == role) {
                keys.push(key.clone());
            } else {
                let appended_later = roles[at..]
                    .iter()
                    .all(|r| matches!(r, KeyRole::Request | KeyRole::Lane));
                assert!(
                    appended_later,
                    "script {}: no key given for {role:?} (KEYS[{}])",
                    self.script.name,
                    at + 1
                );
                break;
            }
        }
        keys
    }
}

/// fred's error for a command it found no connection to send on.
const NOT_ROUTED: &str = "Failed to route command";
/// How long a script not routed is tried again, and the waits between.
const ROUTE_RETRY_FOR: std::time::Duration = std::time::Duration::from_secs(3);
const ROUTE_RETRY_FIRST: std::time::Duration = std::time::Duration::from_millis(20);
const ROUTE_RETRY_MAX: std::time::Duration = std::time::Duration::from_millis(400);

/// One Lua script: its name (file name under `lua/`), source, SHA1, and
/// whether it may be resent.
#[derive(Debug)]
pub(crate) struct Script {
    pub name: &'static str,
    pub body: String,
    pub sha1: String,
    pub resend: Resend,
    /// Its KEYS, in order (see [`keys`](Self::keys)).
    pub roles: &'static [KeyRole],
}

impl Script {
    fn new(name: &'static str, source: &'static str, resend: Resend, roles: &'static [KeyRole]) -> Self {
        let body = body(source);
        Script {
            name,
            sha1: fred::util::sha1_hash(&body),
            body,
            resend,
            roles,
        }
    }

    /// The script's KEYS on `queue`'s queue, built from its declared roles:
    /// the queue's own keys from `queue`, the others as the call gives them
    /// ([`ScriptKeys::with`]). The one place a script's KEYS are made.
    pub(crate) fn keys<'a>(&'a self, queue: &'a QueueKeys) -> ScriptKeys<'a> {
        ScriptKeys {
            script: self,
            queue: Some(queue),
            given: Vec::new(),
            traced: false,
        }
    }

    /// The KEYS of a script whose keys the call gives, every one
    /// ([`ScriptKeys::with`]): one that works on lists, not on a queue
    /// (`push_back`, `undo_move`, the registry).
    pub(crate) fn given_keys(&self) -> ScriptKeys<'_> {
        ScriptKeys {
            script: self,
            queue: None,
            given: Vec::new(),
            traced: false,
        }
    }

    /// Runs the script on `queue` (named in its errors) by EVALSHA, falling
    /// back to EVAL on `NOSCRIPT`, with as many attempts as its [`Resend`]
    /// allows.
    ///
    /// While a Cluster slot moves, a script whose KEYS the node has only some
    /// of is answered `TRYAGAIN` and does not run (an empty queue's scripts,
    /// and every request-keyed one, whose request key is new, until the
    /// slot is final). It is sent again after a short wait, for up to
    /// [`SLOT_MOVING_FOR`](super::SLOT_MOVING_FOR), whatever its [`Resend`]: the caller never sees it.
    /// `ASK` and `MOVED` fred follows itself, up to five in a row; past
    /// that (the nodes not agreeing yet on who owns the slot) the same.
    ///
    /// Sent as fred custom commands rather than through `LuaInterface`: fred
    /// never pipelines its own EVALSHA, which would cap throughput at one
    /// script per round trip, and `WithOptions` (for single-attempt scripts)
    /// does not implement `LuaInterface`. The cluster slot is the first key's,
    /// which every key of a queue shares (see `keys.rs`).
    pub(crate) async fn run(
        &self,
        conn: &fred::clients::Client,
        queue: &str,
        keys: Vec<Key>,
        args: Vec<Value>,
    ) -> Result<Value, ScriptError> {
        // fred refuses a command it has no connection to send on (one being
        // replaced): "Failed to route command". Nothing was sent, so any
        // script may be tried again; for a short while, as the new
        // connection comes up, rather than failing a call that a moment's
        // wait would have served.
        // Both budgets are of time gone by, not of the pauses: one try can
        // itself take seconds (fred's redirections and cluster syncs), and a
        // budget of pauses let a call hang for many minutes.
        let started = tokio::time::Instant::now();
        let mut wait = ROUTE_RETRY_FIRST;
        let mut try_again = super::SLOT_MOVING_FIRST;
        let sent = loop {
            let sent = match self.resend {
                Resend::Safe => self.send(conn, keys.clone(), args.clone()).await,
                Resend::Once => {
                    self.send(&conn.with_options(&Resend::Once.options()), keys.clone(), args.clone())
                        .await
                }
            };
            match sent {
                Err(error) if error.details().starts_with(NOT_ROUTED) && started.elapsed() < ROUTE_RETRY_FOR => {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(ROUTE_RETRY_MAX);
                }
                // Redis's answers: the script did not run, any script may go again.
                Err(error) if slot_moving(&error) && started.elapsed() < super::SLOT_MOVING_FOR => {
                    tracing::debug!(script = self.name, queue, %error, "slot moving; sending again");
                    tokio::time::sleep(try_again).await;
                    try_again = (try_again * 2).min(super::SLOT_MOVING_MAX);
                }
                other => break other,
            }
        };
        sent.map_err(|error| ScriptError {
            error,
            script: self.name,
            queue: queue.to_owned(),
            unrepeatable: self.resend == Resend::Once,
            shortfall: None,
        })
    }

    /// [`run`](Self::run), then, with a durability, the wait for the
    /// replicas on the same connection (`durable.rs`): a run the replicas
    /// did not confirm fails as `Error::NotReplicated` (it did run).
    /// Without one, exactly `run`.
    pub(crate) async fn run_durable(
        &self,
        conn: &fred::clients::Client,
        queue: &str,
        keys: Vec<Key>,
        args: Vec<Value>,
        durable: Option<Durable<'_>>,
    ) -> Result<Value, ScriptError> {
        let Some(durable) = durable else {
            return self.run(conn, queue, keys, args).await;
        };
        let watch = Watch::of(conn);
        let reply = self.run(conn, queue, keys, args).await?;
        durable.confirm_run(conn, &watch, self, queue).await?;
        Ok(reply)
    }

    async fn send<C>(&self, conn: &C, keys: Vec<Key>, args: Vec<Value>) -> Result<Value, fred::error::Error>
    where
        C: ClientLike + Send + Sync,
    {
        let slot = keys.first().map(|k| redis_keyslot(k.as_bytes())).unwrap_or(0);
        let mut argv = Vec::with_capacity(2 + keys.len() + args.len());
        argv.push(Value::from(self.sha1.as_str()));
        argv.push(Value::from(keys.len() as i64));
        argv.extend(keys.into_iter().map(|k| Value::Bytes(k.into_bytes())));
        argv.extend(args);
        let evalsha = CustomCommand::new_static("EVALSHA", ClusterHash::Custom(slot), false);
        match conn.custom::<Value, Value>(evalsha, argv.clone()).await {
            Err(error) if error.details().starts_with("NOSCRIPT") => {
                tracing::debug!(script = self.name, "script not cached on the server, sending EVAL");
                argv[0] = Value::from(self.body.as_str());
                conn.custom(
                    CustomCommand::new_static("EVAL", ClusterHash::Custom(slot), false),
                    argv,
                )
                .await
            }
            other => other,
        }
    }
}

impl Durable<'_> {
    /// The wait for the replicas of a run of `script` on `queue` made
    /// through `conn` since `watch` was read (a `Request`'s, or
    /// [`Script::run_durable`]'s): `Error::NotReplicated` when they fall
    /// short. On a Cluster it goes to the node of the queue's slot (every
    /// key of a queue is in it).
    pub(crate) async fn confirm_run(
        &self,
        conn: &fred::clients::Client,
        watch: &Watch,
        script: &Script,
        queue: &str,
    ) -> Result<(), ScriptError> {
        let slot = redis_keyslot(queue.as_bytes());
        self.support
            .confirm(conn, self.durability, slot, watch)
            .await
            .map_err(|shortfall| ScriptError::not_replicated(shortfall, script, queue))
    }
}

/// A failed run of a script: fred's error, the script, the queue it ran on,
/// and whether it may not be repeated (sent once, or a request whose
/// effect cannot be undone). Clones, for runs whose failure several callers
/// share (joined offers); displays as fred's error, for logs.
#[derive(Debug, Clone)]
pub(crate) struct ScriptError {
    error: fred::error::Error,
    script: &'static str,
    queue: String,
    unrepeatable: bool,
    /// The run applied, and its wait for replicas fell short.
    shortfall: Option<Box<Shortfall>>,
}

impl ScriptError {
    /// A run of `script` on `queue` that applied, and whose wait for
    /// replicas fell short: `Error::NotReplicated`.
    pub(crate) fn not_replicated(shortfall: Shortfall, script: &Script, queue: &str) -> ScriptError {
        let error = fred::error::Error::new(fred::error::ErrorKind::Unknown, shortfall.detail.clone());
        ScriptError {
            error,
            script: script.name,
            queue: queue.to_owned(),
            unrepeatable: script.resend == Resend::Once,
            shortfall: Some(Box::new(shortfall)),
        }
    }

    /// A failure of `script` on `queue` that fred did not report: the task
    /// running it ended first, or a deadline of delayq's passed.
    pub(crate) fn new(error: fred::error::Error, script: &Script, queue: &str) -> ScriptError {
        ScriptError {
            error,
            script: script.name,
            queue: queue.to_owned(),
            unrepeatable: script.resend == Resend::Once,
            shortfall: None,
        }
    }

    /// Whether the script may have run: the connection failed before its
    /// reply, not Redis (an error reply means it changed nothing).
    pub(crate) fn may_have_run(&self) -> bool {
        outcome_unknown(&self.error)
    }

    /// The same failure, of a run whose effect can be neither undone nor
    /// repeated: if it may have run, its outcome is unknown.
    pub(crate) fn unrepeatable(mut self) -> ScriptError {
        self.unrepeatable = true;
        self
    }
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

/// The one place a failed script becomes delayq's error: a run that may
/// have applied and may not be repeated is [`Error::OutcomeUnknown`];
/// anything else the most precise variant ([`Error::Script`],
/// [`Error::WrongType`] naming the queue, else [`Error::Redis`]).
impl From<ScriptError> for Error {
    fn from(failed: ScriptError) -> Error {
        let ScriptError {
            error,
            script,
            queue,
            unrepeatable,
            shortfall,
        } = failed;
        if let Some(shortfall) = shortfall {
            return shortfall.into_error(script, queue);
        }
        if unrepeatable {
            Error::from_unrepeatable(error, script, &queue, |e| Error::from_script(e, script, &queue))
        } else {
            Error::from_script(error, script, &queue)
        }
    }
}

/// Every script of the crate, built once.
pub(crate) struct Scripts {
    pub offer: Script,
    pub offer_all: Script,
    pub transfer: Script,
    pub read_all: Script,
    pub peek: Script,
    pub contains: Script,
    pub remove: Script,
    pub poll: Script,
    pub poll_last_and_offer_first_to: Script,
    pub expire: Script,
    pub drain: Script,
    pub restore: Script,
    pub migrate: Script,
    pub recode: Script,
    pub claim: Script,
    pub claim_batch: Script,
    pub offer_priority: Script,
    pub pop_priority: Script,
    pub priority_push_back: Script,
    pub ack_batch: Script,
    pub ack: Script,
    pub nack: Script,
    pub release_unhandled: Script,
    pub extend: Script,
    pub reap: Script,
    pub requeue_dead_letters: Script,
    pub sweep_window: Script,
    pub status: Script,
    pub remove_pending: Script,
    pub undo_move: Script,
    pub push_back: Script,
    pub cancel_request: Script,
    pub list_remove: Script,
    pub offer_id: Script,
    pub cancel_id: Script,
    pub reschedule_id: Script,
    pub get_id: Script,
    pub job_history: Script,
    pub cancel_job: Script,
    pub offer_batch: Script,
    pub offer_grouped: Script,
    pub batch_delivered: Script,
    pub progress: Script,
    pub pause: Script,
    pub resume: Script,
    pub limits_set: Script,
    pub partitions_create: Script,
    pub partitions_change: Script,
    pub partitions_retire: Script,
    pub offer_dedup: Script,
    pub pending_page: Script,
    pub pending_element: Script,
    pub remove_dead_letters: Script,
    pub dead_letter_page: Script,
    pub dead_letter_act: Script,
    pub dead_letter_reasons: Script,
    pub schedule_save: Script,
    pub schedule_fire: Script,
    pub schedule_run: Script,
    pub schedule_set: Script,
    pub schedule_list: Script,
    pub schedule_fires: Script,
    pub schedule_beat: Script,
    pub schedule_runners: Script,
    pub worker_beat: Script,
    pub workers: Script,
    pub rate_limit: Script,
    pub registry_forget: Script,
    #[cfg(feature = "opentelemetry")]
    pub trace_take: Script,
    #[cfg(feature = "opentelemetry")]
    pub trace_put: Script,
}

impl Scripts {
    /// Every script, for the tests that hold each to its Lua file.
    #[cfg(test)]
    fn all(&self) -> Vec<&Script> {
        vec![
            &self.offer,
            &self.offer_all,
            &self.transfer,
            &self.read_all,
            &self.peek,
            &self.contains,
            &self.remove,
            &self.poll,
            &self.poll_last_and_offer_first_to,
            &self.expire,
            &self.drain,
            &self.restore,
            &self.migrate,
            &self.recode,
            &self.claim,
            &self.claim_batch,
            &self.offer_priority,
            &self.pop_priority,
            &self.priority_push_back,
            &self.ack_batch,
            &self.ack,
            &self.nack,
            &self.extend,
            &self.reap,
            &self.requeue_dead_letters,
            &self.sweep_window,
            &self.status,
            &self.remove_pending,
            &self.undo_move,
            &self.push_back,
            &self.cancel_request,
            &self.list_remove,
            &self.offer_id,
            &self.offer_dedup,
            &self.cancel_id,
            &self.reschedule_id,
            &self.get_id,
            &self.job_history,
            &self.cancel_job,
            &self.offer_batch,
            &self.offer_grouped,
            &self.batch_delivered,
            &self.progress,
            &self.pause,
            &self.resume,
            &self.limits_set,
            &self.partitions_create,
            &self.partitions_change,
            &self.partitions_retire,
            &self.pending_page,
            &self.pending_element,
            &self.remove_dead_letters,
            &self.dead_letter_page,
            &self.dead_letter_act,
            &self.dead_letter_reasons,
            &self.schedule_save,
            &self.schedule_fire,
            &self.schedule_run,
            &self.schedule_set,
            &self.schedule_list,
            &self.schedule_fires,
            &self.schedule_beat,
            &self.schedule_runners,
            &self.worker_beat,
            &self.workers,
            &self.rate_limit,
            &self.registry_forget,
            &self.release_unhandled,
            #[cfg(feature = "opentelemetry")]
            &self.trace_take,
            #[cfg(feature = "opentelemetry")]
            &self.trace_put,
        ]
    }
}

pub(crate) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    offer: lua!(
        "offer",
        Once,
        [
            Timeout,
            Pending,
            Channel,
            EventsConfig,
            Events,
            Stats,
            Limits,
            Destination,
            Traces,
            TracesExpiry
        ]
    ),
    // Keyed by its call's request: a chunk adds only the call's elements not
    // added yet, so a resend adds nothing twice.
    offer_all: lua!(
        "offer_all",
        Safe,
        [
            Timeout,
            Pending,
            Channel,
            Request,
            EventsConfig,
            Events,
            Stats,
            Limits,
            Destination,
            Traces,
            TracesExpiry
        ]
    ),
    // Harmless to repeat; numbered along a lane (`request::Lane`), so a
    // resend answers what the first run moved, quarantined and how late.
    transfer: lua!(
        "transfer",
        Safe,
        [
            Destination,
            Timeout,
            Pending,
            Quarantine,
            Due,
            DueTracking,
            Paused,
            Ids,
            Lane,
            EventsConfig,
            Events,
            Stats,
            Jobs,
            JobsExpiry
        ]
    ),
    read_all: lua!("read_all", Safe, [Pending]),
    peek: lua!("peek", Safe, [Pending]),
    contains: lua!("contains", Safe, [Pending]),
    remove: lua!("remove", Safe, [Pending, Timeout, EventsConfig, Events, Request]),
    poll: lua!("poll", Safe, [Pending, Timeout, Quarantine, Channel, Ids, Request]),
    poll_last_and_offer_first_to: lua!(
        "poll_last_and_offer_first_to",
        Safe,
        [Pending, Timeout, Quarantine, Target, Request]
    ),
    // Keyed by a request: a resent PERSIST, or expiry in the past, answers
    // as the first run did (run again, it would find nothing to change).
    expire: lua!("expire", Safe, [Pending, Timeout, Request]),
    drain: lua!("drain", Safe, [List, Request]),
    restore: lua!("restore", Safe, [Pending, Timeout, Channel, Ids, Request]),
    // Keyed by a request: a resend returns the first run's counts.
    migrate: lua!("migrate", Safe, [Pending, Timeout, Ids, Request]),
    // Keyed by a request: a resend returns the first run's counts (run
    // again, it would find the elements it rewrote changed and count them
    // as moved).
    recode: lua!("recode", Safe, [Pending, Timeout, Ids, Request]),
    claim: lua!(
        "claim",
        Once,
        [
            Staging,
            Leases,
            DeadLetter,
            Due,
            Counts,
            CountsExpiry,
            StagingMark,
            Destination,
            Paused,
            DeadReasons,
            EventsConfig,
            Events,
            Stats,
            Limits,
            Jobs,
            JobsExpiry,
            Batches,
            BatchOutbox,
            BatchesExpiry
        ]
    ),
    // Sent once like claim: a resend would claim more values (a lost reply
    // is found by its batch id, `lost_claim`).
    claim_batch: lua!(
        "claim_batch",
        Once,
        [
            Destination,
            Leases,
            DeadLetter,
            Due,
            Counts,
            CountsExpiry,
            Paused,
            DeadReasons,
            EventsConfig,
            Events,
            Stats,
            Limits,
            Jobs,
            JobsExpiry,
            PriorityReady,
            PriorityDelayed,
            PriorityMarker,
            TtlStore,
            Batches,
            BatchOutbox,
            BatchesExpiry,
            GroupValues,
            GroupDelayed,
            GroupRing,
            GroupBlocked,
            GroupState
        ]
    ),
    // A resend finds its elements in the sets and adds nothing (an offer
    // with a TTL gives a request key: its member holds the run's clock).
    offer_priority: lua!(
        "offer_priority",
        Safe,
        [
            PriorityReady,
            PriorityDelayed,
            PriorityMarker,
            Timeout,
            Destination,
            Limits,
            EventsConfig,
            Events,
            Stats,
            Request
        ]
    ),
    // Sent once, as LPOP: a second run would pop another value.
    pop_priority: lua!(
        "pop_priority",
        Once,
        [
            PriorityReady,
            PriorityDelayed,
            PriorityMarker,
            Destination,
            DeadLetter,
            DeadReasons,
            EventsConfig,
            Events,
            Stats
        ]
    ),
    priority_push_back: lua!(
        "priority_push_back",
        Safe,
        [PriorityReady, PriorityMarker, Destination, Request]
    ),
    // A resend finds the ids the first run acked in the acked set.
    ack_batch: lua!(
        "ack_batch",
        Safe,
        [
            Leases,
            Lane,
            EventsConfig,
            Events,
            Stats,
            Jobs,
            JobsExpiry,
            TtlStore,
            Batches,
            BatchOutbox,
            BatchesExpiry,
            GroupValues,
            GroupDelayed,
            GroupRing,
            GroupBlocked,
            GroupState
        ]
    ),
    ack: lua!(
        "ack",
        Safe,
        [
            Leases,
            Acked,
            EventsConfig,
            Events,
            Stats,
            Jobs,
            JobsExpiry,
            TtlStore,
            Batches,
            BatchOutbox,
            BatchesExpiry,
            GroupValues,
            GroupDelayed,
            GroupRing,
            GroupBlocked,
            GroupState
        ]
    ),
    nack: lua!(
        "nack",
        Safe,
        [
            Leases,
            Destination,
            Timeout,
            Pending,
            Channel,
            DeadLetter,
            Counts,
            CountsExpiry,
            DeadReasons,
            EventsConfig,
            Events,
            Stats,
            Ids,
            Jobs,
            JobsExpiry,
            PriorityReady,
            PriorityDelayed,
            PriorityMarker,
            TtlStore,
            Batches,
            BatchOutbox,
            BatchesExpiry,
            GroupValues,
            GroupDelayed,
            GroupRing,
            GroupBlocked,
            GroupState,
            Request
        ]
    ),
    // Numbered along a lane: a resend answers what the first run gave back
    // and moves nothing twice (a delivery leaves the lease set once).
    release_unhandled: lua!(
        "release_unhandled",
        Safe,
        [
            Leases,
            Destination,
            Counts,
            CountsExpiry,
            Traces,
            TracesExpiry,
            Lane,
            EventsConfig,
            Events,
            Jobs,
            JobsExpiry,
            PriorityReady,
            PriorityMarker,
            TtlStore,
            GroupValues,
            GroupDelayed,
            GroupRing,
            GroupBlocked,
            GroupState
        ]
    ),
    extend: lua!("extend", Safe, [Leases]),
    // Numbered along a lane: a resend answers what the first run returned.
    reap: lua!(
        "reap",
        Safe,
        [
            Staging,
            Leases,
            Destination,
            Counts,
            CountsExpiry,
            StagingMark,
            Lane,
            EventsConfig,
            Events,
            Stats,
            Jobs,
            JobsExpiry,
            PriorityReady,
            PriorityMarker,
            TtlStore,
            GroupValues,
            GroupDelayed,
            GroupRing,
            GroupBlocked,
            GroupState
        ]
    ),
    requeue_dead_letters: lua!(
        "requeue_dead_letters",
        Safe,
        [
            DeadLetter,
            Destination,
            DeadReasons,
            Jobs,
            JobsExpiry,
            PriorityReady,
            PriorityMarker,
            Request
        ]
    ),
    // Numbered along a lane: a resend answers what the first run moved.
    sweep_window: lua!(
        "sweep_window",
        Safe,
        [
            Destination,
            Timeout,
            Pending,
            Quarantine,
            Sweep,
            Due,
            DueTracking,
            Paused,
            Ids,
            Lane,
            EventsConfig,
            Events,
            Stats,
            Jobs,
            JobsExpiry
        ]
    ),
    status: lua!(
        "status",
        Safe,
        [
            Timeout,
            Pending,
            Destination,
            Leases,
            DeadLetter,
            Quarantine,
            Paused,
            Ids,
            Due,
            Stats,
            PriorityReady,
            PriorityDelayed,
            Limits,
            GroupValues,
            GroupDelayed
        ]
    ),
    remove_pending: lua!("remove_pending", Safe, [Timeout, Pending, Channel, Ids, Request]),
    undo_move: lua!("undo_move", Once, [Source, Target]),
    push_back: lua!("push_back", Safe, [List, Request]),
    // Its mark keeps what it found: a resend answers the same.
    cancel_request: lua!("cancel_request", Safe, []),
    list_remove: lua!("list_remove", Safe, [List, Request]),
    offer_id: lua!(
        "offer_id",
        Safe,
        [
            Timeout,
            Pending,
            Channel,
            Ids,
            EventsConfig,
            Events,
            Stats,
            Limits,
            Destination,
            Traces,
            TracesExpiry,
            Request
        ]
    ),
    cancel_id: lua!(
        "cancel_id",
        Safe,
        [
            Timeout,
            Pending,
            Ids,
            EventsConfig,
            Events,
            Batches,
            BatchOutbox,
            BatchesExpiry,
            Request
        ]
    ),
    reschedule_id: lua!(
        "reschedule_id",
        Safe,
        [Timeout, Channel, Ids, EventsConfig, Events, Request]
    ),
    get_id: lua!("get_id", Safe, [Timeout, Ids]),
    job_history: lua!("job_history", Safe, [Timeout, Ids, Jobs]),
    // By its request key: a resend answers as the first run and asks no
    // second cancel.
    cancel_job: lua!(
        "cancel_job",
        Safe,
        [
            Timeout,
            Pending,
            Ids,
            Jobs,
            JobsExpiry,
            EventsConfig,
            Events,
            Stats,
            Batches,
            BatchOutbox,
            BatchesExpiry,
            Request
        ]
    ),
    // The batch's record counts what its chunks added: a resent chunk adds
    // nothing twice.
    offer_batch: lua!(
        "offer_batch",
        Safe,
        [
            Timeout,
            Pending,
            Channel,
            Ids,
            Batches,
            BatchOutbox,
            BatchesExpiry,
            Jobs,
            EventsConfig,
            Events,
            Stats,
            Limits,
            Destination
        ]
    ),
    // By its request key: a resend answers as the first run and adds nothing.
    offer_grouped: lua!(
        "offer_grouped",
        Safe,
        [
            GroupValues,
            GroupDelayed,
            GroupRing,
            GroupBlocked,
            GroupState,
            Timeout,
            Destination,
            Limits,
            EventsConfig,
            Events,
            Stats,
            Request
        ]
    ),
    // Marks a complete batch delivered once; a resend finds it so.
    batch_delivered: lua!("batch_delivered", Safe, [Batches, BatchOutbox, BatchesExpiry]),
    // A resend finds its own report kept and answers as the first run.
    progress: lua!("progress", Safe, [Leases, Jobs, JobsExpiry, EventsConfig, Events]),
    // SET NX: a resend finds the flag set and writes no second event.
    pause: lua!("pause", Safe, [Paused, EventsConfig, Events]),
    resume: lua!(
        "resume",
        Safe,
        [Paused, Timeout, Channel, EventsConfig, Events, Request]
    ),
    // A resend finds the limits set and writes no second event.
    limits_set: lua!("limits_set", Safe, [Limits, EventsConfig, Events]),
    partitions_create: lua!("partitions_create", Safe, [Partitions, Destination, Timeout, Pending]),
    // A resend finds its generation stored with its names and answers so.
    partitions_change: lua!("partitions_change", Safe, [Partitions]),
    // A resend drops names already gone: the same answer.
    partitions_retire: lua!("partitions_retire", Safe, [Partitions]),
    // Its records hold each offered element's own header, and a run that
    // found duplicates leaves its answers under its own record: a resend
    // finds them and answers as the first run, writing nothing twice.
    offer_dedup: lua!(
        "offer_dedup",
        Safe,
        [
            Timeout,
            Pending,
            Channel,
            EventsConfig,
            Events,
            Stats,
            Limits,
            Destination,
            Dedup,
            DedupExpiry
        ]
    ),
    pending_page: lua!("pending_page", Safe, [Timeout, Ids]),
    // Keyed by a request: a resend answers as the first run did.
    pending_element: lua!(
        "pending_element",
        Safe,
        [
            Timeout,
            Pending,
            Destination,
            Channel,
            Ids,
            Paused,
            EventsConfig,
            Events,
            Request
        ]
    ),
    // Deletes: sent once (a resend would delete more).
    remove_dead_letters: lua!("remove_dead_letters", Once, [DeadLetter, DeadReasons, Jobs, JobsExpiry]),
    dead_letter_page: lua!("dead_letter_page", Safe, [DeadLetter, DeadReasons]),
    // Keyed by a request: a resend answers as the first run did and acts on
    // no second copy of an equal value.
    dead_letter_act: lua!(
        "dead_letter_act",
        Safe,
        [
            DeadLetter,
            DeadReasons,
            Destination,
            Jobs,
            JobsExpiry,
            PriorityReady,
            PriorityMarker,
            Request
        ]
    ),
    dead_letter_reasons: lua!("dead_letter_reasons", Safe, [DeadLetter, DeadReasons]),
    // Keyed by a request: a resend returns the first answer and undoes no
    // save made meanwhile.
    schedule_save: lua!(
        "schedule_save",
        Safe,
        [Schedules, ScheduleRevisions, ScheduleFires, Request]
    ),
    // A compare-and-set on the schedule's next occurrence: a resend finds it
    // moved and offers nothing, and answers 'fired' when it finds its own
    // token among the record's last fires.
    schedule_fire: lua!(
        "schedule_fire",
        Safe,
        [
            Schedules,
            Timeout,
            Pending,
            Channel,
            EventsConfig,
            Events,
            ScheduleFires,
            Stats
        ]
    ),
    // Keyed by a request: a resend answers as the first run did and offers
    // nothing again.
    schedule_run: lua!(
        "schedule_run",
        Safe,
        [
            Schedules,
            ScheduleFires,
            Timeout,
            Pending,
            Channel,
            EventsConfig,
            Events,
            Stats,
            Request
        ]
    ),
    // Keyed by a request: a resent remove still says it removed.
    schedule_set: lua!("schedule_set", Safe, [Schedules, ScheduleFires, Request]),
    schedule_list: lua!("schedule_list", Safe, [Schedules]),
    schedule_fires: lua!("schedule_fires", Safe, [ScheduleFires]),
    // A heartbeat: a resend beats or leaves again, as harmless as the first.
    schedule_beat: lua!("schedule_beat", Safe, [ScheduleRunners]),
    schedule_runners: lua!("schedule_runners", Safe, [ScheduleRunners]),
    // A resend beats again (as harmless as the next beat) or leaves again.
    worker_beat: lua!("worker_beat", Safe, [Workers, WorkerBeats]),
    workers: lua!("workers", Safe, [Workers, WorkerBeats]),
    // A resend could take a second permit: sent once (a lost reply only
    // costs the worker one permit).
    rate_limit: lua!("rate_limit", Once, [Rate, Paused]),
    registry_forget: lua!("registry_forget", Safe, [Registry]),
    // Takes contexts: a resend would take the next equal payload's (sent
    // once; a lost reply costs those deliveries their parent, nothing else).
    #[cfg(feature = "opentelemetry")]
    trace_take: lua!("trace_take", Once, [Traces, TracesExpiry]),
    // A resend could store a context twice: sent once.
    #[cfg(feature = "opentelemetry")]
    trace_put: lua!("trace_put", Once, [Traces, TracesExpiry]),
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_is_its_libs_then_its_own_lua() {
        for script in [
            &SCRIPTS.offer,
            &SCRIPTS.offer_all,
            &SCRIPTS.claim,
            &SCRIPTS.drain,
            &SCRIPTS.cancel_request,
            &SCRIPTS.pause,
            &SCRIPTS.undo_move,
        ] {
            let source = std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("lua/{}.lua", script.name)),
            )
            .unwrap();
            let libs: String = declared_libs(&source)
                .into_iter()
                .filter(|name| *name != "traces" || cfg!(feature = "opentelemetry"))
                .map(|name| LIBS.iter().find(|(n, _)| *n == name).unwrap().1)
                .collect();
            assert_eq!(script.body, libs + &source, "{}", script.name);
            assert_eq!(script.sha1, fred::util::sha1_hash(&script.body));
        }
        // Only what it calls: `undo_move` needs no lib, `pause` only events.
        assert!(!SCRIPTS.undo_move.body.contains("local function"));
        assert!(SCRIPTS.pause.body.len() < 4_500, "{}", SCRIPTS.pause.body.len());
    }

    /// Tests and benchmarks run scripts by hand with the bodies
    /// `delayq-test-support` builds from the same files by the same rule:
    /// the two agree on every script, byte for byte.
    #[test]
    fn the_test_supports_bodies_are_the_scripts_sent() {
        let scripts = SCRIPTS.all();
        let sent_with_the_features_on = lua_files("lua")
            .into_iter()
            .filter(|(name, _)| cfg!(feature = "opentelemetry") || !name.starts_with("lua/trace_"))
            .count();
        assert_eq!(
            scripts.len(),
            sent_with_the_features_on,
            "a script SCRIPTS.all() leaves out"
        );
        for script in scripts {
            let source = std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("lua/{}.lua", script.name)),
            )
            .unwrap();
            assert_eq!(
                delayq_test_support::script_sha1(&source),
                script.sha1,
                "{}: the test support builds another body",
                script.name
            );
        }
    }

    /// The Lua files under `dir` (relative to the crate), by path.
    fn lua_files(dir: &str) -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "lua") {
                let name = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
                files.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
        files.sort();
        files
    }

    #[test]
    fn every_lib_file_is_in_libs() {
        let libs = lua_files("lua/lib");
        assert_eq!(libs.len(), LIBS.len(), "a file in lua/lib/ that LIBS leaves out");
        for (name, text) in libs {
            let stem = name.trim_start_matches("lua/lib/").trim_end_matches(".lua");
            assert!(
                LIBS.contains(&(stem, text.as_str())),
                "{name} is not in LIBS under its name"
            );
        }
    }

    /// The `delayq_*` functions defined (`local function`) and called in
    /// Lua text, comments left out.
    fn functions(text: &str) -> (std::collections::BTreeSet<String>, std::collections::BTreeSet<String>) {
        let (mut defined, mut called) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for line in text.lines() {
            let code = line.split("--").next().unwrap_or_default();
            let mut rest = code;
            while let Some(at) = rest.find("delayq_") {
                let word: String = rest[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let after = rest[at + word.len()..].trim_start();
                let before = rest[..at].trim_end();
                if before.ends_with("local function") {
                    defined.insert(word.clone());
                } else if after.starts_with('(') {
                    called.insert(word.clone());
                }
                rest = &rest[at + word.len()..];
            }
        }
        (defined, called)
    }

    /// A script names, in load order, exactly the libs whose functions it
    /// calls (directly or through another lib): one it needs and misses
    /// would fail at run time, on the path that calls it; one it does not
    /// need is sent for nothing on every `EVAL`.
    #[test]
    fn every_script_names_the_libs_it_calls_and_no_other() {
        let owner_of = |function: &str| {
            LIBS.iter()
                .find(|(_, text)| functions(text).0.contains(function))
                .map(|(name, _)| *name)
        };
        let files = lua_files("lua");
        assert!(files.len() > 30, "the scripts are found");
        for (file, source) in &files {
            let declared = declared_libs(source);
            assert!(
                source.starts_with("-- LIBS:"),
                "{file}: its first line names its libs (`-- LIBS: ...` or `-- LIBS: (none)`)"
            );
            let order: Vec<usize> = declared
                .iter()
                .map(|name| {
                    LIBS.iter()
                        .position(|(n, _)| n == name)
                        .unwrap_or_else(|| panic!("{file}: no lib {name}"))
                })
                .collect();
            assert!(
                order.windows(2).all(|w| w[0] < w[1]),
                "{file}: libs out of order: {declared:?}"
            );
            let (own, mut wanted) = functions(source);
            let mut needed = std::collections::BTreeSet::new();
            while let Some(function) = wanted.pop_first() {
                if own.contains(&function) {
                    continue;
                }
                let lib = owner_of(&function).unwrap_or_else(|| panic!("{file}: {function} is defined nowhere"));
                if needed.insert(lib) {
                    let text = LIBS.iter().find(|(n, _)| *n == lib).unwrap().1;
                    wanted.extend(functions(text).1);
                }
            }
            let needed: Vec<&str> = LIBS.iter().map(|(n, _)| *n).filter(|n| needed.contains(n)).collect();
            assert_eq!(declared, needed, "{file}");
        }
    }

    /// The numbered entries of a script's `-- KEYS:` header: `(n, text)`.
    fn header_keys(source: &str) -> Vec<(usize, String)> {
        let mut text = String::new();
        let mut inside = false;
        for line in source.lines() {
            if line.starts_with("-- KEYS") {
                inside = true;
            } else if inside
                && (line.starts_with("-- ARGV")
                    || line.starts_with("-- Returns")
                    || !line.starts_with("--")
                    || line.trim() == "--")
            {
                break;
            }
            if inside {
                text.push(' ');
                text.push_str(line.trim_start_matches("--").trim());
            }
        }
        let text = text.trim().trim_start_matches("KEYS:").to_owned();
        // An entry: a number after a comma, colon, paren, `and` or `last,`.
        let mut entries: Vec<(usize, String)> = Vec::new();
        let words: Vec<&str> = text.split_whitespace().collect();
        for (at, word) in words.iter().enumerate() {
            let starts_entry =
                at == 0 || words[at - 1].ends_with([',', ';', ':', '(']) || ["and", "last,"].contains(&words[at - 1]);
            match word.parse::<usize>() {
                Ok(n) if starts_entry => entries.push((n, String::new())),
                _ => {
                    if let Some((_, phrase)) = entries.last_mut() {
                        phrase.push_str(word);
                        phrase.push(' ');
                    }
                }
            }
        }
        entries
    }

    /// Each script's declared KEYS are the ones its `-- KEYS:` header
    /// lists, in order: the Rust side builds them from the declaration
    /// (`Script::keys`), so the two cannot drift apart silently.
    #[test]
    fn every_scripts_keys_are_the_ones_its_header_names() {
        let files = lua_files("lua");
        let scripts = SCRIPTS.all();
        for (file, source) in &files {
            let name = file.trim_start_matches("lua/").trim_end_matches(".lua");
            let Some(script) = scripts.iter().find(|s| s.name == name) else {
                // The trace scripts are built with `opentelemetry` only.
                assert!(
                    !cfg!(feature = "opentelemetry") && name.starts_with("trace_"),
                    "{file} is no script of SCRIPTS"
                );
                continue;
            };
            if name == "cancel_request" {
                // Its KEYS are the cancelled request's own.
                assert!(script.roles.is_empty());
                continue;
            }
            let entries = header_keys(source);
            let numbers: Vec<usize> = entries.iter().map(|(n, _)| *n).collect();
            let expected: Vec<usize> = (1..=script.roles.len()).collect();
            assert_eq!(
                numbers, expected,
                "{file}: the header's KEYS, declared {:?}",
                script.roles
            );
            for ((n, text), role) in entries.iter().zip(script.roles) {
                let text = text.to_lowercase();
                let text = ["the queue's ", "the run's ", "the "]
                    .iter()
                    .find_map(|article| text.strip_prefix(article))
                    .unwrap_or(&text);
                assert!(
                    text.starts_with(role.phrase()),
                    "{file}: KEYS[{n}] is \"{text}\" in the header, {role:?} (\"{}\") in the declaration",
                    role.phrase()
                );
            }
        }
        #[cfg(feature = "opentelemetry")]
        assert_eq!(files.len(), scripts.len(), "a script of SCRIPTS with no file");
    }

    /// Every script's KEYS can be built, all in the queue's slot: the roles
    /// a queue does not give are given by the call, or come last (a
    /// request key, a lane record, appended by the request or lane).
    #[test]
    fn every_scripts_keys_build_from_a_queue() {
        let queue = QueueKeys::new("orders").unwrap();
        let slot = redis_keyslot(b"{orders}");
        for script in SCRIPTS.all() {
            let tail = script
                .roles
                .iter()
                .rev()
                .take_while(|r| matches!(r, KeyRole::Request | KeyRole::Lane))
                .count();
            let mut keys = script.keys(&queue).traced(true);
            for role in &script.roles[..script.roles.len() - tail] {
                if role.of(&queue).is_none() {
                    keys = keys.with(*role, "given");
                }
            }
            let built = keys.build();
            assert_eq!(built.len(), script.roles.len() - tail, "{}", script.name);
            for key in built.iter().filter(|k| k.as_bytes() != b"given") {
                assert_eq!(
                    redis_keyslot(key.as_bytes()),
                    slot,
                    "{}: {key:?} in another slot",
                    script.name
                );
            }
        }
    }

    /// Redisson's transfers wake on what the offer step publishes, so one
    /// rule decides when: `lua/lib/offer.lua` is the only Lua that names
    /// the PUBLISH command, however it is spelled or called.
    #[test]
    fn only_the_offer_step_publishes() {
        let mut files = lua_files("lua");
        files.extend(lua_files("lua/lib"));
        assert!(files.len() > 30, "the scripts are found");
        let mut publishing = Vec::new();
        for (name, text) in &files {
            let text = text.to_ascii_lowercase();
            if text.contains("'publish'") || text.contains("\"publish\"") || text.contains("[[publish]]") {
                publishing.push(name.as_str());
            }
        }
        assert_eq!(publishing, ["lua/lib/offer.lua"]);
    }

    /// A script that refuses after it changed something leaves half a step
    /// behind (an error the caller takes for "nothing happened"): every
    /// script runs its checks, the key types (`delayq_check_types`) and the
    /// events keys (`delayq_events_open`), before its first write. Lines in
    /// a `local function` block are skipped (defined there, run later).
    #[test]
    fn every_script_checks_before_its_first_write() {
        const WRITES: [&str; 33] = [
            "lpush",
            "rpush",
            "zadd",
            "zrem",
            "lrem",
            "del",
            "set",
            "hset",
            "hdel",
            "hincrby",
            "incr",
            "incrby",
            "expire",
            "pexpire",
            "pexpireat",
            "lpop",
            "rpop",
            "lmove",
            "xadd",
            "ltrim",
            "lset",
            "linsert",
            "publish",
            "zremrangebyscore",
            "zremrangebyrank",
            "hsetnx",
            "unlink",
            "zincrby",
            "sadd",
            "srem",
            "getdel",
            "rpoplpush",
            "zpopmin",
        ];
        const WRITING_LIBS: [&str; 7] = [
            "delayq_offer(",
            "delayq_dead_letter(",
            "delayq_event(",
            "delayq_count(",
            "delayq_counts_put(",
            "delayq_counts_take(",
            "delayq_answer(",
        ];
        let writes = |line: &str| {
            let line = line.to_ascii_lowercase();
            WRITES
                .iter()
                .any(|w| line.contains(&format!("redis.call('{w}'")) || line.contains(&format!("redis.call(\"{w}\"")))
                || WRITING_LIBS.iter().any(|f| line.contains(f))
        };
        let files = lua_files("lua");
        assert!(files.len() > 30, "the scripts are found");
        let mut checked = 0;
        for (name, text) in &files {
            let mut in_function = false;
            let mut first_write = None;
            for (at, line) in text.lines().enumerate() {
                let code = line.split("--").next().unwrap_or_default();
                if code.starts_with("local function") || code.starts_with("function") {
                    in_function = true;
                } else if in_function && code.trim_end() == "end" {
                    in_function = false;
                } else if !in_function && first_write.is_none() && writes(code) {
                    first_write = Some(at);
                }
                let is_check = code.contains("delayq_check_types(")
                    || code.contains("delayq_events_open(")
                    || code.contains("delayq_limits_open(")
                    || code.contains("delayq_takes_off(");
                if is_check && !in_function {
                    if let Some(write) = first_write {
                        panic!("{name}:{}: a check after the first write (line {})", at + 1, write + 1);
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 30, "the checks are found ({checked})");
    }
}
