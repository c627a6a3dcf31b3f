//! The Lua scripts under `lua/`, and how they are run.
//!
//! Each script is the shared Lua of `lua/lib/`, in this order (a Lua local
//! is visible only after its definition): `element.lua` (packing,
//! unpacking, removal and chunking helpers), `offer.lua` (Redisson's offer
//! step: ZADD, RPUSH and the publish of a new head, the only PUBLISH of the
//! crate), `request.lua` (request keys, give-backs, lanes), `counts.lua`
//! (delivery counts), `ids.lua` (the id index), `events.lua` (lifecycle
//! events) and `traces.lua` (trace contexts, feature `opentelemetry`),
//! followed by the
//! operation's own file, built at compile time with `include_str!`. Scripts run by `EVALSHA`; when the server does not know
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

use crate::error::{outcome_unknown, Error};

macro_rules! lua {
    ($name:literal, $resend:ident) => {
        Script::new(
            $name,
            concat!(
                include_str!("../../lua/lib/element.lua"),
                include_str!("../../lua/lib/offer.lua"),
                include_str!("../../lua/lib/request.lua"),
                include_str!("../../lua/lib/counts.lua"),
                include_str!("../../lua/lib/ids.lua"),
                include_str!("../../lua/lib/events.lua"),
                include_str!("../../lua/lib/traces.lua"),
                include_str!(concat!("../../lua/", $name, ".lua"))
            ),
            Resend::$resend,
        )
    };
}

/// The shared Lua prepended to every script (the `lua!` table below repeats
/// these paths, as `concat!` needs literals; a test keeps them equal). Tests
/// and benchmarks that run a script by hand build its body from these.
#[doc(hidden)]
pub const LIBS: [&str; 7] = [
    include_str!("../../lua/lib/element.lua"),
    include_str!("../../lua/lib/offer.lua"),
    include_str!("../../lua/lib/request.lua"),
    include_str!("../../lua/lib/counts.lua"),
    include_str!("../../lua/lib/ids.lua"),
    include_str!("../../lua/lib/events.lua"),
    include_str!("../../lua/lib/traces.lua"),
];

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
    pub body: &'static str,
    pub sha1: String,
    pub resend: Resend,
}

impl Script {
    fn new(name: &'static str, body: &'static str, resend: Resend) -> Self {
        Script {
            name,
            body,
            sha1: fred::util::sha1_hash(body),
            resend,
        }
    }

    /// Runs the script on `queue` (named in its errors) by EVALSHA, falling
    /// back to EVAL on `NOSCRIPT`, with as many attempts as its [`Resend`]
    /// allows.
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
        let mut wait = ROUTE_RETRY_FIRST;
        let mut waited = std::time::Duration::ZERO;
        let sent = loop {
            let sent = match self.resend {
                Resend::Safe => self.send(conn, keys.clone(), args.clone()).await,
                Resend::Once => {
                    self.send(&conn.with_options(&Resend::Once.options()), keys.clone(), args.clone())
                        .await
                }
            };
            match sent {
                Err(error) if error.details().starts_with(NOT_ROUTED) && waited < ROUTE_RETRY_FOR => {
                    tokio::time::sleep(wait).await;
                    waited += wait;
                    wait = (wait * 2).min(ROUTE_RETRY_MAX);
                }
                other => break other,
            }
        };
        sent.map_err(|error| ScriptError {
            error,
            script: self.name,
            queue: queue.to_owned(),
            unrepeatable: self.resend == Resend::Once,
        })
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
                argv[0] = Value::from(self.body);
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
}

