//! The actions on one pending element: delete, run now, reschedule, each
//! naming the element by its packed bytes ([`super::naming`]).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::Form;
use serde::Deserialize;
use serde_json::json;

use delayq::pending::ElementOutcome;

use super::super::action::{act, done, failed, paused};
use super::super::error;
use super::naming::Named;
use crate::sampler::view;
use crate::{epoch_ms, Shared};

/// The form the element actions post: the queue, the element's packed
/// bytes as hex (`raw` of the page), and for a reschedule a `delay`
/// ("10m", "1h30m") or a due time `at_ms`.
#[derive(Debug, Deserialize)]
pub(crate) struct ElementForm {
    name: String,
    element: String,
    #[serde(default)]
    delay: String,
    #[serde(default)]
    at_ms: Option<i64>,
}

/// Deletes one pending element (what Redisson's `remove` does to both
/// keys; its id, if any, leaves the index too).
pub(crate) async fn element_delete(State(shared): State<Arc<Shared>>, Form(form): Form<ElementForm>) -> Response {
    act(&shared, element_action(&shared, form, Action::Delete)).await
}

/// Moves one pending element to the destination now, as a transfer would.
pub(crate) async fn element_run(State(shared): State<Arc<Shared>>, Form(form): Form<ElementForm>) -> Response {
    act(&shared, element_action(&shared, form, Action::Run)).await
}

/// Gives one pending element a new due time (its bytes and id stay).
pub(crate) async fn element_reschedule(State(shared): State<Arc<Shared>>, Form(form): Form<ElementForm>) -> Response {
    act(&shared, element_action(&shared, form, Action::Reschedule)).await
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Delete,
    Run,
    Reschedule,
}

async fn element_action(shared: &Shared, form: ElementForm, action: Action) -> Response {
    let Some(named) = Named::parse(&form.element) else {
        return error(
            StatusCode::BAD_REQUEST,
            "`element` must name an element as the page does (its bytes as hex)".into(),
        );
    };
    let when = match action {
        Action::Reschedule => match (form.at_ms, form.delay.trim()) {
            (Some(ms), "") => When::At(SystemTime::UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)),
            (None, delay) if !delay.is_empty() => match delayq::schedule::parse_period(delay) {
                Some(delay) => When::After(delay),
                None => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        format!("{delay:?} is not a delay: write e.g. 90s, 10m, 1h30m or 2d"),
                    )
                }
            },
            _ => return error(StatusCode::BAD_REQUEST, "give a delay (e.g. 10m) or a due time".into()),
        },
        _ => When::Now,
    };
    let run = async {
        let queue = view(&shared.client, &form.name)?;
        let Some(raw) = named.resolve(&queue).await? else {
            return Ok(ElementOutcome::Gone);
        };
        match (action, when) {
            (Action::Delete, _) => queue.delete_element(&raw).await,
            (Action::Run, _) => queue.run_element_now(&raw).await,
            (Action::Reschedule, When::After(delay)) => queue.reschedule_element(&raw, delay).await,
            (Action::Reschedule, When::At(at)) => queue.reschedule_element_at(&raw, at).await,
            (Action::Reschedule, When::Now) => unreachable!("a reschedule has a due time"),
        }
    };
    let gone = || {
        error(
            StatusCode::CONFLICT,
            "that element is no longer pending: a transfer moved it, or it was removed or rescheduled \
             meanwhile; nothing changed"
                .into(),
        )
    };
    match run.await {
        Ok(ElementOutcome::Done { due }) => {
            let (message, due_ms) = match action {
                Action::Delete => (
                    "deleted the element; it will not be delivered".to_owned(),
                    epoch_ms(due),
                ),
                Action::Run => (
                    format!("moved the element to {} now; consumers take it next", form.name),
                    epoch_ms(due),
                ),
                Action::Reschedule => (format!("rescheduled the element: due {}", describe(due)), epoch_ms(due)),
            };
            done(message, json!({"due_ms": due_ms}))
        }
        Ok(ElementOutcome::Gone) => gone(),
        Ok(ElementOutcome::Copies) => error(
            StatusCode::CONFLICT,
            "the pending list holds byte-identical copies of that element (legacy elements with equal \
             payloads and due times): a new due time would apply to all of them, so nothing changed; \
             delete or run them one at a time instead"
                .into(),
        ),
        Ok(ElementOutcome::Paused) => error(StatusCode::CONFLICT, paused(&form.name)),
        Ok(ElementOutcome::Malformed) => error(
            StatusCode::CONFLICT,
            "no element format unpacks that element, so there is no value to deliver; nothing changed \
             (delete it instead)"
                .into(),
        ),
        Ok(_) => gone(),
        Err(e) => failed(e),
    }
}

#[derive(Debug, Clone, Copy)]
enum When {
    Now,
    After(Duration),
    At(SystemTime),
}

/// A due time as the answer says it: relative to now.
fn describe(due: SystemTime) -> String {
    match due.duration_since(SystemTime::now()) {
        Ok(ahead) => format!("in {}", delay_text(ahead)),
        Err(_) => "now".into(),
    }
}

fn delay_text(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => "under a second".into(),
        1..=119 => format!("{s}s"),
        120..=3_599 => format!("{}m", s / 60),
        3_600..=172_799 => format!("{}h{}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{}h", s / 86_400, s % 86_400 / 3600),
    }
}
