//! `delayq inspect`: what a queue holds, with its pending elements in due order.

use std::process::ExitCode;
use std::time::SystemTime;

use bytes::Bytes;
use delayq::error::DecodeError;
use delayq::pending::PendingError;
use delayq::schedule::ScheduleInfo;
use delayq::{BytesCodec, Codec, DelayedQueue, QueueStatus};
use serde_json::json;

use crate::args::{Cli, InspectArgs, OutputFormat};
use crate::output::{self, hex, local_time, millis_from, preview, relative, utc_time};
use crate::text_codec::TextCodec;

/// One pending element as shown.
struct Row {
    due: SystemTime,
    format: &'static str,
    id: Option<String>,
    payload: Result<String, String>,
    /// With `--codec auto`: the codec that wrote the payload.
    codec: Option<String>,
    /// The Java class of a payload whose fields were not read.
    class: Option<String>,
    raw: Bytes,
}

pub(crate) async fn run(cli: &Cli, args: &InspectArgs) -> delayq::Result<ExitCode> {
    let codec = TextCodec::reading(args.codec, args.kryo_schema.as_deref()).map_err(delayq::Error::InvalidArgument)?;
    let client = crate::connect(cli).await?;
    // Raw bytes: each payload is decoded here once, with its detected codec.
    let queue: DelayedQueue<Bytes> = client.delayed_queue(&args.queue, BytesCodec)?.without_transfer();
    let mut status = queue.status().await?;
    // The status's `exists` does not look at delayq's group keys: a queue
    // holding only grouped values exists too.
    status.exists |= status.grouped_pending + status.grouped_ready > 0;
    let rows = pending(&queue, args.offset, args.limit, &codec).await?;
    let schedules = client.schedules(&delayq::QueueKeys::new(&args.queue)?)?.list().await?;
    client.shutdown().await;
    let now = SystemTime::now();
    match args.format {
        OutputFormat::Json => println!(
            "{}",
            output::json(&to_json(&args.queue, &status, args.offset, &rows, &schedules, now))
        ),
        OutputFormat::Table => {
            print!("{}", to_table(&args.queue, &status, &rows, args.offset, now));
            print!("{}", schedules_table(&schedules, now));
        }
    }
    if !status.exists && !schedules.is_empty() {
        // Its schedules hash is the only key (nothing offered yet).
        eprintln!(
            "delayq: note: queue `{}` holds no pending, ready or dead values yet; it has {} schedule{}.",
            output::escape(&args.queue),
            output::count(schedules.len() as u64),
            if schedules.len() == 1 { "" } else { "s" }
        );
    } else if !status.exists {
        eprintln!(
            "delayq: note: no key of queue `{}` exists in Redis. An empty queue looks the same; \
             otherwise check the name (the one Java passes to getBlockingQueue).",
            output::escape(&args.queue)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `limit` pending elements by due time after the first `offset`, a page at a time.
async fn pending(
    queue: &DelayedQueue<Bytes>,
    offset: usize,
    limit: usize,
    codec: &TextCodec,
) -> delayq::Result<Vec<Row>> {
    let mut rows = Vec::new();
    while rows.len() < limit {
        let page = queue
            .pending_page(
                offset.saturating_add(rows.len()),
                (limit - rows.len()).min(DelayedQueue::<Bytes>::MAX_PAGE),
            )
            .await?;
        let last = page.len() < DelayedQueue::<Bytes>::MAX_PAGE;
        for element in page {
            // A decode error says what wrote the bytes when another codec did
            // (Kryo: "use --codec kryo").
            let mut class = None;
            let (payload, label) = match element.value {
                Ok(payload) => {
                    class = codec.unread_class(&payload);
                    let (decoded, label) = codec.decode_detected(&payload);
                    let decoded = decoded.map_err(|source| {
                        let hint = codec.diagnose(&payload);
                        let error = DecodeError::new(codec.name(), payload, source);
                        let error = match hint {
                            Some(hint) => error.with_hint(hint),
                            None => error,
                        };
                        format!("undecodable with --codec {}: {error}", codec.name())
                    });
                    (decoded, label)
                }
                Err(PendingError::Decode(e)) => (Err(e.to_string()), None),
                Err(PendingError::Malformed(m)) => (Err(m.to_string()), None),
            };
            rows.push(Row {
                due: element.due,
                format: element.format.map_or("malformed", |f| f.as_str()),
                id: element.id,
                payload,
                codec: label,
                class,
                raw: element.raw,
            });
        }
        if last {
            break;
        }
    }
    Ok(rows)
}

/// The payload of a packed element, or the element when it does not unpack.
fn payload_of(raw: &[u8]) -> &[u8] {
    delayq::format::unpack(raw).map_or(raw, |e| e.payload)
}

fn to_table(name: &str, status: &QueueStatus, rows: &[Row], offset: usize, now: SystemTime) -> String {
    let next = match status.next_due {
        Some(due) => format!("{} ({})", local_time(due), relative(due, now)),
        None => "-".into(),
    };
    let lag = status.lag_at(now);
    let name = output::escape(name);
    // Counts right-aligned among themselves, with thousands separators.
    let counts = [
        status.pending,
        status.ready,
        status.in_flight,
        status.dead_letters,
        status.quarantined,
        status.ids,
    ]
    .map(output::count);
    let w = counts.iter().map(|c| c.len()).max().unwrap_or(0);
    let [pending, ready, in_flight, dead, quarantined, ids] = counts;
    // Against the fleet-wide limit, when one is set (`delayq limits
    // --concurrency`), and the lapsed ones, which only a reaper returns.
    let in_flight = format!("{in_flight:>w$}{}", output::in_flight_notes(status));
    let mut out = format!(
        "queue         {name}\npending       {pending:>w$}\nready         {ready:>w$}\nin flight     {in_flight}\ndead letters  {dead:>w$}\nquarantined   {quarantined:>w$}\nnext due      {next}\nid index      {ids:>w$}\n"
    );
    if status.priority_pending + status.priority_ready > 0 {
        out.push_str(&format!(
            "priorities    {} pending and {} ready of these have a priority, a TTL or headers (delayq's consumers take them first; Java does not see them)\n",
            output::count(status.priority_pending),
            output::count(status.priority_ready),
        ));
    }
    if status.grouped_pending + status.grouped_ready > 0 {
        out.push_str(&format!(
            "groups        {} pending and {} ready of these have a group key (in order per key; only delayq's reliable consumers and workers take them: `delayq groups {name}`; Java does not see them)\n",
            output::count(status.grouped_pending),
            output::count(status.grouped_ready),
        ));
    }
    if status.ready > 0 {
        let why = match status.oldest_ready_age_at(now) {
            Some(_) => "the oldest ready value's wait since it fell due",
            None => "no transfer recorded when the oldest ready value fell due",
        };
        out.push_str(&format!(
            "oldest ready  {} ({why})\n",
            output::oldest_ready(status, now)
        ));
    }
    if status.paused {
        let since = status
            .paused_for_at(now)
            .map_or(String::new(), |age| format!(", for {}", output::compact(age)));
        out.push_str(&format!(
            "paused        yes{since} (delayq transfers and reliable consumers wait: `delayq resume`)\n"
        ));
    }
    if !lag.is_zero() {
        let why = if status.paused {
            "the queue is paused"
        } else {
            "is any process running the transfer?"
        };
        out.push_str(&format!("transfer lag  {} ({why})\n", output::compact(lag)));
    }
    if rows.is_empty() {
        if offset > 0 && status.pending > 0 {
            out.push_str(&format!(
                "\n(no pending element after the first {}; {} pending in all)\n",
                output::count(offset as u64),
                output::count(status.pending)
            ));
        }
        return out;
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            vec![
                local_time(row.due),
                relative(row.due, now),
                row.id.clone().unwrap_or_else(|| "-".into()),
                row.format.to_owned(),
                row.codec.clone().unwrap_or_default(),
                match &row.payload {
                    // Not a Java object's fields unread (`auto` shows those as hex text).
                    Ok(text) if row.class.is_none() => preview(text, 60),
                    // The payload's bytes (inside the packed element), or
                    // the element's when it does not unpack.
                    _ => output::undecoded(row.class.as_deref(), payload_of(&row.raw), 40),
                },
            ]
        })
        .collect();
    out.push('\n');
    let mut cells = cells;
    let mut headers = vec!["DUE", "WHEN", "ID", "FORMAT", "CODEC", "PAYLOAD"];
    if rows.iter().all(|row| row.codec.is_none()) {
        // Only `--codec auto` names each payload's codec.
        headers.remove(4);
        cells.iter_mut().for_each(|row| drop(row.remove(4)));
    }
    out.push_str(&output::table(&headers, &cells));
    out.push('\n');
    // Which ones these are, and how to see the next ones (as many again).
    let next = offset as u64 + rows.len() as u64;
    if (rows.len() as u64) < status.pending {
        let more = if next < status.pending {
            let again = (rows.len() as u64).min(status.pending - next);
            format!("; --offset {next} shows the next {}", output::count(again))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "({} of {} pending shown, #{}–#{}{more})\n",
            output::count(rows.len() as u64),
            output::count(status.pending),
            output::count(offset as u64 + 1),
            output::count(next),
        ));
    }
    out
}

fn to_json(
    name: &str,
    status: &QueueStatus,
    offset: usize,
    rows: &[Row],
    schedules: &[ScheduleInfo],
    now: SystemTime,
) -> serde_json::Value {
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
                "codec": row.codec,
                "id": row.id,
                "payload": row.payload.as_ref().ok(),
                "error": row.payload.as_ref().err(),
                "payload_hex": hex(payload_of(&row.raw)),
                "raw_hex": hex(&row.raw),
            })
        })
        .collect();
    fields.insert("offset".into(), json!(offset));
    fields.insert("elements".into(), json!(elements));
    let schedules: Vec<_> = schedules
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "spec": s.spec.to_string(),
                "next": s.next.map(utc_time),
                "paused": s.paused,
                "fired": s.fired,
                "missed": s.missed,
            })
        })
        .collect();
    fields.insert("schedules".into(), json!(schedules));
    serde_json::Value::Object(fields)
}

/// The queue's recurring schedules, under the pending elements (nothing when none).
fn schedules_table(schedules: &[ScheduleInfo], now: SystemTime) -> String {
    if schedules.is_empty() {
        return String::new();
    }
    let cells: Vec<Vec<String>> = schedules
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                output::schedule_spec(&s.spec),
                s.next.map_or("-".into(), |next| relative(next, now)),
                if s.paused { "paused".into() } else { "-".into() },
                output::count(s.fired),
            ]
        })
        .collect();
    format!(
        "\nschedules\n{}\n",
        output::table_aligned(&["NAME", "SPEC", "NEXT", "STATE", "FIRED"], &["FIRED"], &cells)
    )
}
