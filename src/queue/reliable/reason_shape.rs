//! Dead-letter reasons by shape: "customer c-14 not found" and "customer
//! c-19 not found" are one kind of failure, told apart only by an id.

use std::time::SystemTime;

use super::dead_letters::DeadLetterReasons;

/// A dead-letter reason's shape: the reason with the parts that name one
/// value rather than a kind of failure folded into placeholders, so that
/// reasons differing only in them count (and are requeued or deleted)
/// together. The rule, applied left to right:
///
/// - a UUID (`8-4-4-4-12` hex digits) becomes `<uuid>`;
/// - `0x` followed by hex digits, and a run of 8 or more hex digits holding
///   both a decimal digit and a letter `a`–`f` (either case), each standing
///   alone (not inside a longer word), become `<hex>`;
/// - any other run of decimal digits (with `.` or `,` between digits, as in
///   `1,024` or `2.5`) becomes `<n>`.
///
/// Everything else is kept as it is, letters' case included. A reason that
/// already holds one of the placeholders' texts keeps it: its shape is
/// still the same as that of the reasons it stands for.
///
/// ```
/// use delayq::dead_letter::reason_shape;
/// assert_eq!(reason_shape("customer c-14 not found"), "customer c-<n> not found");
/// assert_eq!(reason_shape("customer c-19 not found"), "customer c-<n> not found");
/// assert_eq!(reason_shape("gateway timed out after 2.5 s"), "gateway timed out after <n> s");
/// assert_eq!(reason_shape("order 3f2a9c1e07b4 has no lines"), "order <hex> has no lines");
/// assert_eq!(
///     reason_shape("user 123e4567-e89b-12d3-a456-426614174000 gone"),
///     "user <uuid> gone"
/// );
/// assert_eq!(reason_shape("card declined"), "card declined");
/// ```
pub fn reason_shape(reason: &str) -> String {
    let bytes = reason.as_bytes();
    let mut out = String::with_capacity(reason.len());
    let mut at = 0;
    // Where the last copied run of plain text began: placeholders replace
    // ASCII runs only, so every cut is on a character boundary.
    let mut plain = 0;
    while at < bytes.len() {
        let starts_word = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
        let folded = if starts_word { whole_token(bytes, at) } else { None };
        let (end, placeholder) = match folded {
            Some(found) => found,
            None if bytes[at].is_ascii_digit() => (number_end(bytes, at), "<n>"),
            None => {
                at += 1;
                continue;
            }
        };
        out.push_str(&reason[plain..at]);
        out.push_str(placeholder);
        at = end;
        plain = end;
    }
    out.push_str(&reason[plain..]);
    out
}

/// A UUID or a hex token starting at `at` and standing alone: its end and
/// placeholder.
fn whole_token(bytes: &[u8], at: usize) -> Option<(usize, &'static str)> {
    let alone = |end: usize| end == bytes.len() || !bytes[end].is_ascii_alphanumeric();
    let hex_run = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
    // 8-4-4-4-12.
    let mut end = at;
    let mut uuid = true;
    for (i, len) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if i > 0 {
            if bytes.get(end) != Some(&b'-') {
                uuid = false;
                break;
            }
            end += 1;
        }
        if hex_run(end) < len {
            uuid = false;
            break;
        }
        end += len;
    }
    if uuid && alone(end) {
        return Some((end, "<uuid>"));
    }
    if bytes[at] == b'0' && matches!(bytes.get(at + 1), Some(b'x' | b'X')) {
        let run = hex_run(at + 2);
        if run > 0 && alone(at + 2 + run) {
            return Some((at + 2 + run, "<hex>"));
        }
    }
    let run = hex_run(at);
    let token = &bytes[at..at + run];
    if run >= 8 && alone(at + run) && token.iter().any(u8::is_ascii_digit) && !token.iter().all(u8::is_ascii_digit) {
        return Some((at + run, "<hex>"));
    }
    None
}

/// The end of the decimal number starting at `at` (digits, and `.` or `,`
/// between digits).
fn number_end(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() {
        if bytes[at].is_ascii_digit() {
            at += 1;
        } else if matches!(bytes[at], b'.' | b',') && bytes.get(at + 1).is_some_and(u8::is_ascii_digit) {
            at += 2;
        } else {
            break;
        }
    }
    at
}

/// Dead letters whose reasons share a [shape](reason_shape), one of
/// [`DeadLetterReasons::by_shape`].
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// for group in queue.dead_letter_reasons(10_000).await?.by_shape() {
///     let shown = group.shape.as_deref().unwrap_or("(not recorded)");
///     println!("{:>6}  {shown}  ({} different reasons)", group.count, group.reasons);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShapeGroup {
    /// The shape, or `None`: no reason recorded.
    pub shape: Option<String>,
    /// How many of those counted have a reason of this shape.
    pub count: usize,
    /// How many different reasons have it (1: `example` is the only one).
    pub reasons: usize,
    /// The most frequent of its reasons, as recorded.
    pub example: Option<String>,
    /// When the latest of them died, when recorded.
    pub last_at: Option<SystemTime>,
}

impl DeadLetterReasons {
    /// The counted reasons grouped by [shape](reason_shape), largest count
    /// first (ties in the order of [`groups`](Self::groups)): what an operator picks a kind of
    /// failure by when its reasons carry ids.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let shapes = queue.dead_letter_reasons(10_000).await?.by_shape();
    /// if let Some(top) = shapes.first() {
    ///     println!("{} dead letters look like {:?}", top.count, top.shape);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn by_shape(&self) -> Vec<ShapeGroup> {
        let mut shapes: Vec<ShapeGroup> = Vec::new();
        let mut index: std::collections::HashMap<Option<String>, usize> = std::collections::HashMap::new();
        // The groups come largest first: a shape's first reason is its most frequent.
        for group in &self.groups {
            let shape = group.reason.as_deref().map(reason_shape);
            let i = *index.entry(shape.clone()).or_insert_with(|| {
                shapes.push(ShapeGroup {
                    shape,
                    count: 0,
                    reasons: 0,
                    example: group.reason.clone(),
                    last_at: None,
                });
                shapes.len() - 1
            });
            let into = &mut shapes[i];
            into.count += group.count;
            into.reasons += 1;
            into.last_at = into.last_at.max(group.last_at);
        }
        // Stable: ties keep the order of their largest reasons.
        shapes.sort_by_key(|g| std::cmp::Reverse(g.count));
        shapes
    }
}

#[cfg(test)]
mod tests {
    use super::reason_shape;

    #[test]
    fn ids_numbers_and_hex_fold_and_words_stay() {
        for (reason, shape) in [
            ("customer c-14 not found", "customer c-<n> not found"),
            (
                "gateway timed out (attempt 3 of 3)",
                "gateway timed out (attempt <n> of <n>)",
            ),
            ("invalid amount -1,250.75", "invalid amount -<n>"),
            ("pay-1017: 0x1F3A", "pay-<n>: <hex>"),
            ("digest deadbeef00 mismatch", "digest <hex> mismatch"),
            // No digit: a word, not an id.
            ("deadbeefcafe", "deadbeefcafe"),
            // Inside a longer word: only the digits fold.
            ("sha256sum", "sha<n>sum"),
            // All decimal: a number, however long.
            ("order 1234567890 not found", "order <n> not found"),
            ("id 123E4567-E89B-12D3-A456-426614174000.", "id <uuid>."),
            ("заказ 42 не найден", "заказ <n> не найден"),
            ("", ""),
            ("version 1.2.3.", "version <n>."),
        ] {
            assert_eq!(reason_shape(reason), shape, "{reason:?}");
        }
    }
}
