//! `delayq limits`: show a queue's limits, or change those given.

use std::process::ExitCode;

use crate::args::{Cli, LimitsArgs, Switch};
use crate::output::escape;

pub(crate) async fn run(cli: &Cli, args: &LimitsArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let queue = crate::look(&client, &args.queue)?;
    let result = apply(&queue, args).await;
    // What is in flight now, to say what a new concurrency limit means.
    let status = match (&result, args.concurrency) {
        (Ok(_), Some(_)) => queue.status().await.ok(),
        _ => None,
    };
    client.shutdown().await;
    let (limits, changed) = result?;
    if changed {
        eprintln!(
            "{}: limits set (delayq's offers and consumers obey them; Java's do not read them)",
            escape(&args.queue)
        );
        if args.concurrency.is_some() {
            eprintln!(
                "{}: {}",
                escape(&args.queue),
                concurrency_note(limits.concurrency_limit(), status.as_ref())
            );
        }
    }
    println!("{limits}");
    Ok(ExitCode::SUCCESS)
}

/// What a concurrency limit just set means, with what is in flight now.
fn concurrency_note(limit: Option<u32>, status: Option<&delayq::QueueStatus>) -> String {
    let Some(limit) = limit.map(u64::from) else {
        return "no concurrency limit: delayq's reliable takes and workers are held only by their own concurrency"
            .into();
    };
    let mut note = format!(
        "at most {limit} delayq deliveries in flight at once across every process (reliable takes and workers; \
         `delayq take` and Java's consumers neither wait for it nor count against it)"
    );
    if let Some(live) = status.map(|s| s.live_in_flight()) {
        note.push_str(&match live.cmp(&limit) {
            std::cmp::Ordering::Greater => format!(
                "; {live} in flight now: over it by {}, none start until {} settle",
                live - limit,
                live - limit + 1
            ),
            std::cmp::Ordering::Equal => format!("; {live} in flight now: reached"),
            std::cmp::Ordering::Less => format!("; {live} in flight now"),
        });
    }
    note
}

/// The queue's limits after the flags given are applied (read, changed,
/// written back; without flags, only read), and whether any was given.
async fn apply(
    queue: &delayq::DelayedQueue<String>,
    args: &LimitsArgs,
) -> delayq::Result<(delayq::limits::Limits, bool)> {
    let mut limits = queue.limits().await?;
    let given = args.max_size.is_some()
        || args.max_payload.is_some()
        || args.offers.is_some()
        || args.takes.is_some()
        || args.concurrency.is_some();
    if !given {
        return Ok((limits, false));
    }
    if let Some(bound) = args.max_size {
        limits = limits.max_size(bound.0);
    }
    if let Some(bound) = args.max_payload {
        limits = limits.max_payload(bound.0);
    }
    if let Some(switch) = args.offers {
        limits = limits.offers(switch == Switch::On);
    }
    if let Some(switch) = args.takes {
        limits = limits.takes(switch == Switch::On);
    }
    if let Some(bound) = args.concurrency {
        limits = limits.concurrency(bound.0);
    }
    queue.set_limits(&limits).await?;
    Ok((limits, true))
}
