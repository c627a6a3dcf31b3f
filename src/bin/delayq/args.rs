//! Command-line arguments.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use delayq::Format;

/// Offer to, take from and look inside Redisson-compatible delayed queues.
///
/// Queues are shared with Java services using Redisson's RDelayedQueue on
/// the same name: same keys, same bytes. QUEUE is always the name Java
/// passes to getBlockingQueue (after any NameMapper).
#[derive(Debug, Parser)]
#[command(
    name = "delayq",
    version,
    about,
    after_help = "Examples:\n  delayq offer orders --delay 10m '{\"id\":1}' --codec json\n  delayq inspect orders --codec json\n  delayq stats orders payments --watch\n  delayq take orders -n 5 --timeout 30s\n  delayq dead-letter requeue orders\n\nLogs: DELAYQ_LOG=debug (tracing filter syntax)."
)]
pub struct Cli {
    /// Redis URL: redis://[user:password@]host:port[/db] for one server,
    /// redis-cluster://host:port for a cluster (any node), or
    /// redis-sentinel://host:port/db?sentinelServiceName=NAME[&node=host:port] through
    /// sentinels. rediss://, rediss-cluster://, rediss-sentinel:// for TLS.
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379", global = true)]
    pub url: String,

    /// TLS: trust the CA certificate(s) in this PEM file instead of the
    /// system's roots (a private CA, or a self-signed server certificate).
    /// Implies TLS.
    #[arg(long, env = "REDIS_TLS_CA_CERT", value_name = "FILE", global = true)]
    pub tls_ca_cert: Option<PathBuf>,

    /// TLS: client certificate (PEM) to show when Redis asks for one
    /// (tls-auth-clients yes, Redis's default). Needs --tls-key. Implies TLS.
    #[arg(
        long,
        env = "REDIS_TLS_CERT",
        value_name = "FILE",
        requires = "tls_key",
        global = true
    )]
    pub tls_cert: Option<PathBuf>,

    /// TLS: the private key (PEM) of --tls-cert.
    #[arg(
        long,
        env = "REDIS_TLS_KEY",
        value_name = "FILE",
        requires = "tls_cert",
        global = true
    )]
    pub tls_key: Option<PathBuf>,

    /// Whose clock decides what is due when this process transfers: this
    /// host's (like Java) or the Redis server's (immune to this host's skew).
    #[arg(long, value_enum, default_value_t = ClockKind::Local, global = true)]
    pub clock: ClockKind,

    #[command(subcommand)]
    pub command: Command,
}

/// The clock the transfer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClockKind {
    /// This host's clock.
    Local,
    /// The Redis server's clock (TIME).
    Server,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show a queue: pending, ready, in-flight and dead-letter counts, the
    /// next due time, and the pending elements in due order.
    Inspect(InspectArgs),
    /// Counts and transfer lag of one or more queues, once or live (--watch).
    Stats(StatsArgs),
    /// Offer values to a delayed queue, due after --delay.
    Offer(OfferArgs),
    /// Take values from a queue's destination list as they come due (runs the
    /// transfer while it waits) and print one per line.
    Take(TakeArgs),
    /// Run the transfer now: move every due element to the destination list.
    MoveDue(MoveDueArgs),
    /// Delete a queue's pending elements (and with --ready its ready values),
    /// in small batches that never block Redis for long.
    Purge(PurgeArgs),
    /// The values reliable consumers and workers gave up on.
    #[command(subcommand)]
    DeadLetter(DeadLetterCommand),
    /// Rewrite a queue's pending elements in one element format, keeping
    /// their scores and order (for fleets moving across Redisson 3.21.1).
    Migrate(MigrateArgs),
    /// Keep queues moving: run the transfer for them (as a JVM holding an
    /// RDelayedQueue does) until stopped, --timeout, or --until-empty.
    Transfer(TransferArgs),
    /// Serve a web dashboard of every queue on the server, and Prometheus
    /// /metrics (loopback only unless a token is set).
    Dashboard(DashboardArgs),
}

/// `--format` of the commands that print what they read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned columns for people.
    Table,
    /// JSON for scripts (one document; with stats --watch, one line per refresh).
    Json,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Queue name.
    pub queue: String,
    /// Pending elements to list, earliest due first.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// How payloads are decoded for the preview (must match the Java codec).
    #[arg(long, value_enum, default_value_t = CodecKind::String)]
    pub codec: CodecKind,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Queue names.
    #[arg(required = true)]
    pub queues: Vec<String>,
    /// Refresh until interrupted (Ctrl-C).
    #[arg(long, short)]
    pub watch: bool,
    /// Time between refreshes with --watch.
    #[arg(long, value_parser = parse_delay, default_value = "1s")]
    pub interval: Duration,
    /// With --watch: stop after this many refreshes.
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub struct MoveDueArgs {
    /// Queue names.
    #[arg(required = true)]
    pub queues: Vec<String>,
    /// Fail if elements are still due after this long.
    #[arg(long, value_parser = parse_delay, default_value = "5m")]
    pub timeout: Duration,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub struct PurgeArgs {
    /// Queue name.
    pub queue: String,
    /// Also delete the values ready in the destination list.
    #[arg(long)]
    pub ready: bool,
    /// Really delete (without it, only says what would be deleted).
    #[arg(long)]
    pub yes: bool,
    /// Elements deleted per atomic step.
    #[arg(long, default_value_t = 1_000)]
    pub batch: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Subcommand)]
