//! The one error type of this crate: [`Error`] (also at the crate root), the
//! [`DecodeError`] that keeps undecodable bytes, and [`RedisError`] around
//! the Redis client's errors, with its [`RedisErrorKind`].
//!
//! ```
//! use delayq::error::{Error, RedisErrorKind};
//! fn worth_paging(error: &Error) -> bool {
//!     matches!(error, Error::Redis(e) if e.kind() == RedisErrorKind::Auth)
//! }
//! # let _ = worth_paging;
//! ```

// The bottom layer: every module may use it. May use: nothing.

use bytes::Bytes;

/// A boxed error from a codec or another library (the codec crate's own).
///
/// ```
/// let error: delayq::error::BoxError = "not a number".into();
/// assert_eq!(error.to_string(), "not a number");
/// ```
pub use delayq_codec::BoxError;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in delayq.
///
/// Errors that lose data do not exist here: a value that fails to decode comes
/// back inside [`Error::Decode`] with its raw bytes, and elements no format can
/// unpack are moved aside to the queue's quarantine list, never deleted.
///
/// ```
/// use delayq::{Error, QueueKeys};
/// match QueueKeys::new("") {
///     Err(Error::InvalidQueueName { reason, .. }) => assert!(reason.contains("empty")),
///     other => panic!("unexpected: {other:?}"),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// TLS settings that cannot be used: a certificate or key that does not
    /// parse or read, no trusted roots, or a `rediss://` URL in a build
    /// without the `tls` feature.
    #[error("TLS: {0}")]
    Tls(String),

    /// The connection or Redis failed: I/O, timeout, authentication, cluster
    /// routing, or an error reply.
    #[error("redis: {0}")]
    Redis(RedisError),
    /// [`ClientBuilder::build`](crate::ClientBuilder::build) (or
    /// [`Client::connect`](crate::Client::connect)) could not reach Redis:
    /// nothing listens at the address, it is unreachable, or it did not
    /// answer within the connect timeout. Its message names the address and
    /// what to check; `source` says what failed. Authentication failures and
    /// failed TLS handshakes stay [`Error::Redis`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let error = delayq::Client::builder()
    ///     .url("redis://127.0.0.1:1")
    ///     .connect_timeout(std::time::Duration::from_secs(2))
    ///     .build()
    ///     .await
    ///     .unwrap_err();
    /// assert!(matches!(error, delayq::Error::Connect { .. }));
    /// // cannot connect to Redis at 127.0.0.1:1: IO Error: ... Connection refused ...
    /// // (is Redis running there, and is the URL right?)
    /// assert!(error.to_string().starts_with("cannot connect to Redis at 127.0.0.1:1: "));
    /// assert!(error.to_string().contains(delayq::Error::CONNECT_HINT));
    /// # }
    /// ```
    #[error("cannot connect to Redis at {address}: {source} ({})", Error::CONNECT_HINT)]
    Connect {
        /// Where it tried to connect: `host:port`, or the list of cluster
        /// nodes or sentinels (never a password).
        address: String,
        /// What failed.
        source: RedisError,
    },
    /// The server reached cannot run Lua scripts, which every queue
    /// operation is (as Redisson's are): an engine built without Lua
    /// (Valkey 9.1 and later can leave its Lua module out), scripting
    /// renamed away (`rename-command EVAL ""`), or an ACL user without
    /// `+@scripting`. [`ClientBuilder::build`](crate::ClientBuilder::build)
    /// says so at connect, before any operation; `message` is the server's
    /// answer to a one-line script.
    #[error("the Redis server at {address} cannot run Lua scripts, which every delayq operation needs ({message}): use an engine with Lua scripting (Redis, or Valkey with its Lua module), and an ACL user allowed +@scripting")]
    ScriptingUnavailable {
        /// Where it connected (never a password).
        address: String,
        /// The server's error reply to `EVAL "return 1" 0`.
        message: String,
    },
    /// A key of the queue holds a value of another type (`WRONGTYPE`): the name
    /// is used by something that is not a Redisson queue.
    #[error("key `{key}` holds the wrong type for a delayed queue ({message})")]
    WrongType {
        /// The key, or the queue name when Redis did not say which key.
        key: String,
        /// What Redis answered.
        message: String,
    },
    /// A Lua script failed on the server.
    #[error("script `{script}` failed: {message}")]
    Script {
        /// The script's name (its file name under `lua/`).
        script: &'static str,
        /// The error Redis returned.
        message: String,
    },
    /// A delay or due time that cannot be scheduled: negative (a due time in
    /// the past), or past the largest due time a Redis score holds exactly.
    #[error("invalid delay: {0}")]
    InvalidDelay(String),
    /// A queue name that would break Redisson's key rules.
    #[error("invalid queue name {name:?}: {reason}")]
    InvalidQueueName {
        /// The rejected name.
        name: String,
        /// Why it is rejected.
        reason: String,
    },
    /// A payload larger than the client's limit
    /// ([`ClientBuilder::max_payload_size`](crate::ClientBuilder::max_payload_size)).
    #[error("payload of {size} bytes exceeds the limit of {limit} bytes")]
    PayloadTooLarge {
        /// The payload's size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The connection failed after a call that changes a queue was sent, and
    /// its reply never came, so whether Redis applied it is unknown (for
    /// calls that cannot be undone: a removal by value, a move to another
    /// list, an offer). delayq neither lost nor duplicated anything; look at
    /// the queue before repeating the call, which could apply it twice.
    #[error("the outcome of {operation} on `{queue}` is unknown (the connection failed before the reply): {source}")]
    OutcomeUnknown {
        /// The operation, as its script is named.
        operation: &'static str,
        /// The queue.
        queue: String,
        /// The connection error.
        source: RedisError,
    },
    /// A durable write ([`Durability`](crate::Durability)) is on the
    /// primary, but fewer replicas than asked confirmed it within the
    /// timeout (or the wait could not count it: its connection failed or
    /// was replaced). The write is done and stays done: an offer is
    /// queued, an ack acked. What is not known is whether it survives a
    /// failover to a replica that lacks it. Do not repeat the call to
    /// "make it durable" (an offer would be queued twice); look at the
    /// replicas, or accept the risk.
    ///
    /// ```
    /// use delayq::Error;
    /// fn unconfirmed(error: &Error) -> Option<(u32, u32)> {
    ///     match error {
    ///         Error::NotReplicated { replicas_acked, replicas_wanted, .. } => Some((*replicas_acked, *replicas_wanted)),
    ///         _ => None,
    ///     }
    /// }
    /// # let _ = unconfirmed;
    /// ```
    #[error("{operation} on `{queue}`: written on the primary, confirmed by {replicas_acked} of {replicas_wanted} replicas ({detail})")]
    NotReplicated {
        /// The operation, as its script is named.
        operation: &'static str,
        /// The queue.
        queue: String,
        /// How many replicas confirmed the write.
        replicas_acked: u32,
        /// How many were asked for.
        replicas_wanted: u32,
        /// Why the wait fell short: it timed out, it failed, or the
        /// connection changed between the write and the wait.
        detail: String,
    },
    /// [`DelayedQueue::offer_all`](crate::DelayedQueue::offer_all) failed
    /// after it had sent values. Values are queued in the order given, each
    /// at most once: the first `offered` are queued; of the `unknown` after
    /// them it is not known (the connection failed with them in flight:
    /// delayq cancels the rest of the call as soon as Redis answers, so no
    /// more of them is queued after that); none after those is queued.
    /// Offer `values[offered + unknown..]` again, and look at the `unknown`
    /// ones (`read_all`, `contains`) before offering them again.
    #[error(
        "offer_all on `{queue}` stopped: the first {offered} values are queued, {unknown} after them may be, the rest are not: {source}"
    )]
    PartlyOffered {
        /// The queue.
        queue: String,
        /// How many values, from the first one given, are queued.
        offered: usize,
        /// How many values after those may or may not be queued.
        unknown: usize,
        /// What stopped the call.
        source: Box<Error>,
    },
    /// An argument the operation cannot accept (empty input where one is needed, a zero limit...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Dead letters named by [`DeadLetterKey`](crate::dead_letter::DeadLetterKey) that
    /// are no longer where they were read, nor near (requeued, deleted, or
    /// moved too far by values leaving the list's head). Nothing was changed:
    /// read the list again.
    #[error("dead letter(s) #{} of `{queue}` (1 is the oldest) changed since they were read (requeued, deleted, or moved): nothing was done, read the list again", indices.iter().map(|i| (i + 1).to_string()).collect::<Vec<_>>().join(", #"))]
    DeadLetterChanged {
        /// The queue.
        queue: String,
        /// The indices (0 is the oldest) the missing ones were read at.
        indices: Vec<usize>,
    },
    /// A bulk requeue or delete of dead letters refused: the dead letters
    /// its filter picks are no longer as many as the operator confirmed (more
    /// arrived, or some left). Nothing was done: count again and confirm.
    #[error("{matching} dead letter(s) of `{queue}` match now, not the {confirmed} confirmed (more arrived, or some left): nothing was done; look again and confirm the new count")]
    DeadLetterCountChanged {
        /// The queue.
        queue: String,
        /// How many the operator saw and confirmed.
        confirmed: usize,
        /// How many match now.
        matching: usize,
    },
    /// The queue has no schedule of that name: an operation that changes an
    /// existing schedule ([`Schedules::edit`](crate::schedule::Schedules::edit),
    /// [`Schedules::run_now`](crate::schedule::Schedules::run_now)) changed
    /// nothing and added none.
    #[error("queue `{queue}` has no schedule {name:?}: nothing was changed")]
    NoSuchSchedule {
        /// The queue.
        queue: String,
        /// The schedule name asked for.
        name: String,
    },
    /// The codec could not encode a value.
    #[error("codec `{codec}` could not encode the value: {source}")]
    Encode {
        /// The codec's name.
        codec: &'static str,
        /// The codec's error.
        source: BoxError,
    },
    /// A payload the codec could not decode; the raw bytes are kept.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A stored value that is neither a modern nor a legacy packed element.
    #[error("malformed element ({} bytes) in `{key}`: neither Bc0Lc0 nor dLc0", raw.len())]
    Malformed {
        /// The key it was read from.
        key: String,
        /// Its bytes.
        raw: Bytes,
    },
    /// Redis answered with a shape this crate does not expect.
    #[error("unexpected reply: {0}")]
    Protocol(String),
    /// The queue's events switch (`delayq_events_config:{name}`) holds
    /// something other than a max length (or is not a string): the
    /// operation that read it changed nothing. Set it again with
    /// [`Client::enable_events`](crate::Client::enable_events) (or
    /// `delayq events enable`), or remove it with `disable_events`.
    #[error("the events switch `{key}` of the queue is broken ({message}): nothing was changed; enable or disable the queue's events again")]
    EventsConfig {
        /// The config key.
        key: String,
        /// What it holds.
        message: String,
    },
    /// The queue's limits ([`DelayedQueue::set_limits`](crate::DelayedQueue::set_limits))
    /// refused an offer: nothing of it was queued (of a bulk offer that had
    /// queued some values already, this is the `source` of
    /// [`Error::PartlyOffered`]).
    ///
    /// ```
    /// use delayq::error::{Error, Refusal};
    /// fn retry_later(error: &Error) -> bool {
    ///     matches!(error, Error::OfferRefused { refusal: Refusal::MaxSize { .. }, .. })
    /// }
    /// # let _ = retry_later;
    /// ```
    #[error("offer to `{queue}` refused: {refusal}")]
    OfferRefused {
        /// The queue.
        queue: String,
        /// Which limit refused it, with the numbers.
        refusal: Refusal,
    },
    /// A partitioned queue exists with another partition count than the one
    /// asked for ([`Client::create_partitioned_queue`](crate::Client::create_partitioned_queue)):
    /// nothing was changed. A create never changes the count;
    /// [`Client::repartition`](crate::Client::repartition) does.
    ///
    /// ```
    /// use delayq::Error;
    /// fn explain(error: &Error) -> Option<String> {
    ///     match error {
    ///         Error::PartitionCountMismatch { queue, stored, asked } => {
    ///             Some(format!("{queue} has {stored} partitions, not {asked}"))
    ///         }
    ///         _ => None,
    ///     }
    /// }
    /// # let _ = explain;
    /// ```
    #[error("partitioned queue `{queue}` has {stored} partitions, not {asked}: a create never changes the count (a re-partition does) and nothing was changed")]
    PartitionCountMismatch {
        /// The logical queue.
        queue: String,
        /// The count stored in Redis.
        stored: usize,
        /// The count asked for.
        asked: usize,
    },
    /// No partition layout is stored for the queue
    /// ([`Client::partitioned_queue`](crate::Client::partitioned_queue)):
    /// create it first with [`Client::create_partitioned_queue`](crate::Client::create_partitioned_queue)
    /// or `delayq partition create`.
    #[error("`{queue}` is not a partitioned queue (no `delayq_partitions:{{{queue}}}`): create it first")]
    NotPartitioned {
        /// The logical queue.
        queue: String,
    },
    /// The [`Client`](crate::Client) was shut down.
    #[error("the client has been shut down")]
    Shutdown,
}

