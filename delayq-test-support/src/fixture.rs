//! How a test runs: within a deadline, on a server of its own, with the
//! clients it names ([`redis_test!`](crate::redis_test)).

use std::future::Future;
use std::time::Duration;

use delayq::Client;

use crate::fault_proxy::FaultProxy;
use crate::{RawRedis, RedisServer};

/// Longest any single test may run before it fails instead of hanging CI.
pub const TEST_DEADLINE: Duration = Duration::from_secs(90);

/// Longest a scale test may run (100,000 elements through a debug build, or
/// thousands of round trips and several rounds of workers):
/// on a 2-core machine busy with a build beside it, such a test took over
/// [`TEST_DEADLINE`] though nothing was wrong, and two of them side by side
/// beside two builds (load 17) took over 300 s.
pub const SCALE_DEADLINE: Duration = Duration::from_secs(600);

/// Runs a test body with [`TEST_DEADLINE`].
pub async fn deadline<F: Future<Output = ()>>(body: F) {
    deadline_of(TEST_DEADLINE, body).await
}

/// Runs a test body with the deadline `limit`.
pub async fn deadline_of<F: Future<Output = ()>>(limit: Duration, body: F) {
    tokio::time::timeout(limit, body)
        .await
        .unwrap_or_else(|_| panic!("test exceeded its deadline ({limit:?})"));
}

/// A test of its own `redis-server`: the body runs within
/// [`TEST_DEADLINE`] ([`SCALE_DEADLINE`] for a test written `scale async fn`,
/// one of 100,000 elements) on a two-thread runtime, and the test's parameters name
/// what it is given, made before the body runs and in that order:
///
/// - `redis`: the [`RedisServer`] (mutable: the test may kill or restart it);
/// - `raw`: a [`RawRedis`] of it, for seeding and inspecting;
/// - `client`: a delayq [`Client`] with test settings
///   ([`RedisServer::client`]), through the proxy if the test names one;
/// - `proxy`: a [`FaultProxy`] in front of the server.
///
/// Nothing is made that the test does not name: a client opens connections,
/// and a test that counts them sees only its own. The server lives until the
/// test ends, named or not.
///
/// ```ignore
/// redis_test! {
///     /// What the test shows.
///     async fn a_value_offered_is_taken(raw, client) {
///         let queue = client.blocking_queue("q", StringCodec).unwrap();
///         queue.offer(&"v".to_owned()).await.unwrap();
///         assert_eq!(raw.llen("q").await, 1);
///     }
/// }
/// ```
#[macro_export]
macro_rules! redis_test {
    // `scale async fn ...`: a test of 100,000 elements, with SCALE_DEADLINE.
    ($(#[$attr:meta])* scale async fn $name:ident($($given:ident),* $(,)?) $body:block) => {
        $crate::redis_test!(@limit $crate::SCALE_DEADLINE; $(#[$attr])* async fn $name($($given),*) $body);
    };
    ($(#[$attr:meta])* async fn $name:ident($($given:ident),* $(,)?) $body:block) => {
        $crate::redis_test!(@limit $crate::TEST_DEADLINE; $(#[$attr])* async fn $name($($given),*) $body);
    };
    (@limit $limit:expr_2021; $(#[$attr:meta])* async fn $name:ident($($given:ident),* $(,)?) $body:block) => {
        $(#[$attr])*
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            $crate::deadline_of($limit, async {
                #[allow(unused_mut)]
                let mut fixture = $crate::Fixture::start(&[$(stringify!($given)),*]).await;
                $(
                    #[allow(unused_mut)]
                    let mut $given = fixture.$given();
                )*
                $body
            })
            .await;
        }
    };
}

/// What [`redis_test!`](crate::redis_test) gives a test: a server and what
/// the test named, each taken out once by the method of its name.
pub struct Fixture {
    /// The server, until the test takes it; dropped (killed) with the fixture otherwise.
    redis: Option<RedisServer>,
    proxy: Option<FaultProxy>,
    raw: Option<RawRedis>,
    client: Option<Client>,
}

impl Fixture {
    /// Starts a server and makes what `given` names (`raw`, `client`,
    /// `proxy`; `redis` is always there), in that order; a client is made
    /// after the proxy it goes through.
    pub async fn start(given: &[&str]) -> Fixture {
        let redis = RedisServer::start().await;
        let (mut proxy, mut raw, mut client) = (None, None, None);
        for name in given {
            if *name == "raw" {
                raw = Some(redis.raw().await);
            }
            if (*name == "proxy" || *name == "client") && given.contains(&"proxy") && proxy.is_none() {
                proxy = Some(FaultProxy::start(redis.port()).await);
            }
            if *name == "client" {
                let builder = match &proxy {
                    Some(proxy) => redis.client_builder().url(proxy.url()),
                    None => redis.client_builder(),
                };
                client = Some(builder.build().await.expect("connect delayq client"));
            }
        }
        Fixture {
            redis: Some(redis),
            proxy,
            raw,
            client,
        }
    }

    /// The server.
    pub fn redis(&mut self) -> RedisServer {
        self.redis.take().expect("the server, taken once")
    }

    /// The fault proxy in front of the server.
    pub fn proxy(&mut self) -> FaultProxy {
        self.proxy.take().expect("the proxy, named and taken once")
    }

    /// The raw client.
    pub fn raw(&mut self) -> RawRedis {
        self.raw.take().expect("the raw client, named and taken once")
    }

    /// The delayq client.
    pub fn client(&mut self) -> Client {
        self.client.take().expect("the delayq client, named and taken once")
    }
}