impl ScriptError {
    /// A failure of `script` on `queue` that fred did not report: the task
    /// running it ended first, or a deadline of delayq's passed.
    pub(crate) fn new(error: fred::error::Error, script: &Script, queue: &str) -> ScriptError {
        ScriptError {
            error,
            script: script.name,
            queue: queue.to_owned(),
            unrepeatable: script.resend == Resend::Once,
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
        } = failed;
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
    pub pause: Script,
    pub resume: Script,
    pub pending_page: Script,
    pub pending_element: Script,
    pub remove_dead_letters: Script,
    pub dead_letter_page: Script,
    pub dead_letter_act: Script,
    pub dead_letter_reasons: Script,
    pub schedule_save: Script,
    pub schedule_fire: Script,
    pub schedule_set: Script,
    pub schedule_list: Script,
    pub schedule_beat: Script,
    pub schedule_runners: Script,
    pub rate_limit: Script,
    pub registry_forget: Script,
    #[cfg(feature = "opentelemetry")]
    pub trace_take: Script,
    #[cfg(feature = "opentelemetry")]
    pub trace_put: Script,
}

pub(crate) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    offer: lua!("offer", Once),
    // Keyed by its call's request: a chunk adds only the call's elements not
    // added yet, so a resend adds nothing twice.
    offer_all: lua!("offer_all", Safe),
    // Harmless to repeat; numbered along a lane (`request::Lane`), so a
    // resend answers what the first run moved, quarantined and how late.
    transfer: lua!("transfer", Safe),
    read_all: lua!("read_all", Safe),
    peek: lua!("peek", Safe),
    contains: lua!("contains", Safe),
    remove: lua!("remove", Safe),
    poll: lua!("poll", Safe),
    poll_last_and_offer_first_to: lua!("poll_last_and_offer_first_to", Safe),
    // Keyed by a request: a resent PERSIST, or expiry in the past, answers
    // as the first run did (run again, it would find nothing to change).
    expire: lua!("expire", Safe),
    drain: lua!("drain", Safe),
    restore: lua!("restore", Safe),
    // Keyed by a request: a resend returns the first run's counts.
    migrate: lua!("migrate", Safe),
    // Keyed by a request: a resend returns the first run's counts (run
    // again, it would find the elements it rewrote changed and count them
    // as moved).
    recode: lua!("recode", Safe),
    claim: lua!("claim", Once),
    // Sent once like claim: a resend would claim more values (a lost reply
    // is found by its batch id, `lost_claim`).
    claim_batch: lua!("claim_batch", Once),
    // A resend finds the ids the first run acked in the acked set.
    ack_batch: lua!("ack_batch", Safe),
    ack: lua!("ack", Safe),
    nack: lua!("nack", Safe),
    // Numbered along a lane: a resend answers what the first run gave back
    // and moves nothing twice (a delivery leaves the lease set once).
    release_unhandled: lua!("release_unhandled", Safe),
    extend: lua!("extend", Safe),
    // Numbered along a lane: a resend answers what the first run returned.
    reap: lua!("reap", Safe),
    requeue_dead_letters: lua!("requeue_dead_letters", Safe),
    // Numbered along a lane: a resend answers what the first run moved.
    sweep_window: lua!("sweep_window", Safe),
    status: lua!("status", Safe),
    remove_pending: lua!("remove_pending", Safe),
    undo_move: lua!("undo_move", Once),
    push_back: lua!("push_back", Safe),
    // Its mark keeps what it found: a resend answers the same.
    cancel_request: lua!("cancel_request", Safe),
    list_remove: lua!("list_remove", Safe),
    offer_id: lua!("offer_id", Safe),
    cancel_id: lua!("cancel_id", Safe),
    reschedule_id: lua!("reschedule_id", Safe),
    get_id: lua!("get_id", Safe),
    // SET NX: a resend finds the flag set and writes no second event.
    pause: lua!("pause", Safe),
    resume: lua!("resume", Safe),
    pending_page: lua!("pending_page", Safe),
    // Keyed by a request: a resend answers as the first run did.
    pending_element: lua!("pending_element", Safe),
    // Deletes: sent once (a resend would delete more).
    remove_dead_letters: lua!("remove_dead_letters", Once),
    dead_letter_page: lua!("dead_letter_page", Safe),
    // Keyed by a request: a resend answers as the first run did and acts on
    // no second copy of an equal value.
    dead_letter_act: lua!("dead_letter_act", Safe),
    dead_letter_reasons: lua!("dead_letter_reasons", Safe),
    // Keyed by a request: a resend returns the first answer and undoes no
    // save made meanwhile.
    schedule_save: lua!("schedule_save", Safe),
    // A compare-and-set on the schedule's next occurrence: a resend finds it
    // moved and offers nothing, and answers 'fired' when it finds its own
    // token among the record's last fires.
    schedule_fire: lua!("schedule_fire", Safe),
    // Keyed by a request: a resent remove still says it removed.
    schedule_set: lua!("schedule_set", Safe),
    schedule_list: lua!("schedule_list", Safe),
    // A heartbeat: a resend beats or leaves again, as harmless as the first.
    schedule_beat: lua!("schedule_beat", Safe),
    schedule_runners: lua!("schedule_runners", Safe),
    // A resend could take a second permit: sent once (a lost reply only
    // costs the worker one permit).
    rate_limit: lua!("rate_limit", Once),
    registry_forget: lua!("registry_forget", Safe),
    // Takes contexts: a resend would take the next equal payload's (sent
    // once; a lost reply costs those deliveries their parent, nothing else).
    #[cfg(feature = "opentelemetry")]
    trace_take: lua!("trace_take", Once),
    // A resend could store a context twice: sent once.
    #[cfg(feature = "opentelemetry")]
    trace_put: lua!("trace_put", Once),
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_starts_with_the_shared_lua() {
        let libs = LIBS.concat();
        for script in [
            &SCRIPTS.offer,
            &SCRIPTS.offer_all,
            &SCRIPTS.claim,
            &SCRIPTS.drain,
            &SCRIPTS.cancel_request,
        ] {
            assert!(script.body.starts_with(&libs), "{}", script.name);
            assert_eq!(script.sha1, fred::util::sha1_hash(script.body));
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
    fn every_lib_file_is_prepended() {
        let libs = lua_files("lua/lib");
        assert_eq!(libs.len(), LIBS.len(), "a file in lua/lib/ that LIBS leaves out");
        for (name, text) in libs {
            assert!(LIBS.contains(&text.as_str()), "{name} is not in LIBS");
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
}
