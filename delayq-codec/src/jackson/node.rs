//! A JSON tree in Jackson's output order, and its writer.
//!
//! The serializer builds this tree instead of writing directly because
//! properties are sorted and nulls dropped per object, and type information
//! goes in front of values whose shape is only known after serializing them.

/// One JSON value, with Jackson type information where Java writes it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Int(i128),
    /// A double, or a float when `single` (they print differently in Java).
    Float {
        value: f64,
        single: bool,
    },
    Str(String),
    /// Java text as UTF-16 units: a `char` or `char[]` may hold a lone
    /// surrogate, which no Rust string holds.
    Utf16(Vec<u16>),
    /// A number as its exact text (a `BigInteger`, a `BigDecimal`, seconds
    /// with nine decimals).
    Number(String),
    Array(Vec<Node>),
    /// Properties in output order.
    Object(Vec<(String, Node)>),
    /// A value with its Java class: `{"@class": …, …}` for objects,
    /// `["class", value]` for everything else (Jackson's `As.PROPERTY`,
    /// which falls back to a wrapper array for non-objects).
    Typed(String, Box<Node>),
}

/// The property Jackson writes the class name in.
pub(crate) const CLASS_PROPERTY: &str = "@class";

/// How characters past U+FFFF are written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Astral {
    /// As their two UTF-16 escapes, as Java's Jackson writes them
    /// (`\uD83D\uDE00`): the bytes for Java.
    Escaped,
    /// As UTF-8: JSON text for people (the CLI, the dashboard).
    Utf8,
}

impl Node {
    /// The JSON as Java's Jackson writes it.
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        self.write_as(out, Astral::Escaped);
    }

    pub(super) fn write_as(&self, out: &mut Vec<u8>, astral: Astral) {
        match self {
            Node::Null => out.extend_from_slice(b"null"),
            Node::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Node::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
            Node::Float { value, single } => super::java_number::write(out, *value, *single),
            Node::Str(s) => write_string(out, s, astral),
            Node::Utf16(units) => write_units(out, units, astral),
            Node::Number(text) => out.extend_from_slice(text.as_bytes()),
            Node::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    item.write_as(out, astral);
                }
                out.push(b']');
            }
            Node::Object(props) => write_object(out, None, props, astral),
            Node::Typed(class, inner) => match inner.as_ref() {
                Node::Object(props) => write_object(out, Some(class), props, astral),
                other => {
                    out.push(b'[');
                    write_string(out, class, astral);
                    out.push(b',');
                    other.write_as(out, astral);
                    out.push(b']');
                }
            },
        }
    }
}

fn write_object(out: &mut Vec<u8>, class: Option<&str>, props: &[(String, Node)], astral: Astral) {
    out.push(b'{');
    let mut first = true;
    if let Some(class) = class {
        write_string(out, CLASS_PROPERTY, astral);
        out.push(b':');
        write_string(out, class, astral);
        first = false;
    }
    for (name, value) in props {
        if !first {
            out.push(b',');
        }
        first = false;
        write_string(out, name, astral);
        out.push(b':');
        value.write_as(out, astral);
    }
    out.push(b'}');
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Writes a JSON string the way Jackson does: `"` and `\` escaped, control
/// characters as `\n`-style escapes or `\u00XX` (upper-case hex), each
/// UTF-16 surrogate as its `\uXXXX` escape (Jackson's UTF-8 writer escapes
/// a character past U+FFFF as its two units, `\uD83D\uDE00`), everything
/// else (other non-ASCII) as is.
fn write_string(out: &mut Vec<u8>, s: &str, astral: Astral) {
    out.push(b'"');
    write_text(out, s, astral);
    out.push(b'"');
}

fn write_text(out: &mut Vec<u8>, s: &str, astral: Astral) {
    let bytes = s.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0x00..=0x1f => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 0xf) as usize]);
            }
            // The lead byte of a character past U+FFFF: its surrogates.
            0xf0..=0xf7 if astral == Astral::Escaped => {
                let c = s[i..].chars().next().expect("a char starts here");
                let mut units = [0; 2];
                for unit in c.encode_utf16(&mut units) {
                    escape_unit(out, *unit);
                }
                i += 4;
                continue;
            }
            _ => out.push(b),
        }
        i += 1;
    }
}

/// Java text that may hold lone surrogates: a lone one as its escape (no
/// UTF-8 holds it), the rest as [`write_string`].
fn write_units(out: &mut Vec<u8>, units: &[u16], astral: Astral) {
    out.push(b'"');
    for unit in char::decode_utf16(units.iter().copied()) {
        match unit {
            Ok(c) => write_text(out, c.encode_utf8(&mut [0; 4]), astral),
            Err(lone) => escape_unit(out, lone.unpaired_surrogate()),
        }
    }
    out.push(b'"');
}

fn escape_unit(out: &mut Vec<u8>, unit: u16) {
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[usize::from((unit >> shift) & 0xf)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(node: &Node) -> String {
        let mut out = Vec::new();
        node.write(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn typed_objects_get_a_class_property_first_and_others_a_wrapper() {
        let order = Node::Typed(
            "compat.Order".into(),
            Box::new(Node::Object(vec![
                ("amount".into(), Node::Int(1234)),
                (
                    "tags".into(),
                    Node::Typed("java.util.ArrayList".into(), Box::new(Node::Array(vec![]))),
                ),
            ])),
        );
        assert_eq!(
            text(&order),
            r#"{"@class":"compat.Order","amount":1234,"tags":["java.util.ArrayList",[]]}"#
        );
    }

    #[test]
    fn strings_are_escaped_like_jackson() {
        let s = Node::Str("a\"b\\c\n\u{1}é✓/".into());
        assert_eq!(text(&s), "\"a\\\"b\\\\c\\n\\u0001é✓/\"");
    }

    /// Jackson's UTF-8 writer escapes every UTF-16 surrogate, paired or
    /// lone (checked with Redisson 4.7.0's `JsonJacksonCodec`: `"😀"` is
    /// written `"\uD83D\uDE00"`, `'\uD83D'` as `"\uD83D"`); a lone one is
    /// never replaced by U+FFFD, which would be another string.
    #[test]
    fn surrogates_are_escaped_like_jackson_lone_ones_included() {
        assert_eq!(text(&Node::Str("a😀é".into())), r#""a\uD83D\uDE00é""#);
        // Text for people (to_plain_json: the CLI, the dashboard) keeps it.
        let mut readable = Vec::new();
        Node::Array(vec![
            Node::Str("a😀é".into()),
            Node::Utf16(vec![0xd83d, 0xde00, 0xdc00]),
        ])
        .write_as(&mut readable, Astral::Utf8);
        assert_eq!(String::from_utf8(readable).unwrap(), r#"["a😀é","😀\uDC00"]"#);
        assert_eq!(text(&Node::Utf16(vec![0xd83d])), r#""\uD83D""#);
        assert_eq!(
            text(&Node::Utf16(vec![0xd83d, 0xde00, 0xdc00, 0x41, 0x0a, 0xe9])),
            r#""\uD83D\uDE00\uDC00A\né""#
        );
    }
}
