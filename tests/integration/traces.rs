//! Traces from producer to handler (feature `opentelemetry`): an offer made
//! inside a span leaves its W3C trace context in `delayq_traces:{N}`, and the
//! handler's span continues that trace. Spans are recorded with the SDK's
//! in-memory exporter behind a tracing-opentelemetry layer, installed for
//! the test's thread only (each test runs on one thread: the default
//! `current_thread` runtime).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::fred::types::Value;
use delayq::worker::RetryPolicy;
use delayq::{QueueKeys, StringCodec};
use opentelemetry::trace::{SpanId, TraceContextExt, TraceId, Tracer, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use parking_lot::Mutex;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{behind_proxy, deadline, eventually, RawRedis, RedisServer};

/// Finished spans, recorded while it lives (on this thread).
struct Recorder {
    exporter: InMemorySpanExporter,
    provider: SdkTracerProvider,
    _guard: tracing::subscriber::DefaultGuard,
}

fn record() -> Recorder {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("delayq-tests"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    Recorder {
        exporter,
        provider,
        _guard: guard,
    }
}

impl Recorder {
    fn spans(&self, name: &str) -> Vec<SpanData> {
        (self.exporter.get_finished_spans().unwrap().into_iter())
            .filter(|s| s.name == name)
            .collect()
    }

    /// Waits until `n` spans named `name` have ended.
    async fn wait_for(&self, n: usize, name: &str) -> Vec<SpanData> {
        eventually(Duration::from_secs(20), name, || async { self.spans(name).len() >= n }).await;
        self.spans(name)
    }
}

/// Runs `work` inside a new `tracing` span named `name`; the span's trace
/// and span ids.
async fn in_span<F: std::future::Future>(name: &'static str, work: F) -> (F::Output, TraceId, SpanId) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let span = tracing::info_span!("producer", otel.name = name);
    let context = span.context();
    let ids = (
        context.span().span_context().trace_id(),
        context.span().span_context().span_id(),
    );
    assert_ne!(ids.0, TraceId::INVALID, "the recorder is installed");
    let out = work.instrument(span).await;
    (out, ids.0, ids.1)
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

/// Whether `span` is a child of, and links to, the span `(trace, parent)`.
fn continues(span: &SpanData, trace: TraceId, parent: SpanId) -> bool {
    span.span_context.trace_id() == trace
        && span.parent_span_id == parent
        && span.links.links.iter().any(|l| l.span_context.span_id() == parent)
}

async fn exists(raw: &RawRedis, key: &str) -> bool {
    let found = raw.cmd("EXISTS", vec![Value::from(key)]).await;
    found.as_i64() == Some(1)
}

async fn hlen(raw: &RawRedis, key: &str) -> i64 {
    raw.cmd("HLEN", vec![Value::from(key)]).await.as_i64().unwrap()
}

/// Contexts not stored for the caps.
async fn skipped(raw: &RawRedis, keys: &QueueKeys) -> i64 {
    let n = raw
        .cmd("HGET", vec![Value::from(keys.traces()), Value::from("skipped")])
        .await;
    n.as_i64().unwrap_or(0)
}

/// The stored contexts of a payload, one line each.
async fn contexts_of(raw: &RawRedis, queue: &str, payload: &str) -> Vec<String> {
    let keys = QueueKeys::new(queue).unwrap();
    let record = raw
        .cmd(
            "EVAL",
            vec![
                Value::from("return redis.call('hget', KEYS[1], redis.sha1hex(ARGV[1]))"),
                Value::from(1),
                Value::from(keys.traces()),
                Value::from(payload),
            ],
        )
        .await;
    match record.as_string() {
        Some(text) => text.lines().map(str::to_owned).collect(),
        None => Vec::new(),
    }
}

/// A handler that records what it handled.
fn recording(
    seen: &Arc<Mutex<Vec<String>>>,
) -> impl Fn(String) -> delayq_handler::Future + Send + Sync + 'static + use<> {
    let seen = seen.clone();
    move |value| {
        let seen = seen.clone();
        Box::pin(async move {
            seen.lock().push(value);
            Ok(())
        })
    }
}

mod delayq_handler {
    pub type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), delayq::error::BoxError>> + Send>>;
}

#[tokio::test]
async fn a_worker_handler_continues_the_trace_of_the_offer() {
    deadline(async {
        let recorder = record();
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let queue = client.delayed_queue("traced", StringCodec).unwrap();
        let (offered, trace, parent) = in_span("offer", queue.offer(&"job-1".to_string(), Duration::ZERO)).await;
        offered.unwrap();
        let (offered, id_trace, id_parent) = in_span(
            "offer_with_id",
            queue.offer_with_id("job-2", &"job-2".to_string(), Duration::ZERO),
        )
        .await;
        assert!(offered.unwrap());

        let seen = Arc::new(Mutex::new(Vec::new()));
        let worker = client.worker("traced", StringCodec).unwrap().run(recording(&seen));
        let handled = recorder.wait_for(2, "delayq.handle").await;
        worker.shutdown().await;

        let mut values = seen.lock().clone();
        values.sort();
        assert_eq!(values, ["job-1", "job-2"]);
        let traces: HashSet<TraceId> = handled.iter().map(|s| s.span_context.trace_id()).collect();
        assert_eq!(
            traces,
            HashSet::from([trace, id_trace]),
            "each handler span is in its offer's trace"
        );
        assert!(
            handled.iter().any(|s| continues(s, trace, parent)),
            "child of and linked to the offer's span"
        );
        assert!(handled.iter().any(|s| continues(s, id_trace, id_parent)));
        for span in &handled {
            assert_eq!(attribute(span, "messaging.system").as_deref(), Some("delayq"));
            assert_eq!(attribute(span, "messaging.destination.name").as_deref(), Some("traced"));
            assert_eq!(attribute(span, "messaging.operation.type").as_deref(), Some("process"));
            assert_eq!(attribute(span, "messaging.message.id").map(|id| id.len()), Some(16));
        }
        // Each context was taken by its delivery: nothing is left behind.
        let keys = QueueKeys::new("traced").unwrap();
        assert!(!exists(&raw, &keys.traces()).await);
        assert!(!exists(&raw, &keys.traces_expiry()).await);
        drop(recorder.provider);
    })
    .await;
}

#[tokio::test]
async fn a_retried_value_stays_in_the_trace_of_its_offer() {
    deadline(async {
        let recorder = record();
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let queue = client.delayed_queue("retried", StringCodec).unwrap();
        let (offered, trace, parent) = in_span("offer", queue.offer(&"flaky".to_string(), Duration::ZERO)).await;
        offered.unwrap();

        let attempts = Arc::new(AtomicU32::new(0));
        let counted = attempts.clone();
        let worker = client
            .worker("retried", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::from_millis(50)).max_attempts(3))
            .run(move |_value: String| {
                let attempt = counted.fetch_add(1, Ordering::SeqCst) + 1;
                async move {
                    if attempt == 1 {
                        Err::<(), BoxError>("first attempt fails".into())
                    } else {
                        Ok(())
                    }
                }
            });
        let handled = recorder.wait_for(2, "delayq.handle").await;
        worker.shutdown().await;
        assert_eq!(attempts.load(Ordering::SeqCst), 2);
        for span in &handled {
            assert!(
                continues(span, trace, parent),
                "attempt {:?}",
                attribute(span, "attempt")
            );
        }
        assert!(!exists(&raw, &QueueKeys::new("retried").unwrap().traces()).await);
    })
    .await;
}

