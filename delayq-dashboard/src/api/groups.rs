//! A queue's groups ([`delayq::groups`]): for the queue page, the settings
//! every group key shares, the keys that may run now and those held (with
//! the next one to be freed); and the action that sets the settings,
//! through the library ([`ReliableQueue::set_group_limits`]).
//!
//! [`ReliableQueue::set_group_limits`]: delayq::ReliableQueue::set_group_limits

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;
use axum::{Form, Router};
use bytes::Bytes;
use delayq::fred::prelude::*;
use delayq::groups::{GroupLimits, OnFailure};
use delayq::{BytesCodec, QueueKeys, ReliableQueue};
use serde::Deserialize;
use serde_json::{json, Value};

use super::action::{act, done, failed};
use super::error;
use super::known::known;
use crate::sampler::view;
use crate::Shared;

pub(crate) fn routes(read_only: bool) -> Router<Arc<Shared>> {
    if read_only {
        return Router::new();
    }
    Router::new().route("/api/actions/group-limits", post(set))
}

fn queue(shared: &Shared, name: &str) -> delayq::Result<ReliableQueue<Bytes>> {
    Ok(shared.client.reliable_queue(name, BytesCodec)?.without_transfer())
}

/// The Groups card of the queue page. `used`: the queue had a grouped
/// value or settings (its group state exists: consumers look at groups only
/// then); `runnable`: keys that may run now (the ring), `held`: keys held
/// until a time (a failed value's retry under hold, or the key's rate),
/// `next_freed`: the held key freed first, `{key, at_ms}` (Redis's clock),
/// null while none is held. Keys at their concurrency are in neither. One
/// pipelined read, then the settings (one `HGET`) once the queue uses
/// groups; the reads are not one atomic step.
pub(crate) async fn section(shared: &Shared, name: &str) -> delayq::Result<Value> {
    let keys = QueueKeys::new(name)?;
    let pipeline = shared.client.redis().next().pipeline();
    let () = pipeline.exists(keys.group_state()).await?;
    let () = pipeline.zcard(keys.group_ring()).await?;
    let () = pipeline.zcard(keys.group_blocked()).await?;
    let () = pipeline
        .zrange(keys.group_blocked(), 0, 0, None, false, None, true)
        .await?;
    let (used, runnable, held, first): (u64, u64, u64, delayq::fred::types::Value) = pipeline.all().await?;
    let limits = if used > 0 {
        queue(shared, name)?.group_limits().await?
    } else {
        GroupLimits::new()
    };
    let mut section = limits_json(&limits);
    section["used"] = json!(used > 0);
    section["runnable"] = json!(runnable);
    section["held"] = json!(held);
    section["next_freed"] = next_freed(first);
    Ok(section)
}

/// `ZRANGE .. WITHSCORES` of one member, flat (RESP2) or paired (RESP3),
/// as `{key, at_ms}`; null for none.
fn next_freed(reply: delayq::fred::types::Value) -> Value {
    let mut flat = Vec::new();
    for item in reply.into_array() {
        match item {
            delayq::fred::types::Value::Array(pair) => flat.extend(pair),
            other => flat.push(other),
        }
    }
    match flat.as_slice() {
        [key, at, ..] => {
            let key = key
                .as_bytes()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            json!({"key": key, "at_ms": at.as_f64().map(|ms| ms as i64)})
        }
        _ => Value::Null,
    }
}

/// The settings as the page shows and edits them.
fn limits_json(limits: &GroupLimits) -> Value {
    let rate = limits
        .rate_limit()
        .map(|(count, per)| json!({"count": count, "per_ms": per.as_millis() as u64, "per": period(per)}));
    json!({
        "text": text(limits),
        "concurrency": limits.concurrency_limit(),
        "rate": rate,
        "on_failure": on_failure(limits.failure_mode()),
    })
}

fn on_failure(mode: OnFailure) -> &'static str {
    match mode {
        OnFailure::Skip => "skip",
        // Hold, and whatever a later library adds (the type is non-exhaustive).
        _ => "hold",
    }
}

/// "concurrency 1 per key, no rate, on failure hold".
fn text(limits: &GroupLimits) -> String {
    let rate = match limits.rate_limit() {
        Some((count, per)) => format!("at most {count} starts per {} per key", period(per)),
        None => "no rate".to_owned(),
    };
    format!(
        "concurrency {} per key, {rate}, on failure {}",
        limits.concurrency_limit(),
        on_failure(limits.failure_mode())
    )
}

