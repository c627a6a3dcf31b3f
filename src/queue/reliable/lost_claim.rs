//! A claim whose reply was lost: found by its delivery id and given back.
//!
//! The claim script is sent once (a second run would claim a second
//! value). When its reply is lost, the take cannot tell whether it ran. If
//! it did, the delivery is in flight and nobody holds it: its visibility
//! timeout would give it back counted, spending one of `max_deliveries` on a
//! value no handler saw (with `max_deliveries(1)`, a dead letter). The take
//! chose the delivery's id, so once the connection is back it looks for the
//! delivery by that id and gives it back uncounted, first in line. Lost
//! replies are rare, so a scan of the lease set (`ZSCAN ... MATCH`, a
//! bounded page a call) is an acceptable price.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};

use crate::connection::{reply, retrying};
use crate::error::{CommandResult, Error, Result};
use crate::queue::reliable::delivery::{DeliveryLease, Release, IN_BACKGROUND, MEMBER_HEADER};
use crate::queue::reliable::Settings;
use crate::queue::Core;
use crate::wire::keys::QueueKeys;

/// Longest the delivery is looked for while Redis is out of reach: its
/// visibility timeout (past it the reaper has given it back anyway), at
/// most this.
const LOOK_FOR_AT_MOST: Duration = Duration::from_secs(3600);

/// In-flight members a scan call looks at.
const PAGE: i64 = 1000;

/// Looks, in a task counted by the client's settling (shutdown waits for
/// it), for the delivery `id` of `value` that a claim whose reply was lost
/// may have made, and releases it uncounted, to the head, if it is there.
pub(crate) fn recover_later(core: &Arc<Core>, keys: &QueueKeys, settings: Settings, id: [u8; 8], value: Bytes) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let counted = core.settling().enter();
    let (core, keys) = (core.clone(), keys.clone());
    drop(runtime.spawn(async move {
        let look_for = settings.visibility.min(LOOK_FOR_AT_MOST);
        match find(&core, &keys, &id, &value, look_for).await {
            Ok(Some(member)) => {
                let mut lease = DeliveryLease::new(core, &keys, settings, member);
                match lease.release(Release::Unhandled).await {
                    Ok(true) => tracing::info!(
                        queue = keys.destination(),
                        "a delivery whose claim reply was lost went back to the head of the queue, uncounted"
                    ),
                    Ok(false) => {}
                    Err(error) => tracing::warn!(
                        queue = keys.destination(),
                        %error,
                        "could not give back a delivery whose claim reply was lost; its visibility timeout will"
                    ),
                }
            }
            // The client closed meanwhile: nothing to say.
            Ok(None) | Err(Error::Shutdown) => {}
            Err(error) => tracing::warn!(
                queue = keys.destination(),
                %error,
                "could not look for a delivery whose claim reply was lost; if the claim ran, its visibility timeout gives it back"
            ),
        }
        drop(counted);
    }));
}

/// As [`recover_later`], for a batch claim (`claim_batch.lua`) whose reply
/// was lost: every delivery of batch `batch` (ids starting with it) goes
/// back uncounted to the head, in the order the batch took them.
pub(crate) fn recover_batch_later(core: &Arc<Core>, keys: &QueueKeys, settings: Settings, batch: [u8; 6]) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let counted = core.settling().enter();
    let (core, keys) = (core.clone(), keys.clone());
    drop(runtime.spawn(async move {
        let look_for = settings.visibility.min(LOOK_FOR_AT_MOST);
        match find_batch(&core, &keys, &batch, look_for).await {
            Ok(mut members) => {
                // In the order the batch took them, in one release.
                members.sort_by(|a, b| a[6..8].cmp(&b[6..8]));
                let found = members.len();
                let leases = (members.into_iter())
                    .map(|member| DeliveryLease::new(core.clone(), &keys, settings, member))
                    .collect();
                if let Err(error) = DeliveryLease::release_unhandled(leases, IN_BACKGROUND).await {
                    tracing::warn!(queue = keys.destination(), %error, "could not give back the deliveries whose claim reply was lost; their visibility timeout will");
                }
                if found > 0 {
                    tracing::info!(
                        queue = keys.destination(),
                        found,
                        "deliveries whose batch claim reply was lost went back to the head of the queue, uncounted"
                    );
                }
            }
            Err(Error::Shutdown) => {}
            Err(error) => tracing::warn!(
                queue = keys.destination(),
                %error,
                "could not look for the deliveries of a batch claim whose reply was lost; if it ran, their visibility timeout gives them back"
            ),
        }
        drop(counted);
    }));
}