#[tokio::test]
async fn a_reliable_queue_delivery_continues_the_trace_of_the_offer() {
    deadline(async {
        let recorder = record();
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let delayed = client.delayed_queue("reliable-traced", StringCodec).unwrap();
        let reliable = client.reliable_queue("reliable-traced", StringCodec).unwrap();
        let (offered, trace, parent) = in_span("offer", delayed.offer(&"one".to_string(), Duration::ZERO)).await;
        offered.unwrap();

        let delivery = reliable.take().await.unwrap();
        let span = delivery.process_span();
        let value = async { delivery.value().clone() }.instrument(span.clone()).await;
        assert!(delivery.ack().instrument(span.clone()).await.unwrap());
        drop(span);
        assert_eq!(value, "one");
        let processed = recorder.wait_for(1, "delayq.process").await;
        assert!(continues(&processed[0], trace, parent));
        assert!(!exists(&raw, &QueueKeys::new("reliable-traced").unwrap().traces()).await);
    })
    .await;
}

#[tokio::test]
async fn a_bulk_offer_gives_its_context_to_every_value() {
    deadline(async {
        let recorder = record();
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let queue = client.delayed_queue("bulk-traced", StringCodec).unwrap();
        let values: Vec<String> = (0..5).map(|i| format!("bulk-{i}")).collect();
        let (offered, trace, parent) = in_span(
            "offer_all",
            queue.offer_all(values.iter().map(|v| (v.clone(), Duration::from_millis(100)))),
        )
        .await;
        offered.unwrap();
        for value in &values {
            let stored = contexts_of(&raw, "bulk-traced", value).await;
            assert_eq!(stored.len(), 1, "{value}: {stored:?}");
            assert!(stored[0].contains(&format!("-{trace}-{parent}-")), "{stored:?}");
        }

        let seen = Arc::new(Mutex::new(Vec::new()));
        let worker = client.worker("bulk-traced", StringCodec).unwrap().run(recording(&seen));
        let handled = recorder.wait_for(5, "delayq.handle").await;
        worker.shutdown().await;
        assert_eq!(handled.len(), 5);
        assert!(handled.iter().all(|s| continues(s, trace, parent)));
        assert!(!exists(&raw, &QueueKeys::new("bulk-traced").unwrap().traces()).await);
    })
    .await;
}

