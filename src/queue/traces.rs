//! The write side of trace contexts (feature `opentelemetry`; see
//! `telemetry::trace_context` for the whole design): an offer made inside a
//! span sends its W3C trace context with the offer script, which stores it
//! beside each element it adds (`lua/lib/traces.lua`), atomically with the
//! offer. Without the feature, or outside a span, [`OfferTrace`] is empty
//! and the scripts get exactly the keys and arguments they always did.

use fred::types::Value;

/// The trace context an offer carries, if any: taken once per call (a bulk
/// offer stores one context for all its elements).
#[derive(Debug, Clone, Default)]
pub(crate) struct OfferTrace {
    #[cfg(feature = "opentelemetry")]
    context: Option<String>,
}

impl OfferTrace {
    /// The current span's context (nothing outside a span or without the feature).
    pub(crate) fn current() -> Self {
        OfferTrace {
            #[cfg(feature = "opentelemetry")]
            context: crate::telemetry::trace_context::current(),
        }
    }

    /// Whether there is a context to store.
    pub(crate) fn is_some(&self) -> bool {
        #[cfg(feature = "opentelemetry")]
        return self.context.is_some();
        #[cfg(not(feature = "opentelemetry"))]
        false
    }

    /// Appends the context to a script's ARGV, when there is one.
    #[cfg_attr(not(feature = "opentelemetry"), allow(unused_variables, clippy::ptr_arg))]
    pub(crate) fn append_arg(&self, args: &mut Vec<Value>) {
        #[cfg(feature = "opentelemetry")]
        if let Some(context) = &self.context {
            args.push(Value::from(context.as_str()));
        }
    }
}
