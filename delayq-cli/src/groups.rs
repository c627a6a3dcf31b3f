//! `delayq groups`: show the settings a queue's group keys share and its
//! grouped values, or change the settings given.

use std::process::ExitCode;
use std::time::Duration;

use delayq::fred::interfaces::SortedSetsInterface;
use delayq::groups::{GroupLimits, OnFailure};
use serde_json::json;

use crate::args::{Cli, CodecKind, GroupsArgs, OutputFormat};
use crate::output::{self, escape};
use crate::text_codec::TextCodec;

/// What `delayq groups` read: the settings and the counts.
struct Groups {
    limits: GroupLimits,
    /// Grouped values ready, in their keys' lines.
    ready: u64,
    /// Grouped values not due yet.
    delayed: u64,
    /// Keys that may run now (the ring).
    runnable: u64,
    /// Keys held until a time: a retry under `hold`, or their rate.
    held: u64,
}

pub(crate) async fn run(cli: &Cli, args: &GroupsArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let result = apply(&client, args).await;
    client.shutdown().await;
    let (groups, changed) = result?;
    if changed {
        eprintln!(
            "{}: group settings set (delayq's reliable consumers and workers obey them from their next claim; \
             Java never sees grouped values)",
            escape(&args.queue)
        );
    }
    match args.format {
        OutputFormat::Json => println!("{}", output::json(&to_json(&args.queue, &groups))),
        OutputFormat::Table => print!("{}", to_table(&args.queue, &groups)),
    }
    Ok(ExitCode::SUCCESS)
}

/// The settings after the flags given are applied (read, changed, written
/// back; without flags, only read), the counts, and whether any was given.
async fn apply(client: &delayq::Client, args: &GroupsArgs) -> delayq::Result<(Groups, bool)> {
    let queue = client
        .reliable_queue(&args.queue, TextCodec::new(CodecKind::Bytes))?
        .without_transfer();
    let mut limits = queue.group_limits().await?;
    let given = args.concurrency.is_some() || args.rate.is_some() || args.on_failure.is_some();
    if given {
        if let Some(n) = args.concurrency {
            limits = limits.concurrency(n);
        }
        if let Some(rate) = args.rate {
            // `rate(0, _)` is the library's "no rate limit".
            let (count, per) = rate.0.unwrap_or((0, Duration::ZERO));
            limits = limits.rate(count, per);
        }
        if let Some(on_failure) = args.on_failure {
            limits = limits.on_failure(on_failure.into());
        }
        queue.set_group_limits(&limits).await?;
        // As stored (a period in whole milliseconds).
        limits = queue.group_limits().await?;
    }
    let status = crate::look(client, &args.queue)?.status().await?;
    let keys = delayq::QueueKeys::new(&args.queue)?;
    let redis = client.redis();
    let runnable: u64 = redis.zcard(keys.group_ring()).await.map_err(delayq::Error::from)?;
    let held: u64 = redis.zcard(keys.group_blocked()).await.map_err(delayq::Error::from)?;
    let groups = Groups {
        limits,
        ready: status.grouped_ready,
        delayed: status.grouped_pending,
        runnable,
        held,
    };
    Ok((groups, given))
}

/// A rate as `--rate` takes it: `10/1s`, `5/1s500ms`.
pub(crate) fn rate_text(count: u32, per: Duration) -> String {
    format!(
        "{count}/{}",
        humantime::format_duration(per).to_string().replace(' ', "")
    )
}

fn failure_name(mode: OnFailure) -> &'static str {
    match mode {
        OnFailure::Skip => "skip",
        // Hold, and any mode a later library adds (it is non-exhaustive).
        _ => "hold",
    }
}

fn to_table(name: &str, g: &Groups) -> String {
    let concurrency = match g.limits.concurrency_limit() {
        1 => "1 (one value of a key at a time, in order)".to_owned(),
        n => format!("{n} (values of a key start in order, up to {n} at once; they may end out of it)"),
    };
    let rate = match g.limits.rate_limit() {
        Some((count, per)) => format!(
            "{} per key (a burst of {count}, then evenly; a key at its rate waits, the others go on)",
            rate_text(count, per)
        ),
        None => "none".to_owned(),
    };
    let on_failure = match g.limits.failure_mode() {
        OnFailure::Skip => "skip (a failed value rejoins the end of its key's line; the key's next values go on)",
        _ => "hold (a failed value waits at its key's head; the key runs nothing until its retry is due)",
    };
    let counts = [g.ready, g.delayed, g.runnable, g.held].map(output::count);
    let w = counts.iter().map(|c| c.len()).max().unwrap_or(0);
    let [ready, delayed, runnable, held] = counts;
    format!(
        "queue         {}\nconcurrency   {concurrency}\nrate          {rate}\non failure    {on_failure}\n\
         ready         {ready:>w$} grouped value(s) in their keys' lines\n\
         delayed       {delayed:>w$} grouped value(s) not due yet\n\
         keys runnable {runnable:>w$} (may run now, taken round robin)\n\
         keys held     {held:>w$} (a retry under hold, or their rate, holds them until a time)\n",
        escape(name)
    )
}

fn to_json(name: &str, g: &Groups) -> serde_json::Value {
    json!({
        "queue": name,
        "concurrency": g.limits.concurrency_limit(),
        "rate": g.limits.rate_limit().map(|(count, per)| json!({"count": count, "per_ms": per.as_millis() as u64})),
        "on_failure": failure_name(g.limits.failure_mode()),
        "grouped_ready": g.ready,
        "grouped_pending": g.delayed,
        "runnable_keys": g.runnable,
        "held_keys": g.held,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::args::{parse_rate, Rate};

    /// What `delayq groups` shows after `rate` is what `--rate` takes.
    #[test]
    fn shown_rates_parse_back() {
        for (count, ms) in [(10, 1_000), (1, 500), (5, 1_500), (100, 60_000), (3, 5_400_000)] {
            let per = Duration::from_millis(ms);
            let shown = super::rate_text(count, per);
            assert_eq!(parse_rate(&shown), Ok(Rate(Some((count, per)))), "{shown}");
        }
        assert_eq!(parse_rate("10/s"), Ok(Rate(Some((10, Duration::from_secs(1))))));
        assert_eq!(parse_rate("none"), Ok(Rate(None)));
        for bad in ["10", "0/1s", "x/1s", "10/0", "10/-1s", "10/soon", "-3/1s"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }
}
