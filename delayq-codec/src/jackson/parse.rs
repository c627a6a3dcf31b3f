//! Jackson's JSON as written: object properties in their order, numbers as
//! their text. serde_json's `Value` sorts properties (a `LinkedHashMap`'s
//! order is Java's value) and turns numbers past 64 bits and decimals into
//! doubles (a `BigInteger` loses digits, a `BigDecimal` its scale, an
//! `Instant`'s decimal seconds their nanoseconds); Java reads neither so.
//!
//! One pass over the bytes, nesting checked as it goes
//! ([`MAX_JSON_DEPTH`]); each value takes a node of 32 bytes plus its text,
//! at most a few dozen bytes per input byte.

use std::fmt;

use super::error::{JacksonError, JacksonErrorKind};
use crate::kryo::MAX_DEPTH;

/// JSON levels a payload may nest. Jackson's type information doubles the
/// nesting (a `List` is the `["java.util.ArrayList", [...]]` wrapper around
/// its array), so values nested [`MAX_DEPTH`] deep are up to two levels
/// each, and one more for a boxed number's wrapper inside the innermost.
pub(crate) const MAX_JSON_DEPTH: usize = 2 * MAX_DEPTH + 1;

/// One JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    /// A number's text, as written (checked against JSON's grammar).
    Number(Box<str>),
    Str(String),
    Array(Vec<Json>),
    /// Properties in the order written.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// What the value is, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::Str(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// Why bytes are not JSON, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub(crate) offset: usize,
    pub(crate) message: String,
    /// `Malformed`; `TooDeep` past [`MAX_JSON_DEPTH`]; `Unsupported` for
    /// JSON Java reads but Rust cannot hold (a lone UTF-16 surrogate).
    pub(crate) kind: JacksonErrorKind,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

/// Parses a payload, with the error a [`JacksonError`].
pub(crate) fn parse_payload(raw: &[u8]) -> Result<Json, JacksonError> {
    parse(raw).map_err(|e| JacksonError::new(e.kind, Some(e.offset), e.message))
}

/// Parses one JSON value (whitespace around it allowed).
pub(crate) fn parse(raw: &[u8]) -> Result<Json, ParseError> {
    let mut p = Parser { raw, pos: 0, depth: 0 };
    p.space();
    let value = p.value()?;
    p.space();
    if p.pos < raw.len() {
        return Err(p.error("bytes after the JSON value"));
    }
    Ok(value)
}

