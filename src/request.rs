//! Scripts that remove or give back values, made safe to send again.
//!
//! fred resends a command whose connection dropped before its reply came
//! (`max_command_attempts`), and the first send may have run: a drain run
//! twice removes twice as much, and the first batch is gone. Each such call
//! here is a [`Request`] with a key of its own (`delayq_request:{N}:<id>`,
//! see `lua/lib/request.lua`): the first run stores its reply there, and a
//! resend returns that reply and changes nothing. When fred gives up (the
//! connection stays down), the request is cancelled in the background: what
//! it removed goes back where it was, and a first run that arrives late does
//! nothing. So a lost reply costs neither a value nor a duplicate, and the
//! caller gets an error only when the outcome could not be learnt.

use std::sync::Arc;
use std::time::Duration;

use fred::interfaces::KeysInterface;
use fred::types::{Key, Value};

use crate::detached::{Settling, SettlingGuard};
use crate::keys::request_key;
use crate::script::{Resend, Script, SCRIPTS};

/// How long a give-back keeps retrying through connection failures.
const GIVE_BACK_RETRY_FOR: Duration = Duration::from_secs(30);

/// How long a cancel keeps trying to reach Redis (the stored reply lives an
/// hour, so what it holds can still be put back after that long an outage).
const CANCEL_RETRY_FOR: Duration = Duration::from_secs(600);

/// One call of a request-keyed script.
pub(crate) struct Request {
    key: String,
}

impl Request {
    /// A new request on the queue (or list) `name` (a random 128-bit id).
    pub fn new(name: &str) -> Request {
        let id = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        Request {
            key: request_key(name, &id),
        }
    }

    /// Appends the request key to a request-keyed script's `keys`.
    fn append_to(&self, script: &Script, keys: &mut Vec<Key>) {
        debug_assert_eq!(script.resend, Resend::Safe, "{} is request-keyed", script.name);
        keys.push(Key::from(self.key.as_str()));
    }

    /// Runs `script`, which removes values, with this request's key after
    /// `keys` (the script's last KEY). fred may resend it. On success the
    /// stored reply is deleted in the background (it would expire anyway);
    /// on failure the request is cancelled in the background, which puts
    /// back what it removed, counted in `settling` so that shutdown waits.
    pub async fn remove(
        self,
        conn: &fred::clients::Client,
        settling: &Arc<Settling>,
        script: &'static Script,
        mut keys: Vec<Key>,
        args: Vec<Value>,
    ) -> Result<Value, fred::error::Error> {
        self.append_to(script, &mut keys);
        match script.run(conn, keys.clone(), args).await {
            Ok(reply) => {
                forget(conn.clone(), self.key);
                Ok(reply)
            }
            Err(error) => {
                tracing::debug!(script = script.name, %error, "request failed; cancelling it");
                cancel(conn.clone(), keys, settling.enter());
                Err(error)
            }
        }
    }

    /// Runs `script`, which gives values back, with this request's key after
    /// `keys`, retrying through connection failures for up to 30 s: the same
    /// request applies once however often it is sent.
    pub async fn give_back(
        self,
        conn: &fred::clients::Client,
        script: &'static Script,
        mut keys: Vec<Key>,
        args: Vec<Value>,
    ) -> Result<Value, fred::error::Error> {
        self.append_to(script, &mut keys);
        let deadline = tokio::time::Instant::now() + GIVE_BACK_RETRY_FOR;
        loop {
            match script.run(conn, keys.clone(), args.clone()).await {
                Ok(reply) => {
                    forget(conn.clone(), self.key);
                    return Ok(reply);
                }
                Err(error)
                    if crate::error::Error::from(error.clone()).is_transient()
                        && tokio::time::Instant::now() < deadline =>
                {
                    tracing::debug!(script = script.name, %error, "give-back failed; retrying");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(error) => return Err(error),
            }
        }
    }
}

/// Deletes a request's stored reply once the caller has it.
fn forget(conn: fred::clients::Client, key: String) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            let _: Result<i64, _> = conn.unlink(key).await;
        });
    }
}

/// Cancels a request in the background, retrying while Redis is unreachable.
fn cancel(conn: fred::clients::Client, keys: Vec<Key>, counted: SettlingGuard) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        let deadline = tokio::time::Instant::now() + CANCEL_RETRY_FOR;
        let mut pause = Duration::from_millis(50);
        loop {
            match SCRIPTS.cancel_request.run(&conn, keys.clone(), Vec::new()).await {
                Ok(undone) => {
                    if undone == Value::Integer(1) {
                        tracing::info!(
                            request = ?keys.last(),
                            "a request whose reply was lost ran; what it removed is back"
                        );
                    }
                    break;
                }
                Err(error) if tokio::time::Instant::now() < deadline => {
                    tracing::debug!(%error, "cancelling a request failed; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                }
                Err(error) => {
                    tracing::error!(request = ?keys.last(), %error, "could not cancel a request; what it removed stays in its request key for an hour");
                    break;
                }
            }
        }
        drop(counted);
    });
}
