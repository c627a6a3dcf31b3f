//! Concurrent offers to one queue, joined into one run of `lua/offer.lua`
//! (see `joined.rs`): it takes many elements and leaves what offering them
//! one by one in arrival order would: the same members and scores, the
//! pending list in that order, and one publish when the queue's new head is
//! one of them (Redisson's transfer reschedules on it alone).

use std::sync::Arc;

use bytes::Bytes;
use fred::types::Value;

use crate::connection::durable::Durability;
use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::queue::Core;
use crate::wire::keys::QueueKeys;

use super::offer::Due;
use crate::queue::joined::{reply_gone, Join, Joined, RunOutcome};

/// The offers of one queue (shared by a handle's clones).
pub(super) type JoinedOffers = Joined<Target>;

/// Where offers go: what a joined run needs, without the handle's type.
#[derive(Clone)]
pub(super) struct Target {
    pub core: Arc<Core>,
    pub keys: Arc<QueueKeys>,
}

/// One offer: its due time, its packed element, its payload's length, and
/// how many replicas it waits for (offers join only with offers that wait
/// for the same: one wait per run).
#[derive(Clone)]
pub(super) struct OfferItem {
    pub due: Due,
    pub element: Bytes,
    pub payload: usize,
    pub durability: Option<Durability>,
}

impl Target {
    /// The run itself: its reply or its failure; with a durability, after
    /// the one wait for the replicas of the whole run.
    async fn run_offer(&self, elements: Vec<(Due, Bytes)>, durability: Option<Durability>) -> RunOutcome {
        let keys = SCRIPTS.offer.keys(&self.keys).build();
        let mut args = Vec::with_capacity(2 * elements.len());
        for (due, element) in elements {
            args.push(due.arg());
            args.push(Value::Bytes(element));
        }
        let durable = self.core.durable(durability);
        Ok(SCRIPTS
            .offer
            .run_durable(self.core.conn()?, self.keys.destination(), keys, args, durable)
            .await)
    }

    /// The 1-based positions of the elements a run's reply says collided.
    fn collisions(reply: &Value) -> Result<Vec<usize>> {
        reply::array(reply.clone())?
            .iter()
            .map(|v| reply::int(v).map(|i| i as usize))
            .collect()
    }
}

impl Join for Target {
    type Item = OfferItem;
    /// Whether its element collided with a pending one (then it is re-packed
    /// and offered again).
    type Answer = bool;

    fn core(&self) -> &Arc<Core> {
        &self.core
    }

    fn payload(item: &OfferItem) -> usize {
        item.payload
    }

    fn joins(first: &OfferItem, next: &OfferItem) -> bool {
        first.durability == next.durability
    }

    async fn run(&self, items: Vec<OfferItem>) -> RunOutcome {
        let durability = items.first().and_then(|i| i.durability);
        self.run_offer(items.into_iter().map(|i| (i.due, i.element)).collect(), durability)
            .await
    }

    fn answer(&self, reply: &Value, position: usize, _: &OfferItem) -> Result<bool> {
        Ok(Self::collisions(reply)?.contains(&(position + 1)))
    }

    fn unknown_outcome(&self) -> Error {
        reply_gone(&SCRIPTS.offer, self.keys.destination())
    }
}

impl Joined<Target> {
    /// Offers packed `element` (of a `payload` bytes long payload), due
    /// `due`: alone, or with others. Whether it collided with a pending
    /// element (then re-pack it and offer again).
    pub(super) async fn offer(
        self: &Arc<Self>,
        target: Target,
        due: Due,
        element: Bytes,
        payload: usize,
        durability: Option<Durability>,
    ) -> Result<bool> {
        let item = OfferItem {
            due,
            element,
            payload,
            durability,
        };
        self.send(target, item).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::format::{self, Format};

    /// Joined runs and bulk-offer chunks split one sequence of payloads at
    /// the same places, whatever layout the elements are packed in.
    #[test]
    fn joined_runs_split_where_bulk_chunks_do() {
        // Sizes from tiny to over the byte bound, in a fixed pseudo-random order.
        let mut seed = 7u64;
        let sizes: Vec<usize> = (0..3_000)
            .map(|i| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let n = (seed >> 33) as usize;
                match i % 7 {
                    0 => n % (300 * 1024),
                    1 | 2 => n % (8 * 1024),
                    _ => n % 64,
                }
            })
            .collect();
        let items: Vec<(Due, Bytes)> = sizes
            .iter()
            .map(|&n| (Due::At(0), Bytes::from(vec![b'x'; n])))
            .collect();
        for layout in [Format::Modern, Format::Legacy] {
            let joined = JoinedOffers::default();
            let mut replies = Vec::new();
            for (due, payload) in &items {
                replies.push(joined.push_waiting(OfferItem {
                    due: *due,
                    element: format::pack(layout, payload),
                    payload: payload.len(),
                    durability: None,
                }));
            }
            let (mut start, mut runs) = (0, 0);
            loop {
                let batch = joined.next_batch_len();
                if batch == 0 {
                    break;
                }
                let end = super::super::offer::chunk_end(&items, start);
                assert_eq!(batch, end - start, "{layout}: run {runs} from {start}");
                start = end;
                runs += 1;
            }
            assert_eq!(start, items.len());
            assert!(runs > 20, "{runs} runs: the bounds were reached");
        }
    }
}
