//! Redisson's `JsonJacksonCodec`: JSON with Jackson's default typing.
//!
//! Java's `JsonJacksonCodec` writes the class of every value whose declared
//! type is not final: an `"@class"` property on objects, a
//! `["java.class.Name", value]` wrapper on collections, `Long`s and values of
//! declared type `Object`. Properties are sorted and nulls left out. For
//! example, Java's `compat.Order {String id; long amount; List<String> tags}`:
//!
//! ```text
//! {"@class":"compat.Order","amount":1234,"id":"o-1","tags":["java.util.ArrayList",["a","b"]]}
//! ```
//!
//! [`JacksonCodec`] reads and writes that format from plain serde types. Each
//! type's Java class is declared once, with serde's own container rename
//! (`#[serde(rename = "compat.Order")]`), which does not change how other
//! serde formats write the type. The rules that stand in for Java's declared
//! types are in the table on `ser` (summarised in [`JacksonCodec`]'s docs).

mod de;
mod error;
mod java_number;
mod node;
mod parse;
mod ser;
mod value;
mod value_write;

pub use self::error::{JacksonError, JacksonErrorKind};
pub use self::value::decode_value;
pub use self::value_write::{encode_value, Dialect};

use std::marker::PhantomData;

use bytes::Bytes;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use self::node::Node;
use self::ser::{Place, Ser};
use super::Codec;
use crate::BoxError;

/// JSON as Redisson's `JsonJacksonCodec` writes it, with `"@class"` and
/// `["class", value]` type information.
///
/// The Java class of each struct is its serde name: declare it with
/// `#[serde(rename = "com.example.Order")]`, and name properties as Java does
/// (usually `#[serde(rename_all = "camelCase")]`). Writing follows Jackson's
/// default typing as Redisson configures it:
///
/// - the payload itself (declared `Object`) always carries its class: a
///   struct without a Java name is an encoding error;
/// - `Vec`s and other sequences are `java.util.ArrayList`s, maps
///   `java.util.HashMap`s;
/// - an `i64` is a primitive `long` in a struct field, and a boxed
///   `java.lang.Long` at the root or inside a collection or map; wrap a field
///   in [`JavaLong`] when the Java field is a boxed `Long`;
/// - a newtype struct renamed to a Java class gives its value that class
///   (`#[serde(rename = "java.util.LinkedList")] struct Linked<T>(Vec<T>)`);
/// - a nested struct without a Java name is written without `"@class"`, as
///   Jackson does for a `final` class;
/// - `None` fields are left out, properties are sorted, and doubles print
///   as Java prints them.
///
/// Reading takes the type information off again wherever the Rust type does
/// not need it, so both Java-written and Rust-written payloads decode; it
/// keeps every digit and the properties' order, and refuses a number the
/// Rust type would round (see [`from_slice`]).
///
/// ```
/// use delayq_codec::{Codec, JacksonCodec};
///
/// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// #[serde(rename = "compat.Order")]
/// struct Order { id: String, amount: i64, tags: Vec<String> }
///
/// let codec = JacksonCodec::<Order>::new();
/// let java = br#"{"@class":"compat.Order","amount":1234,"id":"o-1","tags":["java.util.ArrayList",["a","b"]]}"#;
/// let order = codec.decode(java).unwrap();
/// assert_eq!(order, Order { id: "o-1".into(), amount: 1234, tags: vec!["a".into(), "b".into()] });
/// assert_eq!(codec.encode(&order).unwrap().as_ref(), java);
/// ```
pub struct JacksonCodec<T> {
    dialect: Dialect,
    _type: PhantomData<fn() -> T>,
}

impl<T> JacksonCodec<T> {
    /// A Jackson codec for `T`, as Redisson's plain `JsonJacksonCodec`
    /// (no `JavaTimeModule`).
    pub fn new() -> Self {
        JacksonCodec {
            dialect: Dialect::Plain,
            _type: PhantomData,
        }
    }

