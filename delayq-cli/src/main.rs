//! `delayq`: offer to, take from and look inside Redisson-compatible delayed
//! queues from a shell.
//!
//! ```text
//! delayq offer orders --delay 1500ms hello world
//! delayq inspect orders
//! delayq take orders -n 2 --timeout 5s
//! delayq schedule add reports nightly --cron '0 2 * * *' --tz Europe/Paris build-report
//! ```

#![warn(unreachable_pub, missing_debug_implementations)]

mod args;
mod batch;
mod cancel;
mod dashboard;
mod dead_letter;
mod events;
mod groups;
mod ids;
mod inspect;
mod job;
mod limits;
mod list;
mod migrate;
mod move_due;
mod offer;
mod offer_file;
mod output;
mod partition;
mod pause;
mod progress;
mod purge;
mod result;
mod schedule;
mod search;
mod stats;
mod take;
mod text_codec;
mod transfer;
mod workers;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use args::{BatchCommand, Cli, Command, DeadLetterCommand, PartitionCommand, ScheduleCommand};

#[tokio::main]
async fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let mut cli = match parse() {
        Ok(cli) => cli,
        // clap's errors quote the arguments as they came: escaped, so
        // without colours.
        Err(error) if error.use_stderr() => {
            eprint!("{}", output::escape_lines(&error.render().to_string()));
            std::process::exit(error.exit_code());
        }
        Err(help) => help.exit(),
    };
    // Before anything connects: `http://` is refused, `host:port` is redis://.
    match args::normalize_url(&cli.url) {
        Ok(url) => cli.url = url,
        Err(refused) => {
            eprintln!("delayq: {}", output::escape(&refused));
            return ExitCode::from(2);
        }
    }
    // Log events carry queue names and Redis's error text: every line is
    // escaped, so it has no colours of its own either. The dashboard runs
    // for long: by default its log says when Redis goes away and comes back
    // (INFO); a one-shot command says only errors. DELAYQ_LOG overrides both.
    let default = match cli.command {
        Command::Dashboard(_) => tracing::level_filters::LevelFilter::INFO,
        _ => tracing::level_filters::LevelFilter::ERROR,
    };
    let filter = tracing_subscriber::EnvFilter::builder()
        .with_default_directive(default.into())
        .with_env_var("DELAYQ_LOG")
        .from_env_lossy();
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(|| output::LogWriter)
        .init();
    text_codec::set_max_decompressed(cli.max_decompressed);
    // A misspelt queue name is refused before anything reads or writes it.
    match list::refusal(&cli).await {
        Ok(None) => {}
        Ok(Some(refused)) => {
            eprintln!("delayq: {refused}");
            return ExitCode::from(1);
        }
        Err(error) => return failed(&error, &cli.url),
    }
    let result = match &cli.command {
        Command::Inspect(args) => inspect::run(&cli, args).await,
        Command::List(args) => list::run(&cli, args).await,
        Command::Stats(args) => stats::run(&cli, args).await,
        Command::MoveDue(args) => move_due::run(&cli, args).await,
        Command::Purge(args) => purge::run(&cli, args).await,
        Command::DeadLetter(DeadLetterCommand::List(args)) => dead_letter::list(&cli, args).await,
        Command::DeadLetter(DeadLetterCommand::Requeue(args)) => dead_letter::requeue(&cli, args).await,
        Command::DeadLetter(DeadLetterCommand::Delete(args)) => dead_letter::delete(&cli, args).await,
        Command::Offer(args) => offer::run(&cli, args).await,
        Command::Take(args) => take::run(&cli, args).await,
        Command::Migrate(args) => migrate::run(&cli, args).await,
        Command::Transfer(args) => transfer::run(&cli, args).await,
        Command::Cancel(args) => cancel::run(&cli, args).await,
        Command::Reschedule(args) => ids::reschedule(&cli, args).await,
        Command::Get(args) => ids::get(&cli, args).await,
        Command::Pause(args) => pause::pause(&cli, args).await,
        Command::Resume(args) => pause::resume(&cli, args).await,
        Command::Limits(args) => limits::run(&cli, args).await,
        Command::Groups(args) => groups::run(&cli, args).await,
        Command::Schedule(ScheduleCommand::Add(args)) => schedule::add(&cli, args).await,
        Command::Schedule(ScheduleCommand::List(args)) => schedule::list(&cli, args).await,
        Command::Schedule(ScheduleCommand::Edit(args)) => schedule::edit(&cli, args).await,
        Command::Schedule(ScheduleCommand::RunNow(args)) => schedule::run_now(&cli, args).await,
        Command::Schedule(ScheduleCommand::Fires(args)) => schedule::fires(&cli, args).await,
        Command::Schedule(ScheduleCommand::Pause(args)) => schedule::set(&cli, args, schedule::Op::Pause).await,
        Command::Schedule(ScheduleCommand::Resume(args)) => schedule::set(&cli, args, schedule::Op::Resume).await,
        Command::Schedule(ScheduleCommand::Remove(args)) => schedule::set(&cli, args, schedule::Op::Remove).await,
        Command::Schedule(ScheduleCommand::Run(args)) => schedule::run(&cli, args).await,
        Command::Events(args) => events::run(&cli, args).await,
        Command::Workers(args) => workers::run(&cli, args).await,
        Command::Job(args) => job::run(&cli, args).await,
        Command::Result(args) => result::run(&cli, args).await,
        Command::Batch(BatchCommand::Offer(args)) => batch::offer(&cli, args).await,
        Command::Batch(BatchCommand::Show(args)) => batch::show(&cli, args).await,
        Command::Partition(PartitionCommand::Create(args)) => partition::create(&cli, args).await,
        Command::Partition(PartitionCommand::Show(args)) => partition::show(&cli, args).await,
        Command::Partition(PartitionCommand::Repartition(args)) => partition::repartition(&cli, args).await,
        Command::Partition(PartitionCommand::Retire(args)) => partition::retire(&cli, args).await,
        Command::Search(args) => search::run(&cli, args).await,
        Command::Dashboard(args) => dashboard::run(&cli, args).await,
    };
    match result {
        Ok(code) => code,
        Err(error) => failed(&error, &cli.url),
    }
}

