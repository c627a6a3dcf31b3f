//! The harness's own promises, on which every other test rests.

use delayq_test_support::{deadline, RedisServer};

/// Two tests that probe the same free port: the second's server cannot
/// bind it, and the harness must not take the first's server for its own
/// (the two tests would share one Redis, and the second hang once the first
/// kills it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_another_server_holds_is_not_taken_for_ours() {
    deadline(async {
        let first = RedisServer::start().await;
        let second = RedisServer::try_start_on(first.port(), &[]).await;
        assert!(
            second.is_err(),
            "took the server on port {} for a new one",
            first.port()
        );
        // The first is untouched.
        assert!(first.pid().is_some());
        let pong = first.raw().await.cmd("PING", Vec::new()).await;
        assert_eq!(pong.as_string().as_deref(), Some("PONG"));
    })
    .await;
}
