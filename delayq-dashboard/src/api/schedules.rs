//! The queue page's schedules: each with its spec, next and last fire,
//! counts and paused state, and whether any process runs them (the runners'
//! heartbeats, `Schedules::runners`); a schedule's recent fires
//! (`GET /api/schedule-fires`); and the actions that run one now, edit,
//! pause, resume or remove it.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::schedule::{ScheduleEdit, ScheduleSpec};

use super::action::{act, done, failed};
use super::{error, show};
use crate::health::{self, guarded, unavailable};
use crate::{epoch_ms, Shared};

/// The fires are read on any dashboard; no schedule actions on a read-only one.
pub(crate) fn routes(read_only: bool) -> Router<Arc<Shared>> {
    let router = Router::new().route("/api/schedule-fires", get(fires));
    if read_only {
        return router;
    }
    router
        .route("/api/actions/schedule-pause", post(pause))
        .route("/api/actions/schedule-resume", post(resume))
        .route("/api/actions/schedule-remove", post(remove))
        .route("/api/actions/schedule-run", post(run_now))
        .route("/api/actions/schedule-edit", post(edit))
}

/// The form the schedule actions post: the queue and the schedule's name.
#[derive(Debug, Deserialize)]
pub(crate) struct ScheduleForm {
    name: String,
    schedule: String,
}

#[derive(Clone, Copy)]
enum Op {
    Pause,
    Resume,
    Remove,
}

pub(crate) async fn pause(State(shared): State<Arc<Shared>>, Form(form): Form<ScheduleForm>) -> Response {
    act(&shared, change(&shared, form, Op::Pause)).await
}

pub(crate) async fn resume(State(shared): State<Arc<Shared>>, Form(form): Form<ScheduleForm>) -> Response {
    act(&shared, change(&shared, form, Op::Resume)).await
}

pub(crate) async fn remove(State(shared): State<Arc<Shared>>, Form(form): Form<ScheduleForm>) -> Response {
    act(&shared, change(&shared, form, Op::Remove)).await
}

/// One schedule action; 404 for a name the queue has no schedule of (the
/// library's operations only change a schedule that exists, so nothing is
/// created for it).
async fn change(shared: &Shared, form: ScheduleForm, op: Op) -> Response {
    let run = async {
        let schedules = shared.client.schedules(&delayq::QueueKeys::new(&form.name)?)?;
        match op {
            Op::Pause => schedules.pause(&form.schedule).await,
            Op::Resume => schedules.resume(&form.schedule).await,
            Op::Remove => schedules.remove(&form.schedule).await,
        }
    };
    let (queue, schedule) = (&form.name, &form.schedule);
    match run.await {
        Ok(true) => {
            let message = match op {
                Op::Pause => format!("paused schedule {schedule:?} of {queue}: it does not fire until resumed"),
                Op::Resume => format!("resumed schedule {schedule:?} of {queue}: it fires from its next occurrence"),
                Op::Remove => format!("removed schedule {schedule:?} of {queue}; values it offered stay queued"),
            };
            done(message, json!({}))
        }
        Ok(false) => error(StatusCode::NOT_FOUND, format!("{queue} has no schedule {schedule:?}")),
        Err(e) => failed(e),
    }
}

/// `GET /api/schedule-fires` parameters: the queue and the schedule.
#[derive(Debug, Deserialize)]
pub(crate) struct FiresQuery {
    name: String,
    schedule: String,
}

/// One schedule's recent fires, newest first (at most 20): 404 for a
/// schedule the queue does not hold.
pub(crate) async fn fires(State(shared): State<Arc<Shared>>, Query(query): Query<FiresQuery>) -> Response {
    let read = async {
        let schedules = shared.client.schedules(&delayq::QueueKeys::new(&query.name)?)?;
        Ok::<_, delayq::Error>((
            schedules.get(&query.schedule).await?,
            schedules.fires(&query.schedule).await?,
        ))
    };
    let read = match guarded(&shared, Some(health::REDIS_WAIT), read).await {
        Ok(read) => read,
        Err(why) => return unavailable(&shared, why),
    };
    match read {
        Ok((None, _)) => error(
            StatusCode::NOT_FOUND,
            format!("{} has no schedule {:?}", query.name, query.schedule),
        ),
        Ok((Some(_), fires)) => {
            let items: Vec<Value> = fires
                .iter()
                .map(|f| {
                    json!({
                        "due_ms": epoch_ms(f.due),
                        "fired_at_ms": epoch_ms(f.fired_at),
                        "late_by_ms": f.late_by().as_millis() as u64,
                        "kind": f.kind.as_str(),
                        "offered": f.offered,
                        "missed": f.missed,
                        "runner": f.runner,
                        "host": f.host,
                    })
                })
                .collect();
            Json(json!({"ok": true, "fires": items, "redis": health::json(&shared)})).into_response()
        }
        Err(e) => failed(e),
    }
}

