//! `delayq stats`: counts and lag of queues, once or refreshed live.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use delayq::QueueStatus;
use serde_json::json;

use crate::args::{Cli, OutputFormat, StatsArgs};
use crate::output::{self, relative};

pub(crate) async fn run(cli: &Cli, args: &StatsArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let names = if args.all {
        match crate::list::all_queues(&client).await {
            Ok(names) => names,
            Err(error) => {
                client.shutdown().await;
                return Err(error);
            }
        }
    } else {
        args.queues.clone()
    };
    if names.is_empty() {
        client.shutdown().await;
        if args.format == OutputFormat::Json {
            println!(
                "{}",
                output::json(&json!({"at": output::utc_time(SystemTime::now()), "queues": []}))
            );
        }
        eprintln!("delayq: {}", crate::list::NO_QUEUES);
        return Ok(ExitCode::SUCCESS);
    }
    // Read-only: no transfer, and payloads are never decoded. A
    // partitioned queue is one row, its partitions' counts added up.
    let mut queues = Vec::with_capacity(names.len());
    for name in &names {
        let parts = match client.partition_layout(name).await {
            Ok(Some(layout)) => layout.names().iter().chain(layout.retired()).cloned().collect(),
            Ok(None) => vec![name.clone()],
            Err(error) => {
                client.shutdown().await;
                return Err(error);
            }
        };
        let parts = (parts.iter())
            .map(|part| crate::look(&client, part))
            .collect::<delayq::Result<Vec<_>>>()?;
        queues.push((name.as_str(), parts));
    }
    let schedules = names
        .iter()
        .map(|name| client.schedules(&delayq::QueueKeys::new(name)?))
        .collect::<delayq::Result<Vec<_>>>()?;
    let redraw = args.watch && args.format == OutputFormat::Table && std::io::stdout().is_terminal();
    let mut tick = ticker(args.interval);
    let mut shown = 0u64;
    // While watching: since when Redis has not answered.
    let mut down: Option<SystemTime> = None;
    let outcome = loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = tokio::signal::ctrl_c() => break Ok(()),
        }
        let read = async {
            let mut statuses = Vec::with_capacity(queues.len());
            for ((name, parts), schedules) in queues.iter().zip(&schedules) {
                let mut each = Vec::with_capacity(parts.len());
                for part in parts {
                    each.push(part.status().await?);
                }
                let status = match each.as_slice() {
                    [one] => *one,
                    _ => QueueStatus::sum(&each),
                };
                statuses.push((*name, status, schedules.list().await?.len()));
            }
            Ok::<_, delayq::Error>(statuses)
        };
        // Watching, a frame waits at most READ_WAIT: the client queues
        // commands while it reconnects, which would stall the watch silently.
        let read = if args.watch {
            match tokio::time::timeout(READ_WAIT, read).await {
                Ok(Err(e)) if e.is_transient() => Err(Unread::Down(e.to_string())),
                Ok(read) => read.map_err(Unread::Failed),
                Err(_) => Err(Unread::Down(format!("no reply within {}", output::compact(READ_WAIT)))),
            }
        } else {
            read.await.map_err(Unread::Failed)
        };
        let now = SystemTime::now();
        let text = match read {
            Ok(statuses) => {
                down = None;
                match args.format {
                    OutputFormat::Table => format!("{}\n", table(&statuses, now)),
                    OutputFormat::Json => format!("{}\n", output::json(&to_json(&statuses, now))),
                }
            }
            Err(Unread::Down(why)) => {
                let since = down.get_or_insert(now).to_owned();
                unreachable_frame(args, since, &why, now)
            }
            Err(Unread::Failed(error)) => break Err(error),
        };
        let mut out = std::io::stdout().lock();
        if redraw {
            // Clear the screen and home the cursor, then the refreshed frame.
            let _ = write!(out, "\x1b[2J\x1b[H");
        }
        // Every table frame says when it was read (JSON has its "at").
        if args.format == OutputFormat::Table && (args.watch || redraw) {
            let _ = writeln!(out, "at {}", output::local_time(now));
        }
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        shown += 1;
        if !args.watch || args.count.is_some_and(|n| shown >= n) {
            break Ok(());
        }
    };
    drop(queues);
    client.shutdown().await;
    outcome.map(|()| ExitCode::SUCCESS)
}

