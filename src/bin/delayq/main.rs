//! `delayq`: offer to and take from Redisson-compatible delayed queues from a shell.
//!
//! ```text
//! delayq offer orders --delay 1500ms hello world
//! delayq take orders -n 2 --timeout 5s
//! ```

mod args;
mod migrate;
mod offer;
mod take;
mod text_codec;
mod transfer;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("DELAYQ_LOG"))
        .with_writer(std::io::stderr)
        .init();
    let result = match &cli.command {
        Command::Offer(args) => offer::run(&cli, args).await,
        Command::Take(args) => take::run(&cli, args).await,
        Command::Migrate(args) => migrate::run(&cli, args).await,
        Command::Transfer(args) => transfer::run(&cli, args).await,
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("delayq: {error}");
            ExitCode::from(2)
        }
    }
}

/// Connects to the URL given by `--url` / `REDIS_URL`.
pub(crate) async fn connect(cli: &Cli) -> delayq::Result<delayq::Client> {
    let clock = match cli.clock {
        args::ClockKind::Local => delayq::Clock::Local,
        args::ClockKind::Server => delayq::Clock::Server,
    };
    delayq::Client::builder()
        .url(&cli.url)
        .clock(clock)
        .connect_timeout(std::time::Duration::from_secs(5))
        .build()
        .await
        .map_err(|error| match error {
            delayq::Error::Redis(e) => delayq::Error::Redis(fred_context(e, &cli.url)),
            other => other,
        })
}

fn fred_context(error: delayq::fred::error::Error, url: &str) -> delayq::fred::error::Error {
    delayq::fred::error::Error::new(
        error.kind().clone(),
        format!("cannot connect to {url}: {}", error.details()),
    )
}
