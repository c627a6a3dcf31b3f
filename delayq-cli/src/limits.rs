//! `delayq limits`: show a queue's limits, or change those given.

use std::process::ExitCode;

use crate::args::{Cli, LimitsArgs, Switch};
use crate::output::escape;

pub(crate) async fn run(cli: &Cli, args: &LimitsArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let queue = crate::look(&client, &args.queue)?;
    let result = apply(&queue, args).await;
    client.shutdown().await;
    let (limits, changed) = result?;
    if changed {
        eprintln!(
            "{}: limits set (delayq's offers and consumers obey them; Java's do not read them)",
            escape(&args.queue)
        );
        if let Some(n) = limits.concurrency_limit().filter(|_| args.concurrency.is_some()) {
            eprintln!(
                "{}: at most {n} delayq deliveries in flight across every process; Java's consumers do not read it or count against it",
                escape(&args.queue)
            );
        }
    }
    println!("{limits}");
    Ok(ExitCode::SUCCESS)
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
