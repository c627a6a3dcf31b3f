//! An offer made inside a span (feature `opentelemetry`): its trace context
//! goes with it to `lua/offer.lua`, which stores it beside the element
//! (`queue/traces.rs`).
//!
//! Such an offer runs alone instead of joining the runs of concurrent
//! offers (`joined_offers`): a joined run carries the elements of several
//! callers, each in a span of its own, and `offer.lua` takes one context per
//! run, the one layout `offer_all.lua` shares (one context per call). The
//! cost is the joining speed-up, for traced offers only; offers outside a
//! span join as before and send nothing more.

use bytes::Bytes;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::Result;
use crate::queue::traces::OfferTrace;

use super::joined_offers::Target;
use super::offer::Due;

impl Target {
    /// One run of `lua/offer.lua` for `element` with its trace context (sent
    /// once, as every offer run). Whether the element collided with a
    /// pending one (then re-pack it and offer again).
    pub(super) async fn offer_traced(
        &self,
        due: Due,
        element: Bytes,
        trace: &OfferTrace,
        durability: Option<crate::connection::durable::Durability>,
    ) -> Result<bool> {
        let keys = SCRIPTS.offer.keys(&self.keys).traced(trace.is_some()).build();
        let mut args = vec![due.arg(), Value::Bytes(element)];
        trace.append_arg(&mut args);
        let durable = self.core.durable(durability);
        let reply = SCRIPTS
            .offer
            .run_durable(self.core.conn()?, self.keys.destination(), keys, args, durable)
            .await?;
        Ok(!reply::array(reply)?.is_empty())
    }
}
