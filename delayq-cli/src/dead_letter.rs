//! `delayq dead-letter list|requeue|delete`.

use std::process::ExitCode;
use std::time::SystemTime;

use bytes::Bytes;
use delayq::dead_letter::{DeadLetter, DeadLetterKey};
use delayq::{Codec, Headers, ReliableQueue};
use serde_json::{json, Value};

use crate::args::{
    Cli, CodecArg, CodecKind, DeadLetterDeleteArgs, DeadLetterListArgs, DeadLetterRequeueArgs, OutputFormat,
};
use crate::output::{self, hex, preview};
use crate::progress;
use crate::text_codec::TextCodec;

/// Dead letters read per call while listing.
const READ_STEP: usize = 1_000;
/// Most dead letters one exact requeue or delete names (the library's limit).
const EXACT_STEP: usize = 100;
/// Most reasons counted by `--group-by-reason`.
const GROUPED: usize = 100_000;

/// One dead letter as the CLI shows it.
struct Shown {
    /// Its position, 1 the oldest (`list`'s #, `--index`).
    number: u64,
    value: Result<String, String>,
    raw: Bytes,
    codec: Option<String>,
    /// The Java class of a payload whose fields were not read.
    class: Option<String>,
    reason: Option<String>,
    at: Option<SystemTime>,
    /// The headers it was offered with (empty for none).
    headers: Headers,
    key: DeadLetterKey,
}

impl Shown {
    fn of(codec: &TextCodec, dead: DeadLetter<String>) -> Shown {
        Shown {
            number: dead.key.index() as u64 + 1,
            value: codec.decode(&dead.raw).map_err(|e| e.to_string()),
            codec: codec.detected_codec(&dead.raw),
            class: codec.unread_class(&dead.raw),
            raw: dead.raw,
            reason: dead.reason,
            at: dead.at,
            headers: dead.headers,
            key: dead.key,
        }
    }

    fn preview(&self, max: usize) -> String {
        match &self.value {
            // Not a Java object's fields unread (`auto` shows those as hex text).
            Ok(text) if self.class.is_none() => preview(text, max),
            _ => output::undecoded(self.class.as_deref(), &self.raw, max.saturating_sub(40).max(20)),
        }
    }

    /// When it died, with the zone, and how long ago (as `inspect` shows due times).
    fn died(&self, now: SystemTime) -> String {
        self.at.map_or("-".into(), |at| {
            format!("{} ({})", output::local_time(at), output::relative(at, now))
        })
    }

    fn json(&self) -> Value {
        json!({
            "number": self.number, "value": self.value.as_ref().ok(), "error": self.value.as_ref().err(),
            "codec": self.codec, "reason": self.reason, "died_at": self.at.map(output::utc_time),
            "raw_hex": hex(&self.raw), "key": self.key.to_string(),
            "headers": output::headers_json(&self.headers),
        })
    }

    /// Its headers as the tables show them (`[k=v, k2=v2]`, cut at `max`
    /// cells), or nothing for none.
    fn headers_preview(&self, max: usize) -> Option<String> {
        output::headers_text(&self.headers).map(|text| preview(&text, max))
    }
}

fn queue_of(client: &delayq::Client, name: &str) -> delayq::Result<ReliableQueue<String>> {
    Ok(client
        .reliable_queue(name, TextCodec::new(CodecKind::Bytes))?
        .without_transfer())
}

fn codec_of(codec: CodecArg, schema: Option<&std::path::Path>) -> delayq::Result<TextCodec> {
    TextCodec::reading(codec, schema).map_err(delayq::Error::InvalidArgument)
}

