//! Command-line arguments.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::{Args, Parser, Subcommand, ValueEnum};
use delayq::codec::compress::Compression;
use delayq::format::Format;

/// Offer to, take from and look inside Redisson-compatible delayed queues.
///
/// Queues are shared with Java services using Redisson's RDelayedQueue on
/// the same name: same keys, same bytes. QUEUE is always the name Java
/// passes to getBlockingQueue (after any NameMapper).
#[derive(Debug, Parser)]
#[command(
    name = "delayq",
    version,
    // `delayq stats --version` answers too, rather than "unexpected argument".
    propagate_version = true,
    about,
    // Every command takes --url; without it, REDIS_URL or the default.
    override_usage = "delayq [--url URL] [OPTIONS] <COMMAND>",
    after_help = "Examples:\n  delayq offer orders --delay 10m '{\"id\":1}' --codec json\n  delayq inspect orders --codec json\n  delayq stats orders payments --watch\n  delayq take orders -n 5 --timeout 30s\n  delayq dead-letter requeue orders --all\n\nLogs: DELAYQ_LOG=debug (tracing filter syntax)."
)]
pub(crate) struct Cli {
    /// Optional, before or after the command: the Redis to use (else
    /// REDIS_URL, else redis://127.0.0.1:6379).
    ///
    /// redis://[user:password@]host:port[/db] for one server,
    /// redis-cluster://host:port for a cluster (any node), or
    /// redis-sentinel://host:port/db?sentinelServiceName=NAME[&node=host:port] through
    /// sentinels; rediss://, rediss-cluster://, rediss-sentinel:// for TLS.
    /// host:port alone means redis://host:port.
    #[arg(
        long,
        env = "REDIS_URL",
        default_value = "redis://127.0.0.1:6379",
        global = true,
        help_heading = GLOBAL
    )]
    pub url: String,
    /// The largest payload a compressed value may decompress to when read
    /// (bytes, or with a unit: 64MiB, 512KiB); bigger ones show as
    /// undecodable instead of being expanded.
    #[arg(
        long,
        global = true,
        value_parser = parse_size,
        default_value = "64MiB",
        value_name = "SIZE",
        help_heading = GLOBAL
    )]
    pub max_decompressed: usize,
    /// TLS: trust the CA certificate(s) in this PEM file instead of the
    /// system's roots (a private CA, or a self-signed server certificate).
    /// Implies TLS.
    #[arg(long, env = "REDIS_TLS_CA_CERT", value_name = "FILE", global = true, help_heading = GLOBAL)]
    pub tls_ca_cert: Option<PathBuf>,

    /// TLS: client certificate (PEM) to show when Redis asks for one
    /// (tls-auth-clients yes, Redis's default). Needs --tls-key. Implies TLS.
    #[arg(
        long,
        env = "REDIS_TLS_CERT",
        value_name = "FILE",
        requires = "tls_key",
        global = true,
        help_heading = GLOBAL
    )]
    pub tls_cert: Option<PathBuf>,

    /// TLS: the private key (PEM) of --tls-cert.
    #[arg(
        long,
        env = "REDIS_TLS_KEY",
        value_name = "FILE",
        requires = "tls_cert",
        global = true,
        help_heading = GLOBAL
    )]
    pub tls_key: Option<PathBuf>,

    /// Whose clock decides what is due when this process transfers: this
    /// host's (like Java) or the Redis server's (immune to this host's skew).
    #[arg(long, value_enum, default_value_t = ClockKind::Local, global = true, help_heading = GLOBAL)]
    pub clock: ClockKind,

    #[command(subcommand)]
    pub command: Command,
}

/// The help heading of the options every command takes, so that a
/// command's own options stand apart and --url reads as optional.
const GLOBAL: &str = "Global options (any command, all optional)";

/// The URL schemes `--url` takes (what the library's builder connects to).
pub(crate) const URL_SCHEMES: [&str; 6] = [
    "redis",
    "rediss",
    "redis-cluster",
    "rediss-cluster",
    "redis-sentinel",
    "rediss-sentinel",
];

/// `--url` as the library takes it: `host:port` (no scheme) is
/// `redis://host:port`; another scheme than [`URL_SCHEMES`] is refused with
/// their list, naming only the scheme (the URL may hold a password).
pub(crate) fn normalize_url(url: &str) -> Result<String, String> {
    let url = url.trim();
    match url.split_once("://") {
        Some((scheme, _)) if URL_SCHEMES.contains(&scheme) => Ok(url.to_owned()),
        Some((scheme, _)) => Err(format!(
            "--url: `{scheme}://` is not a Redis URL; use {}",
            URL_SCHEMES.map(|s| format!("{s}://")).join(", ")
        )),
        None if url.is_empty() => Err("--url is empty: give redis://host:port (or host:port)".into()),
        None => Ok(format!("redis://{url}")),
    }
}

