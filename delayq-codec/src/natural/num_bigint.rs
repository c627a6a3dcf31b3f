//! `num_bigint::BigInt` ↔ `java.math.BigInteger` (feature `num-bigint`);
//! see [`super`].

/// `BigInt` ↔ `java.math.BigInteger`.
pub mod big_integer {
    use std::str::FromStr;

    use ::num_bigint::BigInt;
    use serde::de::Error as _;
    use serde::{Deserializer, Serializer};

    use crate::natural::{de_text, ser_text};

    /// Writes a `java.math.BigInteger`.
    pub fn serialize<S: Serializer>(v: &BigInt, s: S) -> Result<S::Ok, S::Error> {
        ser_text(s, "java.math.BigInteger", &v.to_string())
    }

    /// Reads a `java.math.BigInteger`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BigInt, D::Error> {
        let text = de_text(d, "java.math.BigInteger")?;
        BigInt::from_str(&text).map_err(|e| D::Error::custom(format!("{text}: {e}")))
    }

    crate::natural::option_of!(BigInt);
}