pub(crate) async fn list(cli: &Cli, args: &DeadLetterListArgs) -> delayq::Result<ExitCode> {
    let codec = codec_of(args.codec, args.kryo_schema.as_deref())?;
    let client = crate::connect(cli).await?;
    // Read-only: the status script (which types-checks the keys) counts them.
    let look = crate::look(&client, &args.queue)?;
    let read = async {
        let total = look.status().await?.dead_letters;
        let queue = queue_of(&client, &args.queue)?;
        if args.group_by_reason {
            return Ok(Listed::Grouped(queue.dead_letter_reasons(GROUPED).await?));
        }
        let filter = Filter::of(args.reason.as_deref(), args.shape.as_deref());
        let (mut found, mut at) = (Vec::new(), args.offset);
        while found.len() < args.limit {
            let want = match filter {
                Some(_) => READ_STEP,
                None => (args.limit - found.len()).min(READ_STEP),
            };
            let page = queue.dead_letter_page(at, want).await?;
            let read = page.len();
            at += read;
            found.extend(
                page.into_iter()
                    .filter(|dead| (filter.as_ref()).is_none_or(|filter| filter.takes(dead.reason.as_deref()))),
            );
            if read < want {
                break;
            }
        }
        found.truncate(args.limit);
        Ok::<_, delayq::Error>(Listed::Values {
            total,
            looked: at - args.offset,
            values: found.into_iter().map(|dead| Shown::of(&codec, dead)).collect(),
        })
    };
    let listed = read.await;
    drop(look);
    client.shutdown().await;
    let now = SystemTime::now();
    match listed? {
        Listed::Grouped(counted) => print_groups(args, &counted, now),
        Listed::Values { total, looked, values } => print_values(args, total, looked, &values, now),
    }
    Ok(ExitCode::SUCCESS)
}

enum Listed {
    Grouped(delayq::dead_letter::DeadLetterReasons),
    Values {
        total: u64,
        looked: usize,
        values: Vec<Shown>,
    },
}

fn print_values(args: &DeadLetterListArgs, total: u64, looked: usize, values: &[Shown], now: SystemTime) {
    match args.format {
        OutputFormat::Json => {
            let shown: Vec<Value> = values.iter().map(Shown::json).collect();
            let mut doc = json!({"queue": args.queue, "total": total, "offset": args.offset, "values": shown});
            if let Some(reason) = &args.reason {
                doc["reason"] = json!(reason);
                doc["looked"] = json!(looked);
            }
            if let Some(shape) = &args.shape {
                doc["shape"] = json!(shape);
                doc["looked"] = json!(looked);
            }
            println!("{}", output::json(&doc));
        }
        OutputFormat::Table => {
            let with_codec = values.iter().any(|v| v.codec.is_some());
            // A HEADERS column only when a value listed has headers.
            let with_headers = values.iter().any(|v| !v.headers.is_empty());
            let rows: Vec<Vec<String>> = values
                .iter()
                .map(|v| {
                    let reason = v.reason.as_deref().map_or("-".into(), |r| preview(r, 80));
                    let mut row = vec![output::count(v.number)];
                    if with_codec {
                        row.push(v.codec.clone().unwrap_or_default());
                    }
                    row.push(v.preview(100));
                    if with_headers {
                        row.push(v.headers_preview(60).unwrap_or_else(|| "-".into()));
                    }
                    row.extend([v.died(now), reason]);
                    row
                })
                .collect();
            if !rows.is_empty() {
                let mut headers = vec!["#"];
                if with_codec {
                    headers.push("CODEC");
                }
                headers.push("VALUE");
                if with_headers {
                    headers.push("HEADERS");
                }
                headers.extend(["DIED", "REASON"]);
                println!("{}", output::table_aligned(&headers, &["#"], &rows));
            }
            let name = output::escape(&args.queue);
            match Filter::of(args.reason.as_deref(), args.shape.as_deref()) {
                Some(filter) => println!(
                    "({} {}, of {} looked at from #{}; {} dead-lettered value(s) of `{name}` in all)",
                    output::count(rows.len() as u64),
                    filter.said(),
                    output::count(looked as u64),
                    output::count(args.offset as u64 + 1),
                    output::count(total),
                ),
                None => {
                    // Which numbers, whenever not all are shown (the last page too).
                    let next = args.offset as u64 + rows.len() as u64;
                    let which = if rows.is_empty() || rows.len() as u64 == total {
                        String::new()
                    } else if next < total {
                        format!(", #{}–#{}; --offset {next} for more", args.offset + 1, next)
                    } else {
                        format!(", #{}–#{}", args.offset + 1, next)
                    };
                    println!(
                        "({} of {} dead-lettered value(s) of `{name}` shown{which})",
                        output::count(rows.len() as u64),
                        output::count(total),
                    );
                }
            }
        }
    }
}