/// The clock the transfer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ClockKind {
    /// This host's clock.
    Local,
    /// The Redis server's clock (TIME).
    Server,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Show a queue: pending, ready, in-flight and dead-letter counts, the
    /// next due time, and the pending elements in due order.
    Inspect(InspectArgs),
    /// Counts and transfer lag of one or more queues, once or live (--watch).
    /// LATENCY is how long the oldest ready value has waited since it fell
    /// due: "unknown" where no transfer recorded that (a value offered
    /// straight to the ready list, or moved while no delayq worker tracked
    /// lateness).
    Stats(StatsArgs),
    /// Every queue on the server with its counts (found by SCAN and by
    /// delayq's registry of the queues it has offered to, consumed or
    /// transferred), what needs attention first, as the dashboard's overview
    /// ranks them: dead letters, transfer lag over 5s, ready values nobody
    /// takes, the oldest ready value's wait over 5s, pauses over an hour,
    /// quarantined elements, schedules no runner fires.
    #[command(
        after_help = "Examples:\n  delayq list\n  delayq list --attention-only\n  delayq list --filter orders --sort pending"
    )]
    List(ListArgs),
    /// Offer values to a delayed queue, due after --delay.
    Offer(OfferArgs),
    /// Take values from a queue's destination list as they come due (runs the
    /// transfer while it waits) and print one per line. A plain pop, as
    /// Java's `take`: it neither waits for a concurrency limit nor counts
    /// against it.
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
    /// Stop the job offered with an id, wherever it is: a pending element is
    /// removed; a ready job is dropped by the take that reaches it; a running
    /// job's Worker is told. Ready and running jobs are found only on queues
    /// that keep job history (`delayq job QUEUE --history on`). Exit status 0
    /// when it removed one or asked a cancel, 1 when there was nothing to
    /// cancel (already ended, or no such job).
    #[command(
        after_help = "Examples:\n  delayq cancel imports import-7\n  delayq cancel imports import-7 --format json"
    )]
    Cancel(CancelArgs),
    /// Give the pending element with an id a new due time (exit status 1 if none is pending).
    Reschedule(RescheduleArgs),
    /// Show the pending element with an id: value and due time (exit status 1 if none).
    Get(GetArgs),
    /// Pause a queue: delayq's transfers and reliable consumers wait (Java's do not know).
    Pause(PauseArgs),
    /// Resume a paused queue: what fell due meanwhile moves now.
    Resume(QueueArg),
    /// Show a queue's limits, or change those given: --max-size, --max-payload,
    /// --concurrency (N, or `none`), --offers on|off, --takes on|off. delayq's
    /// offers and consumers obey them; Java's do not read them.
    Limits(LimitsArgs),
    /// Groups (`offer --group KEY`): show the settings a queue's group keys
    /// share and its grouped values (ready, delayed; keys runnable now and
    /// held), or change those given: --concurrency N, --rate COUNT/DURATION
    /// (or none), --on-failure hold|skip. delayq's reliable consumers and
    /// workers obey them; Java never sees grouped values.
    Groups(GroupsArgs),
    /// Recurring schedules: offer a value to a queue at each occurrence of a
    /// cron expression or a period, once per occurrence across every process.
    #[command(subcommand)]
    Schedule(ScheduleCommand),
    /// A queue's lifecycle events (offered, transferred, claimed, acked,
    /// retried, dead-lettered, ...): print the kept ones, and with --follow
    /// those that come; `events enable QUEUE` / `events disable QUEUE` turn
    /// them on and off for every delayq process (Java's own operations write
    /// none).
    Events(EventsArgs),
    /// The workers connected to a queue (every queue without QUEUE): host,
    /// process, version, settings, counts, what each runs now and its
    /// lease; a worker that stopped beating is flagged SILENT.
    Workers(WorkersArgs),
    /// Where a job offered with an id is now (pending, ready, in flight,
    /// dead-lettered, handled) and its last attempts: when, on which
    /// worker, how each ended, its error, source chain and backtrace. Exits
    /// 1 for an id with no trace. Histories are kept only for queues that
    /// turn them on (`delayq job QUEUE --history on`; off by default: they
    /// cost a Worker most of its rate over values with ids).
    #[command(
        after_help = "Examples:\n  delayq job orders order-42\n  delayq job orders --history on=7d\n  delayq job orders --history off"
    )]
    Job(JobArgs),
    /// A job's end: its state, the result its handler returned (a Worker's
    /// `run_job`, `Delivery::ack_with_result`), its last progress. With
    /// --wait, waits for it to end first. Exit status 0 when it was handled
    /// (with or without a result), 1 when it has not ended (or --wait ran
    /// out, or no such job), 2 when it ended otherwise: dead-lettered,
    /// cancelled, deleted, removed. Needs the queue's job history
    /// (`delayq job QUEUE --history on`).
    #[command(
        after_help = "Examples:\n  delayq result reports report-2026-11\n  delayq result reports report-2026-11 --wait 5m --format json"
    )]
    Result(ResultArgs),
    /// Batches: values offered together as jobs (`BATCH/1`, `BATCH/2`, ...)
    /// whose completion, a JSON object with their counts, is offered once to
    /// a queue of choice when every one has ended (handled, dead-lettered or
    /// cancelled). Needs the queue's job history (`delayq job QUEUE
    /// --history on`); only delayq's reliable consumers and workers count
    /// members as they end.
    #[command(subcommand)]
    Batch(BatchCommand),
    /// Partitioned queues: one logical queue over N ordinary Redisson
    /// queues whose names hash to different Cluster slots (spread over the
    /// primaries). `delayq offer Q` offers to a partitioned Q round robin,
    /// or to the partition of --partition-key; a Java service reads or
    /// writes a partition by the name `show` prints.
    #[command(subcommand)]
    Partition(PartitionCommand),
    /// Find values by id or by text across queues: pending elements, ready
    /// values, dead letters. A value matches when TEXT, in any case, occurs
    /// in its payload as --codec decodes it (what `inspect` shows; an
    /// undecodable payload is read as UTF-8) or in the id it was offered
    /// with; a pending element whose id is exactly TEXT is found through
    /// the id index first. Each run looks at --budget values at most and
    /// says how far it got, and how to go on (--from).
    #[command(
        after_help = "Examples:\n  delayq search ord-42\n  delayq search 'smtp' --queue mail --state dead\n  delayq search ord-42 --from '6:orders.pending.10001.10000'"
    )]
    Search(SearchArgs),
    /// Serve a web dashboard of every queue on the server, and Prometheus
    /// /metrics (loopback only unless a token is set).
    Dashboard(DashboardArgs),
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct EventsArgs {
    #[command(subcommand)]
    pub command: Option<EventsCommand>,
    /// Queue name.
    #[arg(required = true)]
    pub queue: Option<String>,
    /// Keep printing events as they come, until interrupted.
    #[arg(long)]
    pub follow: bool,
    /// Only events after this stream id (as printed), instead of every kept one.
    #[arg(long, value_name = "STREAM_ID")]
    pub after: Option<String>,
    /// Output format: text lines, or one JSON object a line.
    #[arg(long, value_enum, default_value_t = EventsFormat::Text)]
    pub format: EventsFormat,
}

/// How `delayq events` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum EventsFormat {
    /// One line per event for people.
    Text,
    /// One JSON object per line (the library's `Event` as JSON).
    Json,
}

#[derive(Debug, Subcommand)]
pub(crate) enum EventsCommand {
    /// Turn a queue's events on (or change their max length).
    Enable(EventsEnableArgs),
    /// Turn a queue's events off (the stream and its history stay).
    Disable(QueueArg),
}

#[derive(Debug, Args)]
pub(crate) struct EventsEnableArgs {
    /// Queue name.
    pub queue: String,
    /// How many events the stream keeps, about (XADD MAXLEN ~).
    #[arg(long, default_value_t = delayq::events::DEFAULT_EVENTS_MAX_LEN, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_len: u64,
}

#[derive(Debug, Args)]
pub(crate) struct QueueArg {
    /// Queue name.
    pub queue: String,
}

#[derive(Debug, Args)]
pub(crate) struct PauseArgs {
    /// Queue name.
    pub queue: String,
    /// Pause it even if the queue does not exist yet (without it, a name
    /// no queue has is refused: a typo would leave a stray pause).
    #[arg(long)]
    pub create: bool,
}

#[derive(Debug, Args)]
pub(crate) struct LimitsArgs {
    /// Queue name.
    pub queue: String,
    /// Most values pending plus ready (taken, unacknowledged ones do not
    /// count): a number, or `none`.
    #[arg(long, value_name = "N|none")]
    pub max_size: Option<Bound>,
    /// Most bytes of one payload: a number, or `none`.
    #[arg(long, value_name = "BYTES|none")]
    pub max_payload: Option<Bound>,
    /// Whether delayq's offers are admitted.
    #[arg(long, value_enum, value_name = "on|off")]
    pub offers: Option<Switch>,
    /// Whether delayq's reliable consumers and workers take (off: they wait,
    /// as while paused; transfers go on).
    #[arg(long, value_enum, value_name = "on|off")]
    pub takes: Option<Switch>,
    /// Most delayq deliveries in flight at once across every process
    /// (reliable takes, take_many and workers wait for room): a number (at
    /// least 1), or `none`. Java's consumers neither read it nor count
    /// against it.
    #[arg(long, value_name = "N|none", value_parser = parse_concurrency)]
    pub concurrency: Option<Bound<u32>>,
    /// Set limits even if the queue does not exist yet (without it, a name
    /// no queue has is refused: a typo would leave stray limits).
    #[arg(long)]
    pub create: bool,
}

/// A limit's value on the command line: a number, or `none` (no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bound<T = u64>(pub Option<T>);

impl<T: std::str::FromStr> std::str::FromStr for Bound<T> {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "none" {
            return Ok(Bound(None));
        }
        match s.parse() {
            Ok(n) => Ok(Bound(Some(n))),
            // A whole number past what this limit holds (u32 for --concurrency).
            Err(_) if s.parse::<u64>().is_ok() => Err(format!("{s} is too large for this limit")),
            Err(_) => Err(format!("{s:?} is neither a whole number nor `none`")),
        }
    }
}

/// `--concurrency`: a [`Bound`] other than 0, which would hold every take
/// (the library refuses it too).
fn parse_concurrency(s: &str) -> Result<Bound<u32>, String> {
    match s.parse()? {
        Bound(Some(0)) => Err("a concurrency limit of 0 would hold every take: use --takes off to stop takes".into()),
        bound => Ok(bound),
    }
}

/// A switch on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Switch {
    On,
    Off,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Order of the queues (the greatest first; ties by name).
    #[arg(long, value_enum, default_value_t = ListSort::Attention)]
    pub sort: ListSort,
    /// Only queues whose name contains TEXT, in any case.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Only queues that need attention.
    #[arg(long)]
    pub attention_only: bool,
    /// How long to watch queues that have ready values and no live worker,
    /// to tell whether anyone takes them (0 skips it: they are not ranked
    /// as untaken).
    #[arg(long, value_parser = parse_delay, default_value = "1s", value_name = "DURATION")]
    pub watch_ready: Duration,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// The text (any case) or id to look for.
    pub text: String,
    /// Only in this queue (repeat for several; without it, every queue).
    #[arg(long = "queue", value_name = "QUEUE")]
    pub queues: Vec<String>,
    /// Only in this state (repeat for several; without it, all three).
    #[arg(long = "state", value_enum, value_name = "STATE")]
    pub states: Vec<SearchState>,
    /// Values looked at in this run, most (at most 100,000).
    #[arg(long, default_value_t = delayq::search::DEFAULT_BUDGET, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub budget: usize,
    /// Matches shown, most (at most 1,000).
    #[arg(long, default_value_t = delayq::search::DEFAULT_LIMIT, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000))]
    pub limit: usize,
    /// Go on from where a run stopped: the cursor it printed.
    #[arg(long, value_name = "CURSOR")]
    pub from: Option<String>,
    /// How payloads are decoded before they are matched and shown.
    #[arg(long, value_parser = parse_read_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// With kryo, serialization, marshalling: the Java classes of POJOs and
    /// enums (a JSON schema file, or the Java service's jar or classes).
    #[arg(long, value_name = "PATH", visible_aliases = ["schema", "kryo-schema-from"])]
    pub kryo_schema: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

