//! `delayq offer`.

use std::process::ExitCode;

use crate::args::{Cli, OfferArgs};
use crate::text_codec::TextCodec;

pub async fn run(cli: &Cli, args: &OfferArgs) -> delayq::Result<ExitCode> {
    let codec = TextCodec::for_offer(args).map_err(delayq::Error::InvalidArgument)?;
    let client = crate::connect(cli).await?;
    // Offering needs no transfer from this short-lived process.
    let queue = client
        .delayed_queue(&args.queue, codec)?
        .without_transfer()
        .with_format(args.format);
    let result = queue.offer_all(args.values.iter().map(|v| (v, args.delay))).await;
    client.shutdown().await;
    result?;
    eprintln!(
        "offered {} value(s) to {} (due in {:?})",
        args.values.len(),
        args.queue,
        args.delay
    );
    Ok(ExitCode::SUCCESS)
}
