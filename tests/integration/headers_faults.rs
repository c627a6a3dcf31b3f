//! Headers under hand-written and oversized records: what a review of
//! issue 45 item 4 found, kept as regression tests.
//! Each seeds the documented layouts by hand (a reason record with a headers
//! part, `lua/lib/element.lua`; a member with a section,
//! `lua/lib/priority.lua`) or uses the public API, and shows what goes wrong.

use std::time::{Duration, Instant};

use bytes::Bytes;
use delayq::fred::types::Value;
use delayq::{OfferOptions, StringCodec};

use delayq_test_support::redis_test;

/// A modern packed element (0x08, 8 id bytes, u64 LE length, payload).
fn modern(id: u8, payload: &[u8]) -> Vec<u8> {
    let mut e = vec![8u8];
    e.extend_from_slice(&[id; 8]);
    e.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    e.extend_from_slice(payload);
    e
}

fn b(bytes: impl Into<Vec<u8>>) -> Value {
    Value::Bytes(Bytes::from(bytes.into()))
}

redis_test! {
    /// requeue_dead_letters promises a short run: "no more than about
    /// DELAYQ_BATCH_BYTES of payload (one value at a time, so a run stays
    /// short however large the values)". The headers each dead letter
    /// carries in its reason record (up to 8 KiB, read by an LINDEX per value
    /// and written into a new member) are not counted: 2,000 dead letters
    /// with 8,000 bytes of headers and a 1-byte payload move in one run,
    /// about 16 MB of headers read and written by one script, where ~1 MiB
    /// (~130 of them) is the bound.
    async fn requeue_dead_letters_counts_header_bytes_in_its_budget(client, raw) {
        let q = "rv-budget";
        let jobs = client.reliable_queue(q, StringCodec).unwrap();
        let n = 2_000;
        let json = format!("{{\"k\":\"{}\"}}", "h".repeat(7_992));
        assert_eq!(json.len(), 8_000);
        let record = format!("1764000000000 \x1dH{:05}{json}rejected: bad", json.len());
        for chunk in (0..n).collect::<Vec<_>>().chunks(200) {
            let mut values = vec![b(format!("delayq_dead_letter:{{{q}}}"))];
            let mut records = vec![b(format!("delayq_dead_reasons:{{{q}}}"))];
            for _ in chunk {
                values.push(b("v"));
                records.push(b(record.clone()));
            }
            raw.cmd("RPUSH", values).await;
            raw.cmd("RPUSH", records).await;
        }
        raw.cmd("SET", vec![b(format!("delayq_priority:{{{q}}}")), b("0")]).await;
        // The page reads them as headers: the layout is the one delayq writes.
        let page = jobs.dead_letter_page(0, 1).await.unwrap();
        assert_eq!(page[0].headers.get("k").map(str::len), Some(7_992));
        let started = Instant::now();
        let moved = jobs.requeue_dead_letters(10_000).await.unwrap();
        let took = started.elapsed();
        eprintln!("requeue_dead_letters moved {moved} dead letters with 8 KB headers in one run, {took:?}");
        assert!(
            moved <= 200,
            "one run moved {moved} dead letters carrying {} bytes of headers (the budget is ~1 MiB), in {took:?}",
            moved * 8_000
        );
    }
}

redis_test! {
    /// A reason record whose headers part does not read (a length below the
    /// minimum the member layout accepts) is taken as headers by
    /// `delayq_dead_record_headers` (which checks neither the length bounds
    /// nor that the bytes are there), while Rust's `split_headers` shows
    /// none. The requeue then builds a member `delayq_priority_parse` does
    /// not read, and `delayq_priority_add` fails on a nil level *after* the
    /// script already LPOPed the dead letters: the error reaches the caller,
    /// and the value is in no key at all.
    async fn a_requeue_that_fails_loses_no_dead_letter(client, raw) {
        let q = "rv-loss";
        let jobs = client.reliable_queue(q, StringCodec).unwrap();
        raw.cmd("RPUSH", vec![b(format!("delayq_dead_letter:{{{q}}}")), b("plain"), b("headed")]).await;
        raw.cmd(
            "RPUSH",
            vec![
                b(format!("delayq_dead_reasons:{{{q}}}")),
                b("1764000000000 rejected: x"),
                b("1764000000000 \x1dH00001xrejected: y"),
            ],
        )
        .await;
        raw.cmd("SET", vec![b(format!("delayq_priority:{{{q}}}")), b("0")]).await;
        // Rust reads no headers in it (and shows the part in the reason).
        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        assert!(page[1].headers.is_empty());
        let outcome = jobs.requeue_dead_letters(10).await;
        let dead = raw.llen(&format!("delayq_dead_letter:{{{q}}}")).await;
        let listed = raw.llen(q).await;
        let ready = raw.zcard(&format!("delayq_priority_ready:{{{q}}}")).await;
        assert_eq!(
            dead + listed + ready,
            2,
            "requeue answered {outcome:?}; dead letters {dead}, list {listed}, ready set {ready}: a value is gone"
        );
    }
}