/// Which of a queue's limits refused an offer ([`Error::OfferRefused`]).
///
/// ```
/// use delayq::error::Refusal;
/// let full = Refusal::MaxSize { limit: 100, size: 100, offered: 1 };
/// assert_eq!(full.to_string(), "the queue holds 100 values (max_size 100): no room for 1 more");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// Offers are switched off on the queue.
    OffersOff,
    /// A payload longer than the queue's `max_payload`.
    MaxPayload {
        /// The limit, in bytes.
        limit: u64,
        /// The payload's length, in bytes.
        size: u64,
    },
    /// The queue is full: `size` values pending or ready (values taken and
    /// not acknowledged do not count) against `max_size`.
    MaxSize {
        /// The limit.
        limit: u64,
        /// Values in the queue when the offer ran.
        size: u64,
        /// How many values the refused run offered.
        offered: u64,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::OffersOff => write!(f, "offers are switched off on the queue"),
            Refusal::MaxPayload { limit, size } => {
                write!(
                    f,
                    "a payload of {size} bytes is over the queue's max_payload of {limit} bytes"
                )
            }
            Refusal::MaxSize { limit, size, offered } => {
                write!(
                    f,
                    "the queue holds {size} values (max_size {limit}): no room for {offered} more"
                )
            }
        }
    }
}