/// One row per shape of reason ([`delayq::dead_letter::reason_shape`]):
/// reasons that differ only by numbers or ids are one kind of failure, and
/// `--shape ROW` acts on exactly that row.
fn print_groups(args: &DeadLetterListArgs, counted: &delayq::dead_letter::DeadLetterReasons, now: SystemTime) {
    let shapes = counted.by_shape();
    match args.format {
        OutputFormat::Json => {
            let groups: Vec<Value> = shapes
                .iter()
                .map(|g| {
                    json!({
                        "shape": g.shape, "count": g.count, "reasons": g.reasons, "example": g.example,
                        // The reason itself, where the row has one.
                        "reason": if g.reasons == 1 { g.example.clone() } else { None },
                        "last_died_at": g.last_at.map(output::utc_time),
                    })
                })
                .collect();
            println!(
                "{}",
                output::json(
                    &json!({"queue": args.queue, "total": counted.total, "looked": counted.looked, "groups": groups})
                )
            );
        }
        OutputFormat::Table => {
            let rows: Vec<Vec<String>> = shapes
                .iter()
                .map(|g| {
                    let example = match (&g.example, g.reasons) {
                        (Some(example), 1) if g.shape.as_ref() == Some(example) => String::new(),
                        (Some(example), 1) => preview(example, 40),
                        (Some(example), n) => format!("{n} reasons, e.g. {}", preview(example, 30)),
                        (None, _) => String::new(),
                    };
                    vec![
                        output::count(g.count as u64),
                        g.shape.as_deref().map_or("(not recorded)".into(), |r| preview(r, 60)),
                        example,
                        g.last_at.map_or("-".into(), |at| output::relative(at, now)),
                    ]
                })
                .collect();
            if !rows.is_empty() {
                println!(
                    "{}",
                    output::table_aligned(&["COUNT", "REASON", "AS RECORDED", "LAST DIED"], &["COUNT"], &rows)
                );
            }
            let name = output::escape(&args.queue);
            if counted.looked < counted.total {
                println!(
                    "(counted over the {} most recent of {} dead-lettered value(s) of `{name}`)",
                    output::count(counted.looked as u64),
                    output::count(counted.total as u64)
                );
            } else {
                println!(
                    "(all {} dead-lettered value(s) of `{name}` counted)",
                    output::count(counted.total as u64)
                );
            }
            if !rows.is_empty() {
                println!(
                    "(reasons that differ only by numbers, hex ids or UUIDs are one row, with <n>, <hex>, <uuid> in their place; \
                     list, requeue or delete a row's dead letters with --shape 'REASON')"
                );
            }
        }
    }
}

/// The dead letters at the 1-based `numbers`, read now (each exactly once).
async fn at_numbers(queue: &ReliableQueue<String>, codec: &TextCodec, numbers: &[u64]) -> delayq::Result<Vec<Shown>> {
    let mut numbers = numbers.to_vec();
    numbers.sort_unstable();
    numbers.dedup();
    if numbers.len() > EXACT_STEP {
        return Err(delayq::Error::InvalidArgument(format!(
            "{} positions given; at most {EXACT_STEP} at a time",
            numbers.len()
        )));
    }
    let mut shown = Vec::with_capacity(numbers.len());
    for number in numbers {
        let index = usize::try_from(number - 1).unwrap_or(usize::MAX);
        match queue.dead_letter_page(index, 1).await?.pop() {
            Some(dead) => shown.push(Shown::of(codec, dead)),
            None => {
                let total = queue.dead_letter_len().await?;
                return Err(delayq::Error::InvalidArgument(format!(
                    "no dead letter #{number}: `{}` has {total}",
                    output::escape(queue.name())
                )));
            }
        }
    }
    Ok(shown)
}

