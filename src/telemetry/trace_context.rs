//! Trace contexts carried from an offer to the handler of its value (the
//! `opentelemetry` feature).
//!
//! An offer made inside a span (a `tracing` span under a
//! [`tracing-opentelemetry`](https://docs.rs/tracing-opentelemetry) layer,
//! or else the current [`opentelemetry::Context`]) stores that span's W3C
//! trace context (`traceparent`, and `tracestate` when there is one) in a
//! side key of the queue, `delayq_traces:{N}`, atomically with the offer
//! (`lua/lib/traces.lua`). The payload is untouched, so Java Redisson on the
//! same keys sees nothing. Offers outside a span send and store nothing.
//!
//! After the transfer the destination list holds only the payload, so the
//! context is filed under the SHA1 of the payload. A [`Worker`](crate::Worker)
//! (and [`ReliableQueue::take`](crate::ReliableQueue::take)) takes the
//! oldest context already due for each value it delivers, in one more script
//! call per claim: equal payloads of different offers each get one of the
//! contexts offered with that payload, in offer order (two equal payloads
//! delivered at once may swap theirs: they cannot be told apart).
//!
//! The handler's span (`delayq.handle`), and
//! [`Delivery::process_span`](crate::Delivery::process_span), take the
//! offer's context as their **parent**, so producer and consumer share one
//! trace id, and also as a **link**: OpenTelemetry's messaging conventions
//! require a link to the message's creation context on consumer spans and
//! allow the parent for one message processed alone, which a handler is.
//! They carry `messaging.system = "delayq"`, `messaging.destination.name`
//! (the queue), `messaging.operation.type = "process"` and
//! `messaging.message.id` (the delivery's id, in hex).
//!
//! A value given back for another delivery (a worker's retry, a nack, a
//! dropped delivery) takes its context along, so the retried handler is in
//! the same trace. A context that does not parse is ignored: the value is
//! delivered as always, and its span has no parent.
//!
//! Bounds: 100,000 records per queue and 16 contexts per payload; past them
//! a context is not stored (the offer still is) and counted in the side
//! key's field `skipped`. A context not taken (a Java consumer or a plain
//! [`BlockingQueue`](crate::BlockingQueue) took the value, it was removed)
//! expires a day after its due time; a few expired records go with every
//! call that writes or takes contexts, and the keys expire with their last
//! context. A redelivery by the visibility timeout (the consumer died) has
//! no parent: its context was taken by the delivery that died.

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::{Context, KeyValue};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Longest context stored (`traceparent` is 55 bytes; the rest is
/// `tracestate`, dropped when it would pass this).
const MAX_LEN: usize = 512;

/// The W3C trace context of the current span, as stored: `traceparent`,
/// then a space and `tracestate` when it has one. `None` outside a span.
pub(crate) fn current() -> Option<String> {
    let from_tracing = tracing::Span::current().context();
    let span = from_tracing.span();
    let context = span.span_context();
    if context.is_valid() {
        return Some(format(context));
    }
    let otel = Context::current();
    let context = otel.span().span_context().clone();
    context.is_valid().then(|| format(&context))
}

/// `traceparent` (version 00) and `tracestate` of a span context.
pub(crate) fn format(context: &SpanContext) -> String {
    let parent = format!(
        "00-{}-{}-{:02x}",
        context.trace_id(),
        context.span_id(),
        context.trace_flags().to_u8()
    );
    let state = context.trace_state().header();
    // A tracestate that a record's line could not hold, or too long, is
    // left out (the parent is what matters).
    if state.is_empty() || parent.len() + 1 + state.len() > MAX_LEN || state.contains(['\n', '\r']) {
        parent
    } else {
        format!("{parent} {state}")
    }
}

/// The remote span context a stored context names; `None` when it does not
/// parse as a W3C `traceparent` (version 00, or a later version's first four
/// fields), a zero trace or span id included. A `tracestate` that does not
/// parse is dropped, the parent kept.
pub(crate) fn parse(stored: &str) -> Option<SpanContext> {
    let (parent, state) = match stored.split_once(' ') {
        Some((parent, state)) => (parent, state),
        None => (stored, ""),
    };
    let mut fields = parent.split('-');
    let version = fields.next()?;
    let (trace_id, span_id, flags) = (fields.next()?, fields.next()?, fields.next()?);
    let rest = fields.next();
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !hex(version, 2) || version == "ff" || (version == "00" && rest.is_some()) {
        return None;
    }
    if !hex(trace_id, 32) || !hex(span_id, 16) || !hex(flags, 2) {
        return None;
    }
    let trace_id = TraceId::from_hex(trace_id).ok()?;
    let span_id = SpanId::from_hex(span_id).ok()?;
    if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
        return None;
    }
    let flags = TraceFlags::new(u8::from_str_radix(flags, 16).ok()? & TraceFlags::SAMPLED.to_u8());
    let state = state.parse::<TraceState>().unwrap_or_default();
    Some(SpanContext::new(trace_id, span_id, flags, true, state))
}

/// Makes `span` (a consumer's span for one delivery, not entered yet) a
/// child of the offer's context `stored`, with a link to it, and gives it
/// the messaging attributes. With no context, or one that does not parse,
/// the span keeps its own parent.
pub(crate) fn adopt(span: &tracing::Span, stored: Option<&str>, queue: &str, message_id: &str) {
    span.set_attribute("messaging.system", "delayq");
    span.set_attribute("messaging.destination.name", queue.to_owned());
    span.set_attribute("messaging.operation.type", "process");
    span.set_attribute("messaging.message.id", message_id.to_owned());
    let Some(stored) = stored else {
        return;
    };
    match parse(stored) {
        Some(context) => {
            // Fails only without an OpenTelemetry layer, or for a span
            // already started: then there is nothing to parent.
            let _ = span.set_parent(Context::new().with_remote_span_context(context.clone()));
            span.add_link_with_attributes(context, vec![KeyValue::new("messaging.operation.type", "create")]);
        }
        None => {
            tracing::debug!(queue, "a value's trace context does not parse; its span has no parent");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_survives_format_and_parse() {
        let state: TraceState = "vendor=x,other=y".parse().unwrap();
        let context = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            false,
            state,
        );
        let stored = format(&context);
        assert_eq!(
            stored,
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 vendor=x,other=y"
        );
        let parsed = parse(&stored).unwrap();
        assert_eq!(parsed.trace_id(), context.trace_id());
        assert_eq!(parsed.span_id(), context.span_id());
        assert!(parsed.is_sampled() && parsed.is_remote());
        assert_eq!(parsed.trace_state().header(), "vendor=x,other=y");
    }

    #[test]
    fn what_is_not_a_traceparent_does_not_parse() {
        for bad in [
            "",
            "garbage",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert!(parse(bad).is_none(), "{bad:?}");
        }
        // A later version may add fields; a bad tracestate loses only itself.
        assert!(parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra").is_some());
        let parsed = parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00 ===").unwrap();
        assert!(!parsed.is_sampled());
    }
}
