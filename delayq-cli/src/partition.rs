//! `delayq partition create` and `delayq partition show`.

use std::process::ExitCode;
use std::time::SystemTime;

use delayq::{PartitionedQueue, QueueStatus};
use serde_json::json;

use crate::args::{Cli, CodecKind, OfferArgs, OutputFormat, PartitionCreateArgs, PartitionShowArgs};
use crate::output::{self, escape};
use crate::text_codec::TextCodec;

/// `partition create Q N`: stores the layout (or finds it stored with N),
/// then prints it as `show` does.
pub(crate) async fn create(cli: &Cli, args: &PartitionCreateArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let created = client
        .create_partitioned_queue(&args.queue, args.count, TextCodec::new(CodecKind::Bytes))
        .await;
    let queue = match created {
        Ok(queue) => queue.without_transfer(),
        Err(error @ delayq::Error::PartitionCountMismatch { .. }) => {
            client.shutdown().await;
            eprintln!("delayq: {}", escape(&error.to_string()));
            return Ok(ExitCode::from(1));
        }
        Err(error) => {
            client.shutdown().await;
            return Err(error);
        }
    };
    let printed = print(&client, &queue, args.format).await;
    client.shutdown().await;
    printed?;
    Ok(ExitCode::SUCCESS)
}

/// `partition repartition Q N`: a new generation with N partitions (or the
/// layout, when it has N), printed as `show` does.
pub(crate) async fn repartition(cli: &Cli, args: &PartitionCreateArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let opened = match client.repartition(&args.queue, args.count).await {
        Ok(_) => {
            client
                .partitioned_queue(&args.queue, TextCodec::new(CodecKind::Bytes))
                .await
        }
        Err(error) => Err(error),
    };
    show_opened(client, &args.queue, opened, args.format).await
}

/// `partition retire Q`: drops the drained retired partitions; exit status
/// 3 while some are left.
pub(crate) async fn retire(cli: &Cli, args: &PartitionShowArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let retired = client.retire_partitions(&args.queue).await;
    client.shutdown().await;
    let retirement = match retired {
        Ok(retirement) => retirement,
        Err(delayq::Error::NotPartitioned { .. }) => {
            eprintln!("delayq: `{}` is not a partitioned queue", escape(&args.queue));
            return Ok(ExitCode::from(1));
        }
        Err(error) => return Err(error),
    };
    match args.format {
        OutputFormat::Json => println!(
            "{}",
            output::json(&json!({
                "queue": args.queue,
                "retired": retirement.retired,
                "holding": retirement.holding.iter().map(|(name, n)| json!({"name": name, "values": n})).collect::<Vec<_>>(),
                "generation": retirement.layout.generation(),
            }))
        ),
        OutputFormat::Table => {
            for name in &retirement.retired {
                println!("retired {}", escape(name));
            }
            for (name, n) in &retirement.holding {
                println!(
                    "kept {} (holds {} values; run again once drained)",
                    escape(name),
                    output::count(*n)
                );
            }
            if retirement.retired.is_empty() && retirement.holding.is_empty() {
                println!("{}: no retired partitions", escape(&args.queue));
            }
        }
    }
    Ok(
        if retirement.holding.is_empty() && retirement.layout.retired().is_empty() {
            ExitCode::SUCCESS
        } else {
            // Not 2: every command's error is 2, and a script looping
            // until this succeeds must tell "not yet" from "failed".
            ExitCode::from(3)
        },
    )
}

/// `partition show Q`.
pub(crate) async fn show(cli: &Cli, args: &PartitionShowArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let opened = client
        .partitioned_queue(&args.queue, TextCodec::new(CodecKind::Bytes))
        .await;
    show_opened(client, &args.queue, opened, args.format).await
}

