//! A trace from producer to handler: an offer made inside a span, handled by
//! a `Worker`, and both spans in one trace (feature `opentelemetry`).
//!
//! ```text
//! REDIS_URL=redis://127.0.0.1:6379 cargo run --example trace_propagation --features opentelemetry
//! ```
//!
//! Spans go through a tracing-opentelemetry layer to the SDK's in-memory
//! exporter (any exporter works the same); the example prints the trace id
//! of the producer's span and of the handler's span (`delayq.handle`), taken
//! from the recorded spans.

use std::time::Duration;

use delayq::{Client, StringCodec};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use tokio::sync::mpsc;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("trace_propagation"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))?;

    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let client = Client::builder().url(&url).build().await?;
    let queue_name = format!("trace-example-{}", std::process::id());
    let queue = client.delayed_queue(&queue_name, StringCodec)?;

    // The producer: an offer inside a span stores the span's context beside
    // the element (the payload is untouched).
    queue
        .offer(&"hello".to_string(), Duration::from_millis(100))
        .instrument(tracing::info_span!("producer"))
        .await?;

    // The consumer: the handler runs in `delayq.handle`, a child of the
    // producer's span.
    let (done, mut handled) = mpsc::unbounded_channel();
    let worker = client.worker(&queue_name, StringCodec)?.run(move |value: String| {
        let done = done.clone();
        async move {
            tracing::info!(%value, "handled");
            let _ = done.send(value);
            Ok::<(), delayq::error::BoxError>(())
        }
    });
    let value = tokio::time::timeout(Duration::from_secs(30), handled.recv())
        .await?
        .ok_or("the worker stopped")?;
    worker.shutdown().await;
    println!("handled {value:?}");

    // The handler's span ends once its value is acked: by the shutdown above.
    let spans = exporter.get_finished_spans()?;
    for (label, name) in [("producer", "producer"), ("consumer", "delayq.handle")] {
        let span = spans
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("no {name} span recorded"))?;
        println!("{label} trace_id={}", span.span_context.trace_id());
    }
    client.shutdown().await;
    provider.shutdown()?;
    Ok(())
}
