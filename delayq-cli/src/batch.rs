//! `delayq batch offer` and `delayq batch show`: values offered together
//! as jobs (`DelayedQueue::offer_batch`), whose completion is offered once
//! to a queue of choice when every one has ended, and where a batch is
//! (`DelayedQueue::batch`).

use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

use bytes::Bytes;
use delayq::batch::{BatchOptions, BatchState, BatchStatus};
use delayq::{BytesCodec, DelayedQueue, Error};
use serde_json::json;

use crate::args::{BatchOfferArgs, BatchShowArgs, Cli, OutputFormat};
use crate::offer_file::{self, Lines};
use crate::output::{self, escape};
use crate::text_codec::TextCodec;

/// Cells of `batch show`'s progress bar, between its brackets.
const BAR_WIDTH: u64 = 30;

pub(crate) async fn offer(cli: &Cli, args: &BatchOfferArgs) -> delayq::Result<ExitCode> {
    let codec = TextCodec::for_values(
        args.codec,
        &args.java_class,
        args.java_type.as_deref(),
        args.kryo_schema.as_deref(),
    )
    .map_err(Error::InvalidArgument)?;
    // Every value is encoded (and checked) before anything is sent: a batch
    // is one offer.
    let payloads = match &args.from_file {
        Some(path) => {
            let path = path.to_owned();
            tokio::task::spawn_blocking(move || read_file(&codec, &path))
                .await
                .expect("reading does not panic")
        }
        None => encode_values(&codec, &args.values),
    }
    .map_err(|e| Error::InvalidArgument(format!("{e}; nothing was offered")))?;
    // The id is chosen here when none is given, so that a batch refused
    // half way can be named, and resumed.
    let id = args.id.clone().unwrap_or_else(random_id);
    let mut options = BatchOptions::new().id(id.as_str());
    if let Some(target) = &args.on_complete {
        options = options.on_complete(target.as_str(), args.data.clone().unwrap_or_default());
    }
    if let Some(keep) = args.keep {
        options = options.keep(keep);
    }
    let client = crate::connect(cli).await?;
    // Payloads are encoded already; offering needs no transfer from this
    // short-lived process.
    let queue = client
        .delayed_queue(&args.queue, BytesCodec)?
        .without_transfer()
        .with_format(args.element_format);
    let offered = queue
        .offer_batch(payloads.iter().map(|p| (p, args.delay)), &options)
        .await;
    let code = match offered {
        Ok(id) => Ok(offered_said(args, &id, payloads.len())),
        Err(error) => failed(&queue, args, &id, payloads.len(), error).await,
    };
    client.shutdown().await;
    code
}

/// Prints the batch's id (stdout) and what was offered (stderr).
fn offered_said(args: &BatchOfferArgs, id: &str, total: usize) -> ExitCode {
    match args.format {
        OutputFormat::Json => println!(
            "{}",
            output::json(&json!({
                "queue": args.queue,
                "batch": id,
                "total": total,
                "target": args.on_complete,
                "delay_ms": args.delay.as_millis() as u64,
            }))
        ),
        OutputFormat::Table => println!("{}", escape(id)),
    }
    let members = match total {
        1 => format!("{}/1", escape(id)),
        n => format!("{}/1 to {}/{n}", escape(id), escape(id)),
    };
    eprintln!(
        "offered batch {} of {total} member(s) ({members}) to {} ({})",
        escape(id),
        escape(&args.queue),
        output::due_after(args.delay)
    );
    match &args.on_complete {
        Some(target) => eprintln!(
            "its completion goes to {} once every member has ended (`delayq batch show {} {}`)",
            escape(target),
            escape(&args.queue),
            escape(id)
        ),
        None => eprintln!(
            "no completion (--on-complete QUEUE asks for one); `delayq batch show {} {}` follows it",
            escape(&args.queue),
            escape(id)
        ),
    }
    ExitCode::SUCCESS
}

