//! ACL users through the CLI and the library together.

use delayq::fred::types::Value;
use delayq::{Client, StringCodec};
use delayq_test_support::redis_test;
use std::time::Duration;

redis_test! {
    async fn an_acl_user_works_and_a_wrong_password_is_a_clear_error(redis, raw) {
        let setuser = ["SETUSER", "orders-svc", "on", ">s3cret", "~*", "&*", "+@all"];
        raw.cmd("ACL", setuser.iter().map(|a| Value::from(*a)).collect()).await;
        let port = redis.port();

        let client = Client::builder()
            .url(format!("redis://orders-svc:s3cret@127.0.0.1:{port}"))
            .build()
            .await
            .expect("the ACL user connects");
        let queue = client.delayed_queue("acl-q", StringCodec).unwrap();
        queue.offer(&"x".to_owned(), Duration::from_millis(50)).await.unwrap();
        assert_eq!(
            queue
                .destination()
                .take_timeout(Duration::from_secs(5))
                .await
                .unwrap()
                .as_deref(),
            Some("x")
        );
        client.shutdown().await;

        let wrong = Client::builder()
            .url(format!("redis://orders-svc:wrong@127.0.0.1:{port}"))
            .connect_timeout(Duration::from_secs(3))
            .build()
            .await;
        let error = wrong.expect_err("a wrong password fails to connect").to_string();
        assert!(error.contains("WRONGPASS"), "{error}");

        let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(["inspect", "acl-q"])
            .env("REDIS_URL", format!("redis://orders-svc:wrong@127.0.0.1:{port}"))
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("WRONGPASS") && stderr.contains("hint: put the user and password in the URL"),
            "{stderr}"
        );
        assert!(
            !stderr.contains("wrong@") && stderr.contains("orders-svc:***@"),
            "no password in messages: {stderr}"
        );
    }
}
