//! `delayq offer`.

use std::process::ExitCode;

use crate::args::{Cli, OfferArgs};
use crate::output::{due_after, escape};
use crate::text_codec::TextCodec;

pub(crate) async fn run(cli: &Cli, args: &OfferArgs) -> delayq::Result<ExitCode> {
    let codec = TextCodec::for_offer(args).map_err(delayq::Error::InvalidArgument)?;
    if let Some(code) = crate::partition::offer_if_partitioned(cli, args).await? {
        return Ok(code);
    }
    if let Some(path) = &args.from_file {
        return crate::offer_file::run(cli, args, codec, path).await;
    }
    let client = crate::connect(cli).await?;
    // Offering needs no transfer from this short-lived process.
    let queue = client
        .delayed_queue(&args.queue, codec)?
        .without_transfer()
        .with_format(args.format);
    if let Some(id) = &args.id {
        if args.values.len() != 1 {
            client.shutdown().await;
            return Err(delayq::Error::InvalidArgument("--id offers exactly one value".into()));
        }
        let value = &args.values[0];
        let new = if args.replace {
            queue.replace_with_id(id, value, args.delay).await
        } else {
            queue.offer_with_id(id, value, args.delay).await
        };
        client.shutdown().await;
        let new = match refused(new) {
            Ok(new) => new?,
            Err(code) => return Ok(code),
        };
        let (id, queue) = (escape(&format!("{id:?}")).into_owned(), escape(&args.queue));
        match (new, args.replace) {
            (true, _) => eprintln!("offered id {id} to {queue} ({})", due_after(args.delay)),
            (false, false) => eprintln!("id {id} is pending in {queue} already; nothing offered"),
            (false, true) => eprintln!("replaced id {id} in {queue} ({})", due_after(args.delay)),
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(window) = args.dedup_window {
        let code = offer_dedup(&queue, args, window).await;
        client.shutdown().await;
        return code;
    }
    if let Some(key) = args.group_key() {
        let code = offer_grouped(&queue, args, key).await;
        client.shutdown().await;
        return code;
    }
    let priority = args.priority.unwrap_or_default();
    if priority.level() > 0 || args.ttl.is_some() || !args.headers.is_empty() {
        let code = offer_priority(&queue, args, priority).await;
        client.shutdown().await;
        return code;
    }
    let result = queue.offer_all(args.values.iter().map(|v| (v, args.delay))).await;
    client.shutdown().await;
    match refused(result) {
        Ok(result) => result?,
        Err(code) => return Ok(code),
    }
    eprintln!(
        "offered {} value(s) to {} ({})",
        args.values.len(),
        escape(&args.queue),
        due_after(args.delay)
    );
    Ok(ExitCode::SUCCESS)
}

/// `--dedup-window`: each value offered unless it was within the window
/// (by `--dedup-id`, else by payload). Values refused as duplicates are
/// named on stderr and the exit status is 1, as for a refusal of the limits.
async fn offer_dedup(
    queue: &delayq::DelayedQueue<String>,
    args: &OfferArgs,
    window: std::time::Duration,
) -> delayq::Result<ExitCode> {
    use delayq::dedup::DedupKey;
    let key = match &args.dedup_id {
        Some(_) if args.values.len() != 1 => {
            return Err(delayq::Error::InvalidArgument(
                "--dedup-id offers exactly one value".into(),
            ))
        }
        Some(id) => DedupKey::Id(id.clone()),
        None => DedupKey::Payload,
    };
    let items = args.values.iter().map(|v| (v, args.delay, key.clone()));
    let answers = match refused(queue.offer_all_dedup(items, window).await) {
        Ok(result) => result?,
        Err(code) => return Ok(code),
    };
    let queue_name = escape(&args.queue);
    let by = match &args.dedup_id {
        Some(id) => format!("id {}", escape(&format!("{id:?}"))),
        None => "payload".to_owned(),
    };
    let mut duplicates = 0;
    for (value, answer) in args.values.iter().zip(&answers) {
        if answer.is_duplicate() {
            duplicates += 1;
            eprintln!(
                "delayq: duplicate: {} was offered to {queue_name} within the last {} (by {by}); not queued",
                escape(&format!("{value:?}")),
                humantime::format_duration(window)
            );
        }
    }
    eprintln!(
        "offered {} value(s) to {queue_name} ({}), {duplicates} duplicate(s)",
        answers.len() - duplicates,
        due_after(args.delay)
    );
    Ok(if duplicates > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `--priority` above the default, `--ttl` or `--header`: one offer per
/// value, in order (the library has no bulk offer with a priority, a TTL
/// or headers). A failure part way says how many went before it; headers
/// past the library's limits fail the first offer, before anything is
/// written.
async fn offer_priority(
    queue: &delayq::DelayedQueue<String>,
    args: &OfferArgs,
    priority: delayq::Priority,
) -> delayq::Result<ExitCode> {
    let queue_name = escape(&args.queue);
    let headers = headers_of(&args.headers)?;
    let mut how = format!("at priority {priority}");
    let with_headers = match headers.len() {
        0 => String::new(),
        n if args.ttl.is_some() => format!(" and {n} header(s)"),
        n => format!(" with {n} header(s)"),
    };
    let mut options = delayq::OfferOptions::after(args.delay)
        .priority(priority)
        .with_headers(headers);
    if let Some(ttl) = args.ttl {
        let expiry = args.on_expiry.map(delayq::Expiry::from).unwrap_or_default();
        options = options.ttl(ttl).on_expiry(expiry);
        let then = match expiry {
            delayq::Expiry::DeadLetter => "dead-lettered",
            delayq::Expiry::Drop => "dropped",
        };
        how.push_str(&format!(
            " with a TTL of {} (then {then})",
            humantime::format_duration(ttl)
        ));
    }
    how.push_str(&with_headers);
    offer_each(queue, args, &options, &queue_name, &how).await
}

/// Offers each value with `options`, in order, one offer each, saying how
/// many went before a failure (`how` says with what, for the messages).
async fn offer_each(
    queue: &delayq::DelayedQueue<String>,
    args: &OfferArgs,
    options: &delayq::OfferOptions,
    queue_name: &str,
    how: &str,
) -> delayq::Result<ExitCode> {
    for (offered, value) in args.values.iter().enumerate() {
        let result = queue.offer_with(value, options).await;
        if result.is_err() && offered > 0 {
            // Before the error, which main or `refused` prints next.
            eprintln!(
                "delayq: the first {offered} of {} value(s) were offered to {queue_name} {how}; value {} failed:",
                args.values.len(),
                offered + 1
            );
        }
        match refused(result) {
            Ok(result) => result?,
            Err(code) => return Ok(code),
        }
    }
    eprintln!(
        "offered {} value(s) to {queue_name} {how} ({})",
        args.values.len(),
        due_after(args.delay)
    );
    Ok(ExitCode::SUCCESS)
}

/// `--group KEY` or `--sequential`: one offer per value, in order (the
/// library has no bulk grouped offer, and the key's line is their order).
/// A failure part way says how many went before it.
async fn offer_grouped(queue: &delayq::DelayedQueue<String>, args: &OfferArgs, key: &str) -> delayq::Result<ExitCode> {
    let queue_name = escape(&args.queue);
    let options = grouped(args.delay, key);
    offer_each(queue, args, &options, &queue_name, &group_words(key)).await
}

/// The options of a grouped offer: `key` (`""`: the sequential group).
pub(crate) fn grouped(delay: std::time::Duration, key: &str) -> delayq::OfferOptions {
    let options = delayq::OfferOptions::after(delay);
    if key.is_empty() {
        options.sequential()
    } else {
        options.group(key)
    }
}

/// Where grouped values went, for a person: `in group "KEY"` (quoted and
/// escaped: a key is anyone's text), or `in its sequential group`.
pub(crate) fn group_words(key: &str) -> String {
    if key.is_empty() {
        "in its sequential group".into()
    } else {
        format!("in group {}", escape(&format!("{key:?}")))
    }
}

/// The `--header`s as [`delayq::Headers`]; a key given twice is refused
/// (exit 2) rather than one of its values silently dropped.
pub(crate) fn headers_of(given: &[(String, String)]) -> delayq::Result<delayq::Headers> {
    let mut headers = delayq::Headers::new();
    for (key, value) in given {
        if headers.insert(key.as_str(), value.as_str()).is_some() {
            return Err(delayq::Error::InvalidArgument(format!(
                "--header {key:?} is given twice: give each key once"
            )));
        }
    }
    Ok(headers)
}

/// An offer the queue's limits refused (`delayq limits`): the reason is
/// printed and the exit status is 1 (errors are 2). Anything else is
/// handed back as it was.
pub(crate) fn refused<T>(result: delayq::Result<T>) -> std::result::Result<delayq::Result<T>, ExitCode> {
    let refusal = match &result {
        Err(delayq::Error::OfferRefused { .. }) => true,
        Err(delayq::Error::PartlyOffered { source, .. }) => matches!(**source, delayq::Error::OfferRefused { .. }),
        _ => false,
    };
    match result {
        Err(error) if refusal => {
            eprintln!("delayq: {}", escape(&error.to_string()));
            Err(ExitCode::from(1))
        }
        other => Ok(other),
    }
}