/// A period as its field takes it back (`delayq::schedule::parse_period`):
/// `1s`, `1m30s`, `500ms`.
fn period(d: Duration) -> String {
    let ms = d.as_millis();
    let units = [
        (ms / 86_400_000, "d"),
        (ms / 3_600_000 % 24, "h"),
        (ms / 60_000 % 60, "m"),
        (ms / 1_000 % 60, "s"),
        (ms % 1_000, "ms"),
    ];
    let text: String = units
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect();
    if text.is_empty() {
        "0ms".to_owned()
    } else {
        text
    }
}

/// The form the group settings editor posts.
#[derive(Debug, Deserialize)]
pub(crate) struct GroupForm {
    name: String,
    /// A key's values at once: a whole number from 1 (empty: 1).
    #[serde(default)]
    concurrency: String,
    /// Starts per key per `per` (empty or 0: no rate).
    #[serde(default)]
    rate: String,
    /// The rate's period (`1s`, `500ms`, `1m`); needed with a rate.
    #[serde(default)]
    per: String,
    /// `hold` or `skip` (empty: hold).
    #[serde(default)]
    on_failure: String,
}

/// Sets the settings every group key of the queue shares, for every
/// delayq process (Java's consumers never see grouped values).
pub(crate) async fn set(State(shared): State<Arc<Shared>>, Form(form): Form<GroupForm>) -> Response {
    act(&shared, set_now(&shared, form)).await
}

async fn set_now(shared: &Shared, form: GroupForm) -> Response {
    let limits = match limits_of(&form) {
        Ok(limits) => limits,
        Err(why) => return error(StatusCode::BAD_REQUEST, format!("{why}. Nothing was changed.")),
    };
    let run = async {
        // Settings on a name delayq does not know would create its only key.
        if !known(shared, &form.name, &view(&shared.client, &form.name)?.status().await?).await? {
            return Ok(None);
        }
        let queue = queue(shared, &form.name)?;
        queue.set_group_limits(&limits).await?;
        Ok::<_, delayq::Error>(Some(queue.group_limits().await?))
    };
    match run.await {
        Ok(Some(limits)) => done(
            format!(
                "{} groups: {} (delayq's reliable consumers obey them at their next claim)",
                form.name,
                text(&limits)
            ),
            json!({"groups": limits_json(&limits)}),
        ),
        Ok(None) => error(StatusCode::NOT_FOUND, format!("no queue {}", form.name)),
        Err(e) => failed(e),
    }
}

/// The settings a form posts, or why not.
fn limits_of(form: &GroupForm) -> Result<GroupLimits, String> {
    let concurrency = match form.concurrency.trim() {
        "" => 1,
        n => match n.parse::<u32>() {
            Ok(0) => return Err("concurrency must be 1 or more: 0 would run no key".into()),
            Ok(n) => n,
            Err(_) => {
                return Err(format!(
                    "concurrency must be a whole number from 1 to {}, not {n:?}",
                    u32::MAX
                ))
            }
        },
    };
    let rate = match form.rate.trim() {
        "" => 0,
        n => n
            .parse::<u32>()
            .map_err(|_| format!("rate must be a whole number of starts (0 or empty: no rate), not {n:?}"))?,
    };
    let per = match form.per.trim() {
        "" => None,
        text => match delayq::schedule::parse_period(text) {
            Some(per) if !per.is_zero() => Some(per),
            _ => return Err(format!("per must be a period such as 1s, 500ms or 1m, not {text:?}")),
        },
    };
    let on_failure = match form.on_failure.trim() {
        "" | "hold" => OnFailure::Hold,
        "skip" => OnFailure::Skip,
        other => return Err(format!("on failure must be hold or skip, not {other:?}")),
    };
    let mut limits = GroupLimits::new().concurrency(concurrency).on_failure(on_failure);
    if rate > 0 {
        let Some(per) = per else {
            return Err(format!("a rate of {rate} needs its period (per), e.g. 1s"));
        };
        limits = limits.rate(rate, per);
    }
    Ok(limits)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn periods_read_back_as_the_field_takes_them() {
        for (ms, text) in [(1_000, "1s"), (500, "500ms"), (90_000, "1m30s"), (3_600_000, "1h")] {
            let d = Duration::from_millis(ms);
            assert_eq!(super::period(d), text);
            assert_eq!(delayq::schedule::parse_period(text), Some(d));
        }
    }
}