/// The command line, parsed. `--version` is answered by every command
/// (`delayq stats --version`), always as `delayq VERSION`: clap would name
/// a subcommand's `delayq-stats`.
fn parse() -> Result<Cli, clap::Error> {
    fn named(command: clap::Command) -> clap::Command {
        command.mut_subcommands(|sub| named(sub.display_name("delayq")))
    }
    let mut command = named(Cli::command());
    let matches = command.try_get_matches_from_mut(std::env::args_os())?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
}

/// `delayq list | head`: once the reader has gone, the next `println!`
/// panics ("failed printing to stdout: Broken pipe") and printed a panic,
/// with a backtrace where one is asked for, under the rows the operator
/// wanted. Ends the process quietly instead, with 141 as a shell reports a
/// process that SIGPIPE ended (Rust ignores SIGPIPE: a reset to its default
/// would also end the process on a closed socket of its own).
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = (payload.downcast_ref::<String>().map(String::as_str))
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info)
    }));
}

/// Prints an error and the hint that fits it; exit status 2.
fn failed(error: &delayq::Error, url: &str) -> ExitCode {
    eprintln!("delayq: {}", output::escape(&message(error)));
    if let Some(hint) = hint(error, url) {
        eprintln!("hint: {hint}");
    }
    ExitCode::from(2)
}

