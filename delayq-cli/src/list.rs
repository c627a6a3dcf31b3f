//! `delayq list`, and the check that keeps a misspelt queue name from
//! passing silently: a command that names a queue no key, registry entry or
//! schedule knows is refused with the closest name there is.

use std::process::ExitCode;
use std::time::Duration;

use crate::args::{Cli, Command, DeadLetterCommand, ListArgs, ScheduleCommand, StatsArgs};
use crate::output::escape;

/// What a command on a database without queues is told.
pub(crate) const NO_QUEUES: &str = "the database holds no delayq queues (is --url the right server and database?)";

/// `delayq list`: `stats --all`, once.
pub(crate) async fn run(cli: &Cli, args: &ListArgs) -> delayq::Result<ExitCode> {
    let stats = StatsArgs {
        queues: Vec::new(),
        all: true,
        watch: false,
        interval: Duration::from_secs(1),
        count: None,
        format: args.format,
    };
    crate::stats::run(cli, &stats).await
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
        Command::Schedule(ScheduleCommand::List(a)) => one(&a.queue),
        Command::Workers(a) => a.queue.iter().map(|q| (q.as_str(), false)).collect(),
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
    Ok(Some(message))
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