    /// The same codec for the Java side's `ObjectMapper`: with
    /// [`Dialect::JavaTimeModule`], the `java.time` fields of the natural
    /// Rust types ([`natural`](crate::natural)) are written as
    /// `JavaTimeModule` writes them (`[2026,11,23,2,13,20]`); plain, they
    /// are an [`Encode`](JacksonErrorKind::Encode) error, as Java's plain
    /// Jackson refuses them. Reading takes either.
    ///
    /// ```
    /// use delayq_codec::jackson::Dialect;
    /// use delayq_codec::{Codec, JacksonCodec};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    /// #[serde(rename = "shop.Job")]
    /// struct Job {
    ///     #[serde(with = "delayq_codec::natural::duration")]
    ///     timeout: std::time::Duration,
    /// }
    /// let job = Job { timeout: std::time::Duration::from_millis(1500) };
    /// let codec = JacksonCodec::<Job>::new().with_dialect(Dialect::JavaTimeModule);
    /// let json = codec.encode(&job).unwrap();
    /// assert_eq!(json.as_ref(), br#"{"@class":"shop.Job","timeout":1.500000000}"#);
    /// assert_eq!(codec.decode(&json).unwrap(), job);
    /// assert!(JacksonCodec::<Job>::new().encode(&job).is_err());
    /// ```
    pub fn with_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }
}

impl<T> Default for JacksonCodec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for JacksonCodec<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for JacksonCodec<T> {}

impl<T> std::fmt::Debug for JacksonCodec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JacksonCodec<{}>({:?})", std::any::type_name::<T>(), self.dialect)
    }
}

impl<T> Codec<T> for JacksonCodec<T>
where
    T: Serialize + DeserializeOwned + 'static,
{
    fn name(&self) -> &'static str {
        "jackson"
    }

    fn encode(&self, value: &T) -> Result<Bytes, BoxError> {
        Ok(Bytes::from(to_vec_with(value, self.dialect)?))
    }

    fn decode(&self, raw: &[u8]) -> Result<T, BoxError> {
        Ok(from_slice(raw)?)
    }

    fn diagnose(&self, raw: &[u8]) -> Option<&'static str> {
        super::diagnose_java_binary(raw)
    }
}

/// Encodes a value as Redisson's plain `JsonJacksonCodec` would
/// ([`to_vec_with`] for an `ObjectMapper` with `JavaTimeModule`).
///
/// ```
/// #[derive(serde::Serialize)]
/// #[serde(rename = "shop.Item")]
/// struct Item { name: String }
/// let json = delayq_codec::jackson::to_vec(&Item { name: "pen".into() }).unwrap();
/// assert_eq!(json, br#"{"@class":"shop.Item","name":"pen"}"#);
/// ```
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, JacksonError> {
    to_vec_with(value, Dialect::Plain)
}

/// Encodes a value as Redisson's `JsonJacksonCodec` with `dialect`'s
/// `ObjectMapper` would. A value Java's Jackson would not read back equal
/// (a `java.time` field of a [natural](crate::natural) type without
/// `JavaTimeModule`) is an [`Encode`](JacksonErrorKind::Encode) error.
///
/// ```
/// use delayq_codec::jackson::{to_vec_with, Dialect, JacksonErrorKind};
///
/// #[derive(serde::Serialize)]
/// #[serde(rename = "shop.Shift")]
/// struct Shift {
///     #[serde(with = "delayq_codec::natural::duration")]
///     length: std::time::Duration,
/// }
/// let shift = Shift { length: std::time::Duration::from_secs(3600) };
/// let json = to_vec_with(&shift, Dialect::JavaTimeModule).unwrap();
/// assert_eq!(json, br#"{"@class":"shop.Shift","length":3600.000000000}"#);
/// let error = to_vec_with(&shift, Dialect::Plain).unwrap_err();
/// assert_eq!(error.kind(), JacksonErrorKind::Encode);
/// ```
pub fn to_vec_with<T: Serialize + ?Sized>(value: &T, dialect: Dialect) -> Result<Vec<u8>, JacksonError> {
    let node = value.serialize(Ser {
        place: Place::Root,
        dialect,
    })?;
    let mut out = Vec::new();
    node.write(&mut out);
    Ok(out)
}

