//! Commands that take a value out of Redis, made safe to cancel.
//!
//! A future dropped while it awaits a pop (`tokio::time::timeout(take())`, a
//! `select!` branch that lost) drops the reply with it, and the value the
//! server popped would be gone. Such commands run here in a task of their
//! own; when their caller is gone, the value is given back instead.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Puts a reply nobody will read back where its value came from.
pub(crate) type GiveBack<T> = Arc<dyn Fn(T) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// How long an abandoned command may take to end and give its value back.
const ABANDON_TIMEOUT: Duration = Duration::from_secs(5);

/// A command running in its own task, and the way back for its reply.
pub(crate) struct Detached<T: Send + 'static> {
    reply: oneshot::Receiver<T>,
    task: Option<JoinHandle<()>>,
    give_back: GiveBack<T>,
    /// The reply was read, or `abandon` saw to it.
    settled: bool,
}

/// Starts `command`; its reply goes to [`Detached::reply`], or to
/// `give_back` if the `Detached` is dropped or abandoned first.
pub(crate) fn detach<T, F>(command: F, give_back: GiveBack<T>) -> Detached<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let (tx, reply) = oneshot::channel();
    let task = tokio::spawn({
        let give_back = give_back.clone();
        async move {
            // Fails only once the receiver is closed: the reply is ours to give back.
            if let Err(orphan) = tx.send(command.await) {
                give_back(orphan).await;
            }
        }
    });
    Detached {
        reply,
        task: Some(task),
        give_back,
        settled: false,
    }
}

impl<T: Send + 'static> Detached<T> {
    /// Waits for the reply; `None` if the command's task died (a panic).
    pub async fn reply(&mut self) -> Option<T> {
        let reply = (&mut self.reply).await.ok();
        self.settled = true;
        reply
    }

    /// Stops waiting and resolves once the command has ended and whatever
    /// it took is back. Closing the channel decides who owns the reply: one
    /// already sent is read here, a later one bounces back to the task.
    pub async fn abandon(mut self) {
        self.settled = true;
        self.reply.close();
        if let Ok(unread) = self.reply.try_recv() {
            (self.give_back)(unread).await;
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(ABANDON_TIMEOUT, task).await;
        }
    }
}

impl<T: Send + 'static> Drop for Detached<T> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        self.reply.close();
        if let Ok(unread) = self.reply.try_recv() {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn((self.give_back)(unread));
            }
        }
    }
}
