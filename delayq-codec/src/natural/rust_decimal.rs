//! `rust_decimal::Decimal` ↔ `java.math.BigDecimal`, scale kept (feature
//! `rust_decimal`); see [`super`].

/// `Decimal` ↔ `java.math.BigDecimal`. A Java value `Decimal` cannot hold
/// with its scale (a negative scale, more than 28 digits) is refused.
pub mod big_decimal {
    use std::str::FromStr;

    use ::rust_decimal::Decimal;
    use serde::de::Error as _;
    use serde::{Deserializer, Serializer};

    use crate::natural::{de_text, decimal_text, ser_text};

    /// Writes a `java.math.BigDecimal` with the same unscaled value and scale.
    pub fn serialize<S: Serializer>(v: &Decimal, s: S) -> Result<S::Ok, S::Error> {
        let text = decimal_text(&v.mantissa().to_string(), i64::from(v.scale()));
        ser_text(s, "java.math.BigDecimal", &text)
    }

    /// Reads a `java.math.BigDecimal`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
        let text = de_text(d, "java.math.BigDecimal")?;
        // Java writes an exponent for a negative scale (or a tiny value):
        // Decimal keeps no negative scale.
        let parsed = if text.contains("E+") {
            None
        } else if text.contains('E') {
            Decimal::from_scientific(&text).ok()
        } else {
            Decimal::from_str(&text).ok()
        };
        parsed.ok_or_else(|| {
            D::Error::custom(format!(
                "{text}: a java.math.BigDecimal rust_decimal::Decimal cannot hold with its scale (a negative \
                 scale, or more than 28 digits); use bigdecimal"
            ))
        })
    }

    crate::natural::option_of!(Decimal);
}
