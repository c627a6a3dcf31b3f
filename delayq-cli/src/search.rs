//! `delayq search`: values by id or by text across queues, a bounded number
//! looked at per run, with the cursor to go on from.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::SystemTime;

use delayq::search::{Search, SearchCursor, SearchPage, ValueState};
use delayq::Codec;
use serde_json::json;

use crate::args::{Cli, OutputFormat, SearchArgs};
use crate::output::{self, preview};
use crate::text_codec::TextCodec;

/// The widest a result line gets, in terminal cells.
const MAX_WIDTH: usize = 100;

pub(crate) async fn run(cli: &Cli, args: &SearchArgs) -> delayq::Result<ExitCode> {
    let from: Option<SearchCursor> = args.from.as_deref().map(str::parse).transpose()?;
    let codec =
        Arc::new(TextCodec::reading(args.codec, args.kryo_schema.as_deref()).map_err(delayq::Error::InvalidArgument)?);
    let states: Vec<ValueState> = args.states.iter().map(|&s| s.into()).collect();
    let mut search = Search::new(&args.text)
        .states(&states)
        .budget(args.budget)
        .limit(args.limit)
        // What `inspect` shows; bytes no codec reads are matched as UTF-8.
        .render(move |_, payload| {
            Codec::<String>::decode_detected(&*codec, payload)
                .0
                .unwrap_or_else(|_| String::from_utf8_lossy(payload).into_owned())
        });
    if !args.queues.is_empty() {
        search = search.queues(args.queues.iter().cloned());
    }
    let client = crate::connect(cli).await?;
    let page = client.search(&search, from.as_ref()).await;
    client.shutdown().await;
    let page = page?;
    let now = SystemTime::now();
    match args.format {
        OutputFormat::Json => println!("{}", output::json(&to_json(&page, now))),
        OutputFormat::Table => {
            if !page.matches.is_empty() {
                println!("{}", table(&page, now));
            }
            println!("{}", summary(args, &page));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The matches: where each is, its id, and its payload cut to the line.
fn table(page: &SearchPage, now: SystemTime) -> String {
    let rows: Vec<Vec<String>> = page
        .matches
        .iter()
        .map(|m| {
            let place = match (m.state, m.due) {
                (ValueState::Pending, Some(due)) => {
                    format!(
                        "#{} due {}",
                        output::count(m.position as u64 + 1),
                        output::relative(due, now)
                    )
                }
                _ => format!("#{}", output::count(m.position as u64 + 1)),
            };
            vec![
                preview(&m.queue, 24),
                m.state.as_str().to_owned(),
                place,
                preview(m.id.as_deref().unwrap_or("-"), 16),
                m.text.clone(),
            ]
        })
        .collect();
    let widest = |i: usize, header: &str| {
        rows.iter()
            .map(|row| output::width(&row[i]))
            .chain([output::width(header)])
            .max()
            .unwrap_or_default()
    };
    let headers = ["QUEUE", "STATE", "WHERE", "ID", "VALUE"];
    let used: usize = (0..4).map(|i| widest(i, headers[i]) + 2).sum();
    let room = MAX_WIDTH.saturating_sub(used).max(12);
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|mut row| {
            row[4] = preview(&row[4], room);
            row
        })
        .collect();
    output::table(&headers, &rows)
}

/// What the run found and how far it looked: "3 matches; searched 10,000
/// of 200,000 values; continue with ...".
fn summary(args: &SearchArgs, page: &SearchPage) -> String {
    let found = match page.matches.len() {
        0 => format!("no match for {:?}", args.text),
        1 => "1 match".to_owned(),
        n => format!("{n} matches"),
    };
    let looked = format!(
        "searched {} of {} values",
        output::count(page.searched),
        output::count(page.total)
    );
    let line = match &page.next {
        None => format!("{found}; {looked} (all)"),
        Some(next) => format!(
            "{found}; {looked}; continue with --from {}",
            shell_quote(&next.to_string())
        ),
    };
    output::escape(&line).into_owned()
}

/// `text` as one shell word: in single quotes unless it needs none.
fn shell_quote(text: &str) -> String {
    if text.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:/{}".contains(c)) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

fn to_json(page: &SearchPage, now: SystemTime) -> serde_json::Value {
    json!({
        "matches": page.matches.iter().map(|m| json!({
            "queue": m.queue,
            "state": m.state.as_str(),
            "position": m.position,
            "id": m.id,
            "by_id": m.by_id,
            "value": m.text,
            "due": m.due.map(output::utc_time),
            "due_in_ms": m.due.map(|d| output::millis_from(d, now)),
            "reason": m.reason,
        })).collect::<Vec<_>>(),
        "searched": page.searched,
        "total": page.total,
        "complete": page.next.is_none(),
        "next": page.next.as_ref().map(ToString::to_string),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn cursors_are_quoted_for_the_shell_only_when_they_need_it() {
        assert_eq!(super::shell_quote("6:orders.ready.3.100"), "6:orders.ready.3.100");
        assert_eq!(super::shell_quote("4:it's.dead.0.9"), r"'4:it'\''s.dead.0.9'");
    }
}
