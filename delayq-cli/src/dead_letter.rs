//! `delayq dead-letter list|requeue`.

use std::process::ExitCode;

use bytes::Bytes;
use delayq::Codec;
use serde_json::json;

use crate::args::{Cli, CodecKind, DeadLetterListArgs, DeadLetterRequeueArgs, OutputFormat};
use crate::output::{self, hex, preview};
use crate::progress;
use crate::text_codec::TextCodec;

pub(crate) async fn list(cli: &Cli, args: &DeadLetterListArgs) -> delayq::Result<ExitCode> {
    let codec = TextCodec::reading(args.codec, args.kryo_schema.as_deref()).map_err(delayq::Error::InvalidArgument)?;
    let client = crate::connect(cli).await?;
    // Read-only: the status script (which types-checks the keys) counts them.
    let queue = crate::look(&client, &args.queue)?;
    let total = queue.status().await?.dead_letters;
    let page = client
        .reliable_queue(&args.queue, TextCodec::new(CodecKind::Bytes))?
        .dead_letter_page(0, args.limit)
        .await;
    drop(queue);
    client.shutdown().await;
    let page = page?;
    let raw: Vec<Bytes> = page.iter().map(|dead| dead.raw.clone()).collect();
    let reasons: Vec<Option<String>> = page.iter().map(|dead| dead.reason.clone()).collect();
    let decoded: Vec<Result<String, String>> = raw.iter().map(|v| codec.decode(v).map_err(|e| e.to_string())).collect();
    // With --codec auto: the codec detected for each value.
    let codecs: Vec<Option<String>> = raw.iter().map(|v| codec.detected_codec(v)).collect();
    match args.format {
        OutputFormat::Json => {
            let values: Vec<_> = raw
                .iter()
                .zip(&decoded)
                .zip(&reasons)
                .zip(&codecs)
                .map(|(((raw, value), reason), codec)| {
                    json!({"value": value.as_ref().ok(), "error": value.as_ref().err(), "codec": codec, "reason": reason, "raw_hex": hex(raw)})
                })
                .collect();
            println!(
                "{}",
                output::json(&json!({"queue": args.queue, "total": total, "values": values}))
            );
        }
        OutputFormat::Table => {
            let rows: Vec<Vec<String>> = decoded
                .iter()
                .zip(&raw)
                .enumerate()
                .map(|(i, (value, raw))| {
                    let shown = match value {
                        Ok(text) => preview(text, 100),
                        Err(_) => format!("<{}>", preview(&hex(raw), 60)),
                    };
                    let reason = reasons[i].as_deref().map_or("-".into(), |r| preview(r, 80));
                    match &codecs[i] {
                        Some(codec) => vec![output::count(i as u64 + 1), codec.clone(), shown, reason],
                        None => vec![output::count(i as u64 + 1), shown, reason],
                    }
                })
                .collect();
            if !rows.is_empty() {
                let headers: &[&str] = if codecs.iter().any(Option::is_some) {
                    &["#", "CODEC", "VALUE", "REASON"]
                } else {
                    &["#", "VALUE", "REASON"]
                };
                println!("{}", output::table_aligned(headers, &["#"], &rows));
            }
            println!(
                "({} of {} dead-lettered value(s) of `{}` shown)",
                output::count(rows.len() as u64),
                output::count(total),
                output::escape(&args.queue)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn requeue(cli: &Cli, args: &DeadLetterRequeueArgs) -> delayq::Result<ExitCode> {
    let client = crate::connect(cli).await?;
    let queue = client.reliable_queue(&args.queue, TextCodec::new(CodecKind::Bytes))?;
    let total = queue.dead_letter_len().await? as u64;
    let goal = args.max.map_or(total, |max| total.min(max as u64));
    let bar = progress::bar(goal, "requeueing");
    let mut moved = 0u64;
    while moved < goal {
        let step = (goal - moved).min(args.batch.max(1) as u64) as usize;
        let n = queue.requeue_dead_letters(step).await? as u64;
        if n == 0 {
            break;
        }
        moved += n;
        bar.inc(n);
    }
    bar.finish_and_clear();
    drop(queue);
    client.shutdown().await;
    match args.format {
        OutputFormat::Json => println!(
            "{}",
            output::json(&json!({"queue": args.queue, "requeued": moved, "left": total - moved}))
        ),
        OutputFormat::Table => println!(
            "requeued {moved} dead-lettered value(s) to `{}` ({} left in the dead-letter list)",
            output::escape(&args.queue),
            total.saturating_sub(moved)
        ),
    }
    Ok(ExitCode::SUCCESS)
}
