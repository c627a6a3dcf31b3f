//! `delayq migrate`.

use std::process::ExitCode;

use crate::args::{Cli, MigrateArgs};

pub(crate) async fn run(cli: &Cli, args: &MigrateArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    // Payloads are copied as they are: the codec is never used.
    let queue = crate::look(&client, &args.queue)?;
    let result = queue.migrate(args.to, args.batch).await;
    client.shutdown().await;
    let report = result?;
    println!(
        "{}: {} element(s) rewritten as {}, {} already {}, {} malformed left alone, {} not in the timeout set left alone ({} pass(es))",
        crate::output::escape(&args.queue),
        report.converted,
        args.to,
        report.already,
        args.to,
        report.malformed,
        report.not_scheduled,
        report.passes
    );
    Ok(ExitCode::SUCCESS)
}