struct Parser<'a> {
    raw: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            offset: self.pos,
            message: message.into(),
            kind: JacksonErrorKind::Malformed,
        }
    }

    fn space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.raw.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.raw.get(self.pos).copied()
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, ParseError> {
        if self.raw[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("not a JSON value"))
        }
    }

    fn value(&mut self) -> Result<Json, ParseError> {
        match self.peek() {
            None => Err(self.error("the JSON ends where a value was expected")),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::Str),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => {
                self.enter()?;
                let items = self.array()?;
                self.depth -= 1;
                Ok(Json::Array(items))
            }
            Some(b'{') => {
                self.enter()?;
                let props = self.object()?;
                self.depth -= 1;
                Ok(Json::Object(props))
            }
            Some(_) => Err(self.error("not a JSON value")),
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_JSON_DEPTH {
            return Err(ParseError {
                offset: self.pos,
                message: format!(
                    "JSON nested deeper than {MAX_JSON_DEPTH} levels (Java values nest at most {MAX_DEPTH} deep, each \
                     up to two JSON levels in Jackson's typed form)"
                ),
                kind: JacksonErrorKind::TooDeep,
            });
        }
        Ok(())
    }

    fn array(&mut self) -> Result<Vec<Json>, ParseError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(items);
        }
        loop {
            self.space();
            items.push(self.value()?);
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(items);
                }
                _ => return Err(self.error("expected , or ] in an array")),
            }
        }
    }

    fn object(&mut self) -> Result<Vec<(String, Json)>, ParseError> {
        self.pos += 1;
        let mut props = Vec::new();
        self.space();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(props);
        }
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a property name"));
            }
            let name = self.string()?;
            self.space();
            if self.peek() != Some(b':') {
                return Err(self.error("expected : after a property name"));
            }
            self.pos += 1;
            self.space();
            props.push((name, self.value()?));
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(props);
                }
                _ => return Err(self.error("expected , or } in an object")),
            }
        }
    }

    fn number(&mut self) -> Result<Json, ParseError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let from = p.pos;
            while let Some(b'0'..=b'9') = p.peek() {
                p.pos += 1;
            }
            p.pos - from
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match digits(self) {
            0 => return Err(self.error("a number without digits")),
            n if n > 1 && self.raw[self.pos - n] == b'0' => {
                // At the digit after the zero.
                self.pos -= n - 1;
                return Err(self.error("a number with a leading zero"));
            }
            _ => {}
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return Err(self.error("a number without digits after its point"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.error("a number without digits in its exponent"));
            }
        }
        // ASCII by construction.
        let text = std::str::from_utf8(&self.raw[start..self.pos]).expect("ASCII digits");
        Ok(Json::Number(text.into()))
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let run = self.pos;
            while let Some(&b) = self.raw.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            let text = std::str::from_utf8(&self.raw[run..self.pos]).map_err(|e| ParseError {
                offset: run + e.valid_up_to(),
                message: "a string that is not UTF-8".into(),
                kind: JacksonErrorKind::Malformed,
            })?;
            out.push_str(text);
            match self.peek() {
                None => return Err(self.error("the JSON ends inside a string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.escape(&mut out)?;
                }
                Some(_) => return Err(self.error("a control character inside a string")),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), ParseError> {
        let Some(b) = self.peek() else {
            return Err(self.error("the JSON ends inside an escape"));
        };
        self.pos += 1;
        match b {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let unit = self.hex4()?;
                // A lone surrogate: valid JSON, which Java reads as a
                // String holding it; a Rust string cannot hold one (and a
                // replacement character is another string), so it is
                // refused by name, as the binary codecs refuse it too.
                let lone = |p: &Self| ParseError {
                    kind: JacksonErrorKind::Unsupported,
                    ..p.error(format!(
                        "a java.lang.String holding a lone UTF-16 surrogate (\\u{unit:04X}), which Java reads \
                         but a Rust string cannot hold"
                    ))
                };
                let c = match unit {
                    0xd800..=0xdbff if self.raw[self.pos..].starts_with(b"\\u") => {
                        self.pos += 2;
                        let low = self.hex4()?;
                        if !(0xdc00..=0xdfff).contains(&low) {
                            return Err(lone(self));
                        }
                        let code = 0x10000 + ((u32::from(unit) - 0xd800) << 10) + (u32::from(low) - 0xdc00);
                        char::from_u32(code).ok_or_else(|| self.error("an invalid surrogate pair"))?
                    }
                    0xd800..=0xdfff => return Err(lone(self)),
                    _ => char::from_u32(u32::from(unit)).expect("not a surrogate"),
                };
                out.push(c);
            }
            _ => return Err(self.error("an unknown escape")),
        }
        Ok(())
    }

    fn hex4(&mut self) -> Result<u16, ParseError> {
        let digits = self
            .raw
            .get(self.pos..self.pos + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| {
                u16::from_str_radix(d, 16)
                    .ok()
                    .filter(|_| d.bytes().all(|b| b.is_ascii_hexdigit()))
            })
            .ok_or_else(|| self.error("\\u without four hexadecimal digits"))?;
        self.pos += 4;
        Ok(digits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Json {
        parse(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn numbers_keep_their_text_and_properties_their_order() {
        let json = ok(r#" {"z": 123456789012345678901234567890, "a": 2.50, "m": [-1.000001000, 1E3, 0]} "#);
        let Json::Object(props) = json else { panic!() };
        let names: Vec<&str> = props.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["z", "a", "m"]);
        assert_eq!(props[0].1, Json::Number("123456789012345678901234567890".into()));
        assert_eq!(props[1].1, Json::Number("2.50".into()));
        assert_eq!(
            props[2].1,
            Json::Array(vec![
                Json::Number("-1.000001000".into()),
                Json::Number("1E3".into()),
                Json::Number("0".into())
            ])
        );
    }

    #[test]
    fn strings_unescape_as_json_says() {
        assert_eq!(
            ok(r#""a\"b\\c\/\n\u00e9\ud83d\ude00ż""#),
            Json::Str("a\"b\\c/\né😀ż".into())
        );
    }

    #[test]
    fn a_lone_surrogate_is_refused_not_replaced() {
        // A Java string may hold one; a Rust string cannot, and a
        // replacement character would be another string.
        for (text, at) in [(r#""\ud800x""#, 7), (r#""x\udc00""#, 8), (r#""\ud83d""#, 7)] {
            let err = parse(text.as_bytes()).unwrap_err();
            assert!(err.message.contains("lone UTF-16 surrogate"), "{text}: {err}");
            assert_eq!(err.offset, at, "{text}: {err}");
        }
    }

    /// Java's Jackson reads a lone surrogate into its String: the JSON is
    /// valid, so the refusal is `Unsupported` naming the class and the
    /// unit, not `Malformed`.
    #[test]
    fn a_lone_surrogate_is_unsupported_naming_the_string_and_the_unit() {
        for (text, unit) in [
            (r#""\ud800x""#, "\\uD800"),
            (r#""x\udc00""#, "\\uDC00"),
            (r#""\uD83D\u0041""#, "\\uD83D"),
        ] {
            let err = parse_payload(text.as_bytes()).unwrap_err();
            assert_eq!(err.kind(), JacksonErrorKind::Unsupported, "{text}: {err}");
            assert!(
                err.message().contains("java.lang.String") && err.message().contains(unit),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn what_is_not_json_is_an_error_at_its_offset() {
        for (text, at) in [
            ("", 0),
            ("[1,]", 3),
            ("{\"a\" 1}", 5),
            ("01", 1),
            ("1.", 2),
            ("-", 1),
            ("\"abc", 4),
            ("\"\\x\"", 3),
            ("[1] 2", 4),
            ("nul", 0),
            ("\"\u{1}\"", 1),
        ] {
            let err = parse(text.as_bytes()).unwrap_err();
            assert_eq!(err.offset, at, "{text:?}: {err}");
        }
        let err = parse(b"\"\xff\"").unwrap_err();
        assert!(err.message.contains("UTF-8"), "{err}");
    }

    #[test]
    fn brackets_in_strings_do_not_nest() {
        let text = format!(r#"["{}\"{}"]"#, "[".repeat(500), "{".repeat(500));
        assert!(parse(text.as_bytes()).is_ok());
    }

    #[test]
    fn nesting_past_the_limit_is_an_error_not_a_stack_overflow() {
        let deepest = format!("{}{}", "[".repeat(MAX_JSON_DEPTH), "]".repeat(MAX_JSON_DEPTH));
        assert!(parse(deepest.as_bytes()).is_ok());
        for levels in [MAX_JSON_DEPTH + 1, 1_000_000] {
            let err = parse("[".repeat(levels).as_bytes()).unwrap_err();
            assert!(
                err.kind == JacksonErrorKind::TooDeep && err.message.contains("nested deeper than"),
                "{err}"
            );
        }
    }
}
