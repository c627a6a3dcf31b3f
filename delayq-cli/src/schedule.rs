//! `delayq schedule add|list|edit|run-now|fires|pause|resume|remove|run`.

use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use delayq::schedule::{FireKind, Misfire, ScheduleEdit, ScheduleFire, ScheduleSpec};
use delayq::Codec;
use serde_json::json;
use tokio::time::Instant;

use crate::args::{
    Cli, CodecKind, OutputFormat, ScheduleAddArgs, ScheduleEditArgs, ScheduleFiresArgs, ScheduleListArgs,
    ScheduleNameArgs, ScheduleRunArgs,
};
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
    let codec = TextCodec::reading(args.codec, args.kryo_schema.as_deref()).map_err(delayq::Error::InvalidArgument)?;
    let now = SystemTime::now();
    // As the other commands show a value: the text, or (undecodable, or a
    // Java object whose fields were not read) its class, a hint and its bytes.
    let value = |payload: &[u8], max: usize| {
        let class = codec.unread_class(payload);
        match codec.decode(&bytes::Bytes::copy_from_slice(payload)) {
            Ok(text) if class.is_none() => preview(&text, max),
            _ => output::undecoded(class.as_deref(), payload, max.saturating_sub(40).max(20)),
        }
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
                        "value": match codec.decode(&bytes::Bytes::copy_from_slice(&info.payload)) {
                            Ok(text) => text,
                            Err(_) => format!("<{}>", hex(&info.payload)),
                        },
                        "class": codec.unread_class(&info.payload),
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
                        value(&info.payload, 60),
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

/// What a command on a named schedule does when the queue has none of that
/// name: says so, exit status 1 (as pause, resume and remove do).
fn no_such(queue: &str, name: &str) -> ExitCode {
    eprintln!("no schedule {} on {}", escape(&format!("{name:?}")), escape(queue));
    ExitCode::FAILURE
}

pub(crate) async fn edit(cli: &Cli, args: &ScheduleEditArgs) -> delayq::Result<ExitCode> {
    let mut edit = ScheduleEdit::new();
    match (&args.cron, args.every) {
        (Some(cron), _) => edit = edit.spec(ScheduleSpec::cron(cron)?),
        (None, Some(period)) => edit = edit.spec(delayq::schedule::every(period)),
        (None, None) => {}
    }
    if let Some(zone) = &args.tz {
        edit = edit.time_zone(zone);
    }
    if let Some(policy) = &args.misfire {
        edit = edit.misfire(policy.parse()?);
    }
    if let Some(late) = args.misfire_after {
        edit = edit.misfire_after(late);
    }
    if let Some(value) = &args.value {
        let codec =
            TextCodec::with_java_classes(args.codec, &args.java_class).map_err(delayq::Error::InvalidArgument)?;
        edit = edit.payload(delayq::codec::encode(&codec, value)?);
    }
    let asked = args.cron.is_some()
        || args.every.is_some()
        || args.tz.is_some()
        || args.misfire.is_some()
        || args.misfire_after.is_some()
        || args.value.is_some();
    if !asked {
        return Err(delayq::Error::InvalidArgument(
            "nothing to change: give --cron, --every, --tz, --misfire, --misfire-after or a value".into(),
        ));
    }
    let client = crate::connect(cli).await?;
    let result = async {
        client
            .schedules(&delayq::QueueKeys::new(&args.queue)?)?
            .edit(&args.name, edit)
            .await
    }
    .await;
    client.shutdown().await;
    let info = match result {
        Err(delayq::Error::NoSuchSchedule { .. }) => return Ok(no_such(&args.queue, &args.name)),
        other => other?,
    };
    eprintln!(
        "schedule {} of {}: {} (next {}{}; fired {}, missed {})",
        escape(&info.name),
        escape(&info.queue),
        escape(&output::schedule_spec(&info.spec)),
        info.next.map(output::local_time).unwrap_or_else(|| "never".into()),
        if info.paused { ", paused" } else { "" },
        output::count(info.fired),
        output::count(info.missed),
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn run_now(cli: &Cli, args: &ScheduleNameArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let result = async {
        client
            .schedules(&delayq::QueueKeys::new(&args.queue)?)?
            .run_now(&args.name)
            .await
    }
    .await;
    client.shutdown().await;
    let due = match result {
        Err(delayq::Error::NoSuchSchedule { .. }) => return Ok(no_such(&args.queue, &args.name)),
        other => other?,
    };
    eprintln!(
        "offered the value of schedule {} to {} once, due {} (its next occurrence stays)",
        escape(&args.name),
        escape(&args.queue),
        output::local_time(due)
    );
    Ok(ExitCode::SUCCESS)
}

/// A fire's kind as a table says it.
fn kind_text(fire: &ScheduleFire) -> String {
    match fire.kind {
        FireKind::OnTime => "on time".into(),
        FireKind::Late => format!("late {}", output::compact(fire.late_by())),
        FireKind::Missed => "missed".into(),
        FireKind::ByHand => "by hand".into(),
        _ => fire.kind.as_str().into(),
    }
}

pub(crate) async fn fires(cli: &Cli, args: &ScheduleFiresArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let result = async {
        let schedules = client.schedules(&delayq::QueueKeys::new(&args.queue)?)?;
        Ok::<_, delayq::Error>((schedules.get(&args.name).await?, schedules.fires(&args.name).await?))
    }
    .await;
    client.shutdown().await;
    let (found, fires) = result?;
    if found.is_none() {
        return Ok(no_such(&args.queue, &args.name));
    }
    let ms = |at: SystemTime| output::millis_from(at, SystemTime::UNIX_EPOCH);
    match args.format {
        OutputFormat::Json => {
            let items: Vec<_> = fires
                .iter()
                .map(|f| {
                    json!({
                        "due_ms": ms(f.due),
                        "due": output::utc_time(f.due),
                        "fired_at_ms": ms(f.fired_at),
                        "fired_at": output::utc_time(f.fired_at),
                        "late_by_ms": f.late_by().as_millis() as u64,
                        "kind": f.kind.as_str(),
                        "offered": f.offered,
                        "missed": f.missed,
                        "runner": f.runner,
                        "host": f.host,
                    })
                })
                .collect();
            println!(
                "{}",
                output::json(&json!({"queue": args.queue, "schedule": args.name, "fires": items}))
            );
        }
        OutputFormat::Table => {
            if fires.is_empty() {
                println!(
                    "schedule {} of {} has not fired yet",
                    escape(&args.name),
                    escape(&args.queue)
                );
                return Ok(ExitCode::SUCCESS);
            }
            let now = SystemTime::now();
            let rows: Vec<Vec<String>> = fires
                .iter()
                .map(|f| {
                    vec![
                        output::local_time(f.due),
                        format!(
                            "{} ({})",
                            output::local_time(f.fired_at),
                            output::relative(f.fired_at, now)
                        ),
                        output::compact(f.late_by()),
                        kind_text(f),
                        output::count(f.offered),
                        output::count(f.missed),
                        if f.kind == FireKind::ByHand {
                            format!("pid {}", f.runner)
                        } else {
                            f.runner.clone()
                        },
                        f.host.clone(),
                    ]
                })
                .collect();
            println!(
                "{}",
                output::table_aligned(
                    &[
                        "DUE",
                        "FIRED",
                        "AFTER DUE",
                        "KIND",
                        "OFFERED",
                        "MISSED",
                        "RUNNER",
                        "HOST"
                    ],
                    &["AFTER DUE", "OFFERED", "MISSED"],
                    &rows
                )
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