#[tokio::test]
async fn a_context_that_does_not_parse_leaves_the_value_delivered_without_a_parent() {
    deadline(async {
        let recorder = record();
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let keys = QueueKeys::new("garbled").unwrap();
        let queue = client.delayed_queue("garbled", StringCodec).unwrap();
        queue.offer(&"plain".to_string(), Duration::ZERO).await.unwrap();
        // A record written by hand (or a future version): due, expiry, then
        // no traceparent at all.
        let far = 4_000_000_000_000i64;
        raw.cmd(
            "EVAL",
            vec![
                Value::from("return redis.call('hset', KEYS[1], redis.sha1hex(ARGV[1]), ARGV[2])"),
                Value::from(1),
                Value::from(keys.traces()),
                Value::from("plain"),
                Value::from(format!("1 {far} 00-not-a-trace-context")),
            ],
        )
        .await;

        let seen = Arc::new(Mutex::new(Vec::new()));
        let worker = client.worker("garbled", StringCodec).unwrap().run(recording(&seen));
        let handled = recorder.wait_for(1, "delayq.handle").await;
        worker.shutdown().await;
        assert_eq!(*seen.lock(), vec!["plain".to_string()], "delivered all the same");
        assert_eq!(handled[0].parent_span_id, SpanId::INVALID, "no parent");
        assert!(handled[0].links.links.is_empty(), "no link");
        assert_eq!(hlen(&raw, &keys.traces()).await, 0, "the record is consumed");
    })
    .await;
}

#[tokio::test]
async fn equal_payloads_of_different_offers_each_get_their_own_context() {
    deadline(async {
        let recorder = record();
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let queue = client.delayed_queue("twins", StringCodec).unwrap();
        let same = "same payload".to_string();
        let (first, trace_a, _) = in_span("offer a", queue.offer(&same, Duration::ZERO)).await;
        let (second, trace_b, _) = in_span("offer b", queue.offer(&same, Duration::from_millis(50))).await;
        first.unwrap();
        second.unwrap();
        assert_eq!(contexts_of(&raw, "twins", &same).await.len(), 2);

        let seen = Arc::new(Mutex::new(Vec::new()));
        let worker = client
            .worker("twins", StringCodec)
            .unwrap()
            .concurrency(1)
            .run(recording(&seen));
        let handled = recorder.wait_for(2, "delayq.handle").await;
        worker.shutdown().await;
        let traces: HashSet<TraceId> = handled.iter().map(|s| s.span_context.trace_id()).collect();
        assert_eq!(
            traces,
            HashSet::from([trace_a, trace_b]),
            "one context each, none twice"
        );
        assert!(!exists(&raw, &QueueKeys::new("twins").unwrap().traces()).await);
    })
    .await;
}

