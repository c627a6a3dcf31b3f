//! [`KryoValue`]: any value Redisson's `Kryo5Codec` writes, without Rust types.

use super::error::KryoError;
use super::java_type::JavaType;
use super::schema::{ClassDef, KryoSchema};
use super::time::JavaTime;
use super::{decimal, tree};

/// A Java value as Kryo writes it, with its Java class.
///
/// Strings, boxed numbers, `byte[]`, `UUID`, `Date`, `Instant`,
/// `BigDecimal`, collections and maps describe themselves in Kryo's bytes
/// and decode without help; POJOs and enums are written without field names
/// or constant names, so they decode through a [`KryoSchema`]. A decoded
/// tree encodes back to the same bytes.
///
/// ```
/// use delayq_codec::kryo::KryoValue;
///
/// // java.util.ArrayList ["x", "y", "z"] as Redisson's default codec writes it.
/// let raw = [
///     0x01, 0x00, b'j', b'a', b'v', b'a', b'.', b'u', b't', b'i', b'l', b'.', b'A', b'r', b'r', b'a', b'y',
///     b'L', b'i', b's', b't' | 0x80, 0x84, 0x03, 0x00, 0x82, b'x', 0x82, b'y', 0x82, b'z',
/// ];
/// let value = KryoValue::decode(&raw, None).unwrap();
/// assert_eq!(value.to_json(), serde_json::json!(["x", "y", "z"]));
/// assert_eq!(value.encode().unwrap(), raw);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum KryoValue {
    /// Java `null`.
    Null,
    /// `java.lang.Boolean` (or a `boolean` field).
    Boolean(bool),
    /// `java.lang.Byte`.
    Byte(i8),
    /// `java.lang.Character`: one UTF-16 code unit.
    Char(u16),
    /// `java.lang.Short`.
    Short(i16),
    /// `java.lang.Integer`.
    Int(i32),
    /// `java.lang.Long`.
    Long(i64),
    /// `java.lang.Float`.
    Float(f32),
    /// `java.lang.Double`.
    Double(f64),
    /// `java.lang.String`.
    String(String),
    /// `byte[]`.
    Bytes(Vec<u8>),
    /// `java.util.UUID`, as the 128-bit number (most significant bits first).
    Uuid(u128),
    /// `java.util.Date`: milliseconds since the Unix epoch.
    Date(i64),
    /// `java.time.Instant`.
    Instant {
        /// Seconds since the Unix epoch.
        seconds: i64,
        /// Nanoseconds in the second.
        nanos: u32,
    },
    /// `java.math.BigDecimal`: `unscaled × 10^-scale`.
    BigDecimal {
        /// The unscaled value, two's complement, big-endian, shortest form
        /// (Java's `BigInteger.toByteArray()`).
        unscaled: Vec<u8>,
        /// The scale.
        scale: i32,
    },
    /// `java.math.BigInteger`, two's complement, big-endian, shortest form.
    BigInteger(Vec<u8>),
    /// A Java enum constant. Kryo writes its ordinal only; Java
    /// serialization and JBoss Marshalling write its name only. The other
    /// one is known when a schema or a Rust type gave it.
    Enum {
        /// The enum class.
        class: String,
        /// The constant's ordinal.
        ordinal: Option<u32>,
        /// The constant's name.
        name: Option<String>,
    },
    /// A collection (`ArrayList`, `HashSet`, `LinkedList`...), in order.
    Collection {
        /// Its class (`java.util.ArrayList`).
        class: String,
        /// Its elements.
        items: Vec<KryoValue>,
    },
    /// A map (`HashMap`, `LinkedHashMap`...), in Java's iteration order.
    Map {
        /// Its class (`java.util.HashMap`).
        class: String,
        /// Its entries.
        entries: Vec<(KryoValue, KryoValue)>,
    },
    /// A POJO written by Kryo's `FieldSerializer`: fields in Kryo's order
    /// (sorted by name), each with its declared Java type.
    Object {
        /// Its class (`com.shop.Order`).
        class: String,
        /// Its fields.
        fields: Vec<KryoField>,
    },
    /// A `java.time` value, or a `java.sql` date (`Timestamp`, `Date`,
    /// `Time`).
    Time(JavaTime),
    /// A JDK object that stands for one value: `Optional` (its value, or
    /// `Null` when empty), `AtomicInteger`/`AtomicLong`/`AtomicBoolean`/
    /// `AtomicReference`, `StringBuilder`/`StringBuffer`, `Currency` (its
    /// code), `Locale` (its `toString()`, `en_US`), `URI`, `URL`, `BitSet`
    /// (its words, a `long[]`), and the `Collections.unmodifiable*`,
    /// `synchronized*` and `checked*` views (the collection or map they
    /// wrap).
    Wrapped {
        /// Its class (`java.util.Optional`,
        /// `java.util.Collections$UnmodifiableRandomAccessList`).
        class: String,
        /// The value it holds.
        value: Box<KryoValue>,
    },
    /// A `java.util.EnumSet`: its elements' enum class is kept, which an
    /// empty set needs to be written again.
    EnumSet {
        /// Whether Java holds it as a `java.util.JumboEnumSet` (its enum has
        /// more than 64 constants), not a `java.util.RegularEnumSet`: the
        /// class Kryo writes. (A flag, not a class name, keeps every
        /// [`KryoValue`] at 64 bytes.)
        jumbo: bool,
        /// The enum class of its elements.
        element: String,
        /// Its constants ([`KryoValue::Enum`]s), in ordinal order.
        items: Vec<KryoValue>,
    },
    /// A `java.lang.Throwable`: its class, message and cause (its stack
    /// trace is not part of the value).
    Throwable {
        /// Its class (`java.lang.IllegalStateException`).
        class: String,
        /// `getMessage()`.
        message: Option<String>,
        /// `getCause()`.
        cause: Option<Box<KryoValue>>,
    },
}

