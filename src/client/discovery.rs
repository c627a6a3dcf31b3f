//! Finding every queue on the server: what `SCAN` finds of their keys and
//! what the registry names, less the registered names whose queues are long
//! gone (forgotten as they are found, so the registry stays bounded without
//! a dashboard running).

use std::collections::{BTreeMap, BTreeSet};

use fred::interfaces::ClientLike;
use fred::types::scan::{ScanType, Scanner};
use futures_util::{StreamExt, TryStreamExt};

use super::Client;
use crate::error::{Error, Result};
use crate::queue::registry::FORGET_AFTER;
use crate::wire::keys::{QueueKeys, PARTITIONS_PREFIX, REGISTRY_KEY};
use crate::wire::time;

/// Keys (or registry names) asked for per `SCAN` (`ZSCAN`) call.
const SCAN_COUNT: u32 = 1_000;
/// Registered names checked at once for being gone.
const CHECKS_AT_ONCE: usize = 16;

impl Client {
    /// Every queue on the server (the client's database), sorted by name:
    /// each queue with pending elements, dead letters or schedules (found by
    /// `SCAN`, on every primary of a Cluster, a page at a time), and each
    /// name in delayq's registry of queues (a queue that holds only ready
    /// values has no key `SCAN` could find; see
    /// [`registered_queues`](Self::registered_queues)).
    ///
    /// A registered name whose queue has no key left and that no process
    /// registered for 30 minutes is dropped from the registry here, as it
    /// is found, and not listed; one registered more recently is listed
    /// even while it holds nothing (a process offering to it may be about
    /// to). What the CLI's `list` and the dashboard show.
    ///
    /// Cost: a `SCAN` of the keyspace, bounded per call; one
    /// [`status`](crate::DelayedQueue::status) per registered name that
    /// `SCAN` did not find and that is older than 30 minutes.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// for name in client.queues().await? {
    ///     println!("{name}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn queues(&self) -> Result<Vec<String>> {
        let mut names = self.scan_queue_keys().await?;
        let forget_before = (time::now_ms() - FORGET_AFTER.as_millis() as i64) as f64;
        let mut stale = Vec::new();
        for (name, registered_at) in self.registry_scores().await? {
            if names.contains(&name) {
                continue;
            }
            if registered_at > forget_before {
                names.insert(name);
            } else {
                stale.push((name, registered_at));
            }
        }
        let kept: Vec<Option<String>> = futures_util::stream::iter(stale)
            .map(|(name, registered_at)| async move {
                let forgotten = self.forget_if_gone(&name, registered_at).await?;
                Ok::<_, Error>((!forgotten).then_some(name))
            })
            .buffer_unordered(CHECKS_AT_ONCE)
            .try_collect()
            .await?;
        names.extend(kept.into_iter().flatten());
        Ok(names.into_iter().collect())
    }

    /// Every partitioned queue's layout on the server, sorted by name:
    /// each `delayq_partitions:{Q}` hash `SCAN` finds (on every primary of
    /// a Cluster), read. Its partitions are queues of their own, in
    /// [`queues`](Self::queues); this says which logical queue each belongs
    /// to (what `delayq list` marks).
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// for layout in client.partitioned_queues().await? {
    ///     println!("{}: {:?}", layout.queue(), layout.names());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn partitioned_queues(&self) -> Result<Vec<crate::PartitionLayout>> {
        self.core.check_open()?;
        let conn = self.core.conn()?;
        let pattern = format!("{PARTITIONS_PREFIX}:*");
        let mut names = BTreeSet::new();
        let mut pages = if conn.is_clustered() {
            conn.scan_cluster(pattern, Some(SCAN_COUNT), Some(ScanType::Hash))
                .boxed()
        } else {
            conn.scan(pattern, Some(SCAN_COUNT), Some(ScanType::Hash)).boxed()
        };
        while let Some(page) = pages.next().await {
            let mut page = page.map_err(Error::from)?;
            for key in page.take_results().unwrap_or_default() {
                let name = (key.as_str()).and_then(|k| {
                    k.strip_prefix(PARTITIONS_PREFIX)?
                        .strip_prefix(":{")?
                        .strip_suffix('}')
                        .map(str::to_owned)
                });
                names.extend(name);
            }
        }
        let mut layouts = Vec::new();
        for name in names {
            if let Some(layout) = crate::queue::partitioned::stored_layout(&self.core, &name).await? {
                layouts.push(layout);
            }
        }
        Ok(layouts)
    }

    /// The queues whose keys [`QueueKeys::discovery_patterns`] find.
    async fn scan_queue_keys(&self) -> Result<BTreeSet<String>> {
        let conn = self.core.conn()?;
        let mut names = BTreeSet::new();
        for (pattern, kind) in QueueKeys::discovery_patterns() {
            let kind = match kind {
                "zset" => ScanType::ZSet,
                "list" => ScanType::List,
                _ => ScanType::Hash,
            };
            let mut pages = if conn.is_clustered() {
                conn.scan_cluster(pattern, Some(SCAN_COUNT), Some(kind)).boxed()
            } else {
                conn.scan(pattern, Some(SCAN_COUNT), Some(kind)).boxed()
            };
            while let Some(page) = pages.next().await {
                let mut page = page.map_err(Error::from)?;
                for key in page.take_results().unwrap_or_default() {
                    if let Some(keys) = key.as_str().and_then(QueueKeys::from_key) {
                        names.insert(keys.destination().to_owned());
                    }
                }
                // Dropping the page asks for the next one.
            }
        }
        Ok(names)
    }

    /// Every registered name with when it was last registered (ms), a page
    /// at a time (`ZSCAN`).
    pub(super) async fn registry_scores(&self) -> Result<BTreeMap<String, f64>> {
        let conn = self.core.conn()?;
        let mut names = BTreeMap::new();
        let mut pages = std::pin::pin!(conn.zscan(REGISTRY_KEY, "*", Some(SCAN_COUNT)));
        while let Some(page) = pages.next().await {
            let mut page = page.map_err(Error::from)?;
            for (member, score) in page.take_results().unwrap_or_default() {
                if let Some(name) = member.as_str() {
                    names.insert(name.into_owned(), score);
                }
            }
        }
        Ok(names)
    }
}