/// Reads a value of `T` from what Redisson's `JsonJacksonCodec` wrote, as
/// [`JacksonCodec::decode`](Codec::decode) does, with the error typed.
///
/// Type information comes off wherever `T` does not need it, numbers keep
/// every digit (a `BigInteger` into a `String` or `u128` field, a
/// `BigDecimal`'s `2.50` into a `String`), and properties come in the order
/// written (a `Vec<(String, V)>` keeps a `LinkedHashMap`'s order; a
/// `BTreeMap`, or a `serde_json::Value`'s map, sorts). A number the target
/// cannot hold exactly (`9007199254740993` into an `f64`, a 30-digit
/// `BigInteger` into a `serde_json::Value`) is a
/// [`JacksonErrorKind::Inexact`] error naming its [path](JacksonError::path),
/// never a rounded value.
///
/// ```
/// use delayq_codec::jackson::from_slice;
///
/// #[derive(serde::Deserialize)]
/// struct Account { id: String, balance: String, limit: u128 }
///
/// let java = br#"{"@class":"bank.Account","balance":["java.math.BigDecimal",2.50],"id":"a-1",
///                 "limit":["java.math.BigInteger",123456789012345678901234567890]}"#;
/// let account: Account = from_slice(java).unwrap();
/// assert_eq!(account.balance, "2.50");
/// assert_eq!(account.limit, 123456789012345678901234567890);
///
/// let ordered: Vec<(String, i64)> = from_slice(br#"{"@class":"java.util.LinkedHashMap","z":1,"a":2}"#).unwrap();
/// assert_eq!(ordered, [("z".to_string(), 1), ("a".to_string(), 2)]);
/// ```
pub fn from_slice<T: DeserializeOwned>(raw: &[u8]) -> Result<T, JacksonError> {
    let json = parse::parse_payload(raw)?;
    T::deserialize(de::Typed(json))
}

/// Removes Jackson's type information from JSON: every `"@class"` property
/// and every `["java.class.Name", value]` wrapper (`EnumSet<E>`'s too). The
/// JSON text keeps what Java wrote: properties in their order (a
/// `LinkedHashMap`'s), numbers as written (a `BigInteger`'s every digit, a
/// `BigDecimal`'s `2.50`, an `Instant`'s nanoseconds).
///
/// ```
/// let java = br#"{"@class":"compat.Order","id":"o-1","total":["java.math.BigDecimal",2.50],"tags":["java.util.ArrayList",["a"]]}"#;
/// let plain = delayq_codec::jackson::to_plain_json(java).unwrap();
/// assert_eq!(plain, r#"{"id":"o-1","total":2.50,"tags":["a"]}"#);
/// ```
pub fn to_plain_json(raw: &[u8]) -> Result<String, JacksonError> {
    let json = de::strip(parse::parse_payload(raw)?);
    let mut out = Vec::new();
    // Text for people: characters past U+FFFF as themselves.
    plain_node(json).write_as(&mut out, node::Astral::Utf8);
    Ok(String::from_utf8(out).expect("JSON text from UTF-8 strings"))
}

/// The tree as the writer's nodes, numbers as their text.
fn plain_node(json: parse::Json) -> Node {
    use parse::Json as J;
    match json {
        J::Null => Node::Null,
        J::Bool(b) => Node::Bool(b),
        J::Number(text) => Node::Number(text.into()),
        J::Str(s) => Node::Str(s),
        J::Array(items) => Node::Array(items.into_iter().map(plain_node).collect()),
        J::Object(props) => Node::Object(props.into_iter().map(|(k, v)| (k, plain_node(v))).collect()),
    }
}

/// Adds Jackson's type information to plain JSON text, as `JsonJacksonCodec`
/// would write the same data: the root value gets `root_class`
/// (`"@class"` on an object), and each value below it the class `classes`
/// gives its path (`customer`, `items[]`, `items[].product`), or else an
/// object is a `java.util.LinkedHashMap` and an array a
/// `java.util.ArrayList`; properties are sorted and null ones left out.
/// Numbers are written as typed, every digit: a 30-digit integer (which
/// Java reads into an `Object` as a `BigInteger`), `2.50` (give its path
/// `java.math.BigDecimal`, as Java's Jackson needs for a `BigDecimal`
/// field).
///
/// ```
/// let plain = r#"{"id": "o-1", "tags": ["a"], "customer": {"name": "Ann"}, "total": 2.50}"#;
/// let classes = [("customer", "compat.Customer"), ("total", "java.math.BigDecimal")];
/// let typed = delayq_codec::jackson::from_plain_json(plain, "compat.Order", &classes).unwrap();
/// assert_eq!(
///     String::from_utf8(typed).unwrap(),
///     r#"{"@class":"compat.Order","customer":{"@class":"compat.Customer","name":"Ann"},"id":"o-1","tags":["java.util.ArrayList",["a"]],"total":["java.math.BigDecimal",2.50]}"#
/// );
/// ```
pub fn from_plain_json(plain: &str, root_class: &str, classes: &[(&str, &str)]) -> Result<Vec<u8>, JacksonError> {
    if !ser::is_java_class(root_class) {
        return Err(JacksonError::encode(format!("{root_class:?} is not a Java class name")));
    }
    for (path, class) in classes {
        if !ser::is_java_class(class) {
            return Err(JacksonError::encode(format!(
                "{path}: {class:?} is not a Java class name"
            )));
        }
    }
    let json = parse::parse_payload(plain.as_bytes())?;
    let node = typed_from_plain(json, "", Some(root_class), classes);
    let mut out = Vec::new();
    node.write(&mut out);
    Ok(out)
}