/// A field of a [`KryoValue::Object`]: its name, its declared Java type
/// (which decides how Kryo writes it) and its value.
///
/// ```
/// use delayq_codec::kryo::{JavaType, KryoField, KryoValue};
///
/// let field = KryoField::new("amount", JavaType::parse("long").unwrap(), KryoValue::Long(5));
/// assert_eq!(field.name, "amount");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct KryoField {
    /// The Java field name.
    pub name: String,
    /// The field's declared type.
    pub declared: JavaType,
    /// The field's value.
    pub value: KryoValue,
}

impl KryoField {
    /// A field.
    pub fn new(name: impl Into<String>, declared: JavaType, value: KryoValue) -> Self {
        KryoField {
            name: name.into(),
            declared,
            value,
        }
    }
}

impl KryoValue {
    /// Decodes a payload written by Redisson's `Kryo5Codec()`. POJOs and
    /// enums need `schema`; everything else decodes without one.
    ///
    /// ```
    /// use delayq_codec::kryo::KryoValue;
    /// assert_eq!(KryoValue::decode(&[0x09, 0x54], None).unwrap(), KryoValue::Long(42));
    /// ```
    pub fn decode(raw: &[u8], schema: Option<&KryoSchema>) -> Result<KryoValue, KryoError> {
        tree::decode(raw, schema)
    }

    /// Encodes the value as `Kryo5Codec()` would (`writeClassAndObject`).
    ///
    /// ```
    /// use delayq_codec::kryo::KryoValue;
    /// assert_eq!(KryoValue::String("hi".into()).encode().unwrap(), [0x03, b'h', b'i' | 0x80]);
    /// ```
    pub fn encode(&self) -> Result<Vec<u8>, KryoError> {
        tree::encode(self)
    }

    /// The Java class of the value (`None` for null).
    ///
    /// ```
    /// use delayq_codec::kryo::KryoValue;
    /// assert_eq!(KryoValue::Int(1).java_class(), Some("java.lang.Integer"));
    /// ```
    pub fn java_class(&self) -> Option<&str> {
        Some(match self {
            KryoValue::Null => return None,
            KryoValue::Boolean(_) => "java.lang.Boolean",
            KryoValue::Byte(_) => "java.lang.Byte",
            KryoValue::Char(_) => "java.lang.Character",
            KryoValue::Short(_) => "java.lang.Short",
            KryoValue::Int(_) => "java.lang.Integer",
            KryoValue::Long(_) => "java.lang.Long",
            KryoValue::Float(_) => "java.lang.Float",
            KryoValue::Double(_) => "java.lang.Double",
            KryoValue::String(_) => "java.lang.String",
            KryoValue::Bytes(_) => "[B",
            KryoValue::Uuid(_) => "java.util.UUID",
            KryoValue::Date(_) => "java.util.Date",
            KryoValue::Instant { .. } => "java.time.Instant",
            KryoValue::BigDecimal { .. } => "java.math.BigDecimal",
            KryoValue::BigInteger(_) => "java.math.BigInteger",
            KryoValue::Time(t) => t.java_class(),
            KryoValue::EnumSet { jumbo: true, .. } => "java.util.JumboEnumSet",
            KryoValue::EnumSet { jumbo: false, .. } => "java.util.RegularEnumSet",
            KryoValue::Enum { class, .. }
            | KryoValue::Collection { class, .. }
            | KryoValue::Map { class, .. }
            | KryoValue::Object { class, .. }
            | KryoValue::Wrapped { class, .. }
            | KryoValue::Throwable { class, .. } => class,
        })
    }

