//! The JDK objects that stand for one value, in River: atomics, `BitSet`,
//! `Currency`, `Locale`, `URI`, `URL`, `StringBuilder`/`StringBuffer`, the
//! `java.sql` dates and throwables, each as its `Serializable` form (fields
//! sorted by name, then its `writeObject` data).

use super::*;
use crate::jdk::forms::{self, parse_locale, parse_url, THROWABLES};
use crate::kryo::JavaTime;

const NUMBER: &str = "java.lang.Number";
const STACK_TRACE_ELEMENT: &str = "java.lang.StackTraceElement";
const O: u8 = ids::OBJECT_CLASS;

/// The serial form of the classes this module writes.
pub(super) fn jdk_class(name: &str) -> Option<JdkClass> {
    let (uid, write_object, fields, superclass): (u64, bool, &'static [(&'static str, u8)], _) = match name {
        "java.util.concurrent.atomic.AtomicInteger" => {
            (0x563f_5ecc_8c6c_168a, false, &[("value", ids::PRIM_INT)], Some(NUMBER))
        }
        "java.util.concurrent.atomic.AtomicLong" => {
            (0x1ac0_fab4_7700_1718, false, &[("value", ids::PRIM_LONG)], Some(NUMBER))
        }
        "java.util.concurrent.atomic.AtomicBoolean" => {
            (0x4098_b70a_4f3f_fc33, false, &[("value", ids::PRIM_INT)], None)
        }
        "java.util.concurrent.atomic.AtomicReference" => (0xe657_71d4_5578_54c6, false, &[("value", O)], None),
        "java.util.BitSet" => (0x6efd_887e_3934_ab21, true, &[("bits", O)], None),
        "java.util.Currency" => (0xfdcd_934a_5911_a91f, false, &[("currencyCode", O)], None),
        // Only an `Instant[]`'s component class: an `Instant` itself is
        // written as its `writeReplace` form, `java.time.Ser`.
        "java.time.Instant" => (
            0xf6c2_e8f0_233a_231c,
            false,
            &[("nanos", ids::PRIM_INT), ("seconds", ids::PRIM_LONG)],
            None,
        ),
        "java.net.URI" => (0xac01_782e_439e_49ab, true, &[("string", O)], None),
        "java.util.Locale" => (
            0x7ef8_1160_9c30_f9ec,
            true,
            &[
                ("country", O),
                ("extensions", O),
                ("hashcode", ids::PRIM_INT),
                ("language", O),
                ("script", O),
                ("variant", O),
            ],
            None,
        ),
        "java.net.URL" => (
            0x9625_3736_1afc_e472,
            true,
            &[
                ("authority", O),
                ("file", O),
                ("hashCode", ids::PRIM_INT),
                ("host", O),
                ("port", ids::PRIM_INT),
                ("protocol", O),
                ("ref", O),
            ],
            None,
        ),
        "java.lang.StringBuilder" => (0x3cd5_fb14_5a4c_6acb, true, &[], None),
        "java.lang.StringBuffer" => (
            0x2f07_07d9_eac8_ead3,
            true,
            &[("count", ids::PRIM_INT), ("shared", ids::PRIM_BOOLEAN), ("value", O)],
            None,
        ),
        "java.sql.Date" => (0x14fa_4668_3f35_6697, false, &[], Some(jdk::DATE)),
        "java.sql.Time" => (0x7489_4a0d_d932_c471, false, &[], Some(jdk::DATE)),
        "java.sql.Timestamp" => (
            0x2618_d5c8_0153_bf65,
            false,
            &[("nanos", ids::PRIM_INT)],
            Some(jdk::DATE),
        ),
        STACK_TRACE_ELEMENT => (
            0x6109_c59a_2636_dd85,
            false,
            &[
                ("classLoaderName", O),
                ("declaringClass", O),
                ("fileName", O),
                ("format", ids::PRIM_BYTE),
                ("lineNumber", ids::PRIM_INT),
                ("methodName", O),
                ("moduleName", O),
                ("moduleVersion", O),
            ],
            None,
        ),
        _ => {
            let (uid, superclass) = forms::throwable_class(name)?;
            let fields: &'static [(&'static str, u8)] = if superclass.is_none() {
                &[
                    ("cause", O),
                    ("detailMessage", O),
                    ("stackTrace", O),
                    ("suppressedExceptions", O),
                ]
            } else {
                &[]
            };
            (uid, superclass.is_none(), fields, superclass)
        }
    };
    Some(JdkClass {
        uid: uid as i64,
        write_object,
        fields,
        superclass,
    })
}

