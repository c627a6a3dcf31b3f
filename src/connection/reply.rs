//! Reading the replies of scripts and commands.

use bytes::Bytes;
use fred::types::Value;

use crate::error::Error;

fn unexpected(what: &str, value: &Value) -> Error {
    Error::Protocol(format!("expected {what}, got {value:?}"))
}

/// An integer reply (or an integer in a string).
pub(crate) fn int(value: &Value) -> Result<i64, Error> {
    match value {
        Value::Integer(i) => Ok(*i),
        Value::String(s) => s.parse().map_err(|_| unexpected("an integer", value)),
        Value::Bytes(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| unexpected("an integer", value)),
        _ => Err(unexpected("an integer", value)),
    }
}

/// A bulk string reply, `None` for nil.
pub(crate) fn opt_bytes(value: Value) -> Result<Option<Bytes>, Error> {
    match value {
        Value::Null => Ok(None),
        Value::Bytes(b) => Ok(Some(b)),
        Value::String(s) => Ok(Some(s.into_inner())),
        Value::Integer(i) => Ok(Some(Bytes::from(i.to_string()))),
        other => Err(unexpected("a string", &other)),
    }
}

/// A bulk string reply that must be present.
pub(crate) fn bytes(value: Value) -> Result<Bytes, Error> {
    opt_bytes(value)?.ok_or_else(|| Error::Protocol("expected a string, got nil".into()))
}

/// A text reply, `None` for nil.
pub(crate) fn opt_text(value: Value) -> Result<Option<String>, Error> {
    match opt_bytes(value)? {
        None => Ok(None),
        Some(b) => String::from_utf8(b.to_vec())
            .map(Some)
            .map_err(|_| Error::Protocol("expected UTF-8 text".into())),
    }
}

/// A score (ms, Redis's number text) reply, `None` for nil.
pub(crate) fn opt_score(value: Value) -> Result<Option<i64>, Error> {
    match opt_text(value)? {
        None => Ok(None),
        Some(text) => crate::wire::time::parse_score(&text)
            .map(Some)
            .ok_or_else(|| Error::Protocol(format!("bad score {text:?}"))),
    }
}

/// A `BLPOP` reply that is not nil: `[key, value]`.
pub(crate) fn blpop(value: Value) -> Result<(String, Bytes), Error> {
    let [key, value] = tuple::<2>(value)?;
    let key = opt_text(key)?.ok_or_else(|| Error::Protocol("BLPOP returned no key".into()))?;
    Ok((key, bytes(value)?))
}

/// A `BLMPOP`/`LMPOP` reply: the key and the values popped from it.
pub(crate) fn blmpop(value: Value) -> Result<(String, Vec<Bytes>), Error> {
    let [key, values] = match value {
        // RESP3 may answer with a map of one key.
        Value::Map(map) if map.len() == 1 => {
            let (key, values) = map.inner().into_iter().next().expect("one entry");
            [Value::from(key), values]
        }
        other => tuple::<2>(other)?,
    };
    let key = opt_text(key)?.ok_or_else(|| Error::Protocol("BLMPOP returned no key".into()))?;
    Ok((key, bytes_array(values)?))
}

/// An array reply (nil counts as empty).
pub(crate) fn array(value: Value) -> Result<Vec<Value>, Error> {
    match value {
        Value::Array(items) => Ok(items),
        Value::Null => Ok(Vec::new()),
        other => Err(unexpected("an array", &other)),
    }
}

/// An array reply of exactly `N` items.
pub(crate) fn tuple<const N: usize>(value: Value) -> Result<[Value; N], Error> {
    let items = array(value)?;
    let len = items.len();
    items
        .try_into()
        .map_err(|_| Error::Protocol(format!("expected {N} items, got {len}")))
}

/// An array of bulk strings.
pub(crate) fn bytes_array(value: Value) -> Result<Vec<Bytes>, Error> {
    array(value)?.into_iter().map(bytes).collect()
}