/// Prints what an action did (or would do) to `values`.
fn report(format: OutputFormat, queue: &str, verb: &str, values: &[Shown], extra: Value, headline: String) {
    match format {
        OutputFormat::Json => {
            let shown: Vec<Value> = values.iter().map(Shown::json).collect();
            let mut doc = json!({"queue": queue, verb: values.len(), "values": shown});
            if let (Some(doc), Some(extra)) = (doc.as_object_mut(), extra.as_object()) {
                doc.extend(extra.clone());
            }
            println!("{}", output::json(&doc));
        }
        OutputFormat::Table => {
            println!("{headline}");
            const SHOWN: usize = 1_000;
            for v in values.iter().take(SHOWN) {
                let reason = v
                    .reason
                    .as_deref()
                    .map_or(String::new(), |r| format!("  ({})", preview(r, 60)));
                let headers = v.headers_preview(60).map_or(String::new(), |h| format!(" {h}"));
                println!("  #{}  {}{headers}{reason}", v.number, v.preview(100));
            }
            if values.len() > SHOWN {
                println!("  … and {} more (--format json lists all)", values.len() - SHOWN);
            }
        }
    }
}

pub(crate) async fn requeue(cli: &Cli, args: &DeadLetterRequeueArgs) -> delayq::Result<ExitCode> {
    if let Some(filter) = Filter::of(args.reason.as_deref(), args.shape.as_deref()) {
        return by_reason(cli, &args.queue, filter, args.expect, Verb::Requeue, args.format, false).await;
    }
    let codec = codec_of(args.codec, None)?;
    let client = crate::connect(cli).await?;
    let queue = queue_of(&client, &args.queue)?;
    let moved = if args.index.is_empty() {
        requeue_head(&queue, &codec, args).await
    } else {
        async {
            let chosen = at_numbers(&queue, &codec, &args.index).await?;
            let keys: Vec<DeadLetterKey> = chosen.iter().map(|v| v.key.clone()).collect();
            queue.requeue_dead_letters_exact(&keys).await?;
            Ok(chosen)
        }
        .await
    };
    let left = queue.dead_letter_len().await;
    drop(queue);
    client.shutdown().await;
    let (moved, left) = (moved?, left? as u64);
    let name = output::escape(&args.queue);
    let headline = format!(
        "requeued {} dead-lettered value(s) to `{name}` ({left} left in the dead-letter list){}",
        moved.len(),
        if moved.is_empty() { "" } else { ":" }
    );
    report(
        args.format,
        &args.queue,
        "requeued",
        &moved,
        json!({"left": left}),
        headline,
    );
    Ok(ExitCode::SUCCESS)
}