pub enum DeadLetterCommand {
    /// List dead-lettered values, oldest first, without removing them.
    List(DeadLetterListArgs),
    /// Move dead-lettered values back to the queue (its tail), with fresh delivery counts.
    Requeue(DeadLetterRequeueArgs),
}

#[derive(Debug, Args)]
pub struct DeadLetterListArgs {
    /// Queue name.
    pub queue: String,
    /// Values to list.
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    /// How values are decoded (must match the Java codec).
    #[arg(long, value_enum, default_value_t = CodecKind::String)]
    pub codec: CodecKind,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub struct DeadLetterRequeueArgs {
    /// Queue name.
    pub queue: String,
    /// Most values to requeue (default: all).
    #[arg(long)]
    pub max: Option<usize>,
    /// Values moved per atomic step.
    #[arg(long, default_value_t = 1_000)]
    pub batch: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub struct TransferArgs {
    /// Queue names.
    #[arg(required = true)]
    pub queues: Vec<String>,
    /// Stop once nothing is pending in any of the queues.
    #[arg(long)]
    pub until_empty: bool,
    /// Stop after this long.
    #[arg(long, value_parser = parse_delay)]
    pub timeout: Option<Duration>,
}

#[derive(Debug, Args)]
pub struct DashboardArgs {
    /// Address to listen on. Anything but loopback needs --token.
    #[arg(long, default_value = "127.0.0.1:9090")]
    pub listen: std::net::SocketAddr,
    /// How payloads are shown (must match the Java codec); hex when they do not decode.
    #[arg(long, value_enum, default_value_t = CodecKind::String)]
    pub codec: CodecKind,
    /// No actions: nothing on the dashboard can change a queue.
    #[arg(long)]
    pub read_only: bool,
    /// A token every request must carry (open the page once as /?token=TOKEN;
    /// Prometheus: Authorization: Bearer TOKEN). Required off loopback.
    #[arg(long, env = "DELAYQ_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// How often every queue is sampled (overview, history, /metrics gauges).
    #[arg(long, value_parser = parse_delay, default_value = "5s")]
    pub sample_interval: Duration,
}

#[derive(Debug, Args)]
pub struct OfferArgs {
    /// Queue name (the destination list Java passes to getBlockingQueue).
    pub queue: String,
    /// Delay before the values are due: 1500ms, 5s, 2m, 1h30m, 0.
    #[arg(long, short, value_parser = parse_delay, allow_hyphen_values = true)]
    pub delay: Duration,
    /// How values are encoded (must match the Java codec).
    #[arg(long, value_enum, default_value_t = CodecKind::String)]
    pub codec: CodecKind,
    /// Packed element layout: modern (Redisson >= 3.21.1) or legacy (<= 3.21.0).
    #[arg(long, default_value = "modern")]
    pub format: Format,
    /// With --codec jackson: the Java class of the value (`compat.Order`), and
    /// of nested objects by path (`customer=shop.Customer`, `lines[]=shop.Line`).
    #[arg(long = "java-class", value_name = "[PATH=]CLASS")]
    pub java_class: Vec<String>,
    /// Values to offer (bytes: hex; json, jackson: JSON text; long: decimal).
    /// Other values starting with `-` go after `--`.
    #[arg(required = true, allow_negative_numbers = true)]
    pub values: Vec<String>,
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Queue name.
    pub queue: String,
    /// The format to rewrite pending elements in.
    #[arg(long)]
    pub to: Format,
    /// Elements rewritten per atomic script.
    #[arg(long, default_value_t = 500)]
    pub batch: usize,
}

#[derive(Debug, Args)]
pub struct TakeArgs {
    /// Queue name.
    pub queue: String,
    /// How many values to take before exiting.
    #[arg(short = 'n', long = "count", default_value_t = 1)]
    pub count: usize,
    /// Give up after this long (exit status 1 if fewer than --count arrived).
    #[arg(long, value_parser = parse_delay)]
    pub timeout: Option<Duration>,
    /// How values are decoded (must match the Java codec).
    #[arg(long, value_enum, default_value_t = CodecKind::String)]
    pub codec: CodecKind,
    /// Output format: table prints one value per line as it arrives, json
    /// prints one JSON string per line.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

/// The codecs the CLI speaks; values are text on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CodecKind {
    /// UTF-8 text (Java StringCodec).
    String,
    /// Decimal 64-bit integer (Java LongCodec).
    Long,
    /// Raw bytes, written as hex on the command line (Java ByteArrayCodec).
    Bytes,
    /// Plain JSON (Java TypedJsonJacksonCodec).
    Json,
    /// JSON with Jackson type information (Java JsonJacksonCodec): printed as
    /// plain JSON; offered from plain JSON with --java-class.
    Jackson,
}

/// Parses a duration like `1500ms` or `5s`; a negative one is an error.
pub fn parse_delay(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.starts_with('-') {
        return Err(format!("{text:?} is a negative delay; delays must be zero or more"));
    }
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(text).map_err(|e| format!("{text:?} is not a duration like 1500ms, 5s or 2m: {e}"))
}
