//! Proptest strategies the codecs' property tests share: Java scalars and
//! the captured POJOs. Each test adds the shapes its format needs.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Union};

use ::bytes::Bytes;

use super::pojos::{Event, Order, Status};
use crate::kryo::decimal::integer_bytes;
use crate::kryo::{JavaUuid, KryoValue};
use crate::Codec;

/// Any value of these, each as likely: the scalars every codec writes
/// (see [`scalars`]) and `extra`.
pub(crate) fn scalar(extra: Vec<BoxedStrategy<KryoValue>>) -> impl Strategy<Value = KryoValue> {
    Union::new(scalars().into_iter().chain(extra))
}

/// The scalars every codec writes, one strategy each: `Null`, the
/// primitives (floats without NaN, which is not equal to itself), any
/// string, short byte arrays, UUIDs, dates and `BigInteger`s.
fn scalars() -> Vec<BoxedStrategy<KryoValue>> {
    vec![
        Just(KryoValue::Null).boxed(),
        any::<bool>().prop_map(KryoValue::Boolean).boxed(),
        any::<i8>().prop_map(KryoValue::Byte).boxed(),
        any::<u16>().prop_map(KryoValue::Char).boxed(),
        any::<i16>().prop_map(KryoValue::Short).boxed(),
        any::<i32>().prop_map(KryoValue::Int).boxed(),
        any::<i64>().prop_map(KryoValue::Long).boxed(),
        any::<f32>()
            .prop_filter("NaN is not equal to itself", |f| !f.is_nan())
            .prop_map(KryoValue::Float)
            .boxed(),
        any::<f64>()
            .prop_filter("NaN is not equal to itself", |f| !f.is_nan())
            .prop_map(KryoValue::Double)
            .boxed(),
        any::<String>().prop_map(KryoValue::String).boxed(),
        vec(any::<u8>(), 0..40).prop_map(KryoValue::Bytes).boxed(),
        any::<u128>().prop_map(KryoValue::Uuid).boxed(),
        any::<i64>().prop_map(KryoValue::Date).boxed(),
        any::<i128>()
            .prop_map(|u| KryoValue::BigInteger(integer_bytes(u)))
            .boxed(),
    ]
}

/// An `Instant` of these seconds (and any nanoseconds).
pub(crate) fn instant(seconds: impl Strategy<Value = i64> + 'static) -> BoxedStrategy<KryoValue> {
    (seconds, 0u32..1_000_000_000)
        .prop_map(|(seconds, nanos)| KryoValue::Instant { seconds, nanos })
        .boxed()
}

/// A `BigDecimal` of this unscaled value (and any scale).
pub(crate) fn big_decimal(unscaled: impl Strategy<Value = i128> + 'static) -> BoxedStrategy<KryoValue> {
    (unscaled, any::<i32>())
        .prop_map(|(u, scale)| KryoValue::BigDecimal {
            unscaled: integer_bytes(u),
            scale,
        })
        .boxed()
}

/// The list and set classes every Java stream format writes alike.
pub(crate) const LISTS_AND_SETS: [&str; 4] = [
    "java.util.ArrayList",
    "java.util.LinkedList",
    "java.util.HashSet",
    "java.util.LinkedHashSet",
];

/// A collection of one of these classes (each as likely), of up to 7 items.
pub(crate) fn collection(
    classes: Vec<&'static str>,
    item: impl Strategy<Value = KryoValue>,
) -> impl Strategy<Value = KryoValue> {
    (prop::sample::select(classes), vec(item, 0..8)).prop_map(|(class, items)| KryoValue::Collection {
        class: class.into(),
        items,
    })
}

/// A `HashMap` or `LinkedHashMap` of up to 5 entries.
pub(crate) fn map(inner: impl Strategy<Value = KryoValue> + Clone) -> impl Strategy<Value = KryoValue> {
    let classes: &[&str] = &["java.util.HashMap", "java.util.LinkedHashMap"];
    (prop::sample::select(classes), vec((inner.clone(), inner), 0..6)).prop_map(|(class, entries)| KryoValue::Map {
        class: class.into(),
        entries,
    })
}

/// Encodes `value` with `codec`, checks that it decodes back to the same,
/// and gives the bytes.
pub(crate) fn round_trip<T, C>(codec: &C, value: &T) -> Result<Bytes, TestCaseError>
where
    T: PartialEq + std::fmt::Debug,
    C: Codec<T>,
{
    let raw = codec.encode(value).unwrap();
    prop_assert_eq!(&codec.decode(&raw).unwrap(), value);
    Ok(raw)
}

pub(crate) fn order() -> impl Strategy<Value = Order> {
    (
        prop::option::of(any::<String>()),
        any::<i64>(),
        vec(any::<String>(), 0..5),
    )
        .prop_map(|(id, amount, tags)| Order { id, amount, tags })
}

pub(crate) fn event() -> impl Strategy<Value = Event> {
    (
        prop::option::of(any::<String>()),
        prop::option::of(order()),
        prop::option::of(prop_oneof![
            Just(Status::New),
            Just(Status::Paid),
            Just(Status::Cancelled)
        ]),
        prop::option::of(any::<u128>().prop_map(JavaUuid)),
        any::<i64>(),
        prop::option::of(prop::collection::btree_map(any::<String>(), any::<String>(), 0..4)),
        prop::option::of(any::<i32>()),
        any::<f64>().prop_filter("NaN is not equal to itself", |f| !f.is_nan()),
        any::<bool>(),
    )
        .prop_map(
            |(kind, order, status, uuid, created_at, attrs, retries, ratio, urgent)| Event {
                kind,
                order,
                status,
                uuid,
                created_at,
                attrs,
                retries,
                ratio,
                urgent,
            },
        )
}