/// Every in-flight member of batch `batch`, retried as [`find`] is.
async fn find_batch(core: &Core, keys: &QueueKeys, batch: &[u8; 6], look_for: Duration) -> Result<Vec<Bytes>> {
    let pattern = glob_prefix(batch);
    let ours = |m: &Bytes| m.len() >= MEMBER_HEADER && m.starts_with(batch);
    let late = "Redis did not answer in time while looking for a lost claim";
    retrying(look_for, late, || async {
        let (mut cursor, mut found) = (Value::from("0"), Vec::new());
        loop {
            let (next, members) = scan(core, keys.leases(), cursor, &pattern).await?;
            found.extend(members.into_iter().filter(ours));
            if next == b"0"[..] {
                return Ok(found);
            }
            cursor = Value::Bytes(next);
        }
    })
    .await
}

/// The in-flight member with delivery id `id` and value `value`, if the
/// claim ran; retried through connection failures for `look_for`, each try
/// from the start (a cursor means nothing to a restarted or promoted server).
async fn find(core: &Core, keys: &QueueKeys, id: &[u8; 8], value: &[u8], look_for: Duration) -> Result<Option<Bytes>> {
    let pattern = glob_prefix(id);
    let ours = |m: &Bytes| m.len() == MEMBER_HEADER + value.len() && m.starts_with(id) && m.ends_with(value);
    let late = "Redis did not answer in time while looking for a lost claim";
    retrying(look_for, late, || async {
        let mut cursor = Value::from("0");
        loop {
            let (next, members) = scan(core, keys.leases(), cursor, &pattern).await?;
            if let Some(member) = members.into_iter().find(ours) {
                return Ok(Some(member));
            }
            if next == b"0"[..] {
                return Ok(None);
            }
            cursor = Value::Bytes(next);
        }
    })
    .await
}

/// One `ZSCAN` page of `key`: the next cursor and the members matching.
async fn scan(core: &Core, key: &str, cursor: Value, pattern: &Bytes) -> Result<(Bytes, Vec<Bytes>)> {
    let command = CustomCommand::new_static("ZSCAN", ClusterHash::FirstKey, false);
    let args = vec![
        Value::from(key),
        cursor,
        Value::from("MATCH"),
        Value::Bytes(pattern.clone()),
        Value::from("COUNT"),
        Value::from(PAGE),
    ];
    let reply: Value = core.conn()?.custom(command, args).await.on_key(key)?;
    let [next, found] = reply::tuple::<2>(reply)?;
    let next = reply::bytes(next)?;
    // Members and scores alternate.
    let members = reply::bytes_array(found)?.into_iter().step_by(2).collect();
    Ok((next, members))
}

/// A `MATCH` pattern for members that start with `id` (its bytes escaped,
/// being random).
fn glob_prefix(id: &[u8]) -> Bytes {
    let mut pattern = Vec::with_capacity(id.len() * 2 + 1);
    for &byte in id {
        if matches!(byte, b'*' | b'?' | b'[' | b']' | b'\\') {
            pattern.push(b'\\');
        }
        pattern.push(byte);
    }
    pattern.push(b'*');
    Bytes::from(pattern)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_escapes_what_glob_would_read() {
        assert_eq!(&glob_prefix(b"a*b?[c]\\")[..], b"a\\*b\\?\\[c\\]\\\\*");
        assert_eq!(&glob_prefix(&[0, 255, b'x'])[..], &[0, 255, b'x', b'*']);
    }
}