/// `error` for an operator. The Redis client writes I/O errors with Rust's
/// Debug (`Os { code: 111, kind: ConnectionRefused, message: "Connection
/// refused" }`) and names its own error kinds (`Config Error:`): only what
/// failed is kept, and the hint line says what to do.
fn message(error: &delayq::Error) -> String {
    match error {
        delayq::Error::Connect { address, source } => {
            format!("cannot connect to Redis at {address}: {}", plain(source.message()))
        }
        delayq::Error::Redis(e) => format!("redis: {}", plain(e.message())),
        other => other.to_string(),
    }
}

/// `text` with each Debug-printed `std::io::Error` (`Os { .. message: "M" }`,
/// `Custom { .. error: "M" }`, `Kind(TimedOut)`) replaced by its message.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = ["Os {", "Custom {", "Kind("]
        .iter()
        .filter_map(|open| rest.find(open))
        .min()
    {
        out.push_str(&rest[..at]);
        let debug = &rest[at..];
        let Some(end) = debug.find([')', '}']).map(|end| end + 1) else {
            out.push_str(debug);
            return out;
        };
        let inner = &debug[..end];
        let said = ["message: \"", "error: \""]
            .iter()
            .find_map(|field| inner.split_once(field))
            .and_then(|(_, quoted)| quoted.split_once('"'))
            .map(|(said, _)| said.to_owned());
        match said {
            Some(said) => out.push_str(&said),
            // `Kind(TimedOut)`: the kind, as words.
            None => out.push_str(&words(inner.trim_start_matches("Kind(").trim_end_matches(')'))),
        }
        rest = &debug[end..];
    }
    out.push_str(rest);
    out
}

