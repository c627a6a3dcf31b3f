//! Codecs against a real queue: Jackson-typed JSON end to end, and payloads
//! written by Java-only codecs reported without losing anything.

use std::time::Duration;

use bytes::Bytes;
use delayq::format::{pack, Format};
use delayq::fred::prelude::*;
use delayq::{Error, JacksonCodec, LongCodec};
use serde::{Deserialize, Serialize};

use delayq_test_support::{now_ms, redis_test};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "shop.Order", rename_all = "camelCase")]
struct Order {
    order_id: String,
    lines: Vec<Line>,
    customer: Option<Customer>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "shop.Line")]
struct Line {
    sku: String,
    quantity: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "shop.Customer")]
struct Customer {
    name: String,
}

redis_test! {
    async fn jackson_typed_values_travel_through_a_queue(raw, client) {
        let q = client.delayed_queue("orders", JacksonCodec::<Order>::new()).unwrap();
        let order = Order {
            order_id: "o-9".into(),
            lines: vec![Line { sku: "a".into(), quantity: 2 }],
            customer: None,
        };
        // Due in 2 s: still pending when read back, even on a loaded machine.
        q.offer(&order, Duration::from_secs(2)).await.unwrap();
        assert_eq!(q.read_all().await.unwrap(), vec![order.clone()]);
        let dest = q.destination();
        assert_eq!(dest.take_timeout(Duration::from_secs(30)).await.unwrap(), Some(order.clone()));
        // What Java's JsonJacksonCodec would read: classes, ArrayList, sorted, no nulls.
        dest.offer(&order).await.unwrap();
        assert_eq!(
            raw.lrange("orders").await,
            vec![Bytes::from_static(
                br#"{"@class":"shop.Order","lines":["java.util.ArrayList",[{"@class":"shop.Line","quantity":2,"sku":"a"}]],"orderId":"o-9"}"#
            )]
        );
    }
}

/// Payloads as Redisson's default Kryo5Codec writes them (Kryo 5: class id
/// or name, then the value): "hello", 42L, and an unregistered compat.Order.
fn kryo_payloads() -> Vec<Vec<u8>> {
    let mut order = vec![0x01, 0x00];
    order.extend_from_slice(b"compat.Orde");
    order.push(b'r' | 0x80);
    order.extend_from_slice(&[0xa8, 0x13, 0x03, b'o', b'-', b'1' | 0x80]);
    vec![vec![0x03, b'h', b'e', b'l', b'l', b'o' | 0x80], vec![0x09, 0x54], order]
}

redis_test! {
    async fn a_queue_written_with_kryo_is_reported_as_such_and_nothing_is_removed(redis, raw) {
        let later = now_ms() + 3_600_000;
        for (i, payload) in kryo_payloads().iter().enumerate() {
            raw.seed("kryo", &pack(Format::Modern, payload), later + i as i64).await;
        }
        let client = redis.client().await;
        let q = client.delayed_queue("kryo", LongCodec).unwrap().without_transfer();
        for result in [
            q.read_all().await.map(|_| ()),
            q.peek().await.map(|_| ()),
            q.remove_first().await.map(|_| ()),
        ] {
            match result {
                Err(Error::Decode(e)) => {
                    let text = e.to_string();
                    assert!(text.contains("Kryo5Codec"), "{text}");
                    assert!(text.contains("use --codec kryo"), "{text}");
                    assert!(e.hint().is_some());
                }
                other => panic!("expected a Kryo decode error, got {other:?}"),
            }
        }
        assert_eq!(q.len().await.unwrap(), 3, "nothing was removed");
        assert_eq!(raw.zcard(q.keys().timeout()).await, 3, "scores kept");

        // Once due they reach the destination untouched; reading them there
        // reports the same, and leaves them for Java consumers.
        let keys = q.keys().clone();
        for (member, _) in raw.zrange(keys.timeout()).await {
            let _: i64 = raw
                .client
                .zadd(
                    keys.timeout(),
                    Some(delayq::fred::types::SetOptions::XX),
                    None,
                    false,
                    false,
                    (1.0, member),
                )
                .await
                .unwrap();
        }
        assert_eq!(q.transfer_now().await.unwrap().moved, 3);
        // (A StringCodec reader would take a Kryo Long, "\tT", for text: that
        // misconfiguration cannot be told from real text, so LongCodec here.)
        let dest = client.blocking_queue("kryo", LongCodec).unwrap();
        match dest.take().await {
            Err(Error::Decode(e)) => {
                assert!(e.to_string().contains("Kryo"), "{e}");
                assert!(e.restored());
            }
            other => panic!("expected a Kryo decode error, got {other:?}"),
        }
        let mut left: Vec<Vec<u8>> = raw.lrange("kryo").await.iter().map(|b| b.to_vec()).collect();
        left.sort();
        let mut expected = kryo_payloads();
        expected.sort();
        assert_eq!(left, expected, "every Kryo value is still in the destination list");
    }
}