#[tokio::test]
async fn past_the_caps_contexts_are_skipped_and_offers_still_succeed() {
    deadline(async {
        let _recorder = record();
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let keys = QueueKeys::new("capped").unwrap();
        let queue = client.delayed_queue("capped", StringCodec).unwrap().without_transfer();
        // 17 equal payloads: 16 contexts kept for it, the 17th skipped.
        let (offered, _, _) = in_span(
            "offer_all",
            queue.offer_all((0..17).map(|_| ("twin".to_string(), Duration::from_secs(600)))),
        )
        .await;
        offered.unwrap();
        assert_eq!(queue.len().await.unwrap(), 17);
        assert_eq!(contexts_of(&raw, "capped", "twin").await.len(), 16);
        assert_eq!(skipped(&raw, &keys).await, 1);
        // The side key full (100,000 records): an offer is still made, its
        // context skipped and counted.
        raw.cmd(
            "EVAL",
            vec![
                Value::from("for i = 1, 100000 do redis.call('hset', KEYS[1], 'filler' .. i, '1 4000000000000 x') end"),
                Value::from(1),
                Value::from(keys.traces()),
            ],
        )
        .await;
        let before = hlen(&raw, &keys.traces()).await;
        let (offered, _, _) = in_span("offer", queue.offer(&"over".to_string(), Duration::from_secs(600))).await;
        offered.unwrap();
        assert_eq!(queue.len().await.unwrap(), 18);
        assert!(contexts_of(&raw, "capped", "over").await.is_empty());
        assert_eq!(hlen(&raw, &keys.traces()).await, before);
        assert_eq!(skipped(&raw, &keys).await, 2);
    })
    .await;
}

#[tokio::test]
async fn offers_outside_a_span_write_nothing_beside_the_element() {
    deadline(async {
        let _recorder = record();
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let keys = QueueKeys::new("untraced").unwrap();
        let queue = client
            .delayed_queue("untraced", StringCodec)
            .unwrap()
            .without_transfer();
        queue.offer(&"a".to_string(), Duration::from_secs(600)).await.unwrap();
        queue
            .offer_all([("b".to_string(), Duration::from_secs(600))])
            .await
            .unwrap();
        queue
            .offer_with_id("c", &"c".to_string(), Duration::from_secs(600))
            .await
            .unwrap();
        assert_eq!(queue.len().await.unwrap(), 3);
        assert!(!exists(&raw, &keys.traces()).await);
        assert!(!exists(&raw, &keys.traces_expiry()).await);
        // The same offer inside a span does store one.
        let (offered, _, _) = in_span("offer", queue.offer(&"d".to_string(), Duration::from_secs(600))).await;
        offered.unwrap();
        assert_eq!(hlen(&raw, &keys.traces()).await, 1);
    })
    .await;
}

#[tokio::test]
async fn expired_records_are_reaped_and_the_keys_expire_with_their_last_context() {
    deadline(async {
        let _recorder = record();
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let keys = QueueKeys::new("reaped").unwrap();
        let queue = client.delayed_queue("reaped", StringCodec).unwrap().without_transfer();
        // A record whose value was taken by a plain take (or Java): expired.
        raw.cmd(
            "HSET",
            vec![
                Value::from(keys.traces()),
                Value::from("stale"),
                Value::from("1 2 00-x"),
            ],
        )
        .await;
        raw.cmd(
            "ZADD",
            vec![Value::from(keys.traces_expiry()), Value::from(2), Value::from("stale")],
        )
        .await;
        let (offered, _, _) = in_span("offer", queue.offer(&"fresh".to_string(), Duration::from_secs(600))).await;
        offered.unwrap();
        let fields = raw.cmd("HKEYS", vec![Value::from(keys.traces())]).await;
        let fields: Vec<String> = fields.into_array().into_iter().filter_map(|v| v.as_string()).collect();
        assert_eq!(fields.len(), 1, "{fields:?}");
        assert_ne!(fields[0], "stale");
        let ttl = raw
            .cmd("PTTL", vec![Value::from(keys.traces())])
            .await
            .as_i64()
            .unwrap();
        assert!(ttl > 600_000, "expires after the due time and a day: {ttl}");
    })
    .await;
}

