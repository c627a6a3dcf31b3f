//! The CLI's answers when a reply is lost and fred resends.

use delayq::StringCodec;
use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{redis_test, settled};

const YEARLY: &str = "0 0 1 1 *";

redis_test! {
    async fn schedule_changes_answer_as_their_first_run_when_their_reply_is_lost(proxy, client, raw) {
        let queue = client
            .delayed_queue("sched-lost", StringCodec)
            .unwrap()
            .without_transfer();
        let schedules = client
            .schedules(&delayq::QueueKeys::new("sched-lost").unwrap())
            .unwrap();
        for name in ["warm", "job", "cli-job"] {
            client.schedule(name, YEARLY, &queue, &"v".to_string()).await.unwrap();
        }
        assert!(schedules.pause("warm").await.unwrap());
        settled(&raw, "sched-lost").await;
        for (op, fired) in [("pause", 1), ("resume", 2), ("remove", 3)] {
            proxy.arm(Fault::LoseReply, bulk_string(op));
            let found = match op {
                "pause" => schedules.pause("job").await,
                "resume" => schedules.resume("job").await,
                _ => schedules.remove("job").await,
            };
            assert_eq!(proxy.fired(), fired, "{op}: its reply was lost");
            // Run again, the remove would find nothing and say so.
            assert!(found.unwrap(), "{op} answers as its first run did");
            settled(&raw, "sched-lost").await;
        }
        assert!(schedules.get("job").await.unwrap().is_none());

        // The CLI's exit code follows the answer.
        proxy.arm(Fault::LoseReply, bulk_string("remove"));
        let removed = std::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(["schedule", "remove", "sched-lost", "cli-job"])
            .env("REDIS_URL", proxy.url())
            .output()
            .expect("run delayq");
        assert_eq!(proxy.fired(), 4);
        assert!(removed.status.success(), "{}", String::from_utf8_lossy(&removed.stderr));
        assert!(schedules.get("cli-job").await.unwrap().is_none());
        client.shutdown().await;
    }
}

/// `arg` as RESP writes it in a request (a bulk string), for a fault pattern.
/// A bulk string of exactly `arg`, as it travels in a request: matches that
/// argument and no key or value that merely contains it.
fn bulk_string(arg: &str) -> Vec<u8> {
    format!("${}\r\n{arg}\r\n", arg.len()).into_bytes()
}
