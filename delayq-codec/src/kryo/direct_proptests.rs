//! The one-pass writer against the tree path, which defines the bytes: for
//! random values of many shapes, the same bytes (or, where the writer
//! leaves a value to the tree path, `to_vec` still gives the tree's).

use std::collections::BTreeMap;

use proptest::collection::{btree_map, vec};
use proptest::option::of;
use proptest::prelude::*;
use serde::Serialize;

use super::*;
use crate::test_support::pojos::{Event, Order, Status};

/// A final class (no Java name): written without its class, after a marker.
#[derive(Debug, Clone, Serialize)]
struct Inner {
    n: Option<i64>,
    s: String,
}

#[derive(Debug, Clone, Serialize)]
struct Id(String);

#[derive(Debug, Clone, Serialize)]
#[serde(rename = "java.util.HashSet")]
struct Tags(Vec<String>);

/// The outermost name is the class.
#[derive(Debug, Clone, Serialize)]
#[serde(rename = "java.util.LinkedList")]
struct Linked(Tags);

#[derive(Debug, Clone, Serialize)]
#[serde(rename = "java.util.LinkedHashMap")]
struct Ordered(BTreeMap<String, Option<i64>>);

/// A collection's name on a map: the map keeps its class.
#[derive(Debug, Clone, Serialize)]
#[serde(rename = "java.util.HashSet")]
struct Odd(BTreeMap<String, i64>);

/// A JDK class that is not a collection: left to the tree path.
#[derive(Debug, Clone, Serialize)]
#[serde(rename = "java.lang.Long")]
struct Boxed(i64);

/// Every field kind the writer handles, declared out of Kryo's order, with
/// names whose UTF-8 and UTF-16 orders differ.
#[derive(Debug, Clone, Serialize)]
#[serde(rename = "compat.Wide", rename_all = "camelCase")]
struct Wide {
    zeta: Option<String>,
    alpha: i64,
    b: i32,
    c: i16,
    d: i8,
    e: f32,
    f: f64,
    g: bool,
    h: char,
    boxed_long: Option<i64>,
    boxed_int: Option<i32>,
    boxed_char: Option<char>,
    names: Vec<String>,
    maybe_names: Vec<Option<String>>,
    longs: Vec<Option<i64>>,
    statuses: Vec<Option<Status>>,
    orders: Vec<Option<Order>>,
    inner: Option<Inner>,
    inners: Vec<Option<Inner>>,
    counts: Option<BTreeMap<String, i64>>,
    by_id: BTreeMap<i32, Option<Order>>,
    status: Option<Status>,
    unit: (),
    pair: (i64, Option<String>),
    id: Id,
    maybe_id: Option<Id>,
    #[serde(rename = "\u{ff21}")]
    fullwidth: i32,
    #[serde(rename = "\u{1f600}")]
    emoji: i32,
    #[serde(rename = "\u{e9}t\u{e9}")]
    ete: Option<bool>,
    uuid: Option<JavaUuid>,
    uuids: Vec<JavaUuid>,
    date: Option<JavaDate>,
    instant: Option<JavaInstant>,
    price: Option<JavaBigDecimal>,
    raw: Option<JavaBytes>,
    tags: Tags,
    maybe_tags: Option<Tags>,
    linked: Linked,
    ordered: Ordered,
    odd: Odd,
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[a-z]{0,40}"]
}

fn order() -> impl Strategy<Value = Order> {
    (of(text()), any::<i64>(), vec(text(), 0..4)).prop_map(|(id, amount, tags)| Order { id, amount, tags })
}

fn status() -> impl Strategy<Value = Status> {
    prop_oneof![Just(Status::New), Just(Status::Paid), Just(Status::Cancelled)]
}

fn inner() -> impl Strategy<Value = Inner> {
    (of(any::<i64>()), text()).prop_map(|(n, s)| Inner { n, s })
}

fn bmp() -> impl Strategy<Value = char> {
    any::<char>().prop_filter("a Java char", |c| u32::from(*c) <= 0xffff)
}

prop_compose! {
    fn wide()(
        (zeta, alpha, b, c, d, e, f, g, h) in (
            of(text()), any::<i64>(), any::<i32>(), any::<i16>(), any::<i8>(), any::<f32>(), any::<f64>(),
            any::<bool>(), bmp(),
        ),
        (boxed_long, boxed_int, boxed_char, names, maybe_names, longs, statuses, orders) in (
            of(any::<i64>()), of(any::<i32>()), of(bmp()), vec(text(), 0..4), vec(of(text()), 0..4),
            vec(of(any::<i64>()), 0..4), vec(of(status()), 0..4), vec(of(order()), 0..3),
        ),
        (inner, inners, counts, by_id, status, pair, id, maybe_id) in (
            of(inner()), vec(of(inner()), 0..3), of(btree_map(text(), any::<i64>(), 0..3)),
            btree_map(any::<i32>(), of(order()), 0..3), of(status()), (any::<i64>(), of(text())),
            text().prop_map(Id), of(text().prop_map(Id)),
        ),
        (fullwidth, emoji, ete) in (any::<i32>(), any::<i32>(), of(any::<bool>())),
        (uuid, uuids, date, instant, price, raw) in (
            of(any::<u128>().prop_map(JavaUuid)), vec(any::<u128>().prop_map(JavaUuid), 0..3),
            of(any::<i64>().prop_map(JavaDate)),
            // Years 1425 to 6325 (JavaInstant's text, which the tree path
            // reads back, has four-digit years).
            of((-(1i64 << 34)..(1i64 << 37), 0u32..1_000_000_000).prop_map(|(seconds, nanos)| JavaInstant { seconds, nanos })),
            of((any::<i64>(), 0u32..20).prop_map(|(u, s)| JavaBigDecimal::new(&format!("{u}E-{s}")).unwrap())),
            of(vec(any::<u8>(), 0..8).prop_map(JavaBytes)),
        ),
        (tags, maybe_tags, linked, ordered, odd) in (
            vec(text(), 0..3).prop_map(Tags), of(vec(text(), 0..3).prop_map(Tags)),
            vec(text(), 0..3).prop_map(|t| Linked(Tags(t))),
            btree_map(text(), of(any::<i64>()), 0..3).prop_map(Ordered),
            btree_map(text(), any::<i64>(), 0..3).prop_map(Odd),
        ),
    ) -> Wide {
        Wide {
            zeta, alpha, b, c, d, e, f, g, h, boxed_long, boxed_int, boxed_char, names, maybe_names, longs,
            statuses, orders, inner, inners, counts, by_id, status, unit: (), pair, id, maybe_id, fullwidth, emoji,
            ete, uuid, uuids, date, instant, price, raw, tags, maybe_tags, linked, ordered, odd,
        }
    }
}