impl Refusal {
    /// The code of the error reply `lua/lib/limits.lua` refuses with.
    pub(crate) const CODE: &'static str = "DELAYQ_REFUSED";

    /// Parses `lua/lib/limits.lua`'s refusal (`DELAYQ_REFUSED <kind> <numbers>`).
    pub(crate) fn parse(reply: &str) -> Option<Refusal> {
        let mut words = reply.strip_prefix(Self::CODE)?.split_whitespace();
        let kind = words.next()?;
        let mut number = || words.next()?.parse::<u64>().ok();
        Some(match kind {
            "offers_off" => Refusal::OffersOff,
            "max_payload" => Refusal::MaxPayload {
                limit: number()?,
                size: number()?,
            },
            "max_size" => Refusal::MaxSize {
                limit: number()?,
                size: number()?,
                offered: number()?,
            },
            _ => return None,
        })
    }
}

impl Error {
    /// What to check when Redis cannot be reached: the end of
    /// [`Error::Connect`]'s message, shared with the `delayq` CLI's hint.
    pub const CONNECT_HINT: &'static str = "is Redis running there, and is the URL right?";

    /// Whether the operation may succeed when tried again: the connection
    /// failed or is being re-established (I/O, timeout, no route while
    /// reconnecting), or Redis said it is temporarily unable (`LOADING`,
    /// `BUSY`, `TRYAGAIN`, `CLUSTERDOWN`, `MASTERDOWN`, `READONLY` during a
    /// failover). Bad input and bad data are never transient.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Redis(e) | Error::OutcomeUnknown { source: e, .. } | Error::Connect { source: e, .. } => {
                is_transient(&e.0)
            }
            Error::Script { message, .. } => is_transient_reply(message),
            Error::PartlyOffered { source, .. } => source.is_transient(),
            _ => false,
        }
    }

    /// Maps a failed call of `operation` on `queue` that may not be repeated
    /// blindly: [`Error::OutcomeUnknown`] when it may have run, else
    /// `otherwise(error)`.
    pub(crate) fn from_unrepeatable(
        error: fred::error::Error,
        operation: &'static str,
        queue: &str,
        otherwise: impl FnOnce(fred::error::Error) -> Error,
    ) -> Error {
        if outcome_unknown(&error) {
            Error::OutcomeUnknown {
                operation,
                queue: queue.to_owned(),
                source: RedisError(error),
            }
        } else {
            otherwise(error)
        }
    }

    /// Maps a failed command on `key` to the most precise variant.
    fn from_command(error: fred::error::Error, key: &str) -> Error {
        if error.details().contains("WRONGTYPE") {
            return Error::WrongType {
                key: key.to_owned(),
                message: error.details().to_owned(),
            };
        }
        Error::Redis(RedisError(error))
    }

    /// Maps a failed run of `script` on the queue `key` to the most precise variant.
    pub(crate) fn from_script(error: fred::error::Error, script: &'static str, key: &str) -> Error {
        use fred::error::ErrorKind;
        let from_server =
            matches!(error.kind(), ErrorKind::Unknown | ErrorKind::InvalidArgument) && !is_transient(&error);
        if from_server && error.details().starts_with(EVENTS_CONFIG_ERROR) {
            // lua/lib/events.lua: "DELAYQ_EVENTS_CONFIG <key> holds ..."
            let message = error.details()[EVENTS_CONFIG_ERROR.len()..].trim_start().to_owned();
            let key = message.split(' ').next().unwrap_or_default().to_owned();
            return Error::EventsConfig { key, message };
        }
        if from_server && let Some(refusal) = Refusal::parse(error.details()) {
            return Error::OfferRefused {
                queue: key.to_owned(),
                refusal,
            };
        }
        if from_server && !error.details().contains("WRONGTYPE") {
            return Error::Script {
                script,
                message: error.details().to_owned(),
            };
        }
        Error::from_command(error, key)
    }
}

