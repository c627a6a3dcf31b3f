//! `delayq transfer`.

use std::process::ExitCode;
use std::time::Duration;

use tokio::time::Instant;

use crate::args::{Cli, CodecKind, TransferArgs};
use crate::text_codec::TextCodec;

pub(crate) async fn run(cli: &Cli, args: &TransferArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    // The transfer never decodes payloads; any codec will do.
    let queues = args
        .queues
        .iter()
        .map(|name| client.delayed_queue(name, TextCodec::new(CodecKind::Bytes)))
        .collect::<delayq::Result<Vec<_>>>()?;
    let deadline = args.timeout.map(|t| Instant::now() + t);
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let outcome = loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = tokio::signal::ctrl_c() => break Ok(()),
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break Ok(());
        }
        if args.until_empty {
            let mut empty = true;
            for queue in &queues {
                match queue.is_empty().await {
                    Ok(true) => {}
                    Ok(false) => empty = false,
                    Err(error) => {
                        tracing::warn!(%error, queue = queue.name(), "could not read the queue length");
                        empty = false;
                    }
                }
            }
            if empty {
                break Ok(());
            }
        }
    };
    let stats = client.stats();
    drop(queues);
    client.shutdown().await;
    eprintln!(
        "moved {} element(s) in {} transfer run(s), {} failed, {} quarantined",
        stats.transferred, stats.transfer_runs, stats.transfer_failures, stats.quarantined
    );
    outcome.map(|()| ExitCode::SUCCESS)
}
