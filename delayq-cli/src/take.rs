//! `delayq take`.

use std::io::Write;
use std::process::ExitCode;

use tokio::time::Instant;

use crate::args::{Cli, OutputFormat, TakeArgs};
use crate::output;
use crate::text_codec::TextCodec;

pub(crate) async fn run(cli: &Cli, args: &TakeArgs) -> delayq::Result<ExitCode> {
    let codec = TextCodec::reading(args.codec, args.kryo_schema.as_deref()).map_err(delayq::Error::InvalidArgument)?;
    let client = crate::connect(cli).await?;
    // Transfer while waiting, so values come due even with no other process running.
    let queue = client.blocking_queue(&args.queue, codec)?.with_transfer();
    let deadline = args.timeout.map(|t| Instant::now() + t);
    let mut taken = 0;
    let mut failure = None;
    while taken < args.count {
        let next = match deadline {
            Some(deadline) => {
                queue
                    .take_timeout(deadline.saturating_duration_since(Instant::now()))
                    .await
            }
            None => queue.take().await.map(Some),
        };
        match next {
            Ok(Some(value)) => {
                let mut out = std::io::stdout().lock();
                match args.format {
                    OutputFormat::Table => {
                        let _ = writeln!(out, "{}", output::escape(&value));
                    }
                    OutputFormat::Json => {
                        let _ = writeln!(out, "{}", output::json(&serde_json::Value::String(value)));
                    }
                }
                let _ = out.flush();
                taken += 1;
            }
            Ok(None) => break,
            Err(error) => {
                failure = Some(error);
                break;
            }
        }
    }
    client.shutdown().await;
    if let Some(error) = failure {
        return Err(error);
    }
    if taken < args.count {
        eprintln!("delayq: only {taken} of {} value(s) arrived in time", args.count);
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