/// `delayq search --state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SearchState {
    /// Pending elements (not due yet, or not moved yet).
    Pending,
    /// Values ready in the destination list.
    Ready,
    /// Dead letters.
    Dead,
}

impl From<SearchState> for delayq::search::ValueState {
    fn from(state: SearchState) -> Self {
        use delayq::search::ValueState;
        match state {
            SearchState::Pending => ValueState::Pending,
            SearchState::Ready => ValueState::Ready,
            SearchState::Dead => ValueState::Dead,
        }
    }
}

/// `delayq list --sort`: the library's queue orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ListSort {
    /// What needs attention first, as the dashboard's overview.
    Attention,
    /// By name.
    Name,
    /// Most pending elements first.
    Pending,
    /// Most ready values first.
    Ready,
    /// Most dead letters first.
    Dead,
    /// Greatest transfer lag first.
    Lag,
}

impl From<ListSort> for delayq::attention::QueueOrder {
    fn from(sort: ListSort) -> Self {
        use delayq::attention::QueueOrder;
        match sort {
            ListSort::Attention => QueueOrder::Attention,
            ListSort::Name => QueueOrder::Name,
            ListSort::Pending => QueueOrder::Pending,
            ListSort::Ready => QueueOrder::Ready,
            ListSort::Dead => QueueOrder::Dead,
            ListSort::Lag => QueueOrder::Lag,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct IdArgs {
    /// Queue name.
    pub queue: String,
    /// The id the element was offered with (`delayq offer --id`).
    pub id: String,
}

#[derive(Debug, Args)]
pub(crate) struct CancelArgs {
    /// Queue name.
    pub queue: String,
    /// The job's id (as given to `delayq offer --id` or offer_with_id).
    pub id: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub(crate) struct ResultArgs {
    /// Queue name.
    pub queue: String,
    /// The job's id (as given to `delayq offer --id` or offer_with_id).
    pub id: String,
    /// Wait up to this long for the job to end: 30s, 5m, 1h.
    #[arg(long, value_parser = parse_delay, value_name = "DURATION")]
    pub wait: Option<Duration>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Subcommand)]
pub(crate) enum BatchCommand {
    /// Offer values as one batch, and print its id. Each value is a job
    /// with a history, a cancel and a result (`BATCH/N`, N from 1 in the
    /// order given). When the queue's limits refuse a member half way, the
    /// members before it stay offered and the batch stays `offering` (no
    /// completion): the same command with --id BATCH resumes it (exit
    /// status 1).
    #[command(
        after_help = "Examples:\n  delayq batch offer imports --id nov --on-complete imports-done --data '{\"file\":\"nov.csv\"}' --from-file nov.txt\n  delayq batch offer mail --delay 10m alice@example.com bob@example.com --format json"
    )]
    // Boxed: its options are many beside `show`'s.
    Offer(Box<BatchOfferArgs>),
    /// A batch's state (offering, open, complete, delivered), its members
    /// handled, dead-lettered and cancelled of its total with a progress
    /// bar, when it began and ended, and where its completion goes. Exit
    /// status 0 when found, 1 when there is no such batch.
    #[command(
        after_help = "Examples:\n  delayq batch show imports nov\n  delayq batch show imports nov --format json"
    )]
    Show(BatchShowArgs),
}

#[derive(Debug, Subcommand)]
pub(crate) enum PartitionCommand {
    /// Create the partitioned queue QUEUE with COUNT partitions (1 to
    /// 1,024; about one per Cluster primary or a multiple of it), and
    /// print its layout. Creating it again with the same count prints the
    /// stored layout, another count is refused (exit status 1) and changes
    /// nothing (`partition repartition` changes it). The name has no braces.
    #[command(
        after_help = "Examples:\n  delayq partition create orders 3\n  delayq partition create orders 6 --format json"
    )]
    Create(PartitionCreateArgs),
    /// A partitioned queue's layout: its count, each partition's name (an
    /// ordinary Redisson queue a Java service can use), slot, node on a
    /// Cluster, and values ready, pending, in flight and dead. Exit status
    /// 1 when QUEUE is not a partitioned queue.
    #[command(after_help = "Examples:\n  delayq partition show orders\n  delayq partition show orders --format json")]
    Show(PartitionShowArgs),
    /// Re-partition QUEUE to COUNT partitions: a new generation of
    /// partitions (new names) takes every offer from now; the old ones are
    /// retired, not moved: takes and partitioned workers drain them in
    /// place (values keep their headers, ids and groups), before the new
    /// ones. Running processes follow within about a second. Then
    /// `partition retire QUEUE` drops the drained ones. Safe to run again
    /// (the count it has changes nothing). Prints the layout.
    #[command(after_help = "Examples:\n  delayq partition repartition orders 6\n  delayq partition retire orders")]
    Repartition(PartitionCreateArgs),
    /// Drop QUEUE's retired partitions that hold nothing (seen empty twice,
    /// 3 s apart): takes and workers stop reading them. Lists those still
    /// holding values; exit status 3 while any is left (run it again once
    /// they are drained), 2 on an error (Redis unreachable...), 1 when
    /// QUEUE is not a partitioned queue.
    #[command(after_help = "Examples:\n  delayq partition retire orders")]
    Retire(PartitionShowArgs),
}

