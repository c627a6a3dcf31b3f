//! The read side of trace contexts (feature `opentelemetry`; the design is
//! in `telemetry::trace_context`): each delivery takes the context offered
//! with its value, found by the SHA1 of its payload (`lua/trace_take.lua`:
//! one script per claim, a batch's values together), keeps it while in
//! flight, parents its consumer span on it, and stores it again when the
//! value goes back for another delivery (`lua/trace_put.lua`), so that a
//! retried handler continues the same trace.
//!
//! Never fails a delivery: a context that cannot be read, taken or stored
//! again is logged (at debug) and the value goes on without it.

use std::sync::Arc;

use fred::types::Value;
use sha1::{Digest, Sha1};

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{DecodeError, Result};
use crate::queue::reliable::ReliableQueue;
use crate::queue::Core;
use crate::telemetry::trace_context;
use crate::wire::keys::QueueKeys;

use super::{Delivery, DeliveryLease, Release, MEMBER_HEADER};

/// The field of a payload's record in `delayq_traces:{N}`: its SHA1, in
/// lowercase hex (what `redis.sha1hex` gives the offer scripts).
fn field(payload: &[u8]) -> String {
    let digest = Sha1::digest(payload);
    let mut hex = String::with_capacity(40);
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// Takes the contexts of these payloads' records (`None`: none was due).
async fn take(core: &Core, keys: &QueueKeys, fields: Vec<Value>) -> Result<Vec<Option<String>>> {
    let redis_keys = SCRIPTS.trace_take.keys(keys).traced(true).build();
    let reply = SCRIPTS
        .trace_take
        .run(core.conn()?, keys.destination(), redis_keys, fields)
        .await?;
    reply::array(reply)?.into_iter().map(reply::opt_text).collect()
}

impl<T: 'static> ReliableQueue<T> {
    /// Gives each delivery of a batch the context offered with its value.
    pub(crate) async fn adopt_traces(
        &self,
        deliveries: Vec<std::result::Result<Delivery<T>, DecodeError>>,
    ) -> Vec<std::result::Result<Delivery<T>, DecodeError>> {
        let mut deliveries = deliveries;
        // A value offered with headers carries its context in them.
        for delivery in deliveries.iter_mut().flatten() {
            if let Some(context) = crate::queue::headers::trace_of(delivery.headers()) {
                delivery.lease.trace = Some(Arc::from(context));
                delivery.lease.trace_in_headers = true;
            }
        }
        let fields: Vec<Value> = (deliveries.iter().flatten())
            .filter(|d| !d.lease.trace_in_headers)
            .map(|d| Value::from(field(d.raw())))
            .collect();
        if fields.is_empty() {
            return deliveries;
        }
        // A take is cancel safe: values claimed for a caller that stops
        // waiting go back first in line, uncounted. So they do while their
        // contexts are read (a dropped `Delivery` would go to the tail,
        // counted).
        let mut waiting = Unhandled(Some(deliveries));
        let taken = take(&self.handle.core, &self.handle.keys, fields).await;
        let mut deliveries = waiting.0.take().expect("taken back once");
        match taken {
            Ok(contexts) => {
                let looked_up = (deliveries.iter_mut().flatten()).filter(|d| !d.lease.trace_in_headers);
                for (delivery, context) in looked_up.zip(contexts) {
                    delivery.lease.trace = context.map(Arc::from);
                }
            }
            Err(error) => {
                tracing::debug!(queue = self.name(), %error, "could not read the values' trace contexts; their spans have no parent")
            }
        }
        deliveries
    }

    /// Gives one delivery the context offered with its value.
    pub(crate) async fn adopt_trace(&self, delivery: Delivery<T>) -> Delivery<T> {
        let mut one = self.adopt_traces(vec![Ok(delivery)]).await;
        match one.pop() {
            Some(Ok(delivery)) => delivery,
            _ => unreachable!("one delivery in, one out"),
        }
    }
}

