//! `delayq take`.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use delayq::{BlockingQueue, BytesCodec, Headers, PartitionedQueue};
use tokio::time::Instant;

use crate::args::{Cli, CodecKind, OutputFormat, TakeArgs};
use crate::output;
use crate::text_codec::TextCodec;

pub(crate) async fn run(cli: &Cli, args: &TakeArgs) -> delayq::Result<ExitCode> {
    let codec = TextCodec::reading(args.codec, args.kryo_schema.as_deref()).map_err(delayq::Error::InvalidArgument)?;
    let client = crate::connect(cli).await?;
    // A paused queue's transfer moves nothing: only values already ready can come.
    let paused = match crate::look(&client, &args.queue)?.is_paused().await {
        Ok(paused) => paused,
        Err(error) => {
            client.shutdown().await;
            return Err(error);
        }
    };
    if paused {
        eprintln!("delayq: {}", paused_note(&args.queue));
    }
    // A partitioned queue is taken as one: from every partition.
    let partitioned = match client.partition_layout(&args.queue).await {
        Ok(layout) => layout.is_some(),
        Err(error) => {
            client.shutdown().await;
            return Err(error);
        }
    };
    let outcome = if args.codec.kind == CodecKind::Auto {
        // Raw bytes, so that each value shows the codec detected for it.
        let show = |raw: Bytes| {
            let read = codec.read(&raw).expect("auto-detection reads any bytes");
            (Some(read.codec.clone()), read.text())
        };
        match partitioned {
            true => {
                let queue = client.partitioned_queue(&args.queue, BytesCodec).await?.with_transfer();
                take_all(&Source::Partitioned(queue), args, show).await
            }
            false => {
                let queue = client.blocking_queue(&args.queue, BytesCodec)?.with_transfer();
                take_all(&Source::One(queue), args, show).await
            }
        }
    } else if partitioned {
        let queue = client.partitioned_queue(&args.queue, codec).await?.with_transfer();
        take_all(&Source::Partitioned(queue), args, |value: String| (None, value)).await
    } else {
        let queue = client.blocking_queue(&args.queue, codec)?.with_transfer();
        take_all(&Source::One(queue), args, |value: String| (None, value)).await
    };
    client.shutdown().await;
    let taken = outcome?;
    if taken < args.count {
        eprintln!(
            "delayq: only {taken} of {} value(s) arrived in time{}",
            args.count,
            if paused {
                format!(": {}", paused_note(&args.queue))
            } else {
                String::new()
            }
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn paused_note(queue: &str) -> String {
    let queue = output::escape(queue);
    format!("{queue} is paused: nothing due moves to it until `delayq resume {queue}` (values already ready can still be taken)")
}

/// Where `take` takes from: one queue, or a partitioned queue's partitions.
enum Source<V> {
    One(BlockingQueue<V>),
    Partitioned(PartitionedQueue<V>),
}

impl<V: 'static> Source<V> {
    /// The next value within `timeout`, with its headers (a partitioned
    /// take returns values only: their headers stay unread).
    async fn take_with_headers(&self, timeout: Duration) -> delayq::Result<Option<(V, Headers)>> {
        match self {
            Source::One(queue) => queue.take_with_headers(timeout).await,
            Source::Partitioned(queue) => Ok(queue.take_timeout(timeout).await?.map(|v| (v, Headers::default()))),
        }
    }
}

/// Takes up to `--count` values (transferring while it waits, so that values
/// come due even with no other process running) and prints each as it
/// arrives, with its headers; returns how many arrived.
async fn take_all<V: Send + 'static>(
    queue: &Source<V>,
    args: &TakeArgs,
    show: impl Fn(V) -> (Option<String>, String),
) -> delayq::Result<usize> {
    let deadline = args.timeout.map(|t| Instant::now() + t);
    let mut taken = 0;
    while taken < args.count {
        let next = match deadline {
            Some(deadline) => {
                queue
                    .take_with_headers(deadline.saturating_duration_since(Instant::now()))
                    .await?
            }
            // No deadline: waits until a value comes (`take`'s wait).
            None => match queue.take_with_headers(Duration::MAX).await? {
                Some(next) => Some(next),
                None => continue,
            },
        };
        let Some((value, headers)) = next else { break };
        let (codec, text) = show(value);
        let line = match args.format {
            OutputFormat::Table => table_line(codec.as_deref(), &text, &headers),
            OutputFormat::Json => json_line(codec, text, &headers),
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
        taken += 1;
    }
    Ok(taken)
}

/// A value as `--format table` prints it: the codec detected (`auto`) and
/// a tab, the value, then its headers, if any, as `[k=v, k2=v2]`; escaped.
fn table_line(codec: Option<&str>, text: &str, headers: &Headers) -> String {
    let mut line = match codec {
        Some(codec) => format!("{}\t{}", output::escape(codec), output::escape(text)),
        None => output::escape(text).into_owned(),
    };
    if let Some(headers) = output::headers_text(headers) {
        line.push(' ');
        line.push_str(&output::escape(&headers));
    }
    line
}

/// A value as `--format json` prints it: always one object,
/// `{"value": ..., "headers": {...}}` (and `"codec"` with `auto`).
fn json_line(codec: Option<String>, text: String, headers: &Headers) -> String {
    let mut doc = serde_json::json!({"value": text, "headers": output::headers_json(headers)});
    if let Some(codec) = codec {
        doc["codec"] = serde_json::Value::String(codec);
    }
    output::json(&doc)
}
