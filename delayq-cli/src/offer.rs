//! `delayq offer`.

use std::process::ExitCode;

use crate::args::{Cli, OfferArgs};
use crate::output::{due_after, escape};
use crate::text_codec::TextCodec;

pub(crate) async fn run(cli: &Cli, args: &OfferArgs) -> delayq::Result<ExitCode> {
    let codec = TextCodec::for_offer(args).map_err(delayq::Error::InvalidArgument)?;
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

/// An offer the queue's limits refused (`delayq limits`): the reason is
/// printed and the exit status is 1 (errors are 2). Anything else is
/// handed back as it was.
fn refused<T>(result: delayq::Result<T>) -> std::result::Result<delayq::Result<T>, ExitCode> {
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
