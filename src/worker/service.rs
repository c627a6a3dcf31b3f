//! A `tower::Service` as a worker's handler ([`Worker::run_service`]): the
//! [`Job`] it is called with, and the adapter to the worker's [`Handler`].
//!
//! [`Worker::run_service`]: super::Worker::run_service

use std::sync::Arc;

use parking_lot::Mutex;
use tower::{Service, ServiceExt};

use super::Handler;
use crate::error::BoxError;

/// One value for a service run by [`Worker::run_service`](super::Worker::run_service),
/// with the queue it came from and which attempt this is.
///
/// The request is a `Job<T>` rather than the bare `T` a
/// [`run`](super::Worker::run) closure gets so that a layer can label what
/// it sees without being built for one queue: a metrics layer counts per
/// [`queue`](Self::queue), a layer can treat a retry
/// ([`attempt`](Self::attempt) > 1) differently. The worker's `delayq.handle`
/// span (queue, attempt) is current while the service runs, so the events of
/// tracing layers carry both too.
///
/// ```
/// use delayq::worker::Job;
///
/// let job = Job::new("orders", 2, "order-17".to_owned());
/// assert_eq!((job.queue(), job.attempt(), job.value().as_str()), ("orders", 2, "order-17"));
/// assert_eq!(job.into_value(), "order-17");
/// ```
#[derive(Debug, Clone)]
pub struct Job<T> {
    value: T,
    queue: Arc<str>,
    attempt: u32,
    headers: crate::Headers,
}

impl<T> Job<T> {
    /// A job of `queue`, at `attempt` (1 the first time): what the worker
    /// makes for each value; public so that a service can be tested without
    /// a queue.
    pub fn new(queue: impl Into<Arc<str>>, attempt: u32, value: T) -> Self {
        Job {
            value,
            queue: queue.into(),
            attempt,
            headers: crate::Headers::new(),
        }
    }

    /// The same job, with headers (for a test of a service).
    pub fn with_headers(mut self, headers: crate::Headers) -> Self {
        self.headers = headers;
        self
    }

    /// The headers the value was offered with
    /// ([`OfferOptions::header`](crate::OfferOptions::header)); empty for
    /// a value offered without.
    pub fn headers(&self) -> &crate::Headers {
        &self.headers
    }

    /// The decoded value.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// The decoded value, taken out of the job.
    pub fn into_value(self) -> T {
        self.value
    }

    /// The queue's name.
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// Which attempt this is: the value's delivery count, 1 the first time
    /// (see [`Delivery::delivery_count`](crate::Delivery::delivery_count)).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }
}

/// The worker's handler for `service`: each value gets a clone of it (the
/// tower way to share a service between concurrent calls; the clones of a
/// concurrency limit share its permits), readied then called, all in the
/// handler's task: an error or a panic of either step, and the worker's
/// handler timeout, count against the attempt as a closure's would. The
/// value is only dropped then; what settles it is the worker's lease, so a
/// refused value (load shed, a limit's error) is retried like any failure.
pub(super) fn handler<T, S>(queue: &str, service: S) -> Handler<T>
where
    T: Send + 'static,
    S: Service<Job<T>, Response = ()> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    let queue: Arc<str> = Arc::from(queue);
    // Behind a lock only because the handler must be `Sync` and services
    // rarely are; held just for the clone.
    let service = Arc::new(Mutex::new(service));
    Arc::new(move |value, attempt| {
        let queue = Arc::clone(&queue);
        let service = Arc::clone(&service);
        Box::pin(async move {
            // Inside the handler's task: its value's headers are at hand.
            let job = Job {
                value,
                queue,
                attempt,
                headers: crate::Headers::current(),
            };
            let mut service = service.lock().clone();
            service.ready().await.map_err(Into::into)?;
            service.call(job).await.map_err(Into::into)
        })
    })
}
