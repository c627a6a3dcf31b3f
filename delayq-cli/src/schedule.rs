//! `delayq schedule add|list|pause|resume|remove|run`.

use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use delayq::schedule::{Misfire, ScheduleSpec};
use delayq::Codec;
use serde_json::json;
use tokio::time::Instant;

use crate::args::{Cli, CodecKind, OutputFormat, ScheduleAddArgs, ScheduleListArgs, ScheduleNameArgs, ScheduleRunArgs};
use crate::output::{self, escape, hex, preview};
use crate::text_codec::TextCodec;

pub(crate) async fn add(cli: &Cli, args: &ScheduleAddArgs) -> delayq::Result<ExitCode> {
    let codec = TextCodec::with_java_classes(args.codec, &args.java_class).map_err(delayq::Error::InvalidArgument)?;
    let misfire: Misfire = args.misfire.parse()?;
    let spec = match (&args.cron, args.every) {
        (Some(cron), _) => {
            let spec = ScheduleSpec::cron(cron)?;
            match &args.tz {
                Some(tz) => spec.in_time_zone(tz)?,
                None => spec,
            }
        }
        (None, Some(period)) => delayq::schedule::every(period),
        (None, None) => return Err(delayq::Error::InvalidArgument("give --cron or --every".into())),
    }
    .misfire(misfire)
    .misfire_after(args.misfire_after);
    let client = crate::connect(cli).await?;
    let queue = client
        .delayed_queue(&args.queue, codec)?
        .without_transfer()
        .with_format(args.format);
    let result = client.schedule(&args.name, spec, &queue, &args.value).await;
    drop(queue);
    client.shutdown().await;
    let info = result?;
    eprintln!(
        "schedule {} of {}: {} (next {}{})",
        escape(&info.name),
        escape(&info.queue),
        escape(&info.spec.to_string()),
        info.next.map(output::local_time).unwrap_or_else(|| "never".into()),
        if info.paused { ", paused" } else { "" }
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn list(cli: &Cli, args: &ScheduleListArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let result = async {
        let schedules = client.schedules(&delayq::QueueKeys::new(&args.queue)?)?;
        Ok::<_, delayq::Error>((schedules.list().await?, schedules.runners().await?))
    }
    .await;
    client.shutdown().await;
    let (infos, runners) = result?;
    let codec = TextCodec::of(args.codec);
    let now = SystemTime::now();
    let value = |payload: &[u8]| match codec.decode(&bytes::Bytes::copy_from_slice(payload)) {
        Ok(text) => text,
        Err(_) => format!("<{}>", hex(payload)),
    };
    let ms = |at: Option<SystemTime>| at.map(|t| output::millis_from(t, SystemTime::UNIX_EPOCH));
    match args.format {
        OutputFormat::Json => {
            let items: Vec<_> = infos
                .iter()
                .map(|info| {
                    json!({
                        "name": info.name,
                        "spec": info.spec.to_string(),
                        "misfire": info.spec.misfire_policy().as_str(),
                        "next_ms": ms(info.next),
                        "next": info.next.map(output::utc_time),
                        "paused": info.paused,
                        "fired": info.fired,
                        "missed": info.missed,
                        "last_fired_ms": ms(info.last_fired),
                        "last_fired": info.last_fired.map(output::utc_time),
                        "value": value(&info.payload),
                        "element_format": info.format.as_str(),
                        "revision": info.revision,
                    })
                })
                .collect();
            let runners: Vec<_> = runners
                .iter()
                .map(|r| json!({"id": r.id, "last_beat_ms": ms(Some(r.last_beat)), "last_beat": output::utc_time(r.last_beat)}))
                .collect();
            println!(
                "{}",
                output::json(&json!({"queue": args.queue, "schedules": items, "runners": runners}))
            );
        }
        OutputFormat::Table => {
            let rows: Vec<Vec<String>> = infos
                .iter()
                .map(|info| {
                    vec![
                        info.name.clone(),
                        output::schedule_spec(&info.spec),
                        match (info.paused, info.next) {
                            (true, _) => "paused".into(),
                            (false, Some(next)) => {
                                format!("{} ({})", output::local_time(next), output::relative(next, now))
                            }
                            (false, None) => "never".into(),
                        },
                        match info.last_fired {
                            Some(at) => format!("{} ({})", output::local_time(at), output::relative(at, now)),
                            None => "never".into(),
                        },
                        output::count(info.fired),
                        output::count(info.missed),
                        info.spec.misfire_policy().as_str().into(),
                        preview(&value(&info.payload), 60),
                    ]
                })
                .collect();
            if rows.is_empty() {
                println!("no schedules on {}", escape(&args.queue));
            } else {
                println!(
                    "{}",
                    output::table_aligned(
                        &[
                            "NAME",
                            "SPEC",
                            "NEXT",
                            "LAST FIRED",
                            "FIRED",
                            "MISSED",
                            "MISFIRE",
                            "VALUE"
                        ],
                        &["FIRED", "MISSED"],
                        &rows
                    )
                );
                println!("{}", runners_line(&runners, now));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether any process runs the queue's schedules, from their heartbeats.
fn runners_line(runners: &[delayq::schedule::ScheduleRunner], now: SystemTime) -> String {
    match runners.first() {
        None => "runners: none alive (no process beat within 30s): these schedules do not fire".into(),
        Some(latest) => {
            // The beat is on the server's clock: a few ms ahead of this one is "just now".
            let age = now.duration_since(latest.last_beat).unwrap_or_default();
            let when = if age < Duration::from_secs(1) {
                "just now".into()
            } else {
                format!("{} ago", output::compact(age))
            };
            format!("runners: {} alive (last beat {when})", runners.len())
        }
    }
}

/// What `set` does.
pub(crate) enum Op {
    Pause,
    Resume,
    Remove,
}

pub(crate) async fn set(cli: &Cli, args: &ScheduleNameArgs, op: Op) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let result = async {
        let schedules = client.schedules(&delayq::QueueKeys::new(&args.queue)?)?;
        match op {
            Op::Pause => schedules.pause(&args.name).await,
            Op::Resume => schedules.resume(&args.name).await,
            Op::Remove => schedules.remove(&args.name).await,
        }
    }
    .await;
    client.shutdown().await;
    if result? {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("no schedule {} on {}", escape(&args.name), escape(&args.queue));
        Ok(ExitCode::FAILURE)
    }
}

pub(crate) async fn run(cli: &Cli, args: &ScheduleRunArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let mut transferring = Vec::new();
    for queue in &args.queues {
        client.run_schedules(&delayq::QueueKeys::new(queue)?)?;
        if !args.no_transfer {
            // The transfer never decodes payloads; any codec will do.
            transferring.push(client.delayed_queue(queue, TextCodec::new(CodecKind::Bytes))?);
        }
    }
    eprintln!("running the schedules of {}", escape(&args.queues.join(", ")));
    let deadline = args.timeout.map(|t| Instant::now() + t);
    let wait = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = wait => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    drop(transferring);
    client.shutdown_within(Duration::from_secs(5)).await;
    Ok(ExitCode::SUCCESS)
}