/// An offer that failed: a refusal of the queue's limits says how far the
/// batch got and how to resume it (exit status 1); a queue without job
/// history gets the hint that turns it on (2); anything else goes back to
/// `main`, after what was offered before it.
async fn failed(
    queue: &DelayedQueue<Bytes>,
    args: &BatchOfferArgs,
    id: &str,
    total: usize,
    error: Error,
) -> delayq::Result<ExitCode> {
    let resume = match &args.id {
        Some(_) => "the same command resumes it".to_owned(),
        None => format!("the same command with --id {} resumes it", escape(id)),
    };
    if let Error::OfferRefused { .. } = error {
        let offered = queue.batch(id).await.ok().flatten().map_or(0, |b| b.offered);
        eprintln!("delayq: {}", escape(&error.to_string()));
        eprintln!(
            "delayq: batch {} stopped half way: {offered} of {total} member(s) offered to {}; it stays \
             offering (no completion) until {resume} (`delayq limits {}` shows the limits)",
            escape(id),
            escape(&args.queue),
            escape(&args.queue)
        );
        if args.format == OutputFormat::Json {
            println!(
                "{}",
                output::json(&json!({
                    "queue": args.queue,
                    "batch": id,
                    "state": "offering",
                    "total": total,
                    "offered": offered,
                    "target": args.on_complete,
                    "refused": error.to_string(),
                }))
            );
        }
        return Ok(ExitCode::from(1));
    }
    if let Error::InvalidArgument(_) = error {
        if let Ok(None) = queue.job_history().await {
            eprintln!("delayq: {}", escape(&error.to_string()));
            eprintln!(
                "hint: turn the queue's job history on first: `delayq job {} --history on` (handled \
                 histories kept 1d; on=7d for longer)",
                escape(&args.queue)
            );
            return Ok(ExitCode::from(2));
        }
        return Err(error);
    }
    // Cut off part way (the connection, a timeout): the chunks sent before
    // stay, and the batch waits to be resumed.
    if let Ok(Some(b)) = queue.batch(id).await
        && b.state == BatchState::Offering
        && b.offered > 0
    {
        eprintln!(
            "delayq: batch {} stopped half way: {} of {total} member(s) offered to {}; {resume}; failed:",
            escape(id),
            b.offered,
            escape(&args.queue)
        );
    }
    Err(error)
}

/// The VALUE arguments' payloads, as `delayq offer` encodes them.
fn encode_values(codec: &TextCodec, values: &[String]) -> Result<Vec<Bytes>, String> {
    (values.iter().enumerate())
        .map(|(i, value)| offer_file::payload(codec, value).map_err(|e| format!("value {}: {e}", i + 1)))
        .collect()
}

/// Every line of `path` (`-`: standard input) as a payload.
fn read_file(codec: &TextCodec, path: &Path) -> Result<Vec<Bytes>, String> {
    let mut lines = Lines::open(path).map_err(|e| match e {
        Error::InvalidArgument(said) => said,
        other => other.to_string(),
    })?;
    let mut payloads = Vec::new();
    while let Some((number, line)) = lines.next()? {
        payloads.push(offer_file::encode(codec, number, line)?);
    }
    Ok(payloads)
}

/// An id as the library makes one: 32 hex digits.
fn random_id() -> String {
    use std::hash::BuildHasher;
    // Each RandomState is seeded apart; the time and process tell two runs
    // apart besides.
    let word = |salt: u8| {
        std::collections::hash_map::RandomState::new().hash_one((salt, std::process::id(), SystemTime::now()))
    };
    format!("{:016x}{:016x}", word(1), word(2))
}