#[derive(Debug, Args)]
pub(crate) struct PartitionCreateArgs {
    /// The logical queue's name (no braces).
    pub queue: String,
    /// How many partitions (1 to 1,024).
    pub count: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub(crate) struct PartitionShowArgs {
    /// The logical queue's name.
    pub queue: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub(crate) struct BatchOfferArgs {
    /// Queue name (the destination list Java passes to getBlockingQueue).
    pub queue: String,
    /// The batch's id (1 to 128 bytes, no `/`), instead of a random one.
    /// Offering again under it resumes a batch stopped half way; an id in
    /// use by a batch of another size or target is refused.
    #[arg(long, value_name = "BATCH")]
    pub id: Option<String>,
    /// Once every member has ended, offer the completion to this queue (any
    /// queue): `{"batch", "queue", "total", "handled", "dead_lettered",
    /// "cancelled", "data"}` as JSON text, due at once, offered once. Read
    /// it with --codec json or string (Java: StringCodec or
    /// TypedJsonJacksonCodec).
    #[arg(long, value_name = "TARGET")]
    pub on_complete: Option<String>,
    /// With --on-complete: the completion's `data`, any JSON (at most 64 KiB).
    #[arg(long, value_name = "JSON", value_parser = parse_json, requires = "on_complete")]
    pub data: Option<serde_json::Value>,
    /// Delay before the members are due: 1500ms, 5s, 2m, 1h30m, 0.
    #[arg(long, short, value_parser = parse_delay, allow_hyphen_values = true, default_value = "0")]
    pub delay: Duration,
    /// How long the batch's record is kept once its completion is offered
    /// (default 7d).
    #[arg(long, value_parser = parse_delay, value_name = "DURATION")]
    pub keep: Option<Duration>,
    /// How values are encoded (must match the Java codec).
    #[arg(long, value_parser = parse_write_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// As for `delayq offer`: with --codec jackson, the Java class of the
    /// values, and of values inside them by path; with kryo, serialization
    /// or marshalling, the class of the values, a POJO or enum of
    /// --kryo-schema.
    #[arg(long = "java-class", value_name = "[PATH=]CLASS")]
    pub java_class: Vec<String>,
    /// With kryo, serialization or marshalling: the Java type of the values
    /// (`Long`, `String`, `List<Integer>`...), as for `delayq offer`.
    #[arg(long = "java-type", value_name = "TYPE", conflicts_with = "java_class")]
    pub java_type: Option<String>,
    /// With kryo, serialization, marshalling: the Java classes of POJOs and
    /// enums (a JSON schema file, or the Java service's jar or classes).
    #[arg(long, value_name = "PATH", visible_aliases = ["schema", "kryo-schema-from"])]
    pub kryo_schema: Option<PathBuf>,
    /// Packed element layout: modern (Redisson >= 3.21.1) or legacy (<=
    /// 3.21.0); `delayq offer --format`, named apart from the output format.
    #[arg(long, default_value = "modern", value_name = "modern|legacy")]
    pub element_format: Format,
    /// One value per line of FILE instead (`-`: standard input), in the
    /// file's order, encoded as VALUE arguments are. Every line is checked
    /// first: a line the codec cannot encode is an error naming it, and
    /// nothing is offered.
    #[arg(long, value_name = "FILE", conflicts_with = "values")]
    pub from_file: Option<PathBuf>,
    /// Output format: the batch id alone on a line, or a JSON object.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Values to offer (bytes: hex; json, jackson, kryo: JSON text; long: decimal).
    /// Other values starting with `-` go after `--`.
    #[arg(required_unless_present = "from_file", allow_negative_numbers = true)]
    pub values: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct BatchShowArgs {
    /// Queue name.
    pub queue: String,
    /// The batch's id (as `delayq batch offer` printed it).
    pub id: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

/// Parses a `--data`: any JSON text.
pub(crate) fn parse_json(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))
}

#[derive(Debug, Args)]
pub(crate) struct RescheduleArgs {
    /// Queue name.
    pub queue: String,
    /// The id the element was offered with.
    pub id: String,
    /// New delay from now: 1500ms, 5s, 2m, 1h30m, 0.
    #[arg(long, short, value_parser = parse_delay, allow_hyphen_values = true, required_unless_present = "at", conflicts_with = "at")]
    pub delay: Option<Duration>,
    /// New due time instead, in RFC 3339: 2026-12-01T10:00:00Z,
    /// 2026-12-01T11:00:00+01:00.
    #[arg(long, value_parser = parse_time)]
    pub at: Option<SystemTime>,
}

#[derive(Debug, Args)]
pub(crate) struct GetArgs {
    /// Queue name.
    pub queue: String,
    /// The id the element was offered with.
    pub id: String,
    /// How the value is decoded (must match the Java codec).
    #[arg(long, value_parser = parse_read_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// With kryo, serialization, marshalling (alone, in a compression, or
    /// detected by auto): the Java classes of POJOs and enums: a JSON schema
    /// file (see compat/README.md), or the Java service's jar or folder of
    /// compiled classes, read for them.
    #[arg(long, value_name = "PATH", visible_aliases = ["schema", "kryo-schema-from"])]
    pub kryo_schema: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ScheduleCommand {
    /// Add a schedule, or replace its definition (the same definition again
    /// keeps its next occurrence, paused state and counts). Processes that
    /// run the queue's schedules (`delayq schedule run`, or a library
    /// client) fire it.
    Add(ScheduleAddArgs),
    /// A queue's schedules: spec, next occurrence, paused, fired and missed counts.
    List(ScheduleListArgs),
    /// Change a schedule's spec (--cron or --every), time zone, misfire
    /// settings or value, keeping its name, paused state, counts and fire
    /// history (exit status 1 if there is none: edit adds nothing). A new
    /// timing fires from its first occurrence after now.
    Edit(ScheduleEditArgs),
    /// Offer a schedule's value once, now, without moving its next
    /// occurrence or its counts; a paused schedule runs too (exit status 1
    /// if there is none).
    RunNow(ScheduleNameArgs),
    /// A schedule's recent fires, newest first (the last 20): when each was
    /// due and ran, on time, late or missed by the misfire policy or run by
    /// hand, values offered and skipped, and the runner (exit status 1 if
    /// there is no such schedule).
    Fires(ScheduleFiresArgs),
    /// Stop firing a schedule until it is resumed (exit status 1 if there is none).
    Pause(ScheduleNameArgs),
    /// Fire a paused schedule again from its next occurrence after now (exit status 1 if there is none).
    Resume(ScheduleNameArgs),
    /// Delete a schedule; values it offered stay queued (exit status 1 if there is none).
    Remove(ScheduleNameArgs),
    /// Run the schedules of queues until stopped or --timeout: fire each
    /// occurrence unless another process did first, and transfer the queues
    /// (unless --no-transfer).
    Run(ScheduleRunArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ScheduleAddArgs {
    /// Queue name.
    pub queue: String,
    /// Schedule name (unique within the queue).
    pub name: String,
    /// Cron expression: 5 fields (minute hour day month weekday) or 6 with
    /// seconds first; `CRON_TZ=Zone ` prefix or --tz for a time zone.
    #[arg(long, required_unless_present = "every", conflicts_with = "every")]
    pub cron: Option<String>,
    /// IANA time zone of --cron (Europe/Paris); default UTC.
    #[arg(long, requires = "cron")]
    pub tz: Option<String>,
    /// A fixed period instead of --cron: 1s, 5m, 1h30m (first occurrence one period from now).
    #[arg(long, value_parser = parse_delay)]
    pub every: Option<Duration>,
    /// Missed occurrences (later than --misfire-after): skip, fire_once, fire_all.
    #[arg(long, default_value = "skip")]
    pub misfire: String,
    /// How late an occurrence may fire and still count as on time.
    #[arg(long, value_parser = parse_delay, default_value = "60s")]
    pub misfire_after: Duration,
    /// How the value is encoded (must match the Java codec).
    #[arg(long, value_parser = parse_write_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// Packed element layout: modern (Redisson >= 3.21.1) or legacy (<= 3.21.0).
    #[arg(long, default_value = "modern")]
    pub format: Format,
    /// With --codec jackson: the Java class of the value, and of values inside it by path
    /// (`customer=shop.Customer`, `total=java.math.BigDecimal`).
    #[arg(long = "java-class", value_name = "[PATH=]CLASS")]
    pub java_class: Vec<String>,
    /// The value offered at each occurrence (bytes: hex; json, jackson: JSON text; long: decimal).
    #[arg(allow_hyphen_values = true)]
    pub value: String,
}

#[derive(Debug, Args)]
pub(crate) struct ScheduleEditArgs {
    /// Queue name.
    pub queue: String,
    /// Schedule name.
    pub name: String,
    /// A new cron expression (5 or 6 fields; `CRON_TZ=Zone ` prefix or --tz).
    #[arg(long, conflicts_with = "every")]
    pub cron: Option<String>,
    /// A new period instead: 1s, 5m, 1h30m (first occurrence one period from now).
    #[arg(long, value_parser = parse_delay)]
    pub every: Option<Duration>,
    /// IANA time zone of the cron expression (Europe/Paris), the new one or the stored one.
    #[arg(long)]
    pub tz: Option<String>,
    /// Missed occurrences: skip, fire_once, fire_all (default: as stored).
    #[arg(long)]
    pub misfire: Option<String>,
    /// How late an occurrence may fire and still count as on time (default: as stored).
    #[arg(long, value_parser = parse_delay)]
    pub misfire_after: Option<Duration>,
    /// How a new value is encoded (must match the Java codec, as for `schedule add`).
    #[arg(long, value_parser = parse_write_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// With --codec jackson: the Java class of the value, and of values inside it by path.
    #[arg(long = "java-class", value_name = "[PATH=]CLASS")]
    pub java_class: Vec<String>,
    /// A new value (bytes: hex; json, jackson: JSON text; long: decimal);
    /// packed in the element format the schedule was added with.
    #[arg(allow_hyphen_values = true)]
    pub value: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ScheduleFiresArgs {
    /// Queue name.
    pub queue: String,
    /// Schedule name.
    pub name: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub(crate) struct JobArgs {
    /// Queue name.
    pub queue: String,
    /// The job's id (as given to offer_with_id).
    #[arg(required_unless_present = "history")]
    pub id: Option<String>,
    /// Turn the queue's job histories on, keeping handled ones DURATION
    /// (default 1d), or off: off deletes every history the queue kept.
    /// Without ID, prints the switch's new state.
    #[arg(long, value_parser = parse_history, value_name = "on[=DURATION]|off", conflicts_with = "id")]
    pub history: Option<HistorySwitch>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub(crate) struct WorkersArgs {
    /// Queue name (every queue with workers when left out).
    pub queue: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub(crate) struct ScheduleListArgs {
    /// Queue name.
    pub queue: String,
    /// How values are decoded for display (must match the Java codec).
    #[arg(long, value_parser = parse_read_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// With kryo, serialization, marshalling (alone, in a compression, or
    /// detected by auto): the Java classes of POJOs and enums: a JSON schema
    /// file (see compat/README.md), or the Java service's jar or folder of
    /// compiled classes, read for them.
    #[arg(long, value_name = "PATH", visible_aliases = ["schema", "kryo-schema-from"])]
    pub kryo_schema: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub(crate) struct ScheduleNameArgs {
    /// Queue name.
    pub queue: String,
    /// Schedule name.
    pub name: String,
}

#[derive(Debug, Args)]
pub(crate) struct ScheduleRunArgs {
    /// Queue names.
    #[arg(required = true)]
    pub queues: Vec<String>,
    /// Only fire: leave moving due elements to other processes.
    #[arg(long)]
    pub no_transfer: bool,
    /// Stop after this long.
    #[arg(long, value_parser = parse_delay)]
    pub timeout: Option<Duration>,
}

/// `--format` of the commands that print what they read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// Aligned columns for people (also `text`).
    #[value(alias = "text")]
    Table,
    /// JSON for scripts (one document; with stats --watch, one line per refresh).
    Json,
}

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// Queue name.
    pub queue: String,
    /// Pending elements to list, earliest due first.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Pending elements to skip first, earliest due first (0: from the first).
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// How payloads are decoded for the preview (must match the Java codec).
    #[arg(long, value_parser = parse_read_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// With kryo, serialization, marshalling (alone, in a compression, or
    /// detected by auto): the Java classes of POJOs and enums: a JSON schema
    /// file (see compat/README.md), or the Java service's jar or folder of
    /// compiled classes, read for them.
    #[arg(long, value_name = "PATH", visible_aliases = ["schema", "kryo-schema-from"])]
    pub kryo_schema: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// Queue names.
    #[arg(required_unless_present = "all")]
    pub queues: Vec<String>,
    /// Every queue on the server (as `delayq list`).
    #[arg(long, conflicts_with = "queues")]
    pub all: bool,
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
pub(crate) struct MoveDueArgs {
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
pub(crate) struct PurgeArgs {
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
pub(crate) enum DeadLetterCommand {
    /// List dead-lettered values, oldest first, with when and why each died,
    /// without removing them.
    #[command(
        after_help = "Examples:\n  delayq dead-letter list orders --offset 100 --limit 50\n  delayq dead-letter list orders --reason 'smtp'\n  delayq dead-letter list orders --group-by-reason"
    )]
    List(DeadLetterListArgs),
    /// Move dead-lettered values back to the queue (its tail), with fresh
    /// delivery counts: all, the oldest N, those at given positions, or those
    /// with a reason; says which values moved.
    #[command(
        after_help = "Examples:\n  delayq dead-letter requeue orders --all\n  delayq dead-letter requeue orders --max 100\n  delayq dead-letter requeue orders --index 3,7\n  delayq dead-letter requeue orders --reason 'smtp'   (says how many)\n  delayq dead-letter requeue orders --reason 'smtp' --expect 12"
    )]
    Requeue(DeadLetterRequeueArgs),
    /// Delete dead-lettered values: those at the given positions (as `list`
    /// numbers them), or all.
    #[command(
        after_help = "Examples:\n  delayq dead-letter delete orders --index 3,7 --dry-run\n  delayq dead-letter delete orders --all\n  delayq dead-letter delete orders --reason 'bad input'   (says how many)\n  delayq dead-letter delete orders --reason 'bad input' --expect 12"
    )]
    Delete(DeadLetterDeleteArgs),
}

#[derive(Debug, Args)]
pub(crate) struct DeadLetterListArgs {
    /// Queue name.
    pub queue: String,
    /// Values to list.
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    /// Dead letters to skip first (0: start at the oldest).
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// Only those whose reason contains TEXT (case-insensitive), looking from
    /// --offset on until --limit are found.
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["group_by_reason", "shape"])]
    pub reason: Option<String>,
    /// Only those whose reason has SHAPE, as a row of --group-by-reason
    /// shows it (numbers, hex ids and UUIDs folded to <n>, <hex>, <uuid>).
    #[arg(long, value_name = "SHAPE", conflicts_with = "group_by_reason")]
    pub shape: Option<String>,
    /// Counts by reason instead of values (over the 100,000 most recent),
    /// one row per shape: reasons that differ only by numbers, hex ids or
    /// UUIDs are counted together.
    #[arg(long)]
    pub group_by_reason: bool,
    /// How values are decoded (must match the Java codec).
    #[arg(long, value_parser = parse_read_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// With kryo, serialization, marshalling (alone, in a compression, or
    /// detected by auto): the Java classes of POJOs and enums: a JSON schema
    /// file (see compat/README.md), or the Java service's jar or folder of
    /// compiled classes, read for them.
    #[arg(long, value_name = "PATH", visible_aliases = ["schema", "kryo-schema-from"])]
    pub kryo_schema: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
// One of --all, --max, --index and --reason: a requeue names what it moves,
// as a delete does, so that a bare command cannot act on the whole list.
#[command(group(clap::ArgGroup::new("which").required(true).args(["all", "max", "index", "reason", "shape"])))]
#[command(group(clap::ArgGroup::new("filter").args(["reason", "shape"])))]
pub(crate) struct DeadLetterRequeueArgs {
    /// Queue name.
    pub queue: String,
    /// Every dead letter there when the command starts.
    #[arg(long, conflicts_with_all = ["max", "index", "reason", "shape"])]
    pub all: bool,
    /// The N oldest values.
    #[arg(long, value_name = "N", conflicts_with = "index")]
    pub max: Option<usize>,
    /// Only the values at these positions (the # of `dead-letter list`; 1 is
    /// the oldest; repeated or comma-separated: 3,7), each taken exactly: if
    /// one moved away, none is requeued.
    #[arg(long, value_name = "N", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..))]
    pub index: Vec<u64>,
    /// Only those whose reason contains TEXT (case-insensitive), as
    /// `list --reason` shows them, among the 100,000 most recent. Without
    /// --expect: says how many match and requeues nothing.
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["index", "max"])]
    pub reason: Option<String>,
    /// Only those whose reason has SHAPE, as a row of `list
    /// --group-by-reason` shows it, among the 100,000 most recent. Without
    /// --expect: says how many match and requeues nothing.
    #[arg(long, value_name = "SHAPE", conflicts_with_all = ["index", "max"])]
    pub shape: Option<String>,
    /// With --reason or --shape: how many the first run said match;
    /// requeues exactly those, or nothing if that many no longer match.
    #[arg(long, value_name = "N", requires = "filter")]
    pub expect: Option<usize>,
    /// Values moved per atomic step (at most 100).
    #[arg(long, default_value_t = 100)]
    pub batch: usize,
    /// How values are shown (must match the Java codec).
    #[arg(long, value_parser = parse_read_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
// One of --index, --all and --reason, so that a refusal names them all.
#[command(group(clap::ArgGroup::new("which").required(true).args(["index", "all", "reason", "shape"])))]
#[command(group(clap::ArgGroup::new("filter").args(["reason", "shape"])))]
pub(crate) struct DeadLetterDeleteArgs {
    /// Queue name.
    pub queue: String,
    /// The values at these positions (the # of `dead-letter list`; 1 is the
    /// oldest; repeated or comma-separated: 3,7), each taken exactly: if one
    /// moved away, none is deleted.
    #[arg(long, value_name = "N", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..))]
    pub index: Vec<u64>,
    /// Every dead letter there when the command starts.
    #[arg(long)]
    pub all: bool,
    /// Those whose reason contains TEXT (case-insensitive), as `list
    /// --reason` shows them, among the 100,000 most recent. Without
    /// --expect: says how many match and deletes nothing.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Those whose reason has SHAPE, as a row of `list --group-by-reason`
    /// shows it, among the 100,000 most recent. Without --expect: says how
    /// many match and deletes nothing.
    #[arg(long, value_name = "SHAPE")]
    pub shape: Option<String>,
    /// With --reason or --shape: how many the first run said match; deletes
    /// exactly those, or nothing if that many no longer match.
    #[arg(long, value_name = "N", requires = "filter")]
    pub expect: Option<usize>,
    /// Show what would be deleted; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// How values are shown (must match the Java codec).
    #[arg(long, value_parser = parse_read_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub(crate) struct TransferArgs {
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
pub(crate) struct DashboardArgs {
    /// Address to listen on. Anything but loopback needs --token.
    #[arg(long, default_value = "127.0.0.1:9090")]
    pub listen: std::net::SocketAddr,
    /// How payloads are shown: auto (the default) detects each value's
    /// codec, so queues of different codecs all read; or the Java codec
    /// of every queue. Hex when a value does not decode.
    #[arg(long, value_parser = parse_read_codec, default_value = "auto", value_name = "CODEC")]
    pub codec: CodecArg,
    /// The codec of one queue, where the operator knows it (repeatable):
    /// `orders=kryo`, `audit=lz4`, `events=json`. Its values are read with
    /// that codec, not --codec.
    #[arg(long = "queue-codec", value_parser = parse_queue_codec, value_name = "QUEUE=CODEC")]
    pub queue_codecs: Vec<(String, CodecArg)>,
    /// The Java classes of POJOs and enums, for Kryo payloads (alone, in a
    /// compression, or detected by auto): a JSON schema file (see
    /// compat/README.md), or the Java service's jar or folder of compiled
    /// classes. Without it a Kryo POJO shows its class, not its fields.
    #[arg(long, value_name = "PATH", visible_aliases = ["schema", "kryo-schema-from"])]
    pub kryo_schema: Option<PathBuf>,
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

/// `--on-expiry`: what happens to a value offered with --ttl once it passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExpiryArg {
    /// To the dead-letter list, reason `expired` (the default).
    DeadLetter,
    /// Dropped, only counted.
    Drop,
}

impl From<ExpiryArg> for delayq::Expiry {
    fn from(arg: ExpiryArg) -> delayq::Expiry {
        match arg {
            ExpiryArg::DeadLetter => delayq::Expiry::DeadLetter,
            ExpiryArg::Drop => delayq::Expiry::Drop,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct OfferArgs {
    /// Queue name (the destination list Java passes to getBlockingQueue).
    pub queue: String,
    /// Delay before the values are due: 1500ms, 5s, 2m, 1h30m, 0.
    #[arg(long, short, value_parser = parse_delay, allow_hyphen_values = true)]
    pub delay: Duration,
    /// How values are encoded (must match the Java codec).
    #[arg(long, value_parser = parse_write_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// Packed element layout: modern (Redisson >= 3.21.1) or legacy (<= 3.21.0).
    #[arg(long, default_value = "modern")]
    pub format: Format,
    /// With --codec jackson: the Java class of the value (`compat.Order`), and
    /// of values inside it by path (`customer=shop.Customer`, `lines[]=shop.Line`,
    /// `total=java.math.BigDecimal`: Java's Jackson reads a BigDecimal field only so).
    /// With kryo, serialization or marshalling: the class of the value, a POJO or enum of --kryo-schema.
    #[arg(long = "java-class", value_name = "[PATH=]CLASS")]
    pub java_class: Vec<String>,
    /// With kryo, serialization or marshalling: the Java type of the value (`Long`, `String`,
    /// `Integer`, `UUID`, `BigDecimal`, `Instant`, `List<Integer>`...). Without
    /// it or --java-class: a JSON number is a Long, an array an ArrayList, an
    /// object a HashMap, other text a String.
    #[arg(long = "java-type", value_name = "TYPE", conflicts_with = "java_class")]
    pub java_type: Option<String>,
    /// With kryo, serialization, marshalling (alone, in a compression, or
    /// detected by auto): the Java classes of POJOs and enums: a JSON schema
    /// file (see compat/README.md), or the Java service's jar or folder of
    /// compiled classes, read for them.
    #[arg(long, value_name = "PATH", visible_aliases = ["schema", "kryo-schema-from"])]
    pub kryo_schema: Option<PathBuf>,
    /// Offer the value under this id: not offered again while an element with
    /// the id is pending (exit status 0 either way; stderr says which). One value.
    #[arg(long)]
    pub id: Option<String>,
    /// With --id: replace a pending element with this id instead of keeping it.
    #[arg(long, requires = "id")]
    pub replace: bool,
    /// Refuse values offered again within DURATION (5m, 1h, 7d): a value whose
    /// --dedup-id, or payload (the default, or --dedup-payload), was offered
    /// within the window is not queued, even if the first one was taken
    /// since; the command then says which values were duplicates and exits 1.
    #[arg(long, value_parser = parse_delay, value_name = "DURATION", conflicts_with_all = ["id", "from_file"])]
    pub dedup_window: Option<Duration>,
    /// With --dedup-window: the value's deduplication id (one value).
    #[arg(long, value_name = "ID", requires = "dedup_window", conflicts_with = "dedup_payload")]
    pub dedup_id: Option<String>,
    /// With --dedup-window: values with equal payloads are the same (the default).
    #[arg(long, requires = "dedup_window")]
    pub dedup_payload: bool,
    /// Offer one value per line of FILE instead (`-`: standard input), in
    /// the file's order, all due after --delay, encoded as VALUE arguments
    /// are. A file is checked whole first: a line the codec cannot encode
    /// is an error naming it, and nothing is offered. From standard input,
    /// each block of lines is checked before it is sent: a bad line stops
    /// the offer there, and the error says how many values went before it.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["values", "id"])]
    pub from_file: Option<PathBuf>,
    /// Offer at this priority: 0 (the default, lowest) to 9 (highest).
    /// delayq's takes, reliable consumers and workers take the highest
    /// first, equal ones in offer order; with --delay, when due. Java
    /// consumers never see values above 0 (docs/delayed-queue.md,
    /// "Priorities"). Not with --id, --dedup-window or --from-file.
    #[arg(
        long,
        value_parser = parse_priority,
        value_name = "0-9",
        allow_hyphen_values = true,
        conflicts_with_all = ["id", "dedup_window", "from_file"]
    )]
    pub priority: Option<delayq::Priority>,
    /// A time to live, from the offer (500ms, 30s, 10m, 1h): a value no
    /// delayq consumer took within it is not delivered but dead-lettered
    /// with reason `expired` (or dropped: --on-expiry drop), and counted.
    /// Must be longer than --delay. Java consumers never see values offered
    /// with a TTL (docs/delayed-queue.md, "Message TTL"). Not with --id,
    /// --dedup-window or --from-file.
    #[arg(
        long,
        value_parser = parse_delay,
        value_name = "DURATION",
        conflicts_with_all = ["id", "dedup_window", "from_file"]
    )]
    pub ttl: Option<Duration>,
    /// With --ttl: what happens to a value once its TTL passed.
    #[arg(long, value_enum, value_name = "WHAT", requires = "ttl")]
    pub on_expiry: Option<ExpiryArg>,
    /// A header offered beside each value, as KEY=VALUE (repeat it for
    /// more; the first `=` ends the key, which is not empty; a key given
    /// twice is refused). At most 32 headers, 8 KiB as JSON. delayq's
    /// takes, reliable consumers and workers read them (`delayq take
    /// --format json`, `dead-letter list`); Java consumers never see
    /// values offered with headers (they live beside those with a TTL).
    /// Not with --id, --dedup-window or --from-file.
    #[arg(
        long = "header",
        value_parser = parse_header,
        value_name = "KEY=VALUE",
        allow_hyphen_values = true,
        conflicts_with_all = ["id", "dedup_window", "from_file"]
    )]
    pub headers: Vec<(String, String)>,
    /// Offer into the group KEY (1 to 1,024 bytes): values of one key run
    /// one at a time across every delayq consumer (`delayq groups QUEUE`
    /// sets how many, how fast, and what a failure does), in the order
    /// they became ready; keys run side by side. Values one by one, in
    /// order; with --from-file every line goes to KEY. Java consumers never
    /// see grouped values, and `delayq take` does not take them (delayq's
    /// reliable consumers and workers do). Not with --priority, --ttl,
    /// --header, --id or --dedup-window.
    #[arg(
        long,
        value_name = "KEY",
        value_parser = parse_group_key,
        allow_hyphen_values = true,
        conflicts_with_all = ["priority", "ttl", "headers", "id", "dedup_window", "sequential"]
    )]
    pub group: Option<String>,
    /// Offer into the queue's one sequential group: every value offered so
    /// runs one at a time, in order, across every delayq consumer (Redisson
    /// PRO's SEQUENTIAL mode); as --group otherwise.
    #[arg(long, conflicts_with_all = ["priority", "ttl", "headers", "id", "dedup_window"])]
    pub sequential: bool,
    /// On a partitioned queue (`delayq partition create`): offer to the
    /// partition of KEY, CRC-32(KEY) mod N, so values of one key are taken
    /// in offer order. Without it, a partitioned queue's values go round
    /// robin. Not with --id, --dedup-window, --from-file, --group or
    /// --sequential.
    #[arg(
        long,
        value_name = "KEY",
        allow_hyphen_values = true,
        conflicts_with_all = ["id", "dedup_window", "from_file", "group", "sequential"]
    )]
    pub partition_key: Option<String>,
    /// Values to offer (bytes: hex; json, jackson, kryo: JSON text; long: decimal).
    /// Other values starting with `-` go after `--`.
    #[arg(required_unless_present = "from_file", allow_negative_numbers = true)]
    pub values: Vec<String>,
}

