//! Running the `delayq` binary against a test's server, shared by the
//! command tests (each had its own copy).

use delayq_test_support::RedisServer;

/// Runs `delayq args…` with `REDIS_URL` set to `redis`; its output.
pub async fn delayq(redis: &RedisServer, args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .output()
        .await
        .expect("run delayq")
}

/// Output bytes as text (lossy).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
