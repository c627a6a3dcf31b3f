//! The queue page's schedules: each with its spec, next and last fire,
//! counts and paused state, and whether any process runs them (the runners'
//! heartbeats, `Schedules::runners`).

use std::time::SystemTime;

use serde_json::{json, Value};

use super::show;
use crate::{epoch_ms, Shared};

/// The `schedules` field of `GET /api/queue`: `items` (by name), `runners`
/// (alive, latest beat first) and `alive` (whether any is). The runners are
/// read only for a queue that has schedules.
pub(crate) async fn json(shared: &Shared, queue: &str) -> delayq::Result<Value> {
    let schedules = shared.client.schedules(queue)?;
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
                "value": show(&*shared.codec, &info.payload),
            })
        })
        .collect();
    let runners: Vec<Value> = runners
        .iter()
        .map(|r| json!({"id": r.id, "last_beat_ms": epoch_ms(r.last_beat)}))
        .collect();
    Ok(json!({"alive": !runners.is_empty(), "items": items, "runners": runners}))
}