impl OfferArgs {
    /// The group key of `--group` or `--sequential` (`""`), if either.
    pub(crate) fn group_key(&self) -> Option<&str> {
        match (&self.group, self.sequential) {
            (Some(key), _) => Some(key),
            (None, true) => Some(""),
            (None, false) => None,
        }
    }
}

/// Parses a `--group`: 1 to [`delayq::groups::MAX_GROUP_KEY`] bytes (the
/// empty key is `--sequential`'s).
fn parse_group_key(text: &str) -> Result<String, String> {
    let most = delayq::groups::MAX_GROUP_KEY;
    match text.len() {
        0 => Err("a group key is not empty: give --sequential for the queue's one sequential group".into()),
        n if n > most => Err(format!("a group key is at most {most} bytes, not {n}")),
        _ => Ok(text.to_owned()),
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  delayq groups orders\n  delayq groups orders --concurrency 2 --rate 10/1s --on-failure skip\n  delayq groups orders --rate none --format json"
)]
pub(crate) struct GroupsArgs {
    /// Queue name.
    pub queue: String,
    /// Values of one group key that may run at once (at least 1; 1 by
    /// default: one at a time, in order). Above 1 a key's values start in
    /// order but may end out of it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub concurrency: Option<u32>,
    /// Most values of one key that start per period, as COUNT/DURATION
    /// (10/1s, 100/1m, 1/500ms: a burst of COUNT, then evenly), or `none`.
    /// A key at its rate waits; the others go on.
    #[arg(long, value_name = "COUNT/DURATION|none", value_parser = parse_rate)]
    pub rate: Option<Rate>,
    /// What a failed grouped value does to its key: hold (it waits at its
    /// key's head and the key runs nothing until its retry is due; the
    /// default) or skip (it rejoins the end of its key's line, and the
    /// key's next values go on).
    #[arg(long, value_enum, value_name = "hold|skip")]
    pub on_failure: Option<OnFailureArg>,
    /// Set them even if the queue does not exist yet (without it, a name
    /// no queue has is refused: a typo would leave stray settings).
    #[arg(long)]
    pub create: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

/// `--on-failure` of `delayq groups`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OnFailureArg {
    Hold,
    Skip,
}

