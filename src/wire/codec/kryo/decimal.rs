//! `BigDecimal` and `BigInteger` as Java holds them (two's complement,
//! big-endian, shortest form) to and from decimal text, at any size.

/// Parses Java's `new BigDecimal(String)` syntax into (unscaled bytes, scale).
pub(crate) fn parse(text: &str) -> Result<(Vec<u8>, i32), String> {
    let bad = || format!("{text:?} is not a decimal number");
    let t = text.trim();
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i64>().map_err(|_| bad())?),
        None => (t, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = format!("{int_part}{frac_part}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let scale = i64::try_from(frac_part.len()).map_err(|_| bad())? - exponent;
    let scale = i32::try_from(scale).map_err(|_| format!("{text:?}: scale out of Java's range"))?;
    Ok((from_decimal_digits(&digits, negative), scale))
}

/// Decimal digits (no sign) to Java's `BigInteger.toByteArray()`.
pub(crate) fn from_decimal_digits(digits: &str, negative: bool) -> Vec<u8> {
    // Magnitude, big-endian.
    let mut mag: Vec<u8> = vec![0];
    for d in digits.bytes() {
        let mut carry = u32::from(d - b'0');
        for byte in mag.iter_mut().rev() {
            let v = u32::from(*byte) * 10 + carry;
            *byte = v as u8;
            carry = v >> 8;
        }
        while carry > 0 {
            mag.insert(0, carry as u8);
            carry >>= 8;
        }
    }
    let mut bytes = mag;
    bytes.insert(0, 0);
    if negative {
        negate(&mut bytes);
    }
    shortest(bytes)
}

/// Two's complement negation in place.
fn negate(bytes: &mut [u8]) {
    let mut carry = true;
    for b in bytes.iter_mut().rev() {
        let (v, c) = (!*b).overflowing_add(u8::from(carry));
        *b = v;
        carry = c;
    }
}

/// Drops leading bytes that only repeat the sign.
pub(crate) fn shortest(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.is_empty() {
        return vec![0];
    }
    let mut start = 0;
    while start + 1 < bytes.len() {
        let (a, b) = (bytes[start], bytes[start + 1]);
        if (a == 0 && b < 0x80) || (a == 0xff && b >= 0x80) {
            start += 1;
        } else {
            break;
        }
    }
    bytes.drain(..start);
    bytes
}

/// Java's `BigInteger.toString()` of two's complement bytes.
pub(crate) fn to_decimal_digits(bytes: &[u8]) -> String {
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let mut mag = bytes.to_vec();
    if negative {
        negate(&mut mag);
    }
    let mut digits = Vec::new();
    while mag.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for byte in mag.iter_mut() {
            let v = (rem << 8) | u32::from(*byte);
            *byte = (v / 10) as u8;
            rem = v % 10;
        }
        digits.push(b'0' + rem as u8);
    }
    if digits.is_empty() {
        digits.push(b'0');
    }
    if negative {
        digits.push(b'-');
    }
    digits.reverse();
    String::from_utf8(digits).expect("ASCII digits")
}

/// Java's `BigDecimal.toString()`.
pub(crate) fn format(unscaled: &[u8], scale: i32) -> String {
    let text = to_decimal_digits(unscaled);
    let (sign, coeff) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let len = coeff.len() as i64;
    let scale = i64::from(scale);
    let adjusted = -scale + (len - 1);
    if scale >= 0 && adjusted >= -6 {
        if scale == 0 {
            return format!("{sign}{coeff}");
        }
        let scale = scale as usize;
        if coeff.len() > scale {
            let (a, b) = coeff.split_at(coeff.len() - scale);
            format!("{sign}{a}.{b}")
        } else {
            format!("{sign}0.{}{coeff}", "0".repeat(scale - coeff.len()))
        }
    } else {
        let (first, rest) = coeff.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if adjusted >= 0 { "+" } else { "" };
        format!("{sign}{first}{dot}E{exp_sign}{adjusted}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_examples() {
        assert_eq!(parse("12.50").unwrap(), (vec![0x04, 0xe2], 2));
        assert_eq!(parse("-1").unwrap(), (vec![0xff], 0));
        assert_eq!(parse("128").unwrap(), (vec![0x00, 0x80], 0));
        assert_eq!(parse("-128").unwrap(), (vec![0x80], 0));
        assert_eq!(parse("0").unwrap(), (vec![0x00], 0));
        assert_eq!(parse("1E+3").unwrap(), (vec![0x01], -3));
        assert_eq!(format(&[0x04, 0xe2], 2), "12.50");
        assert_eq!(format(&[0x01], -3), "1E+3");
        assert_eq!(format(&[0x01], 7), "1E-7");
        assert_eq!(format(&[0x01], 6), "0.000001");
        assert_eq!(format(&[0xff], 1), "-0.1");
        assert!(parse("1.2.3").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn agrees_with_i128_everywhere() {
        let mut x: i128 = 1;
        for i in 0..400 {
            x = x.wrapping_mul(-7).wrapping_add(i * 31);
            let text = x.to_string();
            let (neg, digits) = match text.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, text.as_str()),
            };
            let bytes = from_decimal_digits(digits, neg);
            let want = shortest(x.to_be_bytes().to_vec());
            assert_eq!(bytes, want, "{x}");
            assert_eq!(to_decimal_digits(&bytes), text);
        }
    }
}
