//! `delayq migrate`: pending elements to another packed format, or their
//! values to another codec.

use std::process::ExitCode;

use delayq::Codec;

use crate::args::{Cli, CodecArg, CodecKind, MigrateArgs};
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
    let jackson = |c: CodecArg| c.kind == CodecKind::Jackson;
    if (jackson(from) && to.is_java_binary()) || (from.is_java_binary() && jackson(to)) {
        return Err(invalid(format!(
            "migrating between {from} and {to} is not supported: Jackson's @class typing and the Java codecs' \
             classes do not map one to one (nested classes, UUIDs, dates would change type)"
        )));
    }
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
            |payload| match reader.read(payload) {
                // With --from-codec auto, values already in the target stay.
                Ok(read) if read.codec == target => Ok(None),
                Ok(read) => writer.encode_read(&read).map(Some),
                // Rewritten already (a slice is read again when a transfer
                // shifts the list), or never readable: left either way.
                Err(_) if writer.read(payload).is_ok() => Ok(None),
                Err(error) => Err(error),
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
