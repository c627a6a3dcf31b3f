//! `delayq offer QUEUE --from-file FILE`: one value per line of a file (or
//! of standard input, `-`), offered in order through
//! `DelayedQueue::offer_all`, a block of lines per call. The next block is
//! read and checked while the last one is sent.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use delayq::{BytesCodec, Codec, DelayedQueue, Error};
use indicatif::ProgressBar;

use crate::args::{Cli, OfferArgs};
use crate::text_codec::TextCodec;
use crate::{progress, MAX_PAYLOAD};

/// Values per `offer_all` call: enough to keep its chunks flowing, few
/// enough that the progress bar moves.
const BLOCK_VALUES: usize = 50_000;
/// Payload bytes per call (two blocks are in memory at once: one being
/// sent, the next being read).
const BLOCK_BYTES: usize = 16 * 1024 * 1024;

pub(crate) async fn run(cli: &Cli, args: &OfferArgs, codec: TextCodec, path: &Path) -> delayq::Result<ExitCode> {
    let started = Instant::now();
    let codec = Arc::new(codec);
    // A file is read twice: every line is checked before any is sent.
    let total = if path == Path::new("-") {
        None
    } else {
        let (codec, path) = (codec.clone(), path.to_owned());
        let checked = tokio::task::spawn_blocking(move || check_all(&codec, &path))
            .await
            .expect("the check does not panic");
        Some(checked.map_err(|e| Error::InvalidArgument(format!("{e}; nothing was offered")))?)
    };
    let lines = Lines::open(path)?;
    let client = crate::connect(cli).await?;
    // Payloads are encoded here, line by line; the queue sends them as they are.
    let queue = client
        .delayed_queue(&args.queue, BytesCodec)?
        .without_transfer()
        .with_format(args.format);
    let bar = match total {
        Some(total) => progress::bar(total, "offering"),
        None => progress::counter("offering"),
    };
    let result = match args.group_key() {
        Some(key) => offer_grouped(&queue, codec, lines, &crate::offer::grouped(args.delay, key), &bar).await,
        None => offer_blocks(&queue, codec, lines, args.delay, &bar).await,
    };
    bar.finish_and_clear();
    client.shutdown().await;
    let offered = result?;
    let seconds = started.elapsed().as_secs_f64();
    let into = args
        .group_key()
        .map_or(String::new(), |key| format!(" {}", crate::offer::group_words(key)));
    eprintln!(
        "offered {offered} value(s) to {}{into} ({}) in {seconds:.2} s ({:.0}/s)",
        crate::output::escape(&args.queue),
        crate::output::due_after(args.delay),
        offered as f64 / seconds.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

/// Offers block after block, each checked whole before it is sent; returns
/// how many values were offered.
async fn offer_blocks(
    queue: &DelayedQueue<Bytes>,
    codec: Arc<TextCodec>,
    mut lines: Lines,
    delay: Duration,
    bar: &ProgressBar,
) -> delayq::Result<u64> {
    let mut offered = 0u64;
    let mut sending: Option<tokio::task::JoinHandle<(u64, delayq::Result<()>)>> = None;
    loop {
        // Reading may block (a slow pipe): off the runtime's threads.
        let codec = codec.clone();
        let (back, block) = tokio::task::spawn_blocking(move || {
            let block = read_block(&codec, &mut lines);
            (lines, block)
        })
        .await
        .expect("reading does not panic");
        lines = back;
        if let Some(previous) = sending.take() {
            let (count, result) = previous.await.expect("offer_all does not panic");
            result.map_err(|e| offered_before(queue.name(), offered, e))?;
            offered += count;
            bar.inc(count);
        }
        let block = block.map_err(|e| unreadable(offered, e))?;
        if block.is_empty() {
            return Ok(offered);
        }
        let queue = queue.clone();
        sending = Some(tokio::spawn(async move {
            let count = block.len() as u64;
            (count, queue.offer_all(block.into_iter().map(|p| (p, delay))).await)
        }));
    }
}

/// `--group` or `--sequential`: line after line to the key's line, one
/// offer each and in order (the library has no bulk grouped offer); a block
/// of lines is read and checked at a time.
async fn offer_grouped(
    queue: &DelayedQueue<Bytes>,
    codec: Arc<TextCodec>,
    mut lines: Lines,
    options: &delayq::OfferOptions,
    bar: &ProgressBar,
) -> delayq::Result<u64> {
    let mut offered = 0u64;
    loop {
        let codec = codec.clone();
        let (back, block) = tokio::task::spawn_blocking(move || {
            let block = read_block(&codec, &mut lines);
            (lines, block)
        })
        .await
        .expect("reading does not panic");
        lines = back;
        let block = block.map_err(|e| unreadable(offered, e))?;
        if block.is_empty() {
            return Ok(offered);
        }
        for payload in block {
            queue
                .offer_with(&payload, options)
                .await
                .map_err(|e| offered_before(queue.name(), offered, e))?;
            offered += 1;
            bar.inc(1);
        }
    }
}

/// A line that cannot be offered, after `offered` values were.
fn unreadable(offered: u64, said: String) -> Error {
    Error::InvalidArgument(match offered {
        0 => format!("{said}; nothing was offered"),
        n => format!("{said}; the first {n} values were offered, none after them"),
    })
}

/// The error of a block's `offer_all`, counting the values offered by the
/// blocks before it.
fn offered_before(queue: &str, before: u64, error: Error) -> Error {
    let before = before as usize;
    match error {
        Error::PartlyOffered {
            queue,
            offered,
            unknown,
            source,
        } => Error::PartlyOffered {
            queue,
            offered: before + offered,
            unknown,
            source,
        },
        other if before > 0 => Error::PartlyOffered {
            queue: queue.to_owned(),
            offered: before,
            unknown: 0,
            source: Box::new(other),
        },
        other => other,
    }
}

/// Checks every line of a file; returns how many there are.
fn check_all(codec: &TextCodec, path: &Path) -> Result<u64, String> {
    // Its own words only: the caller wraps them in Error::InvalidArgument
    // again ("invalid argument: invalid argument: ...").
    let mut lines = Lines::open(path).map_err(|e| match e {
        Error::InvalidArgument(said) => said,
        other => other.to_string(),
    })?;
    while let Some((number, line)) = lines.next()? {
        encode(codec, number, line)?;
    }
    Ok(lines.number)
}

/// The next block of payloads (empty at the end of the input), or the
/// first line that cannot be offered.
fn read_block(codec: &TextCodec, lines: &mut Lines) -> Result<Vec<Bytes>, String> {
    let mut block = Vec::new();
    let mut bytes = 0;
    while block.len() < BLOCK_VALUES && bytes < BLOCK_BYTES {
        let Some((number, line)) = lines.next()? else { break };
        let payload = encode(codec, number, line)?;
        bytes += payload.len();
        block.push(payload);
    }
    Ok(block)
}

/// A line's payload, as `delayq offer` encodes a VALUE argument.
pub(crate) fn encode(codec: &TextCodec, number: u64, line: &str) -> Result<Bytes, String> {
    payload(codec, line).map_err(|e| format!("line {number}: {e}"))
}

/// `value`'s payload through `codec`, no bigger than the CLI offers.
pub(crate) fn payload(codec: &TextCodec, value: &str) -> Result<Bytes, String> {
    let payload = codec.encode(&value.to_owned()).map_err(|e| e.to_string())?;
    if payload.len() > MAX_PAYLOAD {
        return Err(format!(
            "a payload of {} bytes exceeds the limit of {MAX_PAYLOAD} bytes",
            payload.len()
        ));
    }
    Ok(payload)
}

/// The lines of a file or of standard input, numbered from 1.
pub(crate) struct Lines {
    reader: Box<dyn BufRead + Send>,
    number: u64,
    buf: Vec<u8>,
}

impl Lines {
    pub(crate) fn open(path: &Path) -> delayq::Result<Lines> {
        let reader: Box<dyn BufRead + Send> = if path == Path::new("-") {
            Box::new(BufReader::new(std::io::stdin()))
        } else {
            let file = std::fs::File::open(path)
                .map_err(|e| Error::InvalidArgument(format!("--from-file {}: {e}", path.display())))?;
            Box::new(BufReader::with_capacity(1 << 20, file))
        };
        Ok(Lines {
            reader,
            number: 0,
            buf: Vec::new(),
        })
    }

    /// The next line's number and text without its end (`\n` or `\r\n`;
    /// the last line needs none), or `None` at the end of the input.
    pub(crate) fn next(&mut self) -> Result<Option<(u64, &str)>, String> {
        self.buf.clear();
        let read = self
            .reader
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| format!("reading line {}: {e}", self.number + 1))?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        std::str::from_utf8(&self.buf)
            .map(|line| Some((self.number, line)))
            .map_err(|_| format!("line {}: not UTF-8 text", self.number))
    }
}
