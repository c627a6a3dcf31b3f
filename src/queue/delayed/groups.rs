//! Grouped offers (`OfferOptions::group`): to a key's line in delayq's
//! group keys (`lua/lib/groups.lua`), never to Redisson's.

use fred::types::Value;

use super::offer::Due;
use super::ttl::When;
use super::{DelayedQueue, OfferOptions};
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::wire::time;

/// Most bytes of a group key.
pub const MAX_GROUP_KEY: usize = 1024;

impl<T: 'static> DelayedQueue<T> {
    /// `offer_with` for a grouped value (`lua/offer_grouped.lua`).
    pub(super) async fn offer_grouped(&self, value: &T, group: &str, options: &OfferOptions) -> Result<()> {
        if group.len() > MAX_GROUP_KEY {
            return Err(Error::InvalidArgument(format!(
                "a group key is at most {MAX_GROUP_KEY} bytes, not {}",
                group.len()
            )));
        }
        if options.priority_level() != crate::Priority::DEFAULT
            || options.time_to_live().is_some()
            || !options.headers().is_empty()
        {
            return Err(Error::InvalidArgument(
                "a grouped value has no priority, TTL or headers: its key's line orders it".into(),
            ));
        }
        let due = match options.when {
            When::After(delay) => self.due_after(delay)?,
            When::At(at) => Due::At(time::due_at(time::now_ms(), at)?),
        };
        let payload = self.encode(value)?;
        self.handle.core.seen(&self.handle.keys);
        let keys = SCRIPTS.offer_grouped.keys(&self.handle.keys).build();
        let args = vec![
            Value::from(group),
            due.arg(),
            Value::Bytes(payload),
            Value::Bytes(bytes::Bytes::copy_from_slice(&fastrand::u64(..).to_le_bytes())),
        ];
        self.handle.request(&SCRIPTS.offer_grouped, keys, args).await?;
        Ok(())
    }
}