/// The code of the error reply `lua/lib/events.lua` gives for a broken events switch.
const EVENTS_CONFIG_ERROR: &str = "DELAYQ_EVENTS_CONFIG";

/// A plain command's result, as delayq's: the one mapping of a failed
/// command (a script's failure is `connection::script::ScriptError`), for
/// `?` where the command is sent.
pub(crate) trait CommandResult<T> {
    /// A failed command on `key`: `WRONGTYPE` is [`Error::WrongType`] naming
    /// `key`, anything else [`Error::Redis`].
    fn on_key(self, key: &str) -> Result<T>;

    /// A failed command sent once (`Resend::Once`) as `operation` on
    /// `queue`: a lost reply is [`Error::OutcomeUnknown`], anything else as
    /// [`on_key`](Self::on_key).
    fn sent_once(self, operation: &'static str, queue: &str) -> Result<T>;
}

impl<T> CommandResult<T> for std::result::Result<T, fred::error::Error> {
    fn on_key(self, key: &str) -> Result<T> {
        self.map_err(|e| Error::from_command(e, key))
    }

    fn sent_once(self, operation: &'static str, queue: &str) -> Result<T> {
        self.map_err(|e| Error::from_unrepeatable(e, operation, queue, |e| Error::from_command(e, queue)))
    }
}

/// A payload the codec could not decode.
///
/// Decoding never consumes: when an operation that removes values (take,
/// remove_first, drain) cannot decode one, it puts every value it removed back where
/// it was (the head of the list, with its score for a pending element) and
/// says so with [`restored`](DecodeError::restored), so Java consumers of a
/// shared queue still get them. The raw bytes are here too, and for
/// operations that removed several values at once
/// [`batch`](DecodeError::batch) holds every one of them, in order.
///
/// ```
/// use delayq::{Codec, LongCodec};
/// let err = delayq::codec::decode(&LongCodec, bytes::Bytes::from_static(b"12x")).unwrap_err();
/// assert_eq!(err.raw().as_ref(), b"12x");
/// assert_eq!(err.codec(), "long");
/// ```
#[derive(Debug, thiserror::Error)]
#[error(
    "codec `{codec}` could not decode {} bytes{}{}: {source}",
    raw.len(),
    hint.map(|h| format!(" (looks like {h})")).unwrap_or_default(),
    if *restored { "; left in the queue" } else { "" }
)]
pub struct DecodeError {
    codec: &'static str,
    raw: Bytes,
    batch: Vec<Bytes>,
    hint: Option<&'static str>,
    restored: bool,
    source: BoxError,
}

