//! `delayq dashboard`: the web dashboard and /metrics, until Ctrl-C.

use std::process::ExitCode;

use delayq_dashboard::{check_listen, Dashboard};

use crate::args::{Cli, DashboardArgs};
use crate::text_codec::TextCodec;

pub(crate) async fn run(cli: &Cli, args: &DashboardArgs) -> delayq::Result<ExitCode> {
    // Refuse before connecting: an open dashboard off loopback could purge queues.
    if let Err(refused) = check_listen(args.listen, args.token.as_deref().is_some_and(|t| !t.is_empty())) {
        return Err(delayq::Error::InvalidArgument(refused.to_string()));
    }
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
    let dashboard = Dashboard::new(client.clone())
        .codec(TextCodec::of(args.codec))
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