/// `TimedOut` as `timed out`.
fn words(camel: &str) -> String {
    let mut out = String::new();
    for c in camel.chars() {
        if c.is_uppercase() && !out.is_empty() {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// A handle on `queue` for commands that only look or act once: it never
/// runs the transfer, and payloads stay bytes (nothing is decoded).
pub(crate) fn look(client: &delayq::Client, queue: &str) -> delayq::Result<delayq::DelayedQueue<String>> {
    Ok(client
        .delayed_queue(queue, text_codec::TextCodec::new(args::CodecKind::Bytes))?
        .without_transfer())
}

/// The largest payload the CLI offers: the library's default, named so that
/// `offer --from-file` can check a whole file against it before sending any.
pub(crate) const MAX_PAYLOAD: usize = 16 * 1024 * 1024;

/// Connects to the URL given by `--url` / `REDIS_URL`.
pub(crate) async fn connect(cli: &Cli) -> delayq::Result<delayq::Client> {
    let clock = match cli.clock {
        args::ClockKind::Local => delayq::Clock::Local,
        args::ClockKind::Server => delayq::Clock::Server,
    };
    let mut builder = delayq::Client::builder()
        .url(&cli.url)
        .clock(clock)
        .max_payload_size(MAX_PAYLOAD)
        .connect_timeout(std::time::Duration::from_secs(5));
    if let Some(tls) = tls(cli)? {
        builder = builder.tls(tls);
    }
    builder.build().await.map_err(|error| match error {
        delayq::Error::Redis(e) => {
            delayq::Error::Redis(e.with_context(format!("cannot connect to {}", redacted(&cli.url))))
        }
        other => other,
    })
}

/// The TLS settings the options give, if any.
fn tls(cli: &Cli) -> delayq::Result<Option<delayq::Tls>> {
    let mut tls = match &cli.tls_ca_cert {
        Some(ca) => delayq::Tls::with_ca_file(ca)?,
        None if cli.tls_cert.is_some() => delayq::Tls::system_roots(),
        None => return Ok(None),
    };
    if let (Some(cert), Some(key)) = (&cli.tls_cert, &cli.tls_key) {
        tls = tls.client_cert_files(cert, key)?;
    }
    Ok(Some(tls))
}

/// The URL without its passwords (the server's and a sentinel's), for
/// messages. A password typed as it is may hold `@`, `:`, `/` or `?`, so
/// password parameters are hidden first (their values may hold `@` too),
/// then everything up to the last `@` is credentials, of which only the
/// user name before the first `:` is shown. (A name in the query with an
/// `@` hides more than needed, never less.)
fn redacted(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    let rest = without_password_params(rest);
    match rest.rsplit_once('@') {
        Some((credentials, host)) => match credentials.split_once(':') {
            Some((user, _)) => format!("{scheme}{user}:***@{host}"),
            None => format!("{scheme}***@{host}"),
        },
        None => format!("{scheme}{rest}"),
    }
}

/// `text` with the value of every `?NAME=` or `&NAME=` parameter whose name
/// mentions a password (`sentinelPassword`) replaced by `***`, up to the
/// next `&`.
fn without_password_params(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut after_separator = false;
    loop {
        let mut end = rest.find(['?', '&']).unwrap_or(rest.len());
        match rest[..end].split_once('=') {
            Some((name, _)) if after_separator && name.to_ascii_lowercase().contains("password") => {
                // The value runs to the next `&`: a `?` in it is its own.
                end = rest.find('&').unwrap_or(rest.len());
                out.push_str(name);
                out.push_str("=***");
            }
            _ => out.push_str(&rest[..end]),
        }
        let Some(separator) = rest[end..].chars().next() else {
            return out;
        };
        out.push(separator);
        rest = &rest[end + 1..];
        after_separator = true;
    }
}

/// What to check when Redis cannot be reached.
const CONNECT_HINT: &str = "is Redis running there? Set the address with --url or REDIS_URL (redis://host:port/db).";

/// What to do about the errors operators meet most: by what Redis or the
/// connection said first (TLS, cluster mode, database index, credentials),
/// then by kind.
fn hint(error: &delayq::Error, url: &str) -> Option<&'static str> {
    let said = match error {
        delayq::Error::Redis(e) | delayq::Error::Connect { source: e, .. } => e.message(),
        _ => "",
    };
    let tls = url.starts_with("rediss");
    if said.contains("DB index is out of range") {
        return Some(
            "the database number after host:port (/N) is more than the server has: its `databases` \
             setting, 16 by default (/0 to /15); a cluster has only /0.",
        );
    }
    if said.contains("Invalid integer") || said.contains("Invalid database") {
        return Some("the path after host:port is a database number: redis://host:port/0");
    }
    if said.contains("cluster support disabled") {
        return Some(
            "this server is not a Redis Cluster: give redis://host:port (rediss:// with TLS); \
             redis-cluster:// is for cluster nodes.",
        );
    }
    if said.starts_with("TRYAGAIN") || said.contains("Too many redirections") {
        return Some(
            "a Redis Cluster slot this command needs is being moved between nodes (a reshard); delayq \
             waited 30 s for the move to end. Try again once it has (`redis-cli --cluster check`); a \
             move left half done needs `redis-cli --cluster fix`.",
        );
    }
    if said.contains("MOVED") || said.contains("CROSSSLOT") || said.contains("ASK ") {
        return Some("this server is a Redis Cluster node: give redis-cluster://host:port (any node).");
    }
    if said.contains("unknown command 'SENTINEL'") {
        return Some(
            "that address is a Redis server, not a sentinel: redis-sentinel:// takes the sentinels' \
             addresses (usually port 26379); give redis://host:port for the server itself.",
        );
    }
    if tls && matches!(error, delayq::Error::Connect { .. }) && !said.contains("refused") {
        return Some(
            "rediss:// speaks TLS: does the server listen for TLS on that port (Redis's tls-port)? \
             A server without TLS needs redis://.",
        );
    }
    if !tls
        && matches!(error, delayq::Error::Connect { .. })
        && (said.contains("reset") || said.contains("closed") || said.contains("Protocol"))
    {
        return Some(
            "the server closed the connection: if it speaks TLS (tls-port), give rediss://host:port \
             (and --tls-ca-cert for a private CA).",
        );
    }
    match error {
        delayq::Error::WrongType { .. } => Some(
            "that name is not a delayed queue: one of its keys holds another type. A queue QUEUE uses \
             the list QUEUE, redisson_delay_queue_timeout:{QUEUE} (zset) and redisson_delay_queue:{QUEUE} (list).",
        ),
        delayq::Error::Redis(e) if e.message().contains("WRONGPASS") || e.message().contains("NOAUTH") => {
            Some("put the user and password in the URL: redis://user:password@host:port")
        }
        delayq::Error::Redis(e) if e.message().contains("InvalidCertificate") => Some(
            "Redis's certificate does not verify against the CAs this host trusts: give the CA that \
             signed it with --tls-ca-cert FILE (PEM).",
        ),
        delayq::Error::Redis(e) if e.message().contains("CertificateRequired") => {
            Some("Redis asks for a client certificate: give it with --tls-cert FILE --tls-key FILE (PEM).")
        }
        // Error::Connect's own message ends with Error::CONNECT_HINT; this adds where to set the URL.
        delayq::Error::Connect { .. } => Some(CONNECT_HINT),
        delayq::Error::Redis(e) if e.message().contains("cannot connect") => Some(CONNECT_HINT),
        delayq::Error::Decode(_) => Some(
            "is --codec the codec the Java side uses? (string, long, bytes, json, jackson, kryo, serialization, \
                 marshalling, lz4, lz4v2, snappy, zstd, WRAP/INNER; --codec auto detects it)",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    /// A slot being moved (TRYAGAIN after delayq's 30 s of retries) is
    /// named for what it is, with what to do.
    #[test]
    fn a_moving_slot_gets_its_hint() {
        use delayq::fred::error::{Error, ErrorKind};
        for said in [
            "TRYAGAIN Multiple keys request during rehashing of slot",
            "Too many redirections.",
        ] {
            let error: delayq::Error = Error::new(ErrorKind::Unknown, said).into();
            let hint = super::hint(&error, "redis-cluster://h:7000").unwrap_or_default();
            assert!(hint.contains("being moved between nodes"), "{said}: {hint}");
        }
    }

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(
            super::redacted("redis://app:s3cret@host:6379/0"),
            "redis://app:***@host:6379/0"
        );
        assert_eq!(super::redacted("redis://:s3cret@host"), "redis://:***@host");
        assert_eq!(super::redacted("redis://host:6379"), "redis://host:6379");
        assert_eq!(
            super::redacted("redis-sentinel://u:p@h:26379/0?sentinelServiceName=m&sentinelPassword=sp&node=h2:1"),
            "redis-sentinel://u:***@h:26379/0?sentinelServiceName=m&sentinelPassword=***&node=h2:1"
        );
        // Passwords typed with the characters that end a URL's parts.
        for (url, shown) in [
            ("redis://app:p@ss@host:6379/0", "redis://app:***@host:6379/0"),
            ("redis://app:p@ss:w@rd@host", "redis://app:***@host"),
            ("redis://app:pa?ss@host", "redis://app:***@host"),
            ("redis://app:pa/ss@host/0", "redis://app:***@host/0"),
            ("redis://app:pa#ss@host", "redis://app:***@host"),
            ("redis://s3@cret@host", "redis://***@host"),
            ("app:p@ss@host", "app:***@host"),
            (
                "redis-sentinel://u:p@w@h:26379/0?sentinelServiceName=m&sentinelPassword=s@p&node=h2:1",
                "redis-sentinel://u:***@h:26379/0?sentinelServiceName=m&sentinelPassword=***&node=h2:1",
            ),
            (
                "redis-sentinel://h:26379?sentinelPassword=s@p?q&node=h2:1",
                "redis-sentinel://h:26379?sentinelPassword=***&node=h2:1",
            ),
        ] {
            assert_eq!(super::redacted(url), shown, "{url}");
        }
    }
}