impl From<OnFailureArg> for delayq::groups::OnFailure {
    fn from(arg: OnFailureArg) -> Self {
        match arg {
            OnFailureArg::Hold => delayq::groups::OnFailure::Hold,
            OnFailureArg::Skip => delayq::groups::OnFailure::Skip,
        }
    }
}

/// A rate on the command line: COUNT per DURATION, or `none` (no rate limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rate(pub Option<(u32, Duration)>);

/// Parses a `--rate`: `COUNT/DURATION` (`10/1s`; a DURATION as `--delay`
/// takes it, and `10/s` for one unit), or `none`.
pub(crate) fn parse_rate(text: &str) -> Result<Rate, String> {
    let text = text.trim();
    if text == "none" {
        return Ok(Rate(None));
    }
    let Some((count, per)) = text.split_once('/') else {
        return Err(format!(
            "{text:?} is not a rate: give COUNT/DURATION (10/1s, 100/1m) or none"
        ));
    };
    let count: u32 = match count.trim().parse() {
        Ok(0) | Err(_) => {
            return Err(format!(
                "{count:?} is not a count: give a whole number of at least 1 (10/1s)"
            ))
        }
        Ok(n) => n,
    };
    let per = per.trim();
    // `10/s`: one of the unit.
    let per = if per.starts_with(|c: char| c.is_ascii_digit()) {
        parse_delay(per)?
    } else {
        parse_delay(&format!("1{per}"))?
    };
    if per < Duration::from_millis(1) {
        return Err(format!("{text:?}: the period is at least 1ms"));
    }
    Ok(Rate(Some((count, per))))
}

