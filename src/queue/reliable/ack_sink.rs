//! A consumer's ack sink: deliveries handled successfully are acked many at
//! a time (`lua/ack_batch.lua`, through [`DeliveryLease::ack_all`]), so a
//! busy consumer spends one script on a batch of acks instead of one each.
//! An ack goes out as soon as the sink has a free lane; while [`LANES`]
//! batches are on their way, the deliveries sent meanwhile wait and go
//! together in the next one. What each batch came to is handed to the
//! consumer's callback (a [`Worker`](crate::Worker) counts and logs it).

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

use crate::connection::request::Lane;
use crate::error::Error;

use super::claim_batch::CLAIM_BATCH;
use super::delivery::DeliveryLease;
use super::ReliableQueue;

/// Acks on their way at once.
const LANES: usize = 4;

/// Most deliveries one ack script settles (a claim's worth): 256 made its
/// longest run beside 100,000 deliveries in flight pass 1 ms (scenario 7).
const ACK_BATCH: usize = CLAIM_BATCH;

/// What a batch of acks came to, for the senders' `M`s in the order they
/// were sent: for each, whether it was acked in time (`false`: its
/// visibility timeout had given the value back), or why the batch's ack
/// failed (its values may be delivered again). Once per batch, not per
/// value: a worker's metrics cost a lookup each.
type Acked<M> = Arc<dyn Fn(Vec<M>, Result<&[bool], &Error>) + Send + Sync>;

/// Where a consumer sends the leases of deliveries to ack, each with what
/// its callback gets back (`M`). Cloned for each sender; the sink ends,
/// after its last acks, once every clone is dropped. It holds at most
/// [`ACK_BATCH`]: past that (acks held up by a slow Redis) [`send`](Self::send)
/// waits, so the consumer stops taking new values instead of piling up
/// leases whose acks may come too late.
pub(crate) struct AckSink<M> {
    sender: mpsc::Sender<(DeliveryLease, M)>,
}

impl<M> Clone for AckSink<M> {
    fn clone(&self) -> Self {
        AckSink {
            sender: self.sender.clone(),
        }
    }
}

impl<M: Send + 'static> AckSink<M> {
    /// Queues `lease`'s ack, waiting while the sink is full: `true` when
    /// it waited. Gives `M` back when the sink is gone (its task panicked):
    /// the lease, dropped unsettled, gives its value back.
    pub(crate) async fn send(&self, lease: DeliveryLease, tag: M) -> Result<bool, M> {
        // At once while there is room; the wait's future is boxed, as the
        // sink is seldom full: inline it made this future (copied into
        // each value's) 720 bytes.
        match self.sender.try_send((lease, tag)) {
            Ok(()) => Ok(false),
            Err(mpsc::error::TrySendError::Closed((_, tag))) => Err(tag),
            Err(mpsc::error::TrySendError::Full(message)) => match Box::pin(self.sender.send(message)).await {
                Ok(()) => Ok(true),
                Err(failed) => Err(failed.0 .1),
            },
        }
    }
}

impl<T: 'static> ReliableQueue<T> {
    /// Starts an ack sink for this queue, whose acks are reported to
    /// `acked`, and the task that ends once every sender is gone and its
    /// last acks are answered.
    pub(crate) fn ack_sink<M: Send + 'static>(
        &self,
        acked: impl Fn(Vec<M>, Result<&[bool], &Error>) + Send + Sync + 'static,
    ) -> (AckSink<M>, JoinHandle<()>) {
        let (sender, mut sent) = mpsc::channel::<(DeliveryLease, M)>(ACK_BATCH);
        let acked: Acked<M> = Arc::new(acked);
        let task = tokio::spawn(async move {
            let mut lanes = JoinSet::new();
            // A lane per ack on its way: each lane runs one ack at a time,
            // so a resend of one finds that ack's reply (`lua/ack_batch.lua`).
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
                if sent.recv_many(&mut batch, ACK_BATCH).await == 0 {
                    break;
                }
                let batch = std::mem::replace(&mut batch, Vec::with_capacity(ACK_BATCH));
                lanes.spawn(ack(batch, lane, acked.clone()));
            }
            while lanes.join_next().await.is_some() {}
        });
        (AckSink { sender }, task)
    }
}

/// Acks one batch along `lane`, then reports each delivery's outcome.
async fn ack<M>(batch: Vec<(DeliveryLease, M)>, lane: Lane, acked: Acked<M>) -> Lane {
    let (mut leases, tags): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
    match DeliveryLease::ack_all(&mut leases, &lane).await {
        Ok(outcomes) => acked(tags, Ok(&outcomes)),
        Err(error) => acked(tags, Err(&error)),
    }
    lane
}
