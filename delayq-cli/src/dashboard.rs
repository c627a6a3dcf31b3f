//! `delayq dashboard`: the web dashboard and /metrics, until Ctrl-C.

use std::process::ExitCode;

use delayq_dashboard::{check_listen, Dashboard};

use crate::args::{Cli, CodecArg, CodecKind, DashboardArgs};
use crate::text_codec::{load_schema, TextCodec};

pub(crate) async fn run(cli: &Cli, args: &DashboardArgs) -> delayq::Result<ExitCode> {
    // Refuse before connecting: an open dashboard off loopback could purge queues.
    if let Err(refused) = check_listen(args.listen, args.token.as_deref().is_some_and(|t| !t.is_empty())) {
        return Err(delayq::Error::InvalidArgument(refused.to_string()));
    }
    // A schema that does not load, or one no codec would use, is refused
    // before connecting too: a dashboard that started would show hex.
    let codecs = codecs(args).map_err(delayq::Error::InvalidArgument)?;
    let client = crate::connect(cli).await?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| delayq::Error::InvalidArgument(format!("cannot listen on {}: {e}", args.listen)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| delayq::Error::InvalidArgument(e.to_string()))?;
    let host = if addr.ip().is_unspecified() {
        format!("127.0.0.1:{}", addr.port())
    } else {
        addr.to_string()
    };
    eprintln!(
        "delayq dashboard on http://{host}/{}{}  (metrics: /metrics; Ctrl-C stops)",
        if args.token.is_some() { "?token=…" } else { "" },
        if args.read_only { ", read-only" } else { "" }
    );
    let (default, by_queue) = codecs;
    let mut dashboard = Dashboard::new(client.clone()).codec(default);
    for (queue, codec) in by_queue {
        dashboard = dashboard.queue_codec(queue, codec);
    }
    let dashboard = dashboard
        .read_only(args.read_only)
        .token(args.token.clone())
        .sample_interval(args.sample_interval);
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let served = dashboard.serve_with_shutdown(listener, stop).await;
    client.shutdown().await;
    served.map_err(|e| delayq::Error::InvalidArgument(format!("dashboard: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

/// The codec of every queue (`--codec`) and of the queues named by
/// `--queue-codec`, each Java one with `--kryo-schema`'s classes (read once).
fn codecs(args: &DashboardArgs) -> Result<(TextCodec, Vec<(String, TextCodec)>), String> {
    let reads_java = |arg: CodecArg| arg.is_java_binary() || arg.kind == CodecKind::Auto;
    let schema = match &args.kryo_schema {
        Some(path) => {
            if !reads_java(args.codec) && !args.queue_codecs.iter().any(|(_, arg)| reads_java(*arg)) {
                return Err(
                    "--kryo-schema only applies to kryo, serialization, marshalling and auto (as --codec or \
                     a --queue-codec)"
                        .into(),
                );
            }
            Some(load_schema(path).map_err(|e| format!("--kryo-schema: {e}"))?)
        }
        None => None,
    };
    let codec = |arg: CodecArg| TextCodec::of(arg).with_schema(schema.clone().filter(|_| reads_java(arg)));
    let by_queue = args
        .queue_codecs
        .iter()
        .map(|(queue, arg)| (queue.clone(), codec(*arg)))
        .collect();
    Ok((codec(args.codec), by_queue))
}