impl Writer<'_> {
    /// The values this module writes; `Ok(false)` for another class.
    pub(super) fn wrapped(&mut self, class: &str, inner: &KryoValue) -> Result<bool> {
        match (class, inner) {
            ("java.util.concurrent.atomic.AtomicInteger", KryoValue::Int(v)) => {
                self.new_jdk_object(class)?;
                self.i32(*v);
            }
            ("java.util.concurrent.atomic.AtomicLong", KryoValue::Long(v)) => {
                self.new_jdk_object(class)?;
                self.i64(*v);
            }
            ("java.util.concurrent.atomic.AtomicBoolean", KryoValue::Boolean(v)) => {
                self.new_jdk_object(class)?;
                self.i32(i32::from(*v));
            }
            ("java.util.concurrent.atomic.AtomicReference", v) => {
                self.new_jdk_object(class)?;
                self.value(v)?;
            }
            ("java.util.Currency", KryoValue::String(code)) => {
                self.new_jdk_object(class)?;
                self.string(code)?;
            }
            ("java.net.URI", KryoValue::String(text)) => {
                self.new_jdk_object(class)?;
                self.string(text)?;
                self.u8(ids::END_BLOCK_DATA);
            }
            ("java.util.BitSet", KryoValue::Collection { class: words, items }) if words == "[J" => {
                self.new_jdk_object(class)?;
                self.array(words, items)?;
                self.u8(ids::END_BLOCK_DATA);
            }
            ("java.util.Locale", KryoValue::String(text)) => {
                let p = parse_locale(text)
                    .ok_or_else(|| MarshallingError::encode(format!("{text:?}: not a Locale's text")))?;
                self.new_jdk_object(class)?;
                self.string(p.country)?;
                self.string(p.extensions)?;
                self.i32(-1); // hashcode: not computed yet
                self.string(p.language)?;
                self.string(p.script)?;
                self.string(p.variant)?;
                self.u8(ids::END_BLOCK_DATA);
            }
            ("java.net.URL", KryoValue::String(text)) => {
                let u = parse_url(text)
                    .ok_or_else(|| MarshallingError::encode(format!("{text:?}: not a URL Java writes")))?;
                self.new_jdk_object(class)?;
                self.optional_string(u.authority)?;
                self.string(u.file)?;
                self.i32(-1); // hashCode: not computed yet
                self.string(u.host)?;
                self.i32(u.port);
                self.string(u.protocol)?;
                self.optional_string(u.reference)?;
                self.u8(ids::END_BLOCK_DATA);
            }
            ("java.lang.StringBuilder" | "java.lang.StringBuffer", KryoValue::String(text)) => {
                self.builder(class, text)?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn optional_string(&mut self, s: Option<&str>) -> Result<()> {
        match s {
            Some(s) => self.string(s),
            None => {
                self.u8(ids::NULL);
                Ok(())
            }
        }
    }

    /// `StringBuilder.writeObject` (its length in a block, then its
    /// `char[]`) and `StringBuffer`'s fields (count, shared, value), each
    /// with the spare capacity `new StringBuilder(text)` has.
    fn builder(&mut self, class: &str, text: &str) -> Result<()> {
        let mut units: Vec<KryoValue> = text.encode_utf16().map(KryoValue::Char).collect();
        let count = i32::try_from(units.len()).map_err(|_| MarshallingError::encode("a text past 2^31 - 1"))?;
        units.resize(forms::builder_capacity(units.len()), KryoValue::Char(0));
        self.new_jdk_object(class)?;
        if class == "java.lang.StringBuilder" {
            self.block(&count.to_be_bytes());
        } else {
            self.i32(count);
            self.u8(0); // shared
        }
        self.array("[C", &units)?;
        self.u8(ids::END_BLOCK_DATA);
        Ok(())
    }

    /// `java.sql.Date`/`Time`/`Timestamp`: `java.util.Date`'s data (the
    /// milliseconds), then a `Timestamp`'s nanoseconds.
    pub(super) fn sql_date(&mut self, time: &JavaTime) -> Result<bool> {
        let (class, ms, nanos) = match *time {
            JavaTime::SqlDate(ms) => ("java.sql.Date", ms, None),
            JavaTime::SqlTime(ms) => ("java.sql.Time", ms, None),
            JavaTime::SqlTimestamp { seconds, nanos } => {
                // Date's time holds the whole seconds; the nanos the rest.
                let ms = seconds
                    .checked_mul(1000)
                    .ok_or_else(|| MarshallingError::encode("a Timestamp out of range"))?;
                ("java.sql.Timestamp", ms, Some(nanos))
            }
            _ => return Ok(false),
        };
        self.new_jdk_object(class)?;
        self.block(&ms.to_be_bytes());
        self.u8(ids::END_BLOCK_DATA);
        if let Some(nanos) = nanos {
            self.i32(nanos as i32);
        }
        Ok(true)
    }

    /// A throwable: its class chain, then `Throwable`'s fields (a missing
    /// cause is the throwable itself, as Java holds it; no stack trace; no
    /// suppressed exceptions).
    pub(super) fn throwable(&mut self, class: &str, message: Option<&str>, cause: Option<&KryoValue>) -> Result<()> {
        if forms::throwable_class(class).is_none() {
            return Err(MarshallingError::encode(format!(
                "{class}: its class chain's serialVersionUIDs are not known here; delayq writes {THROWABLES}"
            )));
        }
        self.new_jdk_object(class)?;
        let own = self.instance_seq - 1;
        match cause {
            Some(c) => self.value(c)?,
            None => self.repeat_object(own),
        }
        self.optional_string(message)?;
        self.array(&format!("[L{STACK_TRACE_ELEMENT};"), &[])?;
        self.u8(ids::EMPTY_LIST_OBJECT);
        self.u8(ids::END_BLOCK_DATA);
        Ok(())
    }

    /// An array's component class: River's id for the JDK's common ones,
    /// an array type around its own component, `StackTraceElement`'s
    /// descriptor.
    pub(super) fn component(&mut self, array_class: &str) -> Result<()> {
        let id = match array_class {
            "[Z" => ids::PRIM_BOOLEAN,
            "[S" => ids::PRIM_SHORT,
            "[I" => ids::PRIM_INT,
            "[J" => ids::PRIM_LONG,
            "[C" => ids::PRIM_CHAR,
            "[F" => ids::PRIM_FLOAT,
            "[D" => ids::PRIM_DOUBLE,
            "[Ljava.lang.String;" => ids::STRING_CLASS,
            "[Ljava.lang.Object;" => ids::OBJECT_CLASS,
            "[Ljava.lang.Boolean;" => ids::BOOLEAN_CLASS,
            "[Ljava.lang.Byte;" => 0x2a,
            "[Ljava.lang.Short;" => 0x2b,
            "[Ljava.lang.Integer;" => 0x2c,
            "[Ljava.lang.Long;" => 0x2d,
            "[Ljava.lang.Character;" => 0x2e,
            "[Ljava.lang.Float;" => 0x2f,
            "[Ljava.lang.Double;" => ids::DOUBLE_CLASS,
            "[[Z" => 0x18,
            "[[B" => ids::BYTE_ARRAY_CLASS,
            "[[S" => 0x1a,
            "[[I" => 0x1b,
            "[[J" => 0x1c,
            "[[C" => 0x1d,
            "[[F" => 0x1e,
            "[[D" => 0x1f,
            _ => {
                // An array of a JDK class whose serial form is known here
                // (`BigDecimal[]`, `Instant[]`, `StackTraceElement[]`...):
                // that class's descriptor.
                if let Some(element) = array_class.strip_prefix("[L").and_then(|c| c.strip_suffix(';'))
                    && super::jdk_class(element).is_some()
                {
                    return self.jdk_class(element);
                }
                // An array of arrays: the array type class, once, then by number.
                let element = array_class
                    .strip_prefix('[')
                    .filter(|e| e.starts_with('['))
                    .ok_or_else(|| {
                        MarshallingError::encode(format!(
                            "{array_class}: delayq writes arrays of primitives, strings, boxed numbers, Object, \
                         the JDK classes it writes as Serializable objects (BigDecimal, BigInteger, Instant, \
                         UUID, Date...) and arrays of those to River"
                        ))
                    })?;
                if !self.known_class(element, Described::ArrayType)? {
                    self.u8(ids::OBJECT_ARRAY_TYPE_CLASS);
                    self.component(element)?;
                    self.classes
                        .insert(element.to_owned(), (self.class_seq, Described::ArrayType));
                    self.class_seq += 1;
                }
                return Ok(());
            }
        };
        self.u8(id);
        Ok(())
    }
}