#[tokio::test]
async fn a_lost_reply_of_a_traced_offer_leaves_one_element_and_one_context() {
    deadline(async {
        let _recorder = record();
        let (redis, proxy, client) = behind_proxy().await;
        let raw = redis.raw().await;
        let queue = client
            .delayed_queue("lost-traced", StringCodec)
            .unwrap()
            .without_transfer();
        // Every script cached first: a lost reply of NOSCRIPT would only
        // lead to one EVAL, and test nothing.
        queue
            .offer(&"warm".to_string(), Duration::from_secs(600))
            .await
            .unwrap();
        queue
            .offer_all([("warm-bulk".to_string(), Duration::from_secs(600))])
            .await
            .unwrap();
        queue
            .offer_with_id("warm-id", &"warm-id".to_string(), Duration::from_secs(600))
            .await
            .unwrap();
        // offer_all and offer_with_id are resent by fred: the resend adds
        // nothing, so stores no second context.
        proxy.arm(Fault::LoseReply, "lost-bulk");
        let (offered, _, _) = in_span(
            "offer_all",
            queue.offer_all([("lost-bulk".to_string(), Duration::from_secs(600))]),
        )
        .await;
        offered.unwrap();
        assert_eq!(proxy.fired(), 1);
        assert_eq!(contexts_of(&raw, "lost-traced", "lost-bulk").await.len(), 1);
        proxy.arm(Fault::LoseReply, "lost-id");
        let (offered, _, _) = in_span(
            "offer_with_id",
            queue.offer_with_id("lost-id", &"lost-id".to_string(), Duration::from_secs(600)),
        )
        .await;
        assert!(offered.unwrap());
        assert_eq!(proxy.fired(), 2);
        assert_eq!(contexts_of(&raw, "lost-traced", "lost-id").await.len(), 1);
        // A single offer is sent once: its outcome is unknown, and it ran once.
        proxy.arm(Fault::LoseReply, "lost-one");
        let (offered, _, _) = in_span("offer", queue.offer(&"lost-one".to_string(), Duration::from_secs(600))).await;
        assert!(offered.unwrap_err().is_transient());
        assert_eq!(proxy.fired(), 3);
        assert_eq!(contexts_of(&raw, "lost-traced", "lost-one").await.len(), 1);
        let mut all = queue.read_all().await.unwrap();
        all.sort();
        assert_eq!(
            all,
            ["lost-bulk", "lost-id", "lost-one", "warm", "warm-bulk", "warm-id"]
        );
    })
    .await;
}

/// Keeps `Tracer` in use: the spans above come from `tracing`; a plain
/// OpenTelemetry span (no `tracing` span) is carried too.
#[tokio::test]
async fn an_offer_inside_a_plain_opentelemetry_context_is_carried_too() {
    deadline(async {
        let recorder = record();
        let redis = RedisServer::start().await;
        let client = redis.client().await;
        let queue = client.delayed_queue("plain-otel", StringCodec).unwrap();
        let tracer = recorder.provider.tracer("plain");
        let span = tracer.start("plain producer");
        let context = opentelemetry::Context::current_with_span(span);
        let (trace, parent) = (
            context.span().span_context().trace_id(),
            context.span().span_context().span_id(),
        );
        {
            let _attached = context.clone().attach();
            queue.offer(&"plain".to_string(), Duration::ZERO).await.unwrap();
        }
        context.span().end();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let worker = client.worker("plain-otel", StringCodec).unwrap().run(recording(&seen));
        let handled = recorder.wait_for(1, "delayq.handle").await;
        worker.shutdown().await;
        assert!(continues(&handled[0], trace, parent));
    })
    .await;
}

