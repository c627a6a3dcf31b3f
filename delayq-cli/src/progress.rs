//! Progress bars for long operations, on stderr and only on a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar counting up to `total` items; hidden when stderr is not a terminal
/// (scripts and tests get the final summary only).
pub(crate) fn bar(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_owned());
    bar
}

/// A counter of items with no known total (a stream on standard input);
/// hidden when stderr is not a terminal.
pub(crate) fn counter(what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(ProgressStyle::with_template("{msg} {pos} ({per_sec}, {elapsed})").expect("a valid template"));
    bar.set_message(what.to_owned());
    bar
}
