//! `delayq purge`: delete a queue's pending (and ready) elements in batches.

use std::process::ExitCode;

use serde_json::json;

use crate::args::{Cli, OutputFormat, PurgeArgs};
use crate::output;
use crate::progress;

pub(crate) async fn run(cli: &Cli, args: &PurgeArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let queue = crate::look(&client, &args.queue)?;
    let status = queue.status().await?;
    let ready = if args.ready { status.ready } else { 0 };
    if !args.yes {
        client.shutdown().await;
        eprintln!(
            "delayq: would delete {} pending element(s){} of queue `{}`; run again with --yes to delete",
            output::count(status.pending),
            if args.ready {
                format!(" and {} ready value(s)", output::count(ready))
            } else {
                String::new()
            },
            output::escape(&args.queue)
        );
        // A dry run that says what it would do has succeeded: scripts and
        // `set -e` shells must not take it for a failure.
        return Ok(ExitCode::SUCCESS);
    }
    let bar = progress::bar(status.pending + ready, "purging");
    let batch = args.batch.max(1);
    let mut removed_pending = 0;
    loop {
        let delayq::report::Purged {
            removed,
            remaining: left,
            ..
        } = queue.remove_pending(batch).await?;
        removed_pending += removed;
        bar.inc(removed);
        if removed == 0 || left == 0 {
            break;
        }
    }
    let mut removed_ready = 0u64;
    if args.ready {
        // Each drain one short atomic step: a concurrent consumer takes what
        // is left, never a value twice.
        let ready = client.blocking_queue::<bytes::Bytes, _>(&args.queue, delayq::BytesCodec)?;
        loop {
            let drained = ready.drain(batch).await?;
            removed_ready += drained.len() as u64;
            bar.inc(drained.len() as u64);
            if drained.len() < batch {
                break;
            }
        }
    }
    bar.finish_and_clear();
    client.shutdown().await;
    match args.format {
        OutputFormat::Json => println!(
            "{}",
            output::json(
                &json!({"queue": args.queue, "pending_deleted": removed_pending, "ready_deleted": removed_ready})
            )
        ),
        OutputFormat::Table => println!(
            "deleted {removed_pending} pending element(s) and {removed_ready} ready value(s) of queue `{}`",
            output::escape(&args.queue)
        ),
    }
    Ok(ExitCode::SUCCESS)
}
