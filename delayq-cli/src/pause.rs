//! `delayq pause`, `delayq resume`.

use std::process::ExitCode;

use crate::args::{Cli, PauseArgs, QueueArg};
use crate::output::escape;

pub(crate) async fn pause(cli: &Cli, args: &PauseArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let queue = crate::look(&client, &args.queue)?;
    let result = queue.pause().await;
    client.shutdown().await;
    result?;
    eprintln!(
        "{} paused: delayq's transfers and reliable consumers wait until `delayq resume {}` \
         (Java processes do not know the pause)",
        escape(&args.queue),
        escape(&args.queue)
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn resume(cli: &Cli, args: &QueueArg) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let queue = crate::look(&client, &args.queue)?;
    let result = queue.resume().await;
    client.shutdown().await;
    if result? {
        eprintln!("{} resumed", escape(&args.queue));
    } else {
        eprintln!("{} was not paused", escape(&args.queue));
    }
    Ok(ExitCode::SUCCESS)
}