impl DecodeError {
    /// A decode failure of `codec` on `raw`.
    pub fn new(codec: &'static str, raw: Bytes, source: impl Into<BoxError>) -> Self {
        DecodeError {
            codec,
            raw,
            batch: Vec::new(),
            hint: None,
            restored: false,
            source: source.into(),
        }
    }

    /// Adds a hint about what the bytes probably are (e.g. a Java-only codec).
    pub fn with_hint(mut self, hint: &'static str) -> Self {
        self.hint = Some(hint);
        self
    }

    pub(crate) fn with_batch(mut self, batch: Vec<Bytes>) -> Self {
        self.batch = batch;
        self
    }

    pub(crate) fn with_restored(mut self, restored: bool) -> Self {
        self.restored = restored;
        self
    }

    /// Whether the values were put back in Redis where they were taken from.
    pub fn restored(&self) -> bool {
        self.restored
    }

    /// The name of the codec that failed.
    pub fn codec(&self) -> &'static str {
        self.codec
    }

    /// The bytes that failed to decode.
    pub fn raw(&self) -> &Bytes {
        &self.raw
    }

    /// Every raw value removed by the same call, in order, when the call removed
    /// several at once (`remove_first_n`, `drain`); empty otherwise.
    pub fn batch(&self) -> &[Bytes] {
        &self.batch
    }

    /// What the bytes probably are, when the codec recognised them (e.g. Kryo).
    pub fn hint(&self) -> Option<&'static str> {
        self.hint
    }
}