#[derive(Debug, Args)]
pub(crate) struct MigrateArgs {
    /// Queue name.
    pub queue: String,
    /// The packed element format to rewrite pending elements in.
    #[arg(long, required_unless_present = "to_codec", conflicts_with = "to_codec")]
    pub to: Option<Format>,
    /// The codec pending values are in now (auto: detect each). With
    /// --to-codec: re-encode every pending value in place.
    #[arg(long, value_parser = parse_read_codec, requires = "to_codec", value_name = "CODEC")]
    pub from_codec: Option<CodecArg>,
    /// The codec to re-encode pending values in (any pair: a POJO read with
    /// one Java codec is written with another; to jackson needs --java-class).
    #[arg(long, value_parser = parse_write_codec, requires = "from_codec", value_name = "CODEC")]
    pub to_codec: Option<CodecArg>,
    /// With --to-codec jackson: the Java class of the values, and of values
    /// inside them by path (as `delayq offer`).
    #[arg(long = "java-class", value_name = "[PATH=]CLASS", requires = "to_codec")]
    pub java_class: Vec<String>,
    /// The Java classes of POJOs and enums (a JSON schema file, see
    /// compat/README.md, or the Java service's jar or folder of compiled
    /// classes): their fields for Kryo, their serialVersionUID for
    /// serialization and marshalling.
    #[arg(long, value_name = "PATH", visible_aliases = ["schema", "kryo-schema-from"])]
    pub kryo_schema: Option<PathBuf>,
    /// Elements rewritten per atomic script.
    #[arg(long, default_value_t = 500)]
    pub batch: usize,
}

#[derive(Debug, Args)]
pub(crate) struct TakeArgs {
    /// Queue name.
    pub queue: String,
    /// How many values to take before exiting.
    #[arg(short = 'n', long = "count", default_value_t = 1)]
    pub count: usize,
    /// Give up after this long (exit status 1 if fewer than --count arrived).
    #[arg(long, value_parser = parse_delay)]
    pub timeout: Option<Duration>,
    /// How values are decoded (must match the Java codec).
    #[arg(long, value_parser = parse_read_codec, default_value = "string", value_name = "CODEC")]
    pub codec: CodecArg,
    /// With kryo, serialization, marshalling (alone, in a compression, or
    /// detected by auto): the Java classes of POJOs and enums: a JSON schema
    /// file (see compat/README.md), or the Java service's jar or folder of
    /// compiled classes, read for them.
    #[arg(long, value_name = "PATH", visible_aliases = ["schema", "kryo-schema-from"])]
    pub kryo_schema: Option<PathBuf>,
    /// Output format: table prints one value per line as it arrives (then
    /// its headers, if it has any: `value [k=v, k2=v2]`); json prints one
    /// JSON object per line, `{"value": "...", "headers": {...}}` (headers
    /// `{}` for a value offered without; with --codec auto a "codec" too).
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

/// A `--codec`: a Redisson codec named as the Java peers name it.
///
/// `string`, `long`, `bytes`, `json`, `jackson`, `kryo`, `serialization`,
/// `marshalling`; a compression wrapper `lz4`, `lz4v2`, `snappy` or `zstd`
/// (Kryo inside, as Redisson's no-argument constructors) or `WRAP/INNER`
/// (`lz4/jackson`, `snappy/string`...); `auto` (reading only) detects the
/// codec of each value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CodecArg {
    /// The compression around the codec, if any.
    pub wrap: Option<Compression>,
    /// The codec (inside the compression).
    pub kind: CodecKind,
}