/// Requeues from the head, each step naming the values it read so that
/// what is reported is what moved: a step whose values another client took
/// first reads again.
async fn requeue_head(
    queue: &ReliableQueue<String>,
    codec: &TextCodec,
    args: &DeadLetterRequeueArgs,
) -> delayq::Result<Vec<Shown>> {
    let total = queue.dead_letter_len().await? as u64;
    let goal = args.max.map_or(total, |max| total.min(max as u64));
    let bar = progress::bar(goal, "requeueing");
    let step = args.batch.clamp(1, EXACT_STEP);
    let mut moved: Vec<Shown> = Vec::new();
    let mut raced = 0;
    while (moved.len() as u64) < goal {
        let want = (goal - moved.len() as u64).min(step as u64) as usize;
        let page = queue.dead_letter_page(0, want).await?;
        if page.is_empty() {
            break;
        }
        let keys: Vec<DeadLetterKey> = page.iter().map(|dead| dead.key.clone()).collect();
        match queue.requeue_dead_letters_exact(&keys).await {
            Ok(_) => {
                raced = 0;
                bar.inc(page.len() as u64);
                moved.extend(page.into_iter().map(|dead| Shown::of(codec, dead)));
            }
            // Another client requeued or deleted some of them first.
            Err(delayq::Error::DeadLetterChanged { .. }) if raced < 100 => raced += 1,
            Err(e) => return Err(e),
        }
    }
    bar.finish_and_clear();
    Ok(moved)
}