#[tokio::test]
async fn a_take_dropped_while_its_context_is_read_gives_the_value_back_first_in_line_uncounted() {
    deadline(async {
        let _recorder = record();
        let (redis, proxy, client) = behind_proxy().await;
        let raw = redis.raw().await;
        let keys = QueueKeys::new("held-trace").unwrap();
        let delayed = client.delayed_queue("held-trace", StringCodec).unwrap();
        let reliable = client.reliable_queue("held-trace", StringCodec).unwrap();
        let (offered, _, _) = in_span("offer", delayed.offer(&"held".to_string(), Duration::ZERO)).await;
        offered.unwrap();
        delayed.offer(&"second".to_string(), Duration::ZERO).await.unwrap();
        eventually(Duration::from_secs(20), "both ready", || async {
            raw.llen(keys.destination()).await == 2
        })
        .await;
        // Only the read of the contexts names the payload's SHA1.
        let digest = raw
            .cmd(
                "EVAL",
                vec![
                    Value::from("return redis.sha1hex(ARGV[1])"),
                    Value::from(0),
                    Value::from("held"),
                ],
            )
            .await
            .as_string()
            .unwrap();
        proxy.arm(Fault::HoldRequest, digest);
        let taking = {
            let reliable = reliable.clone();
            tokio::spawn(async move { reliable.take().await })
        };
        eventually(Duration::from_secs(20), "the context read is held", || async {
            proxy.fired() == 1
        })
        .await;
        taking.abort();
        assert!(taking.await.unwrap_err().is_cancelled());
        eventually(Duration::from_secs(20), "given back", || async {
            raw.llen(keys.destination()).await == 2 && raw.zcard(keys.leases()).await == 0
        })
        .await;
        assert_eq!(
            &raw.lrange(keys.destination()).await[0][..],
            b"held",
            "first in line again"
        );
        let again = reliable.take().await.unwrap();
        assert_eq!(again.value(), "held");
        assert_eq!(again.delivery_count(), 1, "not counted");
        again.ack().await.unwrap();
    })
    .await;
}

/// A value offered with headers, or with a priority, inside a span carries
/// its trace context as one header (`traceparent`): its handler continues
/// the trace, through a retry too, and nothing goes to the traces store.
#[tokio::test]
async fn a_value_with_headers_or_a_priority_carries_its_trace_as_a_header() {
    deadline(async {
        let recorder = record();
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let queue = client.delayed_queue("traced-headers", StringCodec).unwrap();
        let options = delayq::OfferOptions::default().header("tenant", "acme");
        let (offered, trace, parent) = in_span("offer", queue.offer_with(&"headed".to_string(), &options)).await;
        offered.unwrap();
        let (offered, p_trace, p_parent) = in_span(
            "offer_with_priority",
            queue.offer_with_priority(&"urgent".to_string(), Duration::ZERO, delayq::Priority::HIGHEST),
        )
        .await;
        offered.unwrap();
        let keys = QueueKeys::new("traced-headers").unwrap();
        assert!(
            !exists(&raw, &keys.traces()).await,
            "carried in the members, not stored"
        );

        let reader = client.blocking_queue("traced-headers", StringCodec).unwrap();
        let entries = reader.read_ready_entries(0, 10).await.unwrap();
        let carried: Vec<Option<&str>> = entries
            .iter()
            .map(|e| e.headers.get(delayq::Headers::TRACEPARENT))
            .collect();
        assert_eq!(carried.len(), 2);
        assert!(carried
            .iter()
            .all(|c| c.is_some_and(|c| c.contains(&trace.to_string()) || c.contains(&p_trace.to_string()))));
        // The caller's own header is untouched.
        assert!(entries.iter().any(|e| e.headers.get("tenant") == Some("acme")));

        let attempts = Arc::new(AtomicU32::new(0));
        let counted = attempts.clone();
        let worker = client
            .worker("traced-headers", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::from_millis(50)).max_attempts(3))
            .run(move |value: String| {
                let attempt = if value == "headed" {
                    counted.fetch_add(1, Ordering::SeqCst) + 1
                } else {
                    2
                };
                async move {
                    if attempt == 1 {
                        Err::<(), BoxError>("first attempt fails".into())
                    } else {
                        Ok(())
                    }
                }
            });
        let handled = recorder.wait_for(3, "delayq.handle").await;
        worker.shutdown().await;
        assert_eq!(attempts.load(Ordering::SeqCst), 2);
        assert_eq!(
            handled.iter().filter(|s| continues(s, trace, parent)).count(),
            2,
            "both attempts"
        );
        assert_eq!(handled.iter().filter(|s| continues(s, p_trace, p_parent)).count(), 1);
        assert!(!exists(&raw, &keys.traces()).await, "a retry stores nothing either");
        drop(recorder.provider);
    })
    .await;
}