/// The watch's clock. A frame that took longer than the interval (Redis
/// down, each try waiting up to [`READ_WAIT`]) is followed by one frame at
/// once and then the interval again: tokio's default catches up on every
/// missed tick, and a watch coming back from an outage printed a burst of
/// identical frames.
fn ticker(interval: Duration) -> tokio::time::Interval {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick
}

/// How long one `--watch` frame waits for Redis before it says Redis is
/// unreachable (and the next frame tries again).
const READ_WAIT: Duration = Duration::from_secs(3);

/// Why a frame has no counts.
enum Unread {
    /// Redis does not answer (or not in time): the watch says so and goes on.
    Down(String),
    /// Anything else ends the command, as without --watch.
    Failed(delayq::Error),
}

/// A `--watch` frame while Redis does not answer: since when, and why.
fn unreachable_frame(args: &StatsArgs, since: SystemTime, why: &str, now: SystemTime) -> String {
    match args.format {
        OutputFormat::Table => format!(
            "Redis unreachable since {} ({}): {}; trying again every {} (each try waits up to {})\n",
            output::local_time(since),
            relative(since, now),
            output::escape(why),
            output::compact(args.interval),
            output::compact(READ_WAIT),
        ),
        OutputFormat::Json => format!(
            "{}\n",
            output::json(&json!({
                "at": output::utc_time(now), "redis": "unreachable",
                "since": output::utc_time(since), "error": why,
            }))
        ),
    }
}

/// One queue as a frame shows it: name, counts (its concurrency limit
/// among them), and how many schedules.
type Read<'a> = (&'a str, QueueStatus, usize);

fn table(statuses: &[Read<'_>], now: SystemTime) -> String {
    let rows: Vec<Vec<String>> = statuses
        .iter()
        .map(|(name, s, schedules)| {
            vec![
                (*name).to_owned(),
                output::count(s.pending),
                output::count(s.ready),
                // Against the concurrency limit, if any: `3/8`.
                output::in_flight_cell(s),
                output::count(s.dead_letters),
                output::count(s.quarantined),
                s.next_due.map_or("-".into(), |d| relative(d, now)),
                // No lag is "-", like the other empty cells (the dashboard shows "–"), not "0ms".
                match s.lag_at(now) {
                    lag if lag.is_zero() => "-".into(),
                    lag => output::compact(lag),
                },
                output::oldest_ready(s, now),
                match s.paused_for_at(now) {
                    Some(age) => format!("paused {}", output::compact(age)),
                    None if s.paused => "paused".into(),
                    None => "-".into(),
                },
                output::count(*schedules as u64),
            ]
        })
        .collect();
    output::table_aligned(
        &[
            "QUEUE",
            "PENDING",
            "READY",
            "IN-FLIGHT",
            "DEAD",
            "QUARANTINED",
            "NEXT DUE",
            "LAG",
            "LATENCY",
            "STATE",
            "SCHEDULES",
        ],
        &["PENDING", "READY", "IN-FLIGHT", "DEAD", "QUARANTINED", "SCHEDULES"],
        &rows,
    )
}

fn to_json(statuses: &[Read<'_>], now: SystemTime) -> serde_json::Value {
    json!({
        "at": output::utc_time(now),
        "queues": statuses
            .iter()
            .map(|(name, s, schedules)| {
                let mut fields = output::status_json(name, s, now);
                fields.insert("schedules".into(), json!(schedules));
                fields
            })
            .collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_slow_frame_is_followed_by_one_frame_at_once_not_a_burst() {
        let period = Duration::from_millis(200);
        let mut tick = ticker(period);
        tick.tick().await;
        // A frame that waited for Redis for 3 s: fifteen ticks missed.
        tokio::time::advance(READ_WAIT).await;
        tick.tick().await;
        // The next one waits for the interval again.
        let next = tokio::time::timeout(period / 2, tick.tick()).await;
        assert!(next.is_err(), "a second frame right after the slow one");
        let next = tokio::time::timeout(period, tick.tick()).await;
        assert!(next.is_ok(), "the interval after");
    }
}
