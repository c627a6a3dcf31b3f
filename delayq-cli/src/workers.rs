//! `delayq workers [QUEUE]`: the workers connected to a queue (or to every
//! queue), as their heartbeats describe them; a silent one is flagged.

use std::process::ExitCode;
use std::time::SystemTime;

use delayq::worker::WorkerInfo;
use serde_json::json;

use crate::args::{Cli, OutputFormat, WorkersArgs};
use crate::output::{self, escape};

pub(crate) async fn run(cli: &Cli, args: &WorkersArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let result = async {
        let queues = match &args.queue {
            Some(queue) => vec![queue.clone()],
            None => client.queues().await?,
        };
        let mut found = Vec::new();
        for queue in queues {
            let workers = client.workers(&delayq::QueueKeys::new(&queue)?).await?;
            if !workers.is_empty() || args.queue.is_some() {
                found.push((queue, workers));
            }
        }
        Ok::<_, delayq::Error>(found)
    }
    .await;
    client.shutdown().await;
    let found = result?;
    match args.format {
        OutputFormat::Json => {
            let queues: Vec<_> = found
                .iter()
                .map(|(queue, workers)| json!({"queue": queue, "workers": workers.iter().map(worker_json).collect::<Vec<_>>()}))
                .collect();
            println!("{}", output::json(&json!({ "queues": queues })));
        }
        OutputFormat::Table => print_tables(args, &found),
    }
    Ok(ExitCode::SUCCESS)
}

fn ms(at: SystemTime) -> i64 {
    output::millis_from(at, SystemTime::UNIX_EPOCH)
}

fn worker_json(worker: &WorkerInfo) -> serde_json::Value {
    json!({
        "id": worker.id,
        "host": worker.host,
        "pid": worker.pid,
        "version": worker.version,
        "concurrency": worker.concurrency,
        "prefetch": worker.prefetch,
        "rate_limit": worker.rate_limit.map(|r| json!({"limit": r.limit, "per_ms": r.per.as_millis() as u64, "burst": r.burst})),
        "heartbeat_ms": worker.heartbeat.as_millis() as u64,
        "started_at_ms": ms(worker.started_at),
        "started_at": output::utc_time(worker.started_at),
        "last_beat_ms": ms(worker.last_beat),
        "last_beat": output::utc_time(worker.last_beat),
        "silent": worker.silent,
        "handled": worker.handled,
        "failed": worker.failed,
        "busy": worker.busy,
        "running": worker.running.iter().map(|r| json!({
            "delivery": r.delivery,
            "attempt": r.attempt,
            "since_ms": ms(r.since),
            "since": output::utc_time(r.since),
            "lease_expires_ms": ms(r.lease_expires),
            "lease_expires": output::utc_time(r.lease_expires),
        })).collect::<Vec<_>>(),
    })
}

/// One table of the workers, then one of what their handlers run.
fn print_tables(args: &WorkersArgs, found: &[(String, Vec<WorkerInfo>)]) {
    let now = SystemTime::now();
    let mut rows = Vec::new();
    let mut running = Vec::new();
    for (queue, workers) in found {
        for w in workers {
            let rate = match w.rate_limit {
                Some(r) => format!("{}/{}", r.limit, output::compact(r.per)),
                None => "-".into(),
            };
            rows.push(vec![
                queue.clone(),
                w.id.clone(),
                w.host.clone(),
                w.pid.to_string(),
                w.version.clone(),
                if w.silent {
                    format!("SILENT {}", output::relative(w.last_beat, now))
                } else {
                    "alive".into()
                },
                output::relative(w.started_at, now),
                format!("{}/{}", w.busy, w.concurrency),
                w.prefetch.to_string(),
                rate,
                output::count(w.handled),
                output::count(w.failed),
            ]);
            for r in &w.running {
                running.push(vec![
                    queue.clone(),
                    w.id.clone(),
                    r.delivery.clone(),
                    r.attempt.to_string(),
                    output::relative(r.since, now),
                    output::relative(r.lease_expires, now),
                ]);
            }
        }
    }
    if rows.is_empty() {
        match &args.queue {
            Some(queue) => println!("no workers on {}", escape(queue)),
            None => println!("no workers on any queue"),
        }
        return;
    }
    println!(
        "{}",
        output::table_aligned(
            &[
                "QUEUE",
                "WORKER",
                "HOST",
                "PID",
                "VERSION",
                "STATE",
                "STARTED",
                "BUSY",
                "PREFETCH",
                "RATE",
                "HANDLED",
                // Runs, not values: each retry of one value counts.
                "FAILED RUNS"
            ],
            &["PID", "BUSY", "PREFETCH", "HANDLED", "FAILED RUNS"],
            &rows
        )
    );
    if !running.is_empty() {
        println!();
        println!(
            "{}",
            output::table_aligned(
                &["QUEUE", "WORKER", "RUNNING", "ATTEMPT", "SINCE", "LEASE EXPIRES"],
                &["ATTEMPT"],
                &running
            )
        );
    }
}