/// The writer's bytes are the tree's; `covered`: the writer must not leave
/// this value to the tree path (refusing what the tree path refuses too).
fn same_bytes<T: Serialize + ?Sized + std::fmt::Debug>(value: &T, covered: bool) -> Result<(), TestCaseError> {
    let tree = tree_to_vec(value).map_err(|e| e.to_string());
    match ser_direct::to_vec(value) {
        Ok(direct) => prop_assert_eq!(&Ok(direct), &tree, "{:?}", value),
        Err(e) => prop_assert!(
            !covered || tree == Err(e.to_string()),
            "left to the tree path: {e} ({value:?})"
        ),
    }
    prop_assert_eq!(to_vec(value).map_err(|e| e.to_string()), tree);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn one_pass_writer_writes_the_tree_paths_bytes_for_pojos(wide in wide(), order in order()) {
        same_bytes(&wide, true)?;
        same_bytes(&order, true)?;
        same_bytes(&Some(order.clone()), true)?;
        same_bytes(&vec![wide.clone()], true)?;
        same_bytes(&wide.tags, true)?;
        same_bytes(&wide.linked, true)?;
        same_bytes(&wide.ordered, true)?;
        same_bytes(&wide.odd, true)?;
    }

    #[test]
    fn one_pass_writer_writes_the_tree_paths_bytes_for_roots(
        long in any::<i64>(),
        maybe in of(text()),
        longs in vec(of(any::<i64>()), 0..5),
        strings in vec(of(text()), 0..5),
        orders in vec(of(order()), 0..3),
        map in btree_map(text(), of(any::<i64>()), 0..4),
        status in status(),
        c in bmp(),
    ) {
        same_bytes(&long, true)?;
        same_bytes(&maybe, true)?;
        same_bytes(&longs, true)?;
        same_bytes(&strings, true)?;
        same_bytes(&orders, true)?;
        same_bytes(&map, true)?;
        same_bytes(&status, true)?;
        same_bytes(&c, true)?;
        same_bytes(&(long, maybe.clone()), true)?;
    }

    #[test]
    fn values_the_writer_leaves_get_the_tree_paths_bytes(
        event in any::<u128>().prop_map(|u| Event {
            kind: Some("charge".into()), order: None, status: Some(Status::Paid), uuid: Some(JavaUuid(u)),
            created_at: 5, attrs: None, retries: None, ratio: 0.5, urgent: true,
        }),
        nested in vec(vec(any::<i32>(), 0..3), 0..3),
        by_key in btree_map(text(), vec(any::<i32>(), 0..3), 0..3),
        wide in any::<u32>(),
        long in any::<i64>(),
        any_value in of(any::<i64>()).prop_map(|v| v.map_or(KryoValue::Null, KryoValue::Long)),
    ) {
        same_bytes(&event, true)?;
        same_bytes(&nested, false)?;
        same_bytes(&by_key, false)?;
        // Out of Java's int range past 2^31: both refuse.
        same_bytes(&wide, false)?;
        same_bytes(&any_value, false)?;
        same_bytes(&Boxed(long), false)?;
        same_bytes(&vec![Tags(vec!["a".into()])], false)?;
    }
}

#[test]
fn refusals_are_the_tree_paths() {
    #[derive(Serialize, Debug)]
    struct NoJavaName {
        a: i64,
    }
    #[derive(Serialize, Debug)]
    #[serde(rename = "compat.Skips")]
    struct Skips {
        #[serde(skip_serializing_if = "Option::is_none")]
        a: Option<i64>,
    }
    type Encoded = Result<Vec<u8>, KryoError>;
    let cases: [(&str, Encoded, Encoded); 3] = [
        (
            "no Java name",
            to_vec(&NoJavaName { a: 1 }),
            tree_to_vec(&NoJavaName { a: 1 }),
        ),
        (
            "skipped field",
            to_vec(&Skips { a: None }),
            tree_to_vec(&Skips { a: None }),
        ),
        ("astral char", to_vec(&'\u{1f600}'), tree_to_vec(&'\u{1f600}')),
    ];
    for (name, got, want) in cases {
        let want = want.expect_err(name).to_string();
        assert_eq!(got.expect_err(name).to_string(), want, "{name}");
    }
}
