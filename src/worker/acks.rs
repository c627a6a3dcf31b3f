//! The worker's ack buffer: deliveries handled successfully are acked many
//! at a time (`lua/ack_batch.lua`), so a busy worker spends one script on a
//! batch of acks instead of one each. An ack goes out as soon as the buffer
//! has a free lane; while [`LANES`] batches are on their way, the handled
//! deliveries wait and go together in the next one.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

use super::handle::Counters;
use crate::connection::request::Lane;
use crate::queue::reliable::delivery::DeliveryLease;
use crate::queue::reliable::CLAIM_BATCH;
use crate::telemetry::{self, Handled};

/// Acks on their way at once.
const LANES: usize = 4;

/// Most deliveries one ack script settles (as many as a claim takes).
const ACK_BATCH: usize = 2 * CLAIM_BATCH;

/// A delivery whose handler succeeded, to ack.
pub(super) struct Succeeded {
    pub lease: DeliveryLease,
    pub took: Duration,
    pub span: tracing::Span,
}

/// Where handled deliveries go to be acked; the buffer ends (after its last
/// acks) once every sender is dropped. It holds at most [`ACK_BATCH`]: past
/// that (acks held up by a slow Redis) a handled delivery keeps its slot
/// until there is room, so the worker stops taking new values instead of
/// piling up leases whose acks may come too late.
pub(super) type Acks = mpsc::Sender<Succeeded>;

/// Starts the ack buffer of a worker of `queue`.
pub(super) fn start(queue: String, counters: Arc<Counters>) -> (Acks, JoinHandle<()>) {
    let (sender, mut handled) = mpsc::channel::<Succeeded>(ACK_BATCH);
    let task = tokio::spawn(async move {
        let queue: Arc<str> = queue.into();
        let mut lanes = JoinSet::new();
        // A lane per ack on its way: each lane runs one ack at a time, so a
        // resend of one finds that ack's reply (`lua/ack_batch.lua`).
        let mut free: Vec<Lane> = (0..LANES).map(|_| Lane::new()).collect();
        let mut batch = Vec::with_capacity(ACK_BATCH);
        loop {
            let Some(lane) = free.pop() else {
                if let Some(Ok(lane)) = lanes.join_next().await {
                    free.push(lane);
                } else {
                    // A panicked ack task took its lane along: a new one.
                    free.push(Lane::new());
                }
                continue;
            };
            match handled.recv_many(&mut batch, ACK_BATCH).await {
                0 => break,
                _ => {
                    let batch = std::mem::replace(&mut batch, Vec::with_capacity(ACK_BATCH));
                    lanes.spawn(ack(queue.clone(), counters.clone(), batch, lane));
                }
            }
        }
        while lanes.join_next().await.is_some() {}
    });
    (sender, task)
}

/// Acks one batch, then counts and logs each delivery as `settle` does.
async fn ack(queue: Arc<str>, counters: Arc<Counters>, batch: Vec<Succeeded>, lane: Lane) -> Lane {
    let (mut leases, rest): (Vec<_>, Vec<_>) = batch.into_iter().map(|h| (h.lease, (h.took, h.span))).unzip();
    match DeliveryLease::ack_all(&mut leases, &lane).await {
        Ok(acked) => {
            for (acked, (took, span)) in acked.into_iter().zip(rest) {
                Counters::add(&counters.succeeded);
                telemetry::handled(&queue, Handled::Ok, took);
                if acked {
                    tracing::debug!(parent: &span, ?took, "handled");
                } else {
                    tracing::warn!(parent: &span, ?took, "handled, but too late: the visibility timeout had given the value back");
                }
            }
        }
        Err(error) => {
            for (_, span) in rest {
                tracing::warn!(parent: &span, %error, "handled, but the ack failed; the value may be delivered again");
            }
        }
    }
    lane
}