pub(crate) async fn delete(cli: &Cli, args: &DeadLetterDeleteArgs) -> delayq::Result<ExitCode> {
    if let Some(filter) = Filter::of(args.reason.as_deref(), args.shape.as_deref()) {
        let expect = if args.dry_run { None } else { args.expect };
        return by_reason(
            cli,
            &args.queue,
            filter,
            expect,
            Verb::Delete,
            args.format,
            args.dry_run,
        )
        .await;
    }
    let codec = codec_of(args.codec, None)?;
    let client = crate::connect(cli).await?;
    let queue = queue_of(&client, &args.queue)?;
    let name = output::escape(&args.queue).into_owned();
    let done = async {
        if args.all {
            let total = queue.dead_letter_len().await?;
            let mut deleted = 0;
            if !args.dry_run {
                // At most what was there at the start: values dead-lettered
                // meanwhile stay.
                while deleted < total {
                    let n = queue.remove_dead_letters((total - deleted).min(READ_STEP)).await?;
                    if n == 0 {
                        break;
                    }
                    deleted += n;
                }
            }
            return Ok::<_, delayq::Error>(Deleted::All { total, deleted });
        }
        let chosen = at_numbers(&queue, &codec, &args.index).await?;
        if !args.dry_run {
            let keys: Vec<DeadLetterKey> = chosen.iter().map(|v| v.key.clone()).collect();
            queue.delete_dead_letters_exact(&keys).await?;
        }
        Ok(Deleted::Chosen(chosen))
    }
    .await;
    drop(queue);
    client.shutdown().await;
    match done? {
        Deleted::All { total, deleted } => match args.format {
            OutputFormat::Json => println!(
                "{}",
                output::json(
                    &json!({"queue": args.queue, "dry_run": args.dry_run, "deleted": deleted, "would_delete": args.dry_run.then_some(total)})
                )
            ),
            OutputFormat::Table if args.dry_run => {
                println!("would delete {total} dead-lettered value(s) of `{name}` (dry run: nothing deleted)")
            }
            OutputFormat::Table => println!("deleted {deleted} dead-lettered value(s) of `{name}`"),
        },
        Deleted::Chosen(chosen) => {
            let headline = if args.dry_run {
                format!(
                    "would delete {} dead-lettered value(s) of `{name}` (dry run: nothing deleted):",
                    chosen.len()
                )
            } else {
                format!("deleted {} dead-lettered value(s) of `{name}`:", chosen.len())
            };
            let verb = if args.dry_run { "would_delete" } else { "deleted" };
            report(
                args.format,
                &args.queue,
                verb,
                &chosen,
                json!({"dry_run": args.dry_run}),
                headline,
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

enum Deleted {
    All { total: usize, deleted: usize },
    Chosen(Vec<Shown>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Requeue,
    Delete,
}

/// Which dead letters `--reason` or `--shape` picks by their reason.
enum Filter<'a> {
    /// The reason contains this text (lowercased), any case.
    Contains(&'a str, String),
    /// The reason has this shape ([`delayq::dead_letter::reason_shape`]).
    Shape(&'a str),
}

impl<'a> Filter<'a> {
    fn of(reason: Option<&'a str>, shape: Option<&'a str>) -> Option<Filter<'a>> {
        match (reason, shape) {
            (Some(reason), _) => Some(Filter::Contains(reason, reason.to_lowercase())),
            (None, Some(shape)) => Some(Filter::Shape(shape)),
            (None, None) => None,
        }
    }

    fn takes(&self, reason: Option<&str>) -> bool {
        reason.is_some_and(|r| match self {
            Filter::Contains(_, needle) => r.to_lowercase().contains(needle),
            Filter::Shape(shape) => delayq::dead_letter::reason_shape(r) == *shape,
        })
    }

    /// "whose reason contains \"...\"" or "whose reason looks like \"...\"".
    fn said(&self) -> String {
        match self {
            Filter::Contains(text, _) => format!("whose reason contains \"{}\"", output::escape(text)),
            Filter::Shape(shape) => format!("whose reason looks like \"{}\"", output::escape(shape)),
        }
    }

    fn json(&self) -> (&'static str, &'a str) {
        match self {
            Filter::Contains(text, _) => ("reason", text),
            Filter::Shape(shape) => ("shape", shape),
        }
    }
}

/// `requeue --reason|--shape` and `delete --reason|--shape`: what `list`
/// shows with the same filter (among the most recent), counted first.
/// Without `expect` it says how many match and does nothing (exit 1:
/// nothing was done, unless it was a dry run); with it, exactly those
/// (matched again as they are read for the action), or nothing (an error)
/// if that many no longer match: one more dead-lettered meanwhile stops it.
#[allow(clippy::too_many_arguments)] // each says what the command line gave
async fn by_reason(
    cli: &Cli,
    name: &str,
    filter: Filter<'_>,
    expect: Option<usize>,
    verb: Verb,
    format: OutputFormat,
    dry_run: bool,
) -> delayq::Result<ExitCode> {
    let matches = |r: Option<&str>| filter.takes(r);
    let client = crate::connect(cli).await?;
    let queue = queue_of(&client, name)?;
    let done = async {
        match expect {
            None => Ok(Err(queue.dead_letter_keys_where(GROUPED, matches).await?.len())),
            Some(n) if verb == Verb::Requeue => {
                Ok(Ok(queue.requeue_dead_letters_confirmed(GROUPED, n, matches).await?))
            }
            Some(n) => Ok::<_, delayq::Error>(Ok(queue.delete_dead_letters_confirmed(GROUPED, n, matches).await?)),
        }
    }
    .await;
    drop(queue);
    client.shutdown().await;
    let queue_name = output::escape(name);
    let (key, text) = filter.json();
    let (word, field) = match verb {
        Verb::Requeue => ("requeue", "requeued"),
        Verb::Delete => ("delete", "deleted"),
    };
    match done? {
        Err(matching) => {
            match format {
                OutputFormat::Json => println!(
                    "{}",
                    output::json(&json!({"queue": name, key: text, "matching": matching, field: 0}))
                ),
                OutputFormat::Table => println!(
                    "{} dead-lettered value(s) of `{queue_name}` {} \
                     (among the {} most recent); nothing was done: run again with --expect {matching} to {word} them",
                    output::count(matching as u64),
                    filter.said(),
                    output::count(GROUPED as u64),
                ),
            }
            Ok(if dry_run { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Ok(outcome) => {
            match format {
                OutputFormat::Json => println!(
                    "{}",
                    output::json(&json!({"queue": name, key: text, field: outcome.done, "changed": outcome.changed}))
                ),
                OutputFormat::Table => {
                    println!(
                        "{field} {} dead-lettered value(s) of `{queue_name}` {}",
                        outcome.done,
                        filter.said()
                    );
                    if outcome.changed > 0 {
                        println!(
                            "{} changed meanwhile (requeued or deleted by someone else) and were left: list them again",
                            outcome.changed
                        );
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
