//! `delayq cancel QUEUE ID`: stops the job offered with an id wherever it
//! is (`cancel_job`), and says in one line what that did: a pending element
//! removed, a ready job dropped by the take that reaches it, a running job's
//! worker told, or nothing (already ended, no such job).

use std::process::ExitCode;

use delayq::jobs::CancelOutcome;
use serde_json::json;

use crate::args::{CancelArgs, Cli, OutputFormat};
use crate::output::{self, escape};

pub(crate) async fn run(cli: &Cli, args: &CancelArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let asked = async {
        let queue = crate::look(&client, &args.queue)?;
        let outcome = queue.cancel_job(&args.id).await?;
        // Only for "no such job": whether ready and running jobs could have
        // been found at all.
        let history = match outcome {
            CancelOutcome::Unknown => queue.job_history().await?.is_some(),
            _ => true,
        };
        Ok::<_, delayq::Error>((outcome, history))
    }
    .await;
    client.shutdown().await;
    let (outcome, history) = asked?;
    let (name, effect) = what(&outcome);
    match args.format {
        OutputFormat::Json => {
            let mut out = json!({
                "queue": args.queue,
                "id": args.id,
                "outcome": name,
                "effect": effect,
            });
            match &outcome {
                CancelOutcome::Queued { state } | CancelOutcome::Finished { state } => out["state"] = json!(state),
                CancelOutcome::Running { delivery } => out["delivery"] = json!(delivery),
                CancelOutcome::Unknown => out["history"] = json!({ "on": history }),
                _ => {}
            }
            println!("{}", output::json(&out));
        }
        OutputFormat::Table => eprintln!(
            "{} in {}: {}",
            escape(&args.id),
            escape(&args.queue),
            said(&outcome, &args.queue, history)
        ),
    }
    Ok(match effect {
        "removed" | "asked" => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

/// The outcome's name and what the cancel did: `removed` (the pending
/// element is gone), `asked` (a take or a worker acts on it), `none`.
fn what(outcome: &CancelOutcome) -> (&'static str, &'static str) {
    match outcome {
        CancelOutcome::Pending => ("pending", "removed"),
        CancelOutcome::Queued { .. } => ("queued", "asked"),
        CancelOutcome::Running { .. } => ("running", "asked"),
        CancelOutcome::Finished { .. } => ("finished", "none"),
        CancelOutcome::Unknown => ("unknown", "none"),
        // A kind of outcome newer than this CLI: nothing it can vouch for.
        _ => ("other", "none"),
    }
}

/// The outcome for people, every text from Redis escaped.
fn said(outcome: &CancelOutcome, queue: &str, history: bool) -> String {
    match outcome {
        CancelOutcome::Pending => "pending element removed".into(),
        CancelOutcome::Queued { state } => format!(
            "queued job ({}) will not run (dropped by the take that reaches it)",
            escape(state)
        ),
        CancelOutcome::Running { delivery } => format!(
            "running job: its worker is told (delivery {}); a handler that stops settles it as cancelled",
            escape(delivery)
        ),
        CancelOutcome::Finished { state } => format!("already ended: {}", escape(state)),
        CancelOutcome::Unknown if history => "no such job (never offered with this id, or its history expired)".into(),
        CancelOutcome::Unknown => format!(
            "no such job (nothing pending with this id; ready and running jobs are found only with job \
             history on: `delayq job {} --history on`)",
            escape(queue)
        ),
        other => escape(&format!("{other:?}")).into_owned(),
    }
}
