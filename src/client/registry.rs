//! The registry of queues delayq has seen (`delayq_queues`, written by
//! `queue/registry.rs`): reading it, and keeping it bounded.

use fred::interfaces::SortedSetsInterface;
use fred::types::Value;

use super::Client;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::queue::registry::FORGET_AFTER;
use crate::wire::keys::{KeyRole, REGISTRY_KEY};
use crate::wire::time;
use crate::BytesCodec;

impl Client {
    /// Every name in the registry of queues delayq processes have offered
    /// to, consumed from or transferred (the key `delayq_queues`), read a
    /// page at a time (`ZSCAN`). It lists queues that `SCAN` for timeout
    /// sets cannot find: ones holding only ready values. Names whose queues
    /// are gone stay until [`queues`](Self::queues) or
    /// [`forget_queue_if_gone`](Self::forget_queue_if_gone) drops them.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// for name in client.registered_queues().await? {
    ///     println!("{name}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn registered_queues(&self) -> Result<Vec<String>> {
        Ok(self.registry_scores().await?.into_keys().collect())
    }

    /// Drops `name` from the registry if no key of the queue exists and no
    /// process registered it for 30 minutes; returns whether it was
    /// dropped. [`queues`](Self::queues) does it for every such name it
    /// comes across; this is the same for one name.
    pub async fn forget_queue_if_gone(&self, name: &str) -> Result<bool> {
        let conn = self.core.conn()?;
        let score: Option<f64> = conn.zscore(REGISTRY_KEY, name).await.map_err(Error::from)?;
        match score {
            Some(score) => self.forget_if_gone(name, score).await,
            None => Ok(false),
        }
    }

    /// [`forget_queue_if_gone`](Self::forget_queue_if_gone) of a name read
    /// with `score`: the script drops it only if the score is still that
    /// (a registration in between keeps it).
    pub(super) async fn forget_if_gone(&self, name: &str, score: f64) -> Result<bool> {
        if (score as i64) > time::now_ms() - FORGET_AFTER.as_millis() as i64 {
            return Ok(false);
        }
        let status = self
            .delayed_queue::<bytes::Bytes, _>(name, BytesCodec)?
            .without_transfer()
            .status()
            .await?;
        if status.exists {
            return Ok(false);
        }
        let conn = self.core.conn()?;
        let keys = SCRIPTS
            .registry_forget
            .given_keys()
            .with(KeyRole::Registry, REGISTRY_KEY)
            .build();
        let args = vec![Value::from(name), Value::from(score)];
        SCRIPTS
            .registry_forget
            .run(conn, name, keys, args)
            .await
            .map_err(Error::from)?;
        let left: Option<f64> = conn.zscore(REGISTRY_KEY, name).await.map_err(Error::from)?;
        Ok(left.is_none())
    }
}
