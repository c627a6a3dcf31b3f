//! Jackson's JSON, parsed as deep as Java values may nest and no deeper.
//!
//! Jackson's type information doubles the nesting: a `List` is the
//! `["java.util.ArrayList", [...]]` wrapper around its array, so values
//! nested [`MAX_DEPTH`] deep are up to twice as many JSON levels (and one
//! more for a boxed number's wrapper inside the innermost). serde_json
//! stops at 128 levels, 64 lists; the nesting is measured here first, in
//! one pass over the bytes, and serde_json's limit lifted for what passes.

use serde::Deserialize;
use serde_json::Value;

use crate::kryo::MAX_DEPTH;

/// JSON levels a payload may nest: two per Java value, plus a boxed
/// number's wrapper.
pub(crate) const MAX_JSON_DEPTH: usize = 2 * MAX_DEPTH + 1;

/// Parses JSON nested at most [`MAX_JSON_DEPTH`] levels.
pub(crate) fn parse(raw: &[u8]) -> Result<Value, serde_json::Error> {
    if let Some(at) = too_deep(raw) {
        return Err(serde::de::Error::custom(format_args!(
            "JSON nested deeper than {MAX_JSON_DEPTH} levels at byte {at} (Java values nest at most {MAX_DEPTH} deep, \
             each up to two JSON levels in Jackson's typed form)"
        )));
    }
    let mut de = serde_json::Deserializer::from_slice(raw);
    // Bounded above: at most MAX_JSON_DEPTH levels of recursion.
    de.disable_recursion_limit();
    let value = Value::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Where the bytes first open an array or object past [`MAX_JSON_DEPTH`]
/// (brackets inside strings do not count), if they do.
fn too_deep(raw: &[u8]) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in raw.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_in_strings_do_not_count() {
        let text = format!(r#"["{}\"{}"]"#, "[".repeat(500), "{".repeat(500));
        assert_eq!(too_deep(text.as_bytes()), None);
        assert!(parse(text.as_bytes()).is_ok());
        let deep = "[".repeat(MAX_JSON_DEPTH + 1);
        assert_eq!(too_deep(deep.as_bytes()), Some(MAX_JSON_DEPTH));
    }
}