/// Prints the layout `opened` (exit status 1 when `name` is not a
/// partitioned queue), then shuts `client` down.
async fn show_opened(
    client: delayq::Client,
    name: &str,
    opened: delayq::Result<PartitionedQueue<String>>,
    format: OutputFormat,
) -> delayq::Result<ExitCode> {
    let queue = match opened {
        Ok(queue) => queue.without_transfer(),
        Err(delayq::Error::NotPartitioned { .. }) => {
            client.shutdown().await;
            eprintln!(
                "delayq: `{}` is not a partitioned queue (`delayq partition create {} N` makes one)",
                escape(name),
                escape(name)
            );
            return Ok(ExitCode::from(1));
        }
        Err(error) => {
            client.shutdown().await;
            return Err(error);
        }
    };
    let printed = print(&client, &queue, format).await;
    client.shutdown().await;
    printed?;
    Ok(ExitCode::SUCCESS)
}

async fn print(client: &delayq::Client, queue: &PartitionedQueue<String>, format: OutputFormat) -> delayq::Result<()> {
    let layout = queue.layout();
    let status = queue.status().await?;
    // The Cluster primary of each partition; none shown if it cannot be told.
    let nodes = match client.partition_nodes(&layout).await {
        Ok(nodes) => nodes,
        Err(_) => vec![None; layout.count()],
    };
    let created = layout.created().unwrap_or(SystemTime::UNIX_EPOCH);
    let created_ms = created
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64;
    match format {
        OutputFormat::Json => {
            let partitions: Vec<_> = (0..layout.count())
                .map(|i| {
                    let mut row = counts_json(&layout.names()[i], &status.partitions[i]);
                    row.insert("index".into(), json!(i));
                    row.insert("slot".into(), json!(layout.slot(i)));
                    row.insert("node".into(), json!(nodes[i]));
                    row
                })
                .collect();
            println!(
                "{}",
                output::json(&json!({
                    "queue": layout.queue(),
                    "count": layout.count(),
                    "hash": "crc32",
                    "created": output::utc_time(created),
                    "created_ms": created_ms,
                    "ready": status.total.ready,
                    "pending": status.total.pending,
                    "in_flight": status.total.in_flight,
                    "dead_letters": status.total.dead_letters,
                    "partitions": partitions,
                    "generation": layout.generation(),
                    "retired": (layout.retired().iter().zip(&status.retired))
                        .map(|(name, s)| counts_json(name, s))
                        .collect::<Vec<_>>(),
                }))
            );
        }
        OutputFormat::Table => {
            println!(
                "partitioned queue {}: {} partitions (generation {}), created {}",
                escape(layout.queue()),
                layout.count(),
                layout.generation(),
                output::local_time(created)
            );
            println!("a key's partition: CRC-32(key bytes) mod {}", layout.count());
            println!(
                "ready {}, pending {}, in flight {}, dead letters {}",
                output::count(status.total.ready),
                output::count(status.total.pending),
                output::count(status.total.in_flight),
                output::count(status.total.dead_letters)
            );
            let rows: Vec<Vec<String>> = (0..layout.count())
                .map(|i| {
                    let mut row = vec![
                        i.to_string(),
                        escape(&layout.names()[i]).into_owned(),
                        layout.slot(i).to_string(),
                        nodes[i].clone().unwrap_or_else(|| "-".into()),
                    ];
                    row.extend(count_cells(&status.partitions[i]));
                    row
                })
                .collect();
            println!(
                "{}",
                output::table_aligned(
                    &[
                        "#",
                        "partition",
                        "slot",
                        "node",
                        "ready",
                        "pending",
                        "in flight",
                        "dead"
                    ],
                    &["#", "slot", "ready", "pending", "in flight", "dead"],
                    &rows
                )
            );
            if !layout.retired().is_empty() {
                println!(
                    "retired partitions (no new offers; drained in place, `delayq partition retire {}` drops the empty ones):",
                    escape(layout.queue())
                );
                let rows: Vec<Vec<String>> = (layout.retired().iter().zip(&status.retired))
                    .map(|(name, s)| {
                        let mut row = vec![escape(name).into_owned()];
                        row.extend(count_cells(s));
                        row
                    })
                    .collect();
                println!(
                    "{}",
                    output::table_aligned(
                        &["partition", "ready", "pending", "in flight", "dead"],
                        &["ready", "pending", "in flight", "dead"],
                        &rows
                    )
                );
            }
        }
    }
    Ok(())
}

