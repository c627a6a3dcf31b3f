//! `delayq events QUEUE [--follow]`, `delayq events enable|disable QUEUE`.

use std::process::ExitCode;

use delayq::events::{Event, EventKind, EventsFrom};
use futures_util::StreamExt;

use crate::args::{Cli, EventsArgs, EventsCommand, EventsFormat};
use crate::output::{escape, json, local_time};

/// Events read per page of the kept ones.
const PAGE: usize = 1000;

pub(crate) async fn run(cli: &Cli, args: &EventsArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let result = match &args.command {
        Some(EventsCommand::Enable(a)) => client
            .enable_events(&delayq::QueueKeys::new(&a.queue)?, a.max_len)
            .await
            .map(|()| {
                eprintln!(
                "events of {} on: every delayq process writes them (about {} kept; Java's own operations write none)",
                escape(&a.queue),
                a.max_len
            );
            }),
        Some(EventsCommand::Disable(a)) => client
            .disable_events(&delayq::QueueKeys::new(&a.queue)?)
            .await
            .map(|was| {
                let state = if was { "off" } else { "were not on" };
                eprintln!("events of {} {state}", escape(&a.queue));
            }),
        None => print(&client, args).await,
    };
    client.shutdown().await;
    result?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the kept events (after --after), then with --follow those that come.
async fn print(client: &delayq::Client, args: &EventsArgs) -> delayq::Result<()> {
    let queue = args
        .queue
        .as_deref()
        .expect("clap requires a queue without a subcommand");
    if client.events_max_len(&delayq::QueueKeys::new(queue)?).await?.is_none() {
        eprintln!(
            "(events of {} are off: `delayq events enable {}` turns them on)",
            escape(queue),
            escape(queue)
        );
    }
    let mut from = args.after.clone().map_or(EventsFrom::Oldest, EventsFrom::After);
    loop {
        let page = client
            .kept_events(&delayq::QueueKeys::new(queue)?, from.clone(), PAGE)
            .await?;
        for event in &page {
            println!("{}", line(event, args.format));
        }
        match page.last() {
            Some(last) if page.len() == PAGE => from = EventsFrom::After(last.stream_id.clone()),
            Some(last) => {
                from = EventsFrom::After(last.stream_id.clone());
                break;
            }
            None => break,
        }
    }
    if !args.follow {
        return Ok(());
    }
    let mut events = client.events(&delayq::QueueKeys::new(queue)?)?.from(from);
    loop {
        tokio::select! {
            event = events.next() => match event {
                Some(Ok(event)) => println!("{}", line(&event, args.format)),
                Some(Err(error)) => eprintln!("delayq: {}", escape(&error.to_string())),
                None => return Ok(()),
            },
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

/// One event as a line: `time  stream_id  kind  field=value ...`, every
/// field escaped; or its JSON.
fn line(event: &Event, format: EventsFormat) -> String {
    if format == EventsFormat::Json {
        return json(&serde_json::to_value(event).expect("an event is JSON"));
    }
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(event.time_ms);
    let mut out = format!(
        "{}  {}  {}",
        local_time(at),
        escape(&event.stream_id),
        escape(event.kind.name())
    );
    for (key, value) in fields(&event.kind) {
        out.push_str(&format!("  {key}={}", escape(&value)));
    }
    out
}

/// The kind's fields, as its JSON has them.
fn fields(kind: &EventKind) -> Vec<(String, String)> {
    if let EventKind::Unknown { fields, .. } = kind {
        return fields
            .iter()
            .map(|(k, v)| (escape(k).into_owned(), v.clone()))
            .collect();
    }
    let serde_json::Value::Object(map) = serde_json::to_value(kind).expect("a kind is JSON") else {
        return Vec::new();
    };
    map.into_iter()
        .filter(|(key, _)| key != "kind")
        .map(|(key, value)| {
            let text = match value {
                serde_json::Value::String(s) => s,
                serde_json::Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join(","),
                other => other.to_string(),
            };
            (key, text)
        })
        .collect()
}