/// Classes Jackson writes without their class (its "natural" types).
fn is_natural_class(class: &str) -> bool {
    matches!(
        class,
        "java.lang.String" | "java.lang.Integer" | "java.lang.Double" | "java.lang.Boolean"
    )
}

fn typed_from_plain(value: parse::Json, path: &str, class: Option<&str>, classes: &[(&str, &str)]) -> Node {
    use parse::Json as J;
    let class = class.or_else(|| classes.iter().find(|(p, _)| *p == path).map(|(_, c)| *c));
    let scalar = |node: Node| match class {
        Some(class) if !is_natural_class(class) => Node::Typed(class.to_owned(), Box::new(node)),
        _ => node,
    };
    match value {
        J::Null => Node::Null,
        J::Bool(b) => Node::Bool(b),
        J::Number(text) => scalar(Node::Number(text.into())),
        J::Str(s) => scalar(Node::Str(s)),
        J::Array(items) => {
            let item_path = format!("{path}[]");
            let items = items
                .into_iter()
                .map(|item| typed_from_plain(item, &item_path, None, classes))
                .collect();
            Node::Typed(
                class.unwrap_or(ser::ARRAY_LIST).to_owned(),
                Box::new(Node::Array(items)),
            )
        }
        J::Object(map) => {
            let class = class.unwrap_or("java.util.LinkedHashMap");
            let mut props = Vec::with_capacity(map.len());
            for (name, value) in map {
                if value == J::Null {
                    continue;
                }
                let child = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}.{name}")
                };
                props.push((name, typed_from_plain(value, &child, None, classes)));
            }
            props.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            Node::Typed(class.to_owned(), Box::new(Node::Object(props)))
        }
    }
}