/// Deliveries whose contexts are being read; dropped with them (the caller
/// stopped waiting), it gives their values back to the destination's head,
/// not counted as deliveries, as a take cancelled during its claim does.
struct Unhandled<T: 'static>(Option<Vec<std::result::Result<Delivery<T>, DecodeError>>>);

impl<T: 'static> Drop for Unhandled<T> {
    fn drop(&mut self) {
        let Some(deliveries) = self.0.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // the leases' own drop has no runtime either: the visibility timeout will
        };
        // In one release, so that the head is in list order again.
        let leases: Vec<DeliveryLease> = (deliveries.into_iter().flatten())
            .map(|delivery| delivery.into_parts().1)
            .collect();
        let Some(first) = leases.first() else {
            return;
        };
        let (counted, queue) = (first.core.settling().enter(), first.keys.destination().to_owned());
        runtime.spawn(async move {
            if let Err(error) = DeliveryLease::release_unhandled(leases, super::IN_BACKGROUND).await {
                tracing::warn!(queue, %error, "could not give back values taken for a caller that stopped waiting; their visibility timeout will");
            }
            drop(counted);
        });
    }
}

impl<T: 'static> Delivery<T> {
    /// A span to process this delivery in (`delayq.process`), whose parent
    /// is the span the value was offered in, also linked as OpenTelemetry's
    /// messaging conventions ask, with the `messaging.*` attributes (see
    /// `telemetry::trace_context`). Without a context stored for the value
    /// (offered outside a span, by Java, or one that does not parse), the
    /// span's parent is the current span. A [`Worker`](crate::Worker)'s
    /// handler runs in such a span (`delayq.handle`) by itself.
    ///
    /// ```no_run
    /// use tracing::Instrument;
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let delivery = queue.take().await?;
    /// let span = delivery.process_span();
    /// async { println!("{}", delivery.value()) }.instrument(span.clone()).await;
    /// delivery.ack().instrument(span).await?;
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "opentelemetry")))]
    pub fn process_span(&self) -> tracing::Span {
        let span = tracing::info_span!(
            "delayq.process",
            queue = self.lease.keys.destination(),
            attempt = self.count
        );
        self.lease.adopt_trace(&span);
        span
    }
}

impl DeliveryLease {
    /// Parents `span` (not entered yet) on the delivery's context.
    pub(crate) fn adopt_trace(&self, span: &tracing::Span) {
        let id: String = self.member[..8].iter().map(|b| format!("{b:02x}")).collect();
        trace_context::adopt(span, self.trace.as_deref(), self.keys.destination(), &id);
    }
}

/// Stores a delivery's context again before its value goes back `to` the
/// queue (due after the release's delay), so that its next delivery takes
/// it: stored first, so that no consumer can take the value before its
/// context is there. Nothing for a dead letter (done with for good).
pub(super) async fn put_back(core: &Core, keys: &QueueKeys, member: &[u8], trace: Option<Arc<str>>, to: &Release) {
    let Some(context) = trace else {
        return;
    };
    let delay_ms = match to {
        Release::DeadLetter(_) | Release::Cancelled => return,
        Release::Head | Release::Unhandled | Release::Tail => 0,
        Release::After(delay) => crate::wire::time::saturating_ms(*delay),
    };
    let redis_keys = SCRIPTS.trace_put.keys(keys).traced(true).build();
    let args = vec![
        Value::from(&*context),
        Value::from(delay_ms),
        Value::Bytes(bytes::Bytes::copy_from_slice(&member[MEMBER_HEADER..])),
    ];
    let stored = match core.conn() {
        Ok(conn) => SCRIPTS
            .trace_put
            .run(conn, keys.destination(), redis_keys, args)
            .await
            .map_err(crate::error::Error::from),
        Err(error) => Err(error),
    };
    if let Err(error) = stored {
        tracing::debug!(queue = keys.destination(), %error, "could not store a trace context again; the value's next delivery has no parent");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_field_is_the_sha1_hex_redis_gives() {
        assert_eq!(super::field(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    }
}
