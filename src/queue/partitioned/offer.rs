//! Offers to a partitioned queue: round robin, or by a partition key. An
//! offer that a re-partition's seal refused (its handle was on the old
//! layout) reads the layout again and goes to the new partitions.

use std::borrow::Borrow;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Refusal, Result};
use crate::queue::delayed::OfferOptions;

use super::{PartitionedQueue, Parts};

/// One value of a bulk offer: its partition key (none: round robin), the
/// value, its delay.
type Item<B> = (Option<Vec<u8>>, B, Duration);

/// Whether `error` is a sealed partition's refusal (offers off).
fn sealed(error: &Error) -> bool {
    matches!(
        error,
        Error::OfferRefused {
            refusal: Refusal::OffersOff,
            ..
        }
    )
}

impl<T: 'static> PartitionedQueue<T> {
    /// Offers `value`, due `delay` from now, to the next partition in
    /// round-robin order (each handle and its clones keep one counter).
    /// One offer to one ordinary queue ([`DelayedQueue::offer`](crate::DelayedQueue::offer)).
    pub async fn offer(&self, value: &T, delay: Duration) -> Result<()> {
        self.routed(|parts| async move { parts.delayed[self.round_robin(&parts)].offer(value, delay).await })
            .await
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
    ///     tokio::time::sleep(Duration::from_millis(2)).await; // due times a ms apart at least
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn offer_keyed(&self, key: impl AsRef<[u8]>, value: &T, delay: Duration) -> Result<()> {
        let key = key.as_ref();
        self.routed(|parts| async move {
            parts.delayed[parts.layout().partition_for_key(key)]
                .offer(value, delay)
                .await
        })
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
        self.routed(|parts| async move {
            let i = match (options.partition_key_set(), options.group_key()) {
                (Some(key), _) => parts.layout().partition_for_key(key.as_ref()),
                (None, Some(group)) => parts.layout().partition_for_key(group.as_ref()),
                (None, None) => self.round_robin(&parts),
            };
            parts.delayed[i].offer_with(value, options).await
        })
        .await
    }

    /// Offers many values round robin: split by partition, each
    /// partition's share in one [`DelayedQueue::offer_all`](crate::DelayedQueue::offer_all)
    /// (in the order given), the partitions at once. On an error some
    /// partitions' shares may be queued: the error is the first
    /// partition's that failed (an [`Error::PartlyOffered`]
    /// counts that partition's share only).
    pub async fn offer_all<I, B>(&self, items: I) -> Result<()>
    where
        I: IntoIterator<Item = (B, Duration)>,
        B: Borrow<T>,
    {
        let items: Vec<Item<B>> = items.into_iter().map(|(b, d)| (None, b, d)).collect();
        self.offer_routed(items).await
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
        let items: Vec<Item<B>> = items
            .into_iter()
            .map(|(k, b, d)| (Some(k.as_ref().to_vec()), b, d))
            .collect();
        self.offer_routed(items).await
    }

    /// Offers `items` split by partition (by key, or round robin); the
    /// shares a seal refused (nothing of them was written) go again once
    /// over the layout read anew.
    async fn offer_routed<B: Borrow<T>>(&self, items: Vec<Item<B>>) -> Result<()> {
        let parts = self.parts().await;
        let refused = self.offer_shares(&parts, items).await?;
        if refused.is_empty() {
            return Ok(());
        }
        let Some(parts) = self.reread(&parts).await? else {
            return Err(Error::OfferRefused {
                queue: self.name().to_owned(),
                refusal: Refusal::OffersOff,
            });
        };
        let refused = self.offer_shares(&parts, refused).await?;
        match refused.is_empty() {
            true => Ok(()),
            false => Err(Error::OfferRefused {
                queue: self.name().to_owned(),
                refusal: Refusal::OffersOff,
            }),
        }
    }

    /// Each partition's share in one bulk offer, the partitions at once;
    /// the items of the shares a seal refused, or the first other error.
    async fn offer_shares<B: Borrow<T>>(&self, parts: &Parts<T>, items: Vec<Item<B>>) -> Result<Vec<Item<B>>> {
        let mut shares: Vec<Vec<Item<B>>> = (0..parts.layout().count()).map(|_| Vec::new()).collect();
        for (key, value, delay) in items {
            let i = match &key {
                Some(key) => parts.layout().partition_for_key(key),
                None => self.round_robin(parts),
            };
            shares[i].push((key, value, delay));
        }
        let results = {
            let offers = (parts.delayed.iter().zip(&shares))
                .filter(|(_, share)| !share.is_empty())
                .map(|(queue, share)| queue.offer_all(share.iter().map(|(_, b, d)| (b.borrow(), *d))));
            // Every partition's offer runs to its end, failed or not: none
            // is dropped half way because another failed.
            futures_util::future::join_all(offers).await
        };
        let mut refused = Vec::new();
        let mut first_error = None;
        let mut results = results.into_iter();
        for share in shares.into_iter().filter(|share| !share.is_empty()) {
            match results.next().expect("a result per share") {
                Ok(()) => {}
                Err(error) if sealed(&error) => refused.extend(share),
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(refused),
        }
    }

    /// Runs `offer` on the partitions; when a seal refused it, once more on
    /// the layout read anew, if that changed.
    async fn routed<'a, F, Fut>(&'a self, offer: F) -> Result<()>
    where
        F: Fn(Arc<Parts<T>>) -> Fut,
        Fut: Future<Output = Result<()>> + 'a,
    {
        let parts = self.parts().await;
        match offer(parts.clone()).await {
            Err(error) if sealed(&error) => match self.reread(&parts).await? {
                Some(parts) => offer(parts).await,
                None => Err(error),
            },
            done => done,
        }
    }

    /// The layout read now; the new partitions if it is not `known`'s.
    async fn reread(&self, known: &Parts<T>) -> Result<Option<Arc<Parts<T>>>> {
        self.refresh().await?;
        let parts = self.parts_now();
        Ok((parts.layout().generation() != known.layout().generation()).then_some(parts))
    }

    fn round_robin(&self, parts: &Parts<T>) -> usize {
        self.next_offer.fetch_add(1, Ordering::Relaxed) % parts.layout().count()
    }
}
