//! How a test runs: within a deadline.

use std::future::Future;
use std::time::Duration;

/// Longest any single test may run before it fails instead of hanging CI.
pub const TEST_DEADLINE: Duration = Duration::from_secs(90);

/// Runs a test body with [`TEST_DEADLINE`].
pub async fn deadline<F: Future<Output = ()>>(body: F) {
    tokio::time::timeout(TEST_DEADLINE, body)
        .await
        .expect("test exceeded its deadline");
}