/// Errors fred raises itself while a connection is down or being replaced:
/// a command not sent, then those that may have been sent.
const CLIENT_SIDE_TRANSIENT: [&str; 5] = [
    "Failed to route command",
    "Connection closed",
    "Missing response",
    "Max attempts exceeded",
    // A command sent once that fred would have written again (its
    // connection closed with it in flight): it may have run.
    "Too many failed write attempts",
];

/// A failure of the connection to Redis, or an error reply, as delayq reports
/// it inside [`Error::Redis`], [`Error::Connect`] and [`Error::OutcomeUnknown`].
///
/// It wraps the error of fred, the Redis client delayq is built on (fred is
/// part of delayq's API: see [`fred`]); [`kind`](Self::kind)
/// and [`message`](Self::message) say what callers need without matching
/// fred's own kinds. Its message is fred's (`IO Error: Connection refused`).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use delayq::Error;
/// use delayq::error::RedisErrorKind;
/// let error = delayq::Client::builder()
///     .url("redis://127.0.0.1:1")
///     .connect_timeout(std::time::Duration::from_secs(2))
///     .build()
///     .await
///     .unwrap_err();
/// let Error::Connect { source, .. } = error else { panic!("{error:?}") };
/// assert!(matches!(source.kind(), RedisErrorKind::Io | RedisErrorKind::Timeout));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct RedisError(pub(crate) fred::error::Error);

/// What kind of failure a [`RedisError`] is.
///
/// ```
/// use delayq::Error;
/// use delayq::error::RedisErrorKind;
/// fn worth_paging(error: &Error) -> bool {
///     matches!(error, Error::Redis(e) if e.kind() == RedisErrorKind::Auth)
/// }
/// # let _ = worth_paging;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RedisErrorKind {
    /// The connection failed (I/O): refused, reset, closed.
    Io,
    /// No answer in time.
    Timeout,
    /// The command was cancelled, for example by a reconnect or shutdown.
    Canceled,
    /// Authentication was refused (`WRONGPASS`, `NOAUTH`).
    Auth,
    /// The TLS handshake or TLS settings failed.
    Tls,
    /// Cluster routing or Sentinel discovery failed.
    Routing,
    /// The URL or settings are invalid.
    Config,
    /// The server's reply could not be read.
    Protocol,
    /// Redis answered with an error reply, or anything else.
    Other,
}

impl RedisError {
    /// What kind of failure this is.
    pub fn kind(&self) -> RedisErrorKind {
        use fred::error::ErrorKind as K;
        match self.0.kind() {
            K::IO => RedisErrorKind::Io,
            K::Timeout => RedisErrorKind::Timeout,
            K::Canceled => RedisErrorKind::Canceled,
            K::Auth => RedisErrorKind::Auth,
            #[cfg(feature = "tls")]
            K::Tls => RedisErrorKind::Tls,
            K::Routing | K::Cluster | K::Sentinel => RedisErrorKind::Routing,
            K::Config | K::Url => RedisErrorKind::Config,
            K::Protocol | K::Parse => RedisErrorKind::Protocol,
            _ => RedisErrorKind::Other,
        }
    }

    /// The message, without the kind (`Connection refused ...`, `WRONGPASS ...`).
    pub fn message(&self) -> &str {
        self.0.details()
    }

