//! `delayq pause`, `delayq resume`.

use std::process::ExitCode;

use crate::args::{Cli, CodecKind, QueueArg};
use crate::text_codec::TextCodec;

pub async fn pause(cli: &Cli, args: &QueueArg) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let queue = client
        .delayed_queue(&args.queue, TextCodec::new(CodecKind::Bytes))?
        .without_transfer();
    let result = queue.pause().await;
    client.shutdown().await;
    result?;
    eprintln!(
        "{} paused: delayq's transfers and reliable consumers wait until `delayq resume {}` \
         (Java processes do not know the pause)",
        args.queue, args.queue
    );
    Ok(ExitCode::SUCCESS)
}

pub async fn resume(cli: &Cli, args: &QueueArg) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let queue = client
        .delayed_queue(&args.queue, TextCodec::new(CodecKind::Bytes))?
        .without_transfer();
    let result = queue.resume().await;
    client.shutdown().await;
    if result? {
        eprintln!("{} resumed", args.queue);
    } else {
        eprintln!("{} was not paused", args.queue);
    }
    Ok(ExitCode::SUCCESS)
}
