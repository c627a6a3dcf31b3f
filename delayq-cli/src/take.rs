//! `delayq take`.

use std::io::Write;
use std::process::ExitCode;

use bytes::Bytes;
use delayq::{BlockingQueue, BytesCodec};
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
    let outcome = if args.codec.kind == CodecKind::Auto {
        // Raw bytes, so that each value shows the codec detected for it.
        let queue = client.blocking_queue(&args.queue, BytesCodec)?.with_transfer();
        take_all(&queue, args, |raw: Bytes| {
            let read = codec.read(&raw).expect("auto-detection reads any bytes");
            (Some(read.codec.clone()), read.text())
        })
        .await
    } else {
        let queue = client.blocking_queue(&args.queue, codec)?.with_transfer();
        take_all(&queue, args, |value: String| (None, value)).await
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

/// Takes up to `--count` values (transferring while it waits, so that values
/// come due even with no other process running) and prints each as it
/// arrives; returns how many arrived.
async fn take_all<V: Send + 'static>(
    queue: &BlockingQueue<V>,
    args: &TakeArgs,
    show: impl Fn(V) -> (Option<String>, String),
) -> delayq::Result<usize> {
    let deadline = args.timeout.map(|t| Instant::now() + t);
    let mut taken = 0;
    while taken < args.count {
        let next = match deadline {
            Some(deadline) => {
                queue
                    .take_timeout(deadline.saturating_duration_since(Instant::now()))
                    .await?
            }
            None => Some(queue.take().await?),
        };
        let Some(value) = next else { break };
        let (codec, text) = show(value);
        let mut out = std::io::stdout().lock();
        let _ = match (args.format, codec) {
            (OutputFormat::Table, None) => writeln!(out, "{}", output::escape(&text)),
            (OutputFormat::Table, Some(codec)) => {
                writeln!(out, "{}\t{}", output::escape(&codec), output::escape(&text))
            }
            (OutputFormat::Json, None) => writeln!(out, "{}", output::json(&serde_json::Value::String(text))),
            (OutputFormat::Json, Some(codec)) => {
                writeln!(
                    out,
                    "{}",
                    output::json(&serde_json::json!({"codec": codec, "value": text}))
                )
            }
        };
        let _ = out.flush();
        taken += 1;
    }
    Ok(taken)
}