    /// A `BigDecimal` from its decimal text (`"12.50"`, `"-3"`, `"1E+3"`),
    /// keeping the scale as Java's `new BigDecimal(String)` does.
    ///
    /// ```
    /// use delayq_codec::kryo::KryoValue;
    /// let v = KryoValue::big_decimal("12.50").unwrap();
    /// assert_eq!(v, KryoValue::BigDecimal { unscaled: vec![0x04, 0xe2], scale: 2 });
    /// assert_eq!(v.to_json_text(), "12.50");
    /// ```
    pub fn big_decimal(text: &str) -> Result<KryoValue, String> {
        let (unscaled, scale) = decimal::parse(text)?;
        Ok(KryoValue::BigDecimal { unscaled, scale })
    }

    /// Takes, from `schema`, the declared field types of the POJOs it
    /// describes and the ordinals of enum constants known by name only,
    /// throughout the value. Kryo writes a field by its declared type (a
    /// `List<String>` field's elements go without their class), so a POJO
    /// read with Java serialization or River, whose descriptors carry
    /// erased types (`java.util.List`), needs this before Kryo writes it as
    /// Java's `Kryo5Codec` would.
    ///
    /// ```
    /// use delayq_codec::kryo::{KryoSchema, KryoValue};
    /// let schema = KryoSchema::new().with_enum("shop.Status", &["NEW", "PAID"]);
    /// let mut paid = KryoValue::Enum { class: "shop.Status".into(), ordinal: None, name: Some("PAID".into()) };
    /// paid.adopt_schema(&schema);
    /// assert_eq!(paid.encode().unwrap()[..], [0x01, 0x00, b's', b'h', b'o', b'p', b'.', b'S', b't', b'a', b't', b'u', b's' | 0x80, 0x02]);
    /// ```
    pub fn adopt_schema(&mut self, schema: &KryoSchema) {
        match self {
            KryoValue::Object { class, fields } => {
                if let Some(ClassDef::Pojo { fields: declared, .. }) = schema.get(class) {
                    for field in fields.iter_mut() {
                        if let Some((_, ty)) = declared.iter().find(|(name, _)| *name == field.name) {
                            field.declared = ty.clone();
                        }
                    }
                }
                fields.iter_mut().for_each(|f| f.value.adopt_schema(schema));
            }
            KryoValue::Enum {
                class,
                ordinal: ordinal @ None,
                name: Some(name),
            } => {
                if let Some(ClassDef::Enum { constants }) = schema.get(class) {
                    *ordinal = constants.iter().position(|c| c == name).map(|i| i as u32);
                }
            }
            KryoValue::Collection { items, .. } | KryoValue::EnumSet { items, .. } => {
                items.iter_mut().for_each(|v| v.adopt_schema(schema))
            }
            KryoValue::Map { entries, .. } => entries.iter_mut().for_each(|(k, v)| {
                k.adopt_schema(schema);
                v.adopt_schema(schema);
            }),
            KryoValue::Wrapped { value, .. } => value.adopt_schema(schema),
            KryoValue::Throwable { cause: Some(cause), .. } => cause.adopt_schema(schema),
            _ => {}
        }
    }

    /// A field of an object by name.
    ///
    /// ```
    /// use delayq_codec::kryo::{JavaType, KryoField, KryoValue};
    /// let order = KryoValue::Object {
    ///     class: "shop.Order".into(),
    ///     fields: vec![KryoField::new("id", JavaType::parse("String").unwrap(), KryoValue::String("o-1".into()))],
    /// };
    /// assert_eq!(order.field("id"), Some(&KryoValue::String("o-1".into())));
    /// ```
    pub fn field(&self, name: &str) -> Option<&KryoValue> {
        match self {
            KryoValue::Object { fields, .. } => fields.iter().find(|f| f.name == name).map(|f| &f.value),
            _ => None,
        }
    }
}