/// A partition's name and counts, as `show`'s JSON gives them.
fn counts_json(name: &str, s: &QueueStatus) -> serde_json::Map<String, serde_json::Value> {
    let counts = [
        ("ready", s.ready),
        ("pending", s.pending),
        ("in_flight", s.in_flight),
        ("dead_letters", s.dead_letters),
    ];
    std::iter::once(("name".to_owned(), json!(name)))
        .chain(counts.map(|(field, n)| (field.to_owned(), json!(n))))
        .collect()
}

/// A partition's counts, as `show`'s table cells: ready, pending, in
/// flight, dead.
fn count_cells(s: &QueueStatus) -> [String; 4] {
    [s.ready, s.pending, s.in_flight, s.dead_letters].map(output::count)
}

/// `delayq offer Q` when Q is a partitioned queue: each value to the
/// partition of `--partition-key`, else round robin, with the priority, TTL
/// and headers asked for. `None` when Q is not partitioned (and no key was
/// given): the offer goes on as to any queue.
pub(crate) async fn offer_if_partitioned(cli: &Cli, args: &OfferArgs) -> delayq::Result<Option<ExitCode>> {
    let named_plainly = args.queue.contains(['{', '}']) || args.queue.is_empty();
    if named_plainly && args.partition_key.is_none() {
        return Ok(None);
    }
    let client = crate::connect(cli).await?;
    let code = offer_partitioned(&client, args).await;
    client.shutdown().await;
    code
}

async fn offer_partitioned(client: &delayq::Client, args: &OfferArgs) -> delayq::Result<Option<ExitCode>> {
    let Some(_) = client.partition_layout(&args.queue).await? else {
        if args.partition_key.is_some() {
            return Err(delayq::Error::InvalidArgument(format!(
                "--partition-key needs a partitioned queue, and `{}` is not one (`delayq partition create`)",
                args.queue
            )));
        }
        return Ok(None);
    };
    if args.id.is_some() || args.dedup_window.is_some() || args.from_file.is_some() || args.group_key().is_some() {
        return Err(delayq::Error::InvalidArgument(format!(
            "`{}` is a partitioned queue: --id, --dedup-window, --from-file, --group and --sequential offer to one \
             partition, named as `delayq partition show` prints",
            args.queue
        )));
    }
    let codec = TextCodec::for_offer(args).map_err(delayq::Error::InvalidArgument)?;
    let queue = client.partitioned_queue(&args.queue, codec).await?.without_transfer();
    let mut options = delayq::OfferOptions::after(args.delay)
        .priority(args.priority.unwrap_or_default())
        .with_headers(crate::offer::headers_of(&args.headers)?);
    if let Some(ttl) = args.ttl {
        options = options
            .ttl(ttl)
            .on_expiry(args.on_expiry.map(delayq::Expiry::from).unwrap_or_default());
    }
    if let Some(key) = &args.partition_key {
        options = options.partition_key(key);
    }
    let name = escape(&args.queue);
    for (done, value) in args.values.iter().enumerate() {
        if let Err(error) = queue.offer_with(value, &options).await {
            eprintln!("delayq: offered {done} value(s) to {name} before this error");
            return match crate::offer::refused(Err::<(), _>(error)) {
                Ok(result) => result.map(|()| None),
                Err(code) => Ok(Some(code)),
            };
        }
    }
    let whither = match &args.partition_key {
        Some(key) => format!("partition {} of {}", queue.partition_for_key(key), queue.count()),
        None => format!("round robin over {} partitions", queue.count()),
    };
    eprintln!(
        "offered {} value(s) to {name}, {whither} ({})",
        args.values.len(),
        crate::output::due_after(args.delay)
    );
    Ok(Some(ExitCode::SUCCESS))
}
