//! Offers to a partitioned queue: round robin, or by a partition key.

use std::borrow::Borrow;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::error::Result;
use crate::queue::delayed::OfferOptions;

use super::{PartitionedQueue, Parts};

impl<T: 'static> PartitionedQueue<T> {
    /// Offers `value`, due `delay` from now, to the next partition in
    /// round-robin order (each handle and its clones keep one counter).
    /// One offer to one ordinary queue ([`DelayedQueue::offer`](crate::DelayedQueue::offer)).
    pub async fn offer(&self, value: &T, delay: Duration) -> Result<()> {
        let parts = self.parts().await;
        parts.delayed[self.round_robin(&parts)].offer(value, delay).await
    }

    /// Offers `value`, due `delay` from now, to the partition of `key`
    /// (`CRC-32(key bytes) mod N`): values of one key are taken in the
    /// order they were offered.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::PartitionedQueue<String>) -> delayq::Result<()> {
    /// use std::time::Duration;
    /// for step in ["created", "paid", "shipped"] {
    ///     queue.offer_keyed("order-7", &step.to_string(), Duration::ZERO).await?; // taken in this order
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn offer_keyed(&self, key: impl AsRef<[u8]>, value: &T, delay: Duration) -> Result<()> {
        let parts = self.parts().await;
        parts.delayed[parts.layout().partition_for_key(key.as_ref())]
            .offer(value, delay)
            .await
    }

    /// Offers `value` as `options` say ([`DelayedQueue::offer_with`](crate::DelayedQueue::offer_with)),
    /// to the partition of its [`partition_key`](OfferOptions::partition_key)
    /// if set, else to the partition of its [group](OfferOptions::group) key
    /// (a group's values, or [`sequential`](OfferOptions::sequential) ones,
    /// must share one partition to run one at a time), else round robin.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::PartitionedQueue<String>) -> delayq::Result<()> {
    /// use std::time::Duration;
    /// let options = delayq::OfferOptions::after(Duration::from_secs(30)).partition_key("customer-42");
    /// queue.offer_with(&"reminder".to_string(), &options).await?;
    /// # Ok(()) }
    /// ```
    pub async fn offer_with(&self, value: &T, options: &OfferOptions) -> Result<()> {
        let parts = self.parts().await;
        let i = match (options.partition_key_set(), options.group_key()) {
            (Some(key), _) => parts.layout().partition_for_key(key.as_ref()),
            (None, Some(group)) => parts.layout().partition_for_key(group.as_ref()),
            (None, None) => self.round_robin(&parts),
        };
        parts.delayed[i].offer_with(value, options).await
    }

    /// Offers many values round robin: split by partition, each
    /// partition's share in one [`DelayedQueue::offer_all`](crate::DelayedQueue::offer_all)
    /// (in the order given), the partitions at once. On an error some
    /// partitions' shares may be queued: the error is the first
    /// partition's that failed (an [`Error::PartlyOffered`](crate::Error::PartlyOffered)
    /// counts that partition's share only).
    pub async fn offer_all<I, B>(&self, items: I) -> Result<()>
    where
        I: IntoIterator<Item = (B, Duration)>,
        B: Borrow<T>,
    {
        let parts = self.parts().await;
        let mut shares: Vec<Vec<(B, Duration)>> = (0..parts.layout().count()).map(|_| Vec::new()).collect();
        for item in items {
            shares[self.round_robin(&parts)].push(item);
        }
        offer_shares(&parts, shares).await
    }

    /// Offers many values, each to the partition of its key (as
    /// [`offer_keyed`](Self::offer_keyed)), values of one key in the order
    /// given; as [`offer_all`](Self::offer_all) otherwise.
    pub async fn offer_all_keyed<I, K, B>(&self, items: I) -> Result<()>
    where
        I: IntoIterator<Item = (K, B, Duration)>,
        K: AsRef<[u8]>,
        B: Borrow<T>,
    {
        let parts = self.parts().await;
        let mut shares: Vec<Vec<(B, Duration)>> = (0..parts.layout().count()).map(|_| Vec::new()).collect();
        for (key, value, delay) in items {
            shares[parts.layout().partition_for_key(key.as_ref())].push((value, delay));
        }
        offer_shares(&parts, shares).await
    }

    fn round_robin(&self, parts: &Parts<T>) -> usize {
        self.next_offer.fetch_add(1, Ordering::Relaxed) % parts.layout().count()
    }
}

/// Each partition's share in one bulk offer, the partitions at once.
async fn offer_shares<T: 'static, B: Borrow<T>>(parts: &Parts<T>, shares: Vec<Vec<(B, Duration)>>) -> Result<()> {
    let offers = (parts.delayed.iter().zip(shares))
        .filter(|(_, share)| !share.is_empty())
        .map(|(queue, share)| queue.offer_all(share));
    // Every partition's offer runs to its end, failed or not: none is
    // dropped half way because another failed.
    futures_util::future::join_all(offers).await.into_iter().collect()
}