/// Offers the schedule's value once, now; its next occurrence stays.
pub(crate) async fn run_now(State(shared): State<Arc<Shared>>, Form(form): Form<ScheduleForm>) -> Response {
    let work = async {
        let (queue, schedule) = (&form.name, &form.schedule);
        let run = async {
            shared
                .client
                .schedules(&delayq::QueueKeys::new(queue)?)?
                .run_now(schedule)
                .await
        };
        match run.await {
            Ok(due) => done(
                format!("offered the value of schedule {schedule:?} to {queue} once, now; its next fire stays"),
                json!({"due_ms": epoch_ms(due)}),
            ),
            Err(delayq::Error::NoSuchSchedule { .. }) => {
                error(StatusCode::NOT_FOUND, format!("{queue} has no schedule {schedule:?}"))
            }
            Err(e) => failed(e),
        }
    };
    act(&shared, work).await
}

/// The form of an edit: the queue, the schedule, and what changes (a field
/// left empty or out keeps what is stored).
#[derive(Debug, Deserialize)]
pub(crate) struct EditForm {
    name: String,
    schedule: String,
    /// A cron expression (`0 9 * * MON-FRI`) or a period (`every 5m`).
    #[serde(default)]
    spec: String,
    /// An IANA time zone for a cron expression.
    #[serde(default)]
    tz: String,
    /// The new value, as text the queue's codec on the dashboard encodes.
    value: Option<String>,
}

/// Edits a schedule: 400 with the reason for a spec, zone or value that
/// cannot be (nothing changed), 404 for a name the queue does not hold.
pub(crate) async fn edit(State(shared): State<Arc<Shared>>, Form(form): Form<EditForm>) -> Response {
    let work = async {
        let mut edit = ScheduleEdit::new();
        let mut changes = Vec::new();
        if !form.spec.trim().is_empty() {
            match form.spec.parse::<ScheduleSpec>() {
                Ok(spec) => edit = edit.spec(spec),
                Err(e) => return failed(e),
            }
            changes.push("spec");
        }
        if !form.tz.trim().is_empty() {
            edit = edit.time_zone(form.tz.trim());
            changes.push("time zone");
        }
        if let Some(value) = &form.value {
            match delayq::codec::encode(shared.codec_of(&form.name), value) {
                Ok(payload) => edit = edit.payload(payload),
                Err(e) => return failed(e),
            }
            changes.push("value");
        }
        if changes.is_empty() {
            return error(StatusCode::BAD_REQUEST, "nothing to change".into());
        }
        let (queue, schedule) = (&form.name, &form.schedule);
        let run = async {
            shared
                .client
                .schedules(&delayq::QueueKeys::new(queue)?)?
                .edit(schedule, edit)
                .await
        };
        match run.await {
            Ok(info) => done(
                format!(
                    "edited schedule {schedule:?} of {queue} ({} changed): {}; its counts and fires stay",
                    changes.join(", "),
                    info.spec,
                ),
                json!({}),
            ),
            Err(delayq::Error::NoSuchSchedule { .. }) => {
                error(StatusCode::NOT_FOUND, format!("{queue} has no schedule {schedule:?}"))
            }
            Err(e) => failed(e),
        }
    };
    act(&shared, work).await
}

/// The `schedules` field of `GET /api/queue`: `items` (by name), `runners`
/// (alive, latest beat first) and `alive` (whether any is). The runners are
/// read only for a queue that has schedules.
pub(crate) async fn json(shared: &Shared, queue: &str) -> delayq::Result<Value> {
    let schedules = shared.client.schedules(&delayq::QueueKeys::new(queue)?)?;
    let infos = schedules.list().await?;
    let runners = if infos.is_empty() {
        Vec::new()
    } else {
        schedules.runners().await?
    };
    let ms = |at: Option<SystemTime>| at.map(epoch_ms);
    let items: Vec<Value> = infos
        .iter()
        .map(|info| {
            json!({
                "name": info.name,
                "spec": info.spec.to_string(),
                // What the edit form starts from: the spec without its zone, and the zone.
                "expr": bare_expr(&info.spec),
                "time_zone": info.spec.time_zone(),
                "misfire": info.spec.misfire_policy().as_str(),
                "next_ms": ms(info.next),
                "last_fired_ms": ms(info.last_fired),
                "fired": info.fired,
                "missed": info.missed,
                "paused": info.paused,
                "value": show(shared.codec_of(queue), &info.payload),
            })
        })
        .collect();
    let runners: Vec<Value> = runners
        .iter()
        .map(|r| json!({"id": r.id, "last_beat_ms": epoch_ms(r.last_beat)}))
        .collect();
    Ok(json!({"alive": !runners.is_empty(), "items": items, "runners": runners}))
}

/// A spec's text without its `CRON_TZ=` prefix (the zone has a field of its own).
fn bare_expr(spec: &ScheduleSpec) -> String {
    let text = spec.to_string();
    match text.strip_prefix("CRON_TZ=").and_then(|rest| rest.split_once(' ')) {
        Some((_, expr)) => expr.to_owned(),
        None => text,
    }
}