impl CodecArg {
    /// A codec without compression.
    pub(crate) fn plain(kind: CodecKind) -> Self {
        CodecArg { wrap: None, kind }
    }

    /// Whether values read through it are Java objects (Kryo, Java
    /// serialization, River): the schema and Java-type flags apply.
    pub(crate) fn is_java_binary(self) -> bool {
        matches!(
            self.kind,
            CodecKind::Kryo | CodecKind::Serialization | CodecKind::Marshalling
        )
    }
}

impl std::fmt::Display for CodecArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = self
            .kind
            .to_possible_value()
            .map(|v| v.get_name().to_owned())
            .unwrap_or_default();
        match self.wrap {
            None => f.write_str(&kind),
            Some(wrap) if self.kind == CodecKind::Kryo => f.write_str(wrap.name()),
            Some(wrap) => write!(f, "{}/{kind}", wrap.name()),
        }
    }
}

const CODEC_NAMES: &str = "string, long, bytes, json, jackson, kryo, serialization, marshalling, \
    lz4, lz4v2, snappy, zstd (Kryo inside), WRAP/INNER (e.g. lz4/jackson, snappy/string), auto (reading only)";

/// Parses a `--codec` for reading: any codec, or `auto`.
pub(crate) fn parse_read_codec(text: &str) -> Result<CodecArg, String> {
    let text = text.trim().to_ascii_lowercase();
    let (wrap, inner) = match text.split_once('/') {
        Some((wrap, inner)) => (Some(wrap), inner),
        None if Compression::from_name(&text).is_some() => (Some(text.as_str()), "kryo"),
        None => (None, text.as_str()),
    };
    let wrap = match wrap {
        Some(name) => Some(Compression::from_name(name).ok_or_else(|| {
            format!("{name:?} is not a compression codec (lz4, lz4v2, snappy, zstd); codecs: {CODEC_NAMES}")
        })?),
        None => None,
    };
    let kind =
        CodecKind::from_str(inner, true).map_err(|_| format!("{inner:?} is not a codec; codecs: {CODEC_NAMES}"))?;
    if kind == CodecKind::Auto && wrap.is_some() {
        return Err("auto detects compression too: give --codec auto alone".into());
    }
    Ok(CodecArg { wrap, kind })
}

/// Parses a `--queue-codec QUEUE=CODEC`: the codec after the last `=`
/// (codec names have none; queue names may).
pub(crate) fn parse_queue_codec(text: &str) -> Result<(String, CodecArg), String> {
    let (queue, codec) = text
        .rsplit_once('=')
        .ok_or_else(|| format!("{text:?} names no codec: give QUEUE=CODEC, e.g. orders=kryo"))?;
    if queue.is_empty() {
        return Err(format!("{text:?} names no queue: give QUEUE=CODEC, e.g. orders=kryo"));
    }
    Ok((queue.to_owned(), parse_read_codec(codec)?))
}

/// Parses a `--codec` for writing: `auto` cannot say how to encode.
pub(crate) fn parse_write_codec(text: &str) -> Result<CodecArg, String> {
    let codec = parse_read_codec(text)?;
    if codec.kind == CodecKind::Auto {
        return Err("auto is for reading: name the codec the Java side uses to encode".into());
    }
    Ok(codec)
}

/// The codecs the CLI speaks (inside any compression); values are text on
/// the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CodecKind {
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
    /// Kryo 5 binary (Java Kryo5Codec, Redisson's default): printed as JSON;
    /// offered from JSON with --java-type or --java-class; POJOs and enums
    /// need --kryo-schema.
    Kryo,
    /// Java serialization (Java SerializationCodec): printed as JSON; offered
    /// like kryo, POJOs with their serialVersionUID in --kryo-schema.
    Serialization,
    /// JBoss Marshalling, River protocol (Java MarshallingCodec, Redisson's
    /// default from 3.13.0 to 3.18.x): printed and offered like serialization.
    Marshalling,
    /// Detects each value's codec (reading only).
    Auto,
}

/// Parses an RFC 3339 time (`2026-12-01T10:00:00Z`).
pub(crate) fn parse_time(text: &str) -> Result<SystemTime, String> {
    let time = chrono::DateTime::parse_from_rfc3339(text.trim())
        .map_err(|e| format!("{text:?} is not an RFC 3339 time like 2026-12-01T10:00:00Z: {e}"))?;
    let ms = time.timestamp_millis();
    u64::try_from(ms)
        .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms))
        .map_err(|_| format!("{text:?} is before 1970"))
}

/// Parses a size: bytes, or a number with KiB, MiB or GiB.
pub(crate) fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, ""),
    };
    let scale: usize = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" | "k" => 1 << 10,
        "mib" | "m" => 1 << 20,
        "gib" | "g" => 1 << 30,
        other => return Err(format!("{other:?} is not a unit: use bytes, KiB, MiB or GiB")),
    };
    number
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{text:?} is not a size like 64MiB"))
}

/// Parses a `--priority`: a whole number from 0 to 9.
pub(crate) fn parse_priority(text: &str) -> Result<delayq::Priority, String> {
    let refused =
        || format!("{text:?} is not a priority: give a whole number from 0 (the default, lowest) to 9 (highest)");
    let level: u8 = text.trim().parse().map_err(|_| refused())?;
    delayq::Priority::new(level).map_err(|_| refused())
}

/// Parses a `--header`: `KEY=VALUE`, split at the first `=`, the key not
/// empty (the value may be).
pub(crate) fn parse_header(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some(("", _)) => Err(format!("{text:?} has an empty key: give KEY=VALUE")),
        Some((key, value)) => Ok((key.to_owned(), value.to_owned())),
        None => Err(format!("{text:?} has no `=`: give KEY=VALUE")),
    }
}

/// `--history`'s value: how long handled histories are kept, or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HistorySwitch(pub Option<Duration>);

/// How long `--history on` keeps handled histories.
pub(crate) const DEFAULT_HISTORY_KEEP: Duration = Duration::from_secs(24 * 3600);

pub(crate) fn parse_history(text: &str) -> Result<HistorySwitch, String> {
    match text.trim() {
        "off" => Ok(HistorySwitch(None)),
        "on" => Ok(HistorySwitch(Some(DEFAULT_HISTORY_KEEP))),
        other => match other.strip_prefix("on=") {
            Some(keep) => parse_delay(keep).map(|keep| HistorySwitch(Some(keep))),
            None => Err(format!("{other:?} is neither on, on=DURATION (like on=7d) nor off")),
        },
    }
}

/// Parses a duration like `1500ms` or `5s`; a negative one is an error.
pub(crate) fn parse_delay(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.starts_with('-') {
        return Err(format!("{text:?} is a negative delay; delays must be zero or more"));
    }
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(text).map_err(|e| format!("{text:?} is not a duration like 1500ms, 5s or 2m: {e}"))
}

#[cfg(test)]
mod tests {
    /// What a schedule table shows after `every ` is what `--every` takes.
    #[test]
    fn shown_periods_parse_back_as_every() {
        use std::time::Duration;
        for ms in [1, 500, 1_500, 5_000, 60_000, 3_600_000, 5_400_000, 90_061_001] {
            let period = Duration::from_millis(ms);
            let shown = delayq::schedule::every(period).to_string();
            let text = shown.strip_prefix("every ").expect(&shown);
            assert_eq!(super::parse_delay(text), Ok(period), "{shown}");
        }
    }

    #[test]
    fn urls_without_a_scheme_are_redis_and_other_schemes_are_refused() {
        use super::normalize_url;
        assert_eq!(normalize_url("localhost:6380").unwrap(), "redis://localhost:6380");
        assert_eq!(normalize_url(" u:p@h:1/2 ").unwrap(), "redis://u:p@h:1/2");
        assert_eq!(normalize_url("rediss-cluster://h:1").unwrap(), "rediss-cluster://h:1");
        let refused = normalize_url("http://u:secret@h:1").unwrap_err();
        assert!(
            refused.contains("`http://`") && refused.contains("rediss-sentinel://"),
            "{refused}"
        );
        assert!(!refused.contains("secret"), "{refused}");
        assert!(normalize_url("").is_err());
    }
}
