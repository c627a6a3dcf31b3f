//! `bigdecimal::BigDecimal` ↔ `java.math.BigDecimal`, scale kept (feature
//! `bigdecimal`); see [`super`].

/// `BigDecimal` ↔ `java.math.BigDecimal`.
pub mod big_decimal {
    use std::str::FromStr;

    use ::bigdecimal::BigDecimal;
    use serde::de::Error as _;
    use serde::{Deserializer, Serializer};

    use crate::natural::{de_text, decimal_text, ser_text};

    /// Writes a `java.math.BigDecimal` with the same unscaled value and scale.
    pub fn serialize<S: Serializer>(v: &BigDecimal, s: S) -> Result<S::Ok, S::Error> {
        let (unscaled, scale) = v.as_bigint_and_exponent();
        ser_text(s, "java.math.BigDecimal", &decimal_text(&unscaled.to_string(), scale))
    }

    /// Reads a `java.math.BigDecimal`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BigDecimal, D::Error> {
        let text = de_text(d, "java.math.BigDecimal")?;
        BigDecimal::from_str(&text).map_err(|e| D::Error::custom(format!("{text}: {e}")))
    }

    crate::natural::option_of!(BigDecimal);
}