redis_test! {
    /// The exact requeue (dead_letter_act) with the same record: it LSETs
    /// its marks and RPUSHes the plain values before
    /// `delayq_priority_requeue` fails, so the dead-letter list keeps mark
    /// entries and the headed value is gone.
    async fn an_exact_requeue_that_fails_leaves_no_marks(client, raw) {
        let q = "rv-exact";
        let jobs = client.reliable_queue(q, StringCodec).unwrap();
        raw.cmd("RPUSH", vec![b(format!("delayq_dead_letter:{{{q}}}")), b("headed")]).await;
        raw.cmd(
            "RPUSH",
            vec![b(format!("delayq_dead_reasons:{{{q}}}")), b("1764000000000 \x1dH00001xrejected: y")],
        )
        .await;
        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        let outcome = jobs.requeue_dead_letters_exact(&[page[0].key.clone()]).await;
        let dead = raw.lrange(&format!("delayq_dead_letter:{{{q}}}")).await;
        let ready = raw.zcard(&format!("delayq_priority_ready:{{{q}}}")).await;
        let listed = raw.llen(q).await;
        assert!(
            (dead == [Bytes::from_static(b"headed")] && ready + listed == 0) || (dead.is_empty() && ready + listed == 1),
            "exact requeue answered {outcome:?}; dead-letter list now {dead:?}, ready set {ready}, list {listed}"
        );
    }
}

redis_test! {
    /// README: "headers that do not read (written by hand) are a typed
    /// Error::Decode and the value goes back". A headers part whose bytes
    /// are not UTF-8 (length and braces right) makes pop_priority's reply
    /// fail in `parse` (`reply::opt_text` of the section) after the script
    /// popped the member: Error::Protocol, and the value is gone.
    async fn a_blocking_take_of_non_utf8_headers_gives_the_value_back(client, raw) {
        let q = "rv-utf8";
        let mut member = b"0H00004{\xff\xfe}".to_vec();
        member.extend_from_slice(&modern(7, b"x"));
        raw.cmd("ZADD", vec![b(format!("delayq_priority_ready:{{{q}}}")), b("1"), b(member)]).await;
        raw.cmd("SET", vec![b(format!("delayq_priority:{{{q}}}")), b("1")]).await;
        let consumer = client.blocking_queue(q, StringCodec).unwrap();
        let taken = consumer.take_with_headers(Duration::from_secs(2)).await;
        let ready = raw.zcard(&format!("delayq_priority_ready:{{{q}}}")).await;
        let dead = raw.llen(&format!("delayq_dead_letter:{{{q}}}")).await;
        assert_eq!(ready + dead, 1, "take answered {taken:?}; the value is in no key");
    }
}

redis_test! {
    /// The reliable side of the same member: the batch claim reads the
    /// headers as bytes and fails them as a decode error (right); a
    /// consumer that dead-letters undecodable values copies the non-UTF-8
    /// headers part into the reason record, and from then on every
    /// dead_letter_page that covers it fails (`reply::opt_text` of the
    /// record): no dead letter of that page can be listed or requeued
    /// exactly.
    async fn a_dead_letter_with_non_utf8_headers_does_not_break_the_page(client, raw) {
        let q = "rv-page";
        let jobs = client.reliable_queue(q, StringCodec).unwrap();
        let producer = client.delayed_queue(q, StringCodec).unwrap();
        producer.offer_with(&"fine".to_owned(), &OfferOptions::default().header("k", "v")).await.unwrap();
        let fine = jobs.take().await.unwrap();
        fine.reject("first").await.unwrap();
        let mut member = b"0H00004{\xff\xfe}".to_vec();
        member.extend_from_slice(&modern(7, b"x"));
        raw.cmd("ZADD", vec![b(format!("delayq_priority_ready:{{{q}}}")), b("1"), b(member)]).await;
        // A payload that does not decode is dead-lettered by a consumer that
        // asks for it (here: by hand, the way nack.lua -2 writes the record
        // from the section store).
        let record = b"1764000000000 \x1dH00004{\xff\xfe}undecodable: headers".to_vec();
        raw.cmd("RPUSH", vec![b(format!("delayq_dead_letter:{{{q}}}")), b("x")]).await;
        raw.cmd("RPUSH", vec![b(format!("delayq_dead_reasons:{{{q}}}")), b(record)]).await;
        let page = jobs.dead_letter_page(0, 10).await;
        assert!(page.is_ok(), "one record's headers fail the whole page: {:?}", page.err());
    }
}
