//! The queue page's schedules: each with its spec, next and last fire,
//! counts and paused state, and whether any process runs them (the runners'
//! heartbeats, `Schedules::runners`), and the actions that pause, resume or
//! remove one of them.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;
use axum::{Form, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::action::{act, done, failed};
use super::{error, show};
use crate::{epoch_ms, Shared};

/// No schedule actions on a read-only dashboard.
pub(crate) fn routes(read_only: bool) -> Router<Arc<Shared>> {
    let router = Router::new();
    if read_only {
        return router;
    }
    router
        .route("/api/actions/schedule-pause", post(pause))
        .route("/api/actions/schedule-resume", post(resume))
        .route("/api/actions/schedule-remove", post(remove))
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
