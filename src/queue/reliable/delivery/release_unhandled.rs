//! Deliveries no handler saw, given back to the head of their queue many at
//! once and in their order (`lua/release_unhandled.lua`): a worker's values
//! claimed ahead of its handlers (as the queue pauses, as it stops, when
//! they wait too long), a batch claimed for a caller that stopped waiting,
//! a batch whose claim reply was lost. One script gives back a batch, so no
//! claim lands between its values, and a resend answers as its first run
//! (a lane run), where one release per value, last first, took a round trip
//! each and let other claims in between.

use std::ops::Range;
use std::time::Duration;

use bytes::Bytes;
use fred::types::Value;
use tokio::time::Instant;

use crate::connection::request::Lane;
use crate::connection::script::SCRIPTS;
use crate::connection::{reply, retrying};
use crate::error::{Error, Result};
use crate::wire::keys::KeyRole;

use super::{DeliveryLease, MEMBER_HEADER};

/// Most deliveries one script gives back (`lua/release_unhandled.lua`
/// refuses more): as many as a worker holds ahead by default.
const MOST: usize = 256;

/// Most payload bytes one script carries, past its first delivery.
const MOST_BYTES: usize = 1 << 20;

/// How long a give-back that runs in the background (no caller waits for
/// it) retries through connection failures, as a give-back request does.
pub(crate) const IN_BACKGROUND: Duration = Duration::from_secs(30);

impl DeliveryLease {
    /// Gives `leases` (of one queue, in the order they were claimed) back to
    /// the head of the queue, uncounted (as [`Release::Unhandled`](super::Release::Unhandled)),
    /// so that the head reads in their order, in front of what the queue
    /// held: one script for up to 256 deliveries and a MiB of payloads, else
    /// one per such share, the last share first (a claim may then take the
    /// head between two shares). Their trace contexts are stored again in
    /// the same script (feature `opentelemetry`).
    ///
    /// Every lease is settled at once; the call is counted in the client's
    /// settling (its shutdown waits for it). Retried through connection
    /// failures until `within` has passed: what is not back by then (Redis
    /// out of reach) is left to its visibility timeout, and the error says
    /// why. Returns how many went back (the rest were no longer in flight).
    pub(crate) async fn release_unhandled(leases: Vec<DeliveryLease>, within: Duration) -> Result<usize> {
        let Some(first) = leases.first() else {
            return Ok(0);
        };
        let (core, keys, settings) = (first.core.clone(), first.keys.clone(), first.settings);
        let _counted = core.settling().enter();
        let mut given = Vec::with_capacity(leases.len());
        for mut lease in leases {
            debug_assert_eq!(lease.keys.destination(), keys.destination(), "one queue's leases");
            lease.settle();
            #[cfg(feature = "opentelemetry")]
            let context = Value::from(lease.trace_to_put().as_deref().unwrap_or(""));
            #[cfg(not(feature = "opentelemetry"))]
            let context = Value::from("");
            given.push((lease.member.clone(), context));
        }
        let deadline = Instant::now() + within;
        // One lane for the call: its shares run one after the other.
        let lane = Lane::new();
        let mut released = 0;
        for share in shares(&given).into_iter().rev() {
            let run = lane.next(&keys);
            let late = "Redis did not answer in time while giving back values no handler saw";
            let left = deadline.saturating_duration_since(Instant::now());
            let answered = retrying(left, late, || async {
                let redis_keys = SCRIPTS
                    .release_unhandled
                    .keys(&keys)
                    .traced(true)
                    .with(KeyRole::Lane, run.record())
                    .build();
                let mut args = Vec::with_capacity(2 + 2 * share.len());
                args.push(run.id());
                args.push(Value::from(crate::wire::time::saturating_ms(settings.count_memory)));
                for (member, context) in &given[share.clone()] {
                    args.push(Value::Bytes(member.clone()));
                    args.push(context.clone());
                }
                let value = SCRIPTS
                    .release_unhandled
                    .run(core.conn_for(keys.destination())?, keys.destination(), redis_keys, args)
                    .await?;
                let answers = reply::array(value)?;
                if answers.len() != share.len() {
                    return Err(Error::Protocol(
                        "release_unhandled answered for other deliveries".into(),
                    ));
                }
                answers
                    .iter()
                    .map(|v| reply::int(v).map(|n| usize::from(n == 1)))
                    .sum::<Result<usize>>()
            })
            .await?;
            released += answered;
        }
        Ok(released)
    }
}

/// `given` cut into shares of one script each, in order: at most [`MOST`]
/// deliveries and [`MOST_BYTES`] of payloads past a share's first.
fn shares(given: &[(Bytes, Value)]) -> Vec<Range<usize>> {
    let mut shares = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, (member, _)) in given.iter().enumerate() {
        let size = member.len().saturating_sub(MEMBER_HEADER);
        if i > start && (i - start == MOST || bytes + size > MOST_BYTES) {
            shares.push(start..i);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < given.len() {
        shares.push(start..given.len());
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(sizes: &[usize]) -> Vec<(Bytes, Value)> {
        sizes
            .iter()
            .map(|&n| (Bytes::from(vec![0; MEMBER_HEADER + n]), Value::from("")))
            .collect()
    }

    #[test]
    fn shares_hold_at_most_256_deliveries() {
        assert_eq!(shares(&given(&[1; 600])), [0..256, 256..512, 512..600]);
        assert_eq!(shares(&given(&[1; 256])), vec![(0..256)]);
        assert!(shares(&given(&[])).is_empty());
    }

    #[test]
    fn shares_hold_a_mebibyte_past_their_first() {
        let half = MOST_BYTES / 2;
        assert_eq!(shares(&given(&[half, half, 1, half])), [0..2, 2..4]);
        // A delivery over the budget goes alone.
        assert_eq!(shares(&given(&[1, 3 * MOST_BYTES, 1])), [0..1, 1..2, 2..3]);
    }
}
