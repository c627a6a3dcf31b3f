//! `delayq inspect`: what a queue holds, with its pending elements in due order.

use std::process::ExitCode;
use std::time::SystemTime;

use bytes::Bytes;
use delayq::fred::interfaces::SortedSetsInterface;
use delayq::fred::types::Value;
use delayq::{Codec, QueueStatus};
use serde_json::json;

use crate::args::{Cli, InspectArgs, OutputFormat};
use crate::output::{self, hex, local_time, millis_from, preview, relative, utc_time};
use crate::text_codec::TextCodec;

/// One pending element as shown.
struct Row {
    due: SystemTime,
    format: &'static str,
    payload: Result<String, String>,
    raw: Bytes,
}

pub async fn run(cli: &Cli, args: &InspectArgs) -> delayq::Result<ExitCode> {
    let codec = TextCodec::reading(args.codec, args.kryo_schema.as_deref()).map_err(delayq::Error::InvalidArgument)?;
    let client = crate::connect(cli).await?;
    let queue = client
        .delayed_queue(&args.queue, TextCodec::new(args.codec))?
        .without_transfer();
    let status = queue.status().await?;
    let rows = pending(&client, queue.keys().timeout(), args.limit, &codec).await?;
    client.shutdown().await;
    let now = SystemTime::now();
    match args.format {
        OutputFormat::Json => println!("{}", to_json(&args.queue, &status, &rows, now)),
        OutputFormat::Table => print!("{}", to_table(&args.queue, &status, &rows, args.limit, now)),
    }
    if !status.exists {
        eprintln!(
            "delayq: note: no key of queue `{}` exists in Redis. An empty queue looks the same; \
             otherwise check the name (the one Java passes to getBlockingQueue).",
            args.queue
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The first `limit` pending elements by due time.
async fn pending(client: &delayq::Client, key: &str, limit: usize, codec: &TextCodec) -> delayq::Result<Vec<Row>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let flat: Vec<Value> = client
        .redis()
        .zrange(key, 0, limit as i64 - 1, None, false, None, true)
        .await
        .map_err(delayq::Error::from)?;
    let mut rows = Vec::new();
    // RESP2 answers member, score, member, score...; RESP3 [member, score] pairs.
    let mut items = flat.into_iter().flat_map(|v| match v {
        Value::Array(pair) => pair,
        other => vec![other],
    });
    while let (Some(member), Some(score)) = (items.next(), items.next()) {
        let raw = member.as_bytes().map(Bytes::copy_from_slice).unwrap_or_default();
        let due_ms = score.as_f64().unwrap_or_default() as i64;
        let due = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(due_ms.max(0) as u64);
        let (format, payload) = match delayq::format::unpack(&raw) {
            Ok(element) => (
                element.format().as_str(),
                codec.decode(element.payload).map_err(|e| {
                    // Say what wrote it when another codec did (Kryo: "use --codec kryo").
                    match codec.diagnose(element.payload) {
                        Some(hint) => format!("undecodable with --codec {}: {e} (looks like {hint})", codec.name()),
                        None => format!("undecodable with --codec {}: {e}", codec.name()),
                    }
                }),
            ),
            Err(malformed) => ("malformed", Err(malformed.to_string())),
        };
        rows.push(Row {
            due,
            format,
            payload,
            raw,
        });
    }
    Ok(rows)
}

fn to_table(name: &str, status: &QueueStatus, rows: &[Row], limit: usize, now: SystemTime) -> String {
    let next = match status.next_due {
        Some(due) => format!("{} ({})", local_time(due), relative(due, now)),
        None => "-".into(),
    };
    let lag = status.lag_at(now);
    let mut out = format!(
        "queue         {name}\npending       {}\nready         {}\nin flight     {}\ndead letters  {}\nquarantined   {}\nnext due      {next}\n",
        status.pending, status.ready, status.in_flight, status.dead_letters, status.quarantined
    );
    if !lag.is_zero() {
        out.push_str(&format!(
            "transfer lag  {} (is any process running the transfer?)\n",
            output::compact(lag)
        ));
    }
    if rows.is_empty() {
        return out;
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            vec![
                local_time(row.due),
                relative(row.due, now),
                row.format.to_owned(),
                match &row.payload {
                    Ok(text) => preview(text, 60),
                    Err(_) => format!("<{}>", preview(&hex(&row.raw), 40)),
                },
            ]
        })
        .collect();
    out.push('\n');
    out.push_str(&output::table(&["DUE", "WHEN", "FORMAT", "PAYLOAD"], &cells));
    out.push('\n');
    if (rows.len() as u64) < status.pending {
        out.push_str(&format!(
            "({} of {} pending shown; --limit {} shows more)\n",
            rows.len(),
            status.pending,
            limit.saturating_mul(2).max(1)
        ));
    }
    out
}

fn to_json(name: &str, status: &QueueStatus, rows: &[Row], now: SystemTime) -> serde_json::Value {
    let mut fields = output::status_json(name, status, now);
    fields.insert("exists".into(), json!(status.exists));
    fields.insert("next_due".into(), json!(status.next_due.map(utc_time)));
    let elements: Vec<_> = rows
        .iter()
        .map(|row| {
            json!({
                "due": utc_time(row.due),
                "due_in_ms": millis_from(row.due, now),
                "format": row.format,
                "payload": row.payload.as_ref().ok(),
                "error": row.payload.as_ref().err(),
                "raw_hex": hex(&row.raw),
            })
        })
        .collect();
    fields.insert("elements".into(), json!(elements));
    serde_json::Value::Object(fields)
}
