//! `delayq migrate`: pending elements to another packed format, or their
//! values to another codec.

use std::process::ExitCode;

use delayq::Codec;

use crate::args::{Cli, CodecArg, MigrateArgs};
use crate::output::escape;
use crate::text_codec::TextCodec;

pub(crate) async fn run(cli: &Cli, args: &MigrateArgs) -> delayq::Result<ExitCode> {
    if let (Some(from), Some(to)) = (args.from_codec, args.to_codec) {
        return recode(cli, args, from, to).await;
    }
    let Some(format) = args.to else {
        return Err(delayq::Error::InvalidArgument(
            "give --to FORMAT, or --from-codec and --to-codec".into(),
        ));
    };
    let client = crate::connect(cli).await?;
    // Payloads are copied as they are: the codec is never used.
    let queue = crate::look(&client, &args.queue)?;
    let result = queue.migrate(format, args.batch).await;
    client.shutdown().await;
    let report = result?;
    println!(
        "{}: {} element(s) rewritten as {}, {} already {}, {} malformed left alone, {} not in the timeout set left alone ({} pass(es))",
        escape(&args.queue),
        report.converted,
        format,
        report.already,
        format,
        report.malformed,
        report.not_scheduled,
        report.passes
    );
    Ok(ExitCode::SUCCESS)
}

/// Re-encodes every pending value from one codec to another, in place.
async fn recode(cli: &Cli, args: &MigrateArgs, from: CodecArg, to: CodecArg) -> delayq::Result<ExitCode> {
    let invalid = delayq::Error::InvalidArgument;
    let reader = TextCodec::reading(from, args.kryo_schema.as_deref()).map_err(invalid)?;
    let mut writer = TextCodec::with_java_classes(to, &args.java_class).map_err(invalid)?;
    if to.is_java_binary() {
        writer = writer.with_schema_of(args.kryo_schema.as_deref()).map_err(invalid)?;
    }
    let target = writer.name();
    let client = crate::connect(cli).await?;
    let queue = crate::look(&client, &args.queue)?;
    let result = queue
        .recode(
            |payload| {
                let read = reader.read(payload)?;
                // With --from-codec auto, values already in the target stay.
                if read.codec == target {
                    return Ok(None);
                }
                writer.encode_read(&read).map(Some)
            },
            args.batch,
        )
        .await;
    client.shutdown().await;
    let report = result?;
    println!(
        "{}: {} value(s) re-encoded from {from} to {to}, {} already {to}, {} undecodable with {from} left alone, \
         {} malformed left alone, {} not in the timeout set left alone ({} pass(es))",
        escape(&args.queue),
        report.converted,
        report.already,
        report.undecodable,
        report.malformed,
        report.not_scheduled,
        report.passes
    );
    if report.moved > 0 {
        eprintln!(
            "delayq: {} value(s) kept moving under transfers; run migrate again to re-encode them",
            report.moved
        );
    }
    if let Some(error) = &report.first_error {
        eprintln!("delayq: first undecodable value: {}", escape(error));
    }
    Ok(if report.undecodable > 0 || report.moved > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