/// A Java `java.lang.Long` (boxed), for struct fields declared `Long`: Jackson
/// writes those as `["java.lang.Long", n]`, unlike primitive `long` fields.
///
/// ```
/// use delayq_codec::jackson::{to_vec, JavaLong};
///
/// #[derive(serde::Serialize)]
/// #[serde(rename = "shop.Item")]
/// struct Item { count: i64, stock: JavaLong }
///
/// let json = to_vec(&Item { count: 1, stock: JavaLong(7) }).unwrap();
/// assert_eq!(json, br#"{"@class":"shop.Item","count":1,"stock":["java.lang.Long",7]}"#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename = "java.lang.Long")]
pub struct JavaLong(pub i64);

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};

    use super::*;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    #[serde(rename = "compat.Order")]
    struct Order {
        id: String,
        amount: i64,
        tags: Vec<String>,
    }

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    #[serde(rename = "shop.Customer", rename_all = "camelCase")]
    struct Customer {
        first_name: String,
        nickname: Option<String>,
        orders: Vec<Order>,
        attributes: BTreeMap<String, String>,
        ids: Vec<i64>,
        boxed: JavaLong,
        score: f64,
        address: Address,
    }

    /// A final class on the Java side: no "@class".
    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Address {
        city: String,
    }

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn the_captured_order_round_trips_byte_for_byte() {
        for java in [
            r#"{"@class":"compat.Order","amount":1234,"id":"o-1","tags":["java.util.ArrayList",["a","b"]]}"#,
            r#"{"@class":"compat.Order","amount":-5,"id":"o-2","tags":["java.util.ArrayList",[]]}"#,
        ] {
            let order: Order = JacksonCodec::new().decode(java.as_bytes()).unwrap();
            assert_eq!(text(to_vec(&order).unwrap()), java);
        }
    }

    #[test]
    fn nested_objects_collections_maps_and_boxed_longs_are_typed() {
        let customer = Customer {
            first_name: "Ann".into(),
            nickname: None,
            orders: vec![Order {
                id: "o-1".into(),
                amount: 5,
                tags: vec![],
            }],
            attributes: BTreeMap::from([("tier".into(), "gold".into())]),
            ids: vec![1, 2],
            boxed: JavaLong(9),
            score: 12345678.5,
            address: Address { city: "Oslo".into() },
        };
        let json = text(to_vec(&customer).unwrap());
        assert_eq!(
            json,
            concat!(
                r#"{"@class":"shop.Customer","address":{"city":"Oslo"},"#,
                r#""attributes":{"@class":"java.util.HashMap","tier":"gold"},"boxed":["java.lang.Long",9],"#,
                r#""firstName":"Ann","ids":["java.util.ArrayList",[["java.lang.Long",1],["java.lang.Long",2]]],"#,
                r#""orders":["java.util.ArrayList",[{"@class":"compat.Order","amount":5,"id":"o-1","#,
                r#""tags":["java.util.ArrayList",[]]}]],"score":1.23456785E7}"#
            )
        );
        let back: Customer = JacksonCodec::new().decode(json.as_bytes()).unwrap();
        assert_eq!(back, customer);
    }

    #[test]
    fn plain_json_also_decodes() {
        let plain = br#"{"id":"o-1","amount":3,"tags":["x"]}"#;
        let order: Order = JacksonCodec::new().decode(plain).unwrap();
        assert_eq!(order.tags, vec!["x".to_string()]);
    }

    #[test]
    fn root_values_carry_their_java_class() {
        assert_eq!(text(to_vec(&42i64).unwrap()), r#"["java.lang.Long",42]"#);
        assert_eq!(text(to_vec(&7i32).unwrap()), "7");
        assert_eq!(text(to_vec("s").unwrap()), r#""s""#);
        assert_eq!(text(to_vec(&vec!["a"]).unwrap()), r#"["java.util.ArrayList",["a"]]"#);
        assert_eq!(
            JacksonCodec::<i64>::new().decode(br#"["java.lang.Long",42]"#).unwrap(),
            42
        );
    }

    #[test]
    fn a_root_struct_without_a_java_name_is_an_error_that_says_how_to_fix_it() {
        let err = to_vec(&Address { city: "x".into() }).unwrap_err().to_string();
        assert!(err.contains("#[serde(rename"), "{err}");
    }

    #[test]
    fn nulls_are_left_out_and_properties_sorted() {
        #[derive(Serialize)]
        #[serde(rename = "a.B")]
        struct B {
            zeta: Option<i32>,
            alpha: Option<i32>,
            _mid: i32,
        }
        let json = text(
            to_vec(&B {
                zeta: Some(1),
                alpha: None,
                _mid: 2,
            })
            .unwrap(),
        );
        assert_eq!(json, r#"{"@class":"a.B","_mid":2,"zeta":1}"#);
    }

    #[test]
    fn strip_removes_every_kind_of_type_information() {
        let typed = br#"{"@class":"a.B","m":{"@class":"java.util.HashMap","k":["java.lang.Long",1]},"l":["java.util.ArrayList",[{"@class":"a.C","x":1}]]}"#;
        assert_eq!(to_plain_json(typed).unwrap(), r#"{"m":{"k":1},"l":[{"x":1}]}"#);
    }

    /// `levels` ArrayLists, each the only element of the one around it, as
    /// Jackson writes them (each list is two JSON levels: the type wrapper
    /// and the array).
    fn nested_lists(levels: usize) -> String {
        format!(
            "{}{}",
            r#"["java.util.ArrayList",["#.repeat(levels),
            "]]".repeat(levels)
        )
    }

    #[test]
    fn values_nest_as_deep_as_the_other_codecs_allow_and_no_deeper() {
        let depth = |mut v: &serde_json::Value| {
            let mut n = 0;
            while let Some(inner) = v.as_array() {
                n += 1;
                match inner.first() {
                    Some(next) => v = next,
                    None => break,
                }
            }
            n
        };
        let deepest = nested_lists(crate::kryo::MAX_DEPTH);
        let plain = to_plain_json(deepest.as_bytes()).unwrap();
        assert_eq!(
            plain,
            format!(
                "{}{}",
                "[".repeat(crate::kryo::MAX_DEPTH),
                "]".repeat(crate::kryo::MAX_DEPTH)
            )
        );
        let typed: serde_json::Value = JacksonCodec::new().decode(deepest.as_bytes()).unwrap();
        assert_eq!(depth(&typed), crate::kryo::MAX_DEPTH);
        // One level more, or a million, is an error (not a stack overflow).
        for levels in [crate::kryo::MAX_DEPTH + 1, 1_000_000] {
            let raw = nested_lists(levels);
            let err = to_plain_json(raw.as_bytes()).unwrap_err().to_string();
            assert!(err.contains("nested deeper than"), "{levels}: {err}");
            let err = JacksonCodec::<serde_json::Value>::new()
                .decode(raw.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(err.contains("nested deeper than"), "{levels}: {err}");
        }
    }
}
