//! The Lua scripts under `lua/`, and how they are run.
//!
//! Each script is `lua/lib/element.lua` (the shared unpacking and removal
//! helpers) followed by the operation's own file, built at compile time with
//! `include_str!`. Scripts run by `EVALSHA`; when the server does not know
//! the script yet (`NOSCRIPT`: a restart, a failover, `SCRIPT FLUSH`), the same
//! call is sent once more as `EVAL`, which also caches it. `NOSCRIPT` means
//! the script did not run, so the fallback never applies an operation twice.

use std::sync::LazyLock;

use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Key, Value};
use fred::util::redis_keyslot;

macro_rules! lua {
    ($name:literal) => {
        Script::new(
            $name,
            concat!(
                include_str!("../lua/lib/element.lua"),
                include_str!(concat!("../lua/", $name, ".lua"))
            ),
        )
    };
}

/// One Lua script: its name (file name under `lua/`), source and SHA1.
#[derive(Debug)]
pub(crate) struct Script {
    pub name: &'static str,
    pub body: &'static str,
    pub sha1: String,
}

impl Script {
    fn new(name: &'static str, body: &'static str) -> Self {
        Script {
            name,
            body,
            sha1: fred::util::sha1_hash(body),
        }
    }

    /// Runs the script by EVALSHA, falling back to EVAL on `NOSCRIPT`.
    ///
    /// Sent as fred custom commands rather than through `LuaInterface`: fred
    /// never pipelines its own EVALSHA, which would cap throughput at one
    /// script per round trip, and `WithOptions` (for single-attempt offers)
    /// does not implement `LuaInterface`. The cluster slot is the first key's,
    /// which every key of a queue shares (see `keys.rs`).
    pub async fn run<C>(&self, conn: &C, keys: Vec<Key>, args: Vec<Value>) -> Result<Value, fred::error::Error>
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

/// Every script of the crate, built once.
pub(crate) struct Scripts {
    pub offer: Script,
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
    pub claim: Script,
    pub ack: Script,
    pub nack: Script,
    pub extend: Script,
    pub reap: Script,
    pub requeue_dead_letters: Script,
    pub sweep_collect: Script,
    pub sweep_window: Script,
    pub status: Script,
    pub remove_pending: Script,
    pub undo_move: Script,
}

pub(crate) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    offer: lua!("offer"),
    transfer: lua!("transfer"),
    read_all: lua!("read_all"),
    peek: lua!("peek"),
    contains: lua!("contains"),
    remove: lua!("remove"),
    poll: lua!("poll"),
    poll_last_and_offer_first_to: lua!("poll_last_and_offer_first_to"),
    expire: lua!("expire"),
    drain: lua!("drain"),
    restore: lua!("restore"),
    migrate: lua!("migrate"),
    claim: lua!("claim"),
    ack: lua!("ack"),
    nack: lua!("nack"),
    extend: lua!("extend"),
    reap: lua!("reap"),
    requeue_dead_letters: lua!("requeue_dead_letters"),
    sweep_collect: lua!("sweep_collect"),
    sweep_window: lua!("sweep_window"),
    status: lua!("status"),
    remove_pending: lua!("remove_pending"),
    undo_move: lua!("undo_move"),
});
