//! `delayq job QUEUE ID`: where a job offered with an id is now (pending,
//! ready, in flight, dead-lettered, handled, cancelled, ...), whether a
//! cancel was asked, its last progress and its result, and its last
//! attempts: when, on which worker, how each ended and its error, source
//! chain and backtrace. The pieces `delayq result` prints too are here.

use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use delayq::jobs::{Attempt, JobHistory, JobResult, JobState, Progress};
use serde_json::json;

use crate::args::{Cli, CodecKind, HistorySwitch, JobArgs, OutputFormat};
use crate::output::{self, escape, escape_lines};
use crate::text_codec::TextCodec;

pub(crate) async fn run(cli: &Cli, args: &JobArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let read = async {
        let queue = client
            .reliable_queue(&args.queue, TextCodec::new(CodecKind::Bytes))?
            .without_transfer();
        match (&args.history, &args.id) {
            (Some(HistorySwitch(keep)), _) => {
                queue.set_job_history(*keep).await?;
                Ok(Err(queue.job_history().await?))
            }
            (None, Some(id)) => queue.job(id).await.map(Ok),
            (None, None) => Err(delayq::Error::InvalidArgument("give a job id or --history".into())),
        }
    }
    .await;
    client.shutdown().await;
    let history = match read? {
        Ok(history) => history,
        Err(keep) => {
            match args.format {
                OutputFormat::Json => println!(
                    "{}",
                    output::json(&json!({ "queue": args.queue, "history": keep_json(keep) }))
                ),
                OutputFormat::Table => println!("{}", switch_text(&args.queue, keep)),
            }
            return Ok(ExitCode::SUCCESS);
        }
    };
    match args.format {
        OutputFormat::Json => println!("{}", output::json(&history_json(&args.queue, &history))),
        OutputFormat::Table => print(&args.queue, &history),
    }
    Ok(if history.state == JobState::Unknown {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The switch as JSON: `{"on": true, "keep_ms": ...}` or `{"on": false}`.
pub(crate) fn keep_json(keep: Option<Duration>) -> serde_json::Value {
    match keep {
        Some(keep) => json!({ "on": true, "keep_ms": keep.as_millis() as u64 }),
        None => json!({ "on": false }),
    }
}

pub(crate) fn switch_text(queue: &str, keep: Option<Duration>) -> String {
    match keep {
        Some(keep) => format!(
            "job history: on for {}, handled histories kept {}",
            escape(queue),
            output::compact(keep)
        ),
        None => format!(
            "job history: off for {} (turn it on with `delayq job QUEUE --history on`)",
            escape(queue)
        ),
    }
}

fn ms(at: SystemTime) -> i64 {
    output::millis_from(at, SystemTime::UNIX_EPOCH)
}

/// The state's time and detail, for JSON.
pub(crate) fn state_json(state: &JobState) -> serde_json::Value {
    let mut out = json!({ "name": state.name() });
    let (key, at) = match state {
        JobState::Pending { due } => ("due", Some(*due)),
        JobState::Ready { since } | JobState::Removed { since } => ("since", Some(*since)),
        JobState::InFlight { since, delivery } => {
            out["delivery"] = json!(delivery);
            ("since", Some(*since))
        }
        JobState::DeadLettered { since, reason } => {
            out["reason"] = json!(reason);
            ("since", Some(*since))
        }
        JobState::Handled { at } | JobState::Deleted { at } => ("at", Some(*at)),
        JobState::Cancelled { at, how } => {
            out["how"] = json!(how);
            ("at", Some(*at))
        }
        _ => ("at", None),
    };
    if let Some(at) = at {
        out[format!("{key}_ms")] = json!(ms(at));
        out[key] = json!(output::utc_time(at));
    }
    out
}

fn attempt_json(a: &Attempt) -> serde_json::Value {
    json!({
        "started_ms": ms(a.started),
        "started": output::utc_time(a.started),
        "ended_ms": a.ended.map(ms),
        "ended": a.ended.map(output::utc_time),
        "worker": a.worker,
        "delivery": a.delivery,
        "outcome": a.outcome,
        "error": a.error,
        "chain": a.chain,
        "backtrace": a.backtrace,
    })
}

/// A time as JSON fields `KEY` (RFC 3339) and `KEY_ms`, into `out`.
fn time_fields(out: &mut serde_json::Value, key: &str, at: SystemTime) {
    out[format!("{key}_ms")] = json!(ms(at));
    out[key] = json!(output::utc_time(at));
}

/// The last progress as JSON: `{"value": ..., "at": ..., "at_ms": ...,
/// "delivery": ...}`, or null.
pub(crate) fn progress_json(progress: Option<&Progress>) -> serde_json::Value {
    let Some(p) = progress else {
        return serde_json::Value::Null;
    };
    let mut out = json!({ "value": p.value, "delivery": p.delivery });
    time_fields(&mut out, "at", p.at);
    out
}

/// The result as JSON: `{"value": ..., "at": ..., "at_ms": ...}` (a result
/// that is not JSON, written by hand, as its text), or null.
pub(crate) fn result_json(result: Option<&JobResult>) -> serde_json::Value {
    let Some(r) = result else {
        return serde_json::Value::Null;
    };
    let mut out = json!({ "value": result_value(r) });
    time_fields(&mut out, "at", r.at);
    out
}

/// A result's JSON as a value; a result that does not parse, as its text.
fn result_value(r: &JobResult) -> serde_json::Value {
    serde_json::from_slice(&r.json).unwrap_or_else(|_| json!(String::from_utf8_lossy(&r.json)))
}

/// When a cancel was asked, as JSON (null when none is).
fn cancel_json(h: &JobHistory) -> serde_json::Value {
    match h.cancel_requested {
        Some(at) => {
            let mut out = json!({});
            time_fields(&mut out, "at", at);
            out
        }
        None => serde_json::Value::Null,
    }
}

fn history_json(queue: &str, h: &JobHistory) -> serde_json::Value {
    json!({
        "queue": queue,
        "id": h.id,
        "state": state_json(&h.state),
        "cancel_requested": cancel_json(h),
        "progress": progress_json(h.progress.as_ref()),
        "result": result_json(h.result.as_ref()),
        "attempts_total": h.attempts_total,
        "attempts": h.attempts.iter().map(attempt_json).collect::<Vec<_>>(),
        "history": keep_json(h.history),
    })
}

/// A time for people: local, with how long ago.
fn when(at: SystemTime, now: SystemTime) -> String {
    format!("{} ({})", output::local_time(at), output::relative(at, now))
}

/// The lines after the state: a cancel asked, the last progress (its JSON
/// on one line) and the result (its JSON pretty, indented), each escaped.
pub(crate) fn report_lines(h: &JobHistory, now: SystemTime) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(at) = h.cancel_requested {
        lines.push(format!("cancel requested at {}", when(at, now)));
    }
    if let Some(p) = &h.progress {
        lines.push(format!(
            "progress: {} at {} (delivery {})",
            output::json(&p.value),
            when(p.at, now),
            escape(&p.delivery)
        ));
    }
    if let Some(r) = &h.result {
        lines.push(format!("result, kept {}:", when(r.at, now)));
        for line in output::json_pretty(&result_value(r)).lines() {
            lines.push(format!("  {line}"));
        }
    }
    lines
}

fn print(queue: &str, h: &JobHistory) {
    let now = SystemTime::now();
    println!("job {} on {}", escape(&h.id), escape(queue));
    let when = |at: SystemTime| format!("{} ({})", output::local_time(at), output::relative(at, now));
    let state = state_text(h, now);
    println!("state: {state}");
    for line in report_lines(h, now) {
        println!("{line}");
    }
    if h.history.is_none() {
        println!("{}", switch_text(queue, None));
    }
    if h.attempts.is_empty() {
        println!("attempts: none");
        return;
    }
    let shown = h.attempts.len() as u32;
    if h.attempts_total > shown {
        println!("attempts: {} (the last {shown} kept)", h.attempts_total);
    } else {
        println!("attempts: {}", h.attempts_total);
    }
    let first = h.attempts_total - shown + 1;
    let rows: Vec<Vec<String>> = (h.attempts.iter().enumerate())
        .map(|(i, a)| {
            vec![
                (first + i as u32).to_string(),
                when(a.started),
                a.ended
                    .map(|end| output::compact(end.duration_since(a.started).unwrap_or_default()))
                    .unwrap_or_else(|| "running".into()),
                escape(&a.worker).into_owned(),
                a.outcome.clone().unwrap_or_else(|| "-".into()),
                a.error
                    .as_deref()
                    .map(|e| escape(e).into_owned())
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    println!(
        "{}",
        output::table_aligned(&["#", "STARTED", "TOOK", "WORKER", "OUTCOME", "ERROR"], &["#"], &rows)
    );
    for (i, a) in h.attempts.iter().enumerate() {
        if a.chain.is_empty() && a.backtrace.is_none() {
            continue;
        }
        println!();
        println!("attempt {}:", first + i as u32);
        for cause in &a.chain {
            println!("  caused by: {}", escape(cause));
        }
        if let Some(backtrace) = &a.backtrace {
            println!("  backtrace:");
            for line in escape_lines(backtrace).lines() {
                println!("    {line}");
            }
        }
    }
}

/// Where the job is, with the state's time as every other command prints
/// one (local, with the offset) beside how long ago; `get` says it too.
pub(crate) fn state_text(h: &JobHistory, now: SystemTime) -> String {
    let when = |at: SystemTime| format!("{} ({})", output::local_time(at), output::relative(at, now));
    match &h.state {
        JobState::Pending { due } => format!("pending, due {}", when(*due)),
        JobState::Ready { since } => format!("ready since {}", when(*since)),
        JobState::InFlight { since, delivery } => {
            format!("in flight since {} (delivery {delivery})", when(*since))
        }
        JobState::DeadLettered { since, reason } => {
            format!("dead-lettered {}: {}", when(*since), escape(reason))
        }
        JobState::Handled { at } => format!("handled {}", when(*at)),
        JobState::Deleted { at } => format!("dead letter deleted {}", when(*at)),
        JobState::Cancelled { at, how } => format!("cancelled {}: {}", when(*at), escape(how)),
        JobState::Removed { since } => format!("removed from the pending set (last seen {})", when(*since)),
        JobState::Unknown if h.history.is_none() => "unknown: no such id pending (the queue keeps no job history)".into(),
        JobState::Unknown => "unknown: no such id pending and no history (never offered with an id, taken by a consumer that keeps none, or expired)".into(),
        _ => h.state.name().into(),
    }
}
