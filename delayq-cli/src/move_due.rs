//! `delayq move-due`: run the transfer now, until nothing due is left.

use std::process::ExitCode;

use delayq::fred::interfaces::SortedSetsInterface;
use serde_json::json;

use crate::args::{Cli, CodecKind, MoveDueArgs, OutputFormat};
use crate::output;
use crate::text_codec::TextCodec;

pub(crate) async fn run(cli: &Cli, args: &MoveDueArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let mut results = Vec::new();
    for name in &args.queues {
        // The client's own scheduler does the work (it starts at once and
        // sweeps a backlog scattered through a long pending list); one queue
        // at a time, so the client's counters are this queue's.
        let cutoff = std::time::SystemTime::now();
        let cutoff_ms = cutoff
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as i64;
        let before = client.stats();
        let keys = delayq::QueueKeys::new(name)?;
        let due: i64 = client
            .redis()
            .zcount(keys.timeout(), f64::NEG_INFINITY, cutoff_ms as f64)
            .await
            .map_err(delayq::Error::from)?;
        let queue = client.delayed_queue(name, TextCodec::new(CodecKind::Bytes))?;
        let deadline = tokio::time::Instant::now() + args.timeout;
        let next_due = loop {
            let status = queue.status().await?;
            if status.paused {
                // A refusal, not a bad argument: said plainly, exit 1 (as `take`).
                client.shutdown().await;
                let name = output::escape(name);
                eprintln!("delayq: {name} is paused: nothing moves until `delayq resume {name}`");
                return Ok(ExitCode::FAILURE);
            }
            if status.next_due.is_none_or(|due| due > cutoff) {
                break status.next_due;
            }
            if tokio::time::Instant::now() >= deadline {
                client.shutdown().await;
                return Err(delayq::Error::InvalidArgument(format!(
                    "{name}: elements were still due after {}; is Redis failing? (DELAYQ_LOG=debug shows the transfer's errors)",
                    output::compact(args.timeout)
                )));
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        };
        drop(queue);
        let after = client.stats();
        results.push((
            name.as_str(),
            // Those due at the start are gone from the pending set now; a
            // run still finishing may not be in the client's counters yet.
            (due as u64).max(after.transferred - before.transferred),
            after.quarantined - before.quarantined,
            next_due,
        ));
    }
    client.shutdown().await;
    let now = std::time::SystemTime::now();
    match args.format {
        OutputFormat::Json => {
            let queues: Vec<_> = results
                .iter()
                .map(|(name, moved, quarantined, next)| {
                    json!({"queue": name, "moved": moved, "quarantined": quarantined,
                           "next_due": next.map(output::utc_time)})
                })
                .collect();
            println!("{}", output::json(&json!({ "queues": queues })));
        }
        OutputFormat::Table => {
            let rows: Vec<Vec<String>> = results
                .iter()
                .map(|(name, moved, quarantined, next)| {
                    vec![
                        (*name).to_owned(),
                        output::count(*moved),
                        output::count(*quarantined),
                        next.map_or("-".into(), |d| output::relative(d, now)),
                    ]
                })
                .collect();
            println!(
                "{}",
                output::table_aligned(
                    &["QUEUE", "MOVED", "QUARANTINED", "NEXT DUE"],
                    &["MOVED", "QUARANTINED"],
                    &rows
                )
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
