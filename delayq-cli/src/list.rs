//! `delayq list`, and the check that keeps a misspelt queue name from
//! passing silently: a command that names a queue no key, registry entry or
//! schedule knows is refused with the closest name there is.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::SystemTime;

use delayq::attention::{name_matches, untaken, Attention, QueueOrder, Signals};
use delayq::QueueStatus;
use serde_json::json;

use crate::args::{Cli, Command, DeadLetterCommand, ListArgs, OutputFormat, ScheduleCommand};
use crate::output::{self, escape};

/// What a command on a database without queues is told.
pub(crate) const NO_QUEUES: &str = "the database holds no delayq queues (is --url the right server and database?)";

/// The widest a `delayq list` table gets, in terminal cells: long names
/// and long reasons are cut (with an ellipsis) to fit.
const MAX_WIDTH: usize = 100;

/// One queue as `delayq list` ranks it.
struct Listed {
    name: String,
    status: QueueStatus,
    schedules: usize,
    signals: Signals,
    attention: Attention,
}

/// `delayq list`: every queue's counts, filtered by name and sorted by the
/// library's rule ([`delayq::attention`]), as the dashboard's overview.
pub(crate) async fn run(cli: &Cli, args: &ListArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let listed = read(&client, args).await;
    let layouts = client.partitioned_queues().await;
    client.shutdown().await;
    let (listed, total) = listed?;
    let layouts = layouts?;
    // Each partition listed: (its logical queue, its index, the count).
    let mut partition_of: HashMap<&str, (&str, usize, usize)> = HashMap::new();
    for layout in &layouts {
        for (i, name) in layout.all_names().enumerate() {
            partition_of.insert(name, (layout.queue(), i, layout.count()));
        }
    }
    let now = SystemTime::now();
    let partitioned = partitioned_lines(&layouts, &listed, args);
    if total == 0 && layouts.is_empty() {
        if args.format == OutputFormat::Json {
            println!("{}", output::json(&json!({"at": output::utc_time(now), "queues": []})));
        }
        eprintln!("delayq: {NO_QUEUES}");
        return Ok(ExitCode::SUCCESS);
    }
    match args.format {
        OutputFormat::Json => println!(
            "{}",
            output::json(&json!({
                "at": output::utc_time(now),
                "sort": QueueOrder::from(args.sort).as_str(),
                "matching": listed.len(),
                "queues": listed.iter().map(|q| {
                    let mut fields = output::status_json(&q.name, &q.status, now);
                    fields.insert("schedules".into(), json!(q.schedules));
                    fields.insert("untaken".into(), json!(q.signals.untaken()));
                    fields.insert("attention".into(), json!(q.attention.reasons()));
                    if let Some((queue, index, count)) = partition_of.get(q.name.as_str()) {
                        // Past the count: a retired partition (still read until retired for good).
                        fields.insert(
                            "partition_of".into(),
                            json!({"queue": queue, "index": index, "count": count, "retired": index >= count}),
                        );
                    }
                    fields
                }).collect::<Vec<_>>(),
                "partitioned": partitioned.iter().map(|p| json!({
                    "queue": p.queue, "count": p.count, "listed": p.listed, "ready": p.ready, "pending": p.pending,
                })).collect::<Vec<_>>(),
            }))
        ),
        OutputFormat::Table if listed.is_empty() && partitioned.is_empty() => {
            let what = if args.attention_only {
                "needs attention"
            } else {
                "matches"
            };
            println!("no queue {what} (of {total})");
        }
        OutputFormat::Table => {
            if !listed.is_empty() {
                println!("{}", table(&listed, now));
            }
            for p in &partitioned {
                println!(
                    "partitioned queue {}: {} partitions ({} listed above), ready {}, pending {} \
                     (`delayq partition show {}`)",
                    escape(&p.queue),
                    p.count,
                    p.listed,
                    output::count(p.ready),
                    output::count(p.pending),
                    escape(&p.queue)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A partitioned queue some of whose partitions are listed, with their sums.
struct PartitionedLine {
    queue: String,
    count: usize,
    listed: usize,
    ready: u64,
    pending: u64,
}

/// One line per partitioned queue with a partition among `listed`, or
/// whose name matches the filter (a new one's partitions have no keys yet,
/// so none is listed: it showed nowhere): the listed partitions' counts
/// added up, so the logical queue is read at a glance while each partition
/// keeps its own row.
fn partitioned_lines(layouts: &[delayq::PartitionLayout], listed: &[Listed], args: &ListArgs) -> Vec<PartitionedLine> {
    let filter = args.filter.as_deref().unwrap_or_default();
    (layouts.iter())
        .filter_map(|layout| {
            let parts: Vec<&Listed> = listed
                .iter()
                .filter(|q| layout.all_names().any(|n| *n == q.name))
                .collect();
            let named = !args.attention_only && name_matches(layout.queue(), filter);
            (!parts.is_empty() || named).then(|| PartitionedLine {
                queue: layout.queue().to_owned(),
                count: layout.count(),
                listed: parts.len(),
                ready: parts.iter().map(|q| q.status.ready).sum(),
                pending: parts.iter().map(|q| q.status.pending).sum(),
            })
        })
        .collect()
}

/// The queues `args` asks for, ranked, and how many queues there are.
async fn read(client: &delayq::Client, args: &ListArgs) -> delayq::Result<(Vec<Listed>, usize)> {
    let names = all_queues(client).await?;
    let total = names.len();
    let filter = args.filter.as_deref().unwrap_or_default();
    let mut listed = Vec::new();
    // Queues with ready values and no live worker: whether anyone takes
    // them shows only between two reads, as the dashboard's samples do.
    let mut watched = Vec::new();
    let bound = SystemTime::now() + args.watch_ready;
    for name in names.into_iter().filter(|name| name_matches(name, filter)) {
        let queue = crate::look(client, &name)?;
        let status = queue.status().await?;
        let keys = delayq::QueueKeys::new(&name)?;
        let schedules = client.schedules(&keys)?;
        let count = schedules.list().await?.len();
        let unrun = count > 0 && schedules.runners().await?.is_empty();
        let live = client.workers(&keys).await?.iter().filter(|w| !w.silent).count();
        if !args.watch_ready.is_zero() && !status.paused && status.ready > 0 && live == 0 {
            let due_by_bound = queue.count_due_by(&[bound]).await?[0];
            watched.push((listed.len(), queue, due_by_bound, live));
        }
        listed.push(Listed {
            name,
            status,
            schedules: count,
            signals: Signals::new().with_unrun_schedules(unrun),
            attention: Attention::default(),
        });
    }
    if !watched.is_empty() {
        tokio::time::sleep_until(
            tokio::time::Instant::now() + bound.duration_since(SystemTime::now()).unwrap_or_default(),
        )
        .await;
        for (at, queue, due_before, live) in watched {
            let before = listed[at].status;
            let status = queue.status().await?;
            // Elements due by the bound that left the pending set since.
            let transferred = due_before.saturating_sub(queue.count_due_by(&[bound]).await?[0]);
            let delivered = (before.ready + transferred).saturating_sub(status.ready);
            let entry = &mut listed[at];
            entry.status = status;
            entry.signals = entry
                .signals
                .with_untaken(untaken(&status, before.ready, delivered, live));
        }
    }
    let now = SystemTime::now();
    for entry in &mut listed {
        entry.attention = Attention::of(Some(&entry.status), entry.signals, now);
    }
    if args.attention_only {
        listed.retain(|entry| entry.attention.needed());
    }
    let order = QueueOrder::from(args.sort);
    listed.sort_by_cached_key(|q| order.key(&q.name, Some(&q.status), q.signals, now));
    Ok((listed, total))
}

/// The table, at most [`MAX_WIDTH`] cells wide: the counts whole, the
/// queue's name and the reasons it needs attention cut to what is left.
fn table(listed: &[Listed], now: SystemTime) -> String {
    const HEADERS: [&str; 8] = [
        "QUEUE",
        "PENDING",
        "READY",
        "IN-FLIGHT",
        "DEAD",
        "LAG",
        "LATENCY",
        "ATTENTION",
    ];
    let mut rows: Vec<Vec<String>> = listed
        .iter()
        .map(|q| {
            let s = &q.status;
            let reasons = q.attention.reasons();
            vec![
                q.name.clone(),
                output::count(s.pending),
                output::count(s.ready),
                // Live against the concurrency limit, if any: `5/5`.
                output::in_flight_cell(s),
                output::count(s.dead_letters),
                match s.lag_at(now) {
                    lag if lag.is_zero() => "-".into(),
                    lag => output::compact(lag),
                },
                output::oldest_ready(s, now),
                match (reasons.is_empty(), s.paused) {
                    (false, _) => reasons.join(", "),
                    (true, true) => "paused".into(),
                    (true, false) => "-".into(),
                },
            ]
        })
        .collect();
    let widest = |i: usize| {
        rows.iter()
            .map(|row| output::width(&output::escape(&row[i])))
            .chain([output::width(HEADERS[i])])
            .max()
            .unwrap_or_default()
    };
    // Cells between the name and the reasons, and the two spaces before each column.
    let fixed: usize = (1..HEADERS.len() - 1).map(widest).sum::<usize>() + 2 * (HEADERS.len() - 1);
    let room = MAX_WIDTH.saturating_sub(fixed);
    let (name, reasons) = (widest(0), widest(HEADERS.len() - 1));
    let name_room = if name + reasons <= room {
        name
    } else {
        // The name first, but the reasons keep at least a third.
        name.min(room - reasons.min(room / 3)).max(8)
    };
    let reasons_room = room.saturating_sub(name_room).max(9);
    for row in &mut rows {
        row[0] = output::preview(&row[0], name_room);
        let last = row.len() - 1;
        row[last] = output::preview(&row[last], reasons_room);
    }
    output::table_aligned(
        &HEADERS,
        &["PENDING", "READY", "IN-FLIGHT", "DEAD", "LAG", "LATENCY"],
        &rows,
    )
}

/// Every queue on the server ([`delayq::Client::queues`]), sorted.
pub(crate) async fn all_queues(client: &delayq::Client) -> delayq::Result<Vec<String>> {
    client.queues().await
}

/// The queues `command` reads or writes, each with whether it may create
/// it (`pause --create`). Commands that make queues (offer, schedule add)
/// and processes that wait for them (transfer, schedule run) name none;
/// the schedule commands that name a schedule already say when a queue has
/// no such schedule, but `schedule list` of a misspelt queue would say only
/// "no schedules".
fn named(command: &Command) -> Vec<(&str, bool)> {
    fn one(queue: &str) -> Vec<(&str, bool)> {
        vec![(queue, false)]
    }
    match command {
        Command::Inspect(a) => one(&a.queue),
        Command::Stats(a) => a.queues.iter().map(|q| (q.as_str(), false)).collect(),
        Command::MoveDue(a) => a.queues.iter().map(|q| (q.as_str(), false)).collect(),
        Command::Purge(a) => one(&a.queue),
        Command::DeadLetter(DeadLetterCommand::List(a)) => one(&a.queue),
        Command::DeadLetter(DeadLetterCommand::Requeue(a)) => one(&a.queue),
        Command::Take(a) => one(&a.queue),
        Command::Migrate(a) => one(&a.queue),
        Command::Cancel(a) => one(&a.queue),
        Command::Reschedule(a) => one(&a.queue),
        Command::Get(a) => one(&a.queue),
        Command::Pause(a) => vec![(a.queue.as_str(), a.create)],
        Command::Resume(a) => one(&a.queue),
        Command::Limits(a) => vec![(a.queue.as_str(), a.create)],
        Command::Groups(a) => vec![(a.queue.as_str(), a.create)],
        Command::Schedule(ScheduleCommand::List(a)) => one(&a.queue),
        Command::Workers(a) => a.queue.iter().map(|q| (q.as_str(), false)).collect(),
        Command::Search(a) => a.queues.iter().map(|q| (q.as_str(), false)).collect(),
        _ => Vec::new(),
    }
}

/// Why the command must not run: the first queue it names that does not
/// exist (unless it may create it), with the closest name that does.
pub(crate) async fn refusal(cli: &Cli) -> delayq::Result<Option<String>> {
    let names: Vec<&str> = named(&cli.command)
        .into_iter()
        .filter(|(_, create)| !create)
        .map(|(name, _)| name)
        .collect();
    if names.is_empty() {
        return Ok(None);
    }
    let client = crate::connect(cli).await?;
    // `take` and `stats` read a partitioned queue's partitions as one
    // queue; the other commands act on one queue's keys.
    let as_one = matches!(cli.command, Command::Take(_) | Command::Stats(_));
    let partitioned = match partitioned_names(&client, &names).await {
        Ok(partitioned) => partitioned,
        Err(error) => {
            client.shutdown().await;
            return Err(error);
        }
    };
    if let (Some((name, count)), false) = (partitioned.first(), as_one) {
        client.shutdown().await;
        return Ok(Some(format!(
            "`{}` is a partitioned queue of {count} partitions: this command acts on one queue, so name a \
             partition (`delayq partition show {}` lists them with their counts)",
            escape(name),
            escape(name)
        )));
    }
    let names: Vec<&str> = (names.into_iter())
        .filter(|n| !partitioned.iter().any(|(p, _)| p == n))
        .collect();
    if names.is_empty() {
        client.shutdown().await;
        return Ok(None);
    }
    let found = first_unknown(&client, &names).await;
    client.shutdown().await;
    let Some((name, known)) = found? else {
        return Ok(None);
    };
    let mut message = format!("no queue `{}`", escape(name));
    if known.is_empty() {
        message.push_str(&format!(": {NO_QUEUES}"));
    } else if let Some(close) = closest(name, &known) {
        message.push_str(&format!("; did you mean `{}`?", escape(close)));
    } else {
        message.push_str(" (`delayq list` shows every queue)");
    }
    if matches!(cli.command, Command::Pause(_)) {
        message.push_str(" (--create pauses it anyway)");
    }
    if matches!(cli.command, Command::Limits(_)) {
        message.push_str(" (--create sets its limits anyway)");
    }
    if matches!(cli.command, Command::Groups(_)) {
        message.push_str(" (--create sets its group settings anyway)");
    }
    Ok(Some(message))
}

/// Those of `names` that are partitioned queues, with their counts.
async fn partitioned_names<'a>(client: &delayq::Client, names: &[&'a str]) -> delayq::Result<Vec<(&'a str, usize)>> {
    let mut partitioned = Vec::new();
    for &name in names {
        // A name no partitioned queue can have answers `None`.
        if let Some(layout) = client.partition_layout(name).await? {
            partitioned.push((name, layout.count()));
        }
    }
    Ok(partitioned)
}

/// The first of `names` no queue has, and every queue there is.
async fn first_unknown<'a>(
    client: &delayq::Client,
    names: &[&'a str],
) -> delayq::Result<Option<(&'a str, Vec<String>)>> {
    let mut known: Option<Vec<String>> = None;
    for &name in names {
        let queue = crate::look(client, name)?;
        let status = queue.status().await?;
        // A queue set up ahead (paused, or given limits) is one too.
        if status.exists || status.paused || status.ids > 0 || !queue.limits().await?.is_none() {
            continue;
        }
        // Grouped values, or group settings alone, live in keys the
        // status's `exists` does not look at.
        if status.grouped_ready + status.grouped_pending > 0 || has_groups(client, name).await? {
            continue;
        }
        if known.is_none() {
            known = Some(all_queues(client).await?);
        }
        let queues = known.as_ref().expect("read above");
        if queues.iter().any(|q| q == name)
            || !client
                .schedules(&delayq::QueueKeys::new(name)?)?
                .list()
                .await?
                .is_empty()
        {
            continue;
        }
        return Ok(Some((name, known.unwrap_or_default())));
    }
    Ok(None)
}

/// Whether the queue's group state exists: it had a grouped value, or its
/// group settings were set (`delayq groups --create`).
async fn has_groups(client: &delayq::Client, name: &str) -> delayq::Result<bool> {
    use delayq::fred::interfaces::KeysInterface;
    let key = delayq::QueueKeys::new(name)?.group_state();
    let found: u64 = client.redis().exists(key).await.map_err(delayq::Error::from)?;
    Ok(found > 0)
}

/// The name among `known` closest to `name` by edit distance (characters),
/// if close enough to be a typo of it: at most a third of its length, and
/// at least one edit allowed.
fn closest<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    known
        .iter()
        .map(|k| (distance(name, k), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, k)| (*d, k.len()))
        .map(|(_, k)| k.as_str())
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_the_queue_it_misses() {
        let known: Vec<String> = ["orders", "payments", "{shop}orders"].map(String::from).to_vec();
        assert_eq!(distance("ordrs", "orders"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(closest("ordrs", &known), Some("orders"));
        assert_eq!(closest("paymnts", &known), Some("payments"));
        assert_eq!(closest("zzz", &known), None);
        assert_eq!(
            closest("zażółć", &["zazolc".into()]),
            None,
            "six letters allow two edits"
        );
    }
}