    /// The same error with `context` before its message, for a caller that
    /// knows more (which URL it was connecting to).
    pub fn with_context(self, context: impl std::fmt::Display) -> RedisError {
        RedisError(fred::error::Error::new(
            self.0.kind().clone(),
            format!("{context}: {}", self.0.details()),
        ))
    }
}

impl std::fmt::Display for RedisError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for RedisError {}

/// For `?` on the Redis client's results, in delayq and in code that sends
/// its own commands through [`Client::redis`](crate::Client::redis).
impl From<fred::error::Error> for Error {
    fn from(error: fred::error::Error) -> Self {
        Error::Redis(RedisError(error))
    }
}

/// Whether a failed command may have run: the connection failed, not Redis
/// (an error reply means a script changed nothing: scripts check before
/// they write).
pub(crate) fn outcome_unknown(error: &fred::error::Error) -> bool {
    use fred::error::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::IO | ErrorKind::Timeout | ErrorKind::Canceled | ErrorKind::Routing | ErrorKind::Backpressure
    ) || CLIENT_SIDE_TRANSIENT[1..]
        .iter()
        .any(|m| error.details().starts_with(m))
}

/// What fred says when a command sent `fail_fast` finds the connection down
/// (fred says it nowhere else): the command was never sent.
const NEVER_SENT: &str = "Connection closed unexpectedly.";

impl Error {
    /// Whether a command failed before it was sent (`fail_fast` while the
    /// connection was down): it cannot have run.
    pub(crate) fn never_sent(&self) -> bool {
        match self {
            Error::Redis(RedisError(e)) => e.kind() == &fred::error::ErrorKind::Canceled && e.details() == NEVER_SENT,
            _ => false,
        }
    }

    /// Whether the command did not run because its Cluster slot is moving
    /// (see [`slot_moving`]); the connection is fine.
    pub(crate) fn slot_moving(&self) -> bool {
        match self {
            Error::Redis(RedisError(e)) => slot_moving(e),
            _ => false,
        }
    }

    /// Whether a blocking command was ended, not run, because its node
    /// stopped being a primary (a failover: Redis answers `UNBLOCKED … master
    /// -> replica` and closes the connection).
    pub(crate) fn unblocked_by_failover(&self) -> bool {
        match self {
            Error::Redis(RedisError(e)) => e.details().starts_with(UNBLOCKED_BY_FAILOVER),
            _ => false,
        }
    }
}

/// Whether a command did not run because its Cluster slot is moving: Redis
/// answered `TRYAGAIN` (the node holds only some of its keys while the slot
/// is half-moved), or fred gave up following redirections (`MOVED` or
/// `ASK` five times: the nodes' views of the slot had not converged yet).
/// Every answer was a redirection or a refusal, so it may be sent again.
pub(crate) fn slot_moving(error: &fred::error::Error) -> bool {
    error.details().starts_with("TRYAGAIN")
        || (error.kind() == &fred::error::ErrorKind::Routing && error.details() == TOO_MANY_REDIRECTIONS)
}

/// fred's error once a command's redirections (`max_redirections`) are used up.
const TOO_MANY_REDIRECTIONS: &str = "Too many redirections.";

/// How Redis ends the blocking commands of a primary turned replica (7.0's
/// `disconnectAllBlockedClients`).
const UNBLOCKED_BY_FAILOVER: &str = "UNBLOCKED force unblock from blocking operation, instance state changed";

/// Error replies with which Redis says "not now" rather than "no".
const TRANSIENT_REPLIES: [&str; 7] = [
    "LOADING",
    "BUSY",
    "TRYAGAIN",
    "CLUSTERDOWN",
    "MASTERDOWN",
    "READONLY",
    "NOREPLICAS",
];

fn is_transient(error: &fred::error::Error) -> bool {
    use fred::error::ErrorKind;
    match error.kind() {
        ErrorKind::IO | ErrorKind::Timeout | ErrorKind::Canceled | ErrorKind::Routing | ErrorKind::Backpressure => true,
        ErrorKind::Cluster => true,
        _ => {
            let details = error.details();
            CLIENT_SIDE_TRANSIENT.iter().any(|m| details.starts_with(m)) || is_transient_reply(details)
        }
    }
}

fn is_transient_reply(details: &str) -> bool {
    TRANSIENT_REPLIES.iter().any(|code| details.starts_with(code))
}