pub(crate) async fn show(cli: &Cli, args: &BatchShowArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let read = async { crate::look(&client, &args.queue)?.batch(&args.id).await }.await;
    client.shutdown().await;
    let Some(batch) = read? else {
        eprintln!(
            "no batch {} in {} (never offered there, or its record expired: `--keep` after its completion)",
            escape(&format!("{:?}", args.id)),
            escape(&args.queue)
        );
        return Ok(ExitCode::from(1));
    };
    match args.format {
        OutputFormat::Json => println!("{}", output::json(&batch_json(&args.queue, &batch))),
        OutputFormat::Table => {
            for line in batch_lines(&args.queue, &batch, SystemTime::now()) {
                println!("{line}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn batch_json(queue: &str, b: &BatchStatus) -> serde_json::Value {
    let ms = |at: SystemTime| output::millis_from(at, SystemTime::UNIX_EPOCH);
    json!({
        "queue": queue,
        "batch": b.id,
        "state": b.state.name(),
        "total": b.total,
        "offered": b.offered,
        "handled": b.handled,
        "dead_lettered": b.dead_lettered,
        "cancelled": b.cancelled,
        "ended": b.ended(),
        "created": output::utc_time(b.created),
        "created_ms": ms(b.created),
        "completed": b.completed.map(output::utc_time),
        "completed_ms": b.completed.map(ms),
        "target": b.target,
    })
}

/// `batch show`'s lines, every text from Redis escaped.
fn batch_lines(queue: &str, b: &BatchStatus, now: SystemTime) -> Vec<String> {
    let when = |at: SystemTime| format!("{} ({})", output::local_time(at), output::relative(at, now));
    let mut lines = vec![
        format!("batch {} on {}", escape(&b.id), escape(queue)),
        format!("state: {}", state_text(queue, b)),
        format!(
            "ended: {} of {} {}",
            output::count(b.ended()),
            output::count(b.total),
            bar(b.ended(), b.total)
        ),
        format!(
            "  handled {}, dead-lettered {}, cancelled {}",
            output::count(b.handled),
            output::count(b.dead_lettered),
            output::count(b.cancelled)
        ),
    ];
    if b.state == BatchState::Offering {
        lines.push(format!(
            "offered: {} of {}",
            output::count(b.offered),
            output::count(b.total)
        ));
    }
    lines.push(format!("created: {}", when(b.created)));
    lines.push(match b.completed {
        Some(at) => format!("completed: {}", when(at)),
        None => "completed: not yet".into(),
    });
    lines.push(match (&b.target, b.state) {
        (None, _) => "completion: none (offered without --on-complete)".into(),
        (Some(target), BatchState::Delivered) => format!("completion: offered to {}", escape(target)),
        (Some(target), BatchState::Complete) => format!(
            "completion: to {}, on its way (a delayq reliable consumer or worker of {} offers it)",
            escape(target),
            escape(queue)
        ),
        (Some(target), _) => format!("completion: to {} once every member has ended", escape(target)),
    });
    lines
}

/// The state's name and what it means.
fn state_text(queue: &str, b: &BatchStatus) -> String {
    match b.state {
        BatchState::Offering => format!(
            "offering (not every member is offered: its offer runs, or stopped half way; `delayq batch \
             offer {} --id {} ...` with the same values resumes it)",
            escape(queue),
            escape(&b.id)
        ),
        BatchState::Open => "open (every member offered; some have not ended)".into(),
        BatchState::Complete => "complete (every member has ended; its completion is on its way)".into(),
        BatchState::Delivered if b.target.is_none() => "delivered (every member has ended)".into(),
        BatchState::Delivered => "delivered (every member has ended; its completion was offered)".into(),
        other => other.name().into(),
    }
}

/// A progress bar of `done` of `total`, with its percentage (rounded down:
/// 100% only when every one is done): `[#######.......]  50%`.
fn bar(done: u64, total: u64) -> String {
    let (filled, percent) = match total {
        0 => (0, 0),
        total => (done.min(total) * BAR_WIDTH / total, done.min(total) * 100 / total),
    };
    format!(
        "[{}{}] {percent:>3}%",
        "#".repeat(filled as usize),
        ".".repeat((BAR_WIDTH - filled) as usize)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bar_fills_with_what_ended() {
        assert_eq!(super::bar(0, 4), format!("[{}]   0%", ".".repeat(30)));
        assert_eq!(super::bar(1, 4), format!("[{}{}]  25%", "#".repeat(7), ".".repeat(23)));
        assert_eq!(super::bar(199, 200), format!("[{}{}]  99%", "#".repeat(29), "."));
        assert_eq!(super::bar(4, 4), format!("[{}] 100%", "#".repeat(30)));
    }

    #[test]
    fn made_ids_are_32_hex_digits_and_differ() {
        let (a, b) = (super::random_id(), super::random_id());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }
}
