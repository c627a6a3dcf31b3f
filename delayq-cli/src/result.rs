//! `delayq result QUEUE ID [--wait DURATION]`: how a job ended and the
//! result its handler returned, with its last progress; with `--wait`,
//! once it has ended (`wait_job`). Exit status 0 handled, 1 not ended (or
//! no such job), 2 ended otherwise (dead-lettered, cancelled, deleted,
//! removed).

use std::process::ExitCode;
use std::time::SystemTime;

use delayq::jobs::{JobHistory, JobState};
use serde_json::json;

use crate::args::{Cli, CodecKind, OutputFormat, ResultArgs};
use crate::job;
use crate::output::{self, escape};
use crate::text_codec::TextCodec;

/// What the read found, beside the history.
struct Read {
    history: JobHistory,
    /// `--wait` ran out before the job ended.
    timed_out: bool,
}

pub(crate) async fn run(cli: &Cli, args: &ResultArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let read = async {
        let queue = client
            .reliable_queue(&args.queue, TextCodec::new(CodecKind::Bytes))?
            .without_transfer();
        let history = queue.job(&args.id).await?;
        // Without job history a job is never seen to end: no wait.
        let Some(wait) = args
            .wait
            .filter(|_| !history.is_finished() && history.history.is_some())
        else {
            return Ok(Read {
                timed_out: args.wait.is_some() && !history.is_finished(),
                history,
            });
        };
        Ok::<_, delayq::Error>(match queue.wait_job(&args.id, wait).await? {
            Some(history) => Read {
                history,
                timed_out: false,
            },
            // Where it is now, for the message.
            None => Read {
                history: queue.job(&args.id).await?,
                timed_out: true,
            },
        })
    }
    .await;
    client.shutdown().await;
    let read = read?;
    let h = &read.history;
    match args.format {
        OutputFormat::Json => println!(
            "{}",
            output::json(&json!({
                "queue": args.queue,
                "id": h.id,
                "ended": h.is_finished(),
                "timed_out": read.timed_out,
                "state": job::state_json(&h.state),
                "result": job::result_json(h.result.as_ref()),
                "progress": job::progress_json(h.progress.as_ref()),
                "history": job::keep_json(h.history),
            }))
        ),
        OutputFormat::Table => print(&args.queue, &read, args),
    }
    Ok(ExitCode::from(exit_status(h)))
}

/// 0 handled, 1 not ended (or unknown), 2 ended without being handled.
fn exit_status(h: &JobHistory) -> u8 {
    match h.state {
        JobState::Handled { .. } => 0,
        _ if h.is_finished() => 2,
        _ => 1,
    }
}

fn print(queue: &str, read: &Read, args: &ResultArgs) {
    let h = &read.history;
    let now = SystemTime::now();
    println!("job {} on {}", escape(&h.id), escape(queue));
    println!("state: {}", job::state_text(h, now));
    for line in job::report_lines(h, now) {
        println!("{line}");
    }
    if h.history.is_none() {
        // Nothing past the pending set is kept: no end, progress or result.
        println!(
            "{}; without it no result or progress is kept, and a job is never seen to end",
            job::switch_text(queue, None)
        );
    } else if h.result.is_none() && matches!(h.state, JobState::Handled { .. }) {
        println!(
            "result: none kept (a Worker's run_job keeps what its handler returns, as Delivery::ack_with_result does)"
        );
    }
    if read.timed_out {
        let waited = args.wait.map(output::compact).unwrap_or_default();
        match h.history {
            Some(_) => println!("not ended after waiting {waited}"),
            None => println!("not waited for: the queue keeps no job history"),
        }
    } else if !h.is_finished() && h.state != JobState::Unknown {
        println!("not ended yet (--wait DURATION waits for it)");
    }
}
