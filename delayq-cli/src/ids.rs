//! `delayq reschedule`, `delayq get`: pending elements by id (`delayq
//! cancel`, which reaches ready and running jobs too, is in `cancel.rs`).

use std::io::Write;
use std::process::ExitCode;
use std::time::SystemTime;

use delayq::{BytesCodec, Codec};

use crate::args::{Cli, GetArgs, IdArgs, OutputFormat, RescheduleArgs};
use crate::output;
use crate::text_codec::TextCodec;

pub(crate) async fn reschedule(cli: &Cli, args: &RescheduleArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let queue = crate::look(&client, &args.queue)?;
    let (moved, when) = match (args.at, args.delay) {
        (Some(at), _) => (queue.reschedule_at(&args.id, at).await, output::utc_time(at)),
        (None, delay) => {
            let delay = delay.unwrap_or_default();
            (
                queue.reschedule(&args.id, delay).await,
                format!("in {}", output::compact(delay)),
            )
        }
    };
    client.shutdown().await;
    let ids = IdArgs {
        queue: args.queue.clone(),
        id: args.id.clone(),
    };
    Ok(found(moved?, &format!("rescheduled (due {when})"), &ids))
}

pub(crate) async fn get(cli: &Cli, args: &GetArgs) -> delayq::Result<ExitCode> {
    let codec = TextCodec::reading(args.codec, args.kryo_schema.as_deref()).map_err(delayq::Error::InvalidArgument)?;
    let client = crate::connect(cli).await?;
    // Raw bytes: the codec reads them here, so that `auto` can name its pick.
    let queue: delayq::DelayedQueue<bytes::Bytes> = client.delayed_queue(&args.queue, BytesCodec)?.without_transfer();
    let found = queue.get(&args.id).await;
    // Not pending: where it went, from its job history (when the queue keeps one).
    let gone = match &found {
        Ok(None) => queue.job(&args.id).await.ok(),
        _ => None,
    };
    client.shutdown().await;
    let Some(element) = found? else {
        let went = match gone {
            Some(h) if h.state != delayq::jobs::JobState::Unknown => format!(
                ": {} (`delayq job {} {}` shows its attempts)",
                crate::job::state_text(&h, SystemTime::now()),
                output::escape(&args.queue),
                output::escape(&args.id)
            ),
            _ => String::new(),
        };
        eprintln!(
            "no element with id {} is pending in {}{went}",
            output::escape(&format!("{:?}", args.id)),
            output::escape(&args.queue)
        );
        return Ok(ExitCode::from(1));
    };
    // A value the codec cannot read fails with its payload's bytes and a hint.
    let value = delayq::codec::decode(&codec, element.value.clone()).map_err(delayq::Error::Decode)?;
    let detected = codec.detected_codec(&element.value);
    let now = SystemTime::now();
    let mut out = std::io::stdout().lock();
    match args.format {
        OutputFormat::Table => {
            let _ = writeln!(
                out,
                "{}",
                match &detected {
                    None => output::table(
                        &["ID", "DUE", "IN", "VALUE"],
                        &[vec![
                            args.id.clone(),
                            output::local_time(element.due),
                            output::relative(element.due, now),
                            value,
                        ]],
                    ),
                    Some(codec) => output::table(
                        &["ID", "DUE", "IN", "CODEC", "VALUE"],
                        &[vec![
                            args.id.clone(),
                            output::local_time(element.due),
                            output::relative(element.due, now),
                            codec.clone(),
                            value,
                        ]],
                    ),
                }
            );
        }
        OutputFormat::Json => {
            let json = serde_json::json!({
                "queue": args.queue,
                "id": args.id,
                "due": output::utc_time(element.due),
                "due_in_ms": output::millis_from(element.due, now),
                "value": value,
                "codec": detected,
            });
            let _ = writeln!(out, "{}", output::json(&json));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Exit status 0 and `done` when the id was pending, else 1 and why.
fn found(yes: bool, done: &str, args: &IdArgs) -> ExitCode {
    if yes {
        eprintln!(
            "{} in {}: {done}",
            output::escape(&args.id),
            output::escape(&args.queue)
        );
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "no element with id {} is pending in {}",
            output::escape(&format!("{:?}", args.id)),
            output::escape(&args.queue)
        );
        ExitCode::from(1)
    }
}
