//! `BigDecimal` and `BigInteger` as Java holds them (two's complement,
//! big-endian, shortest form) to and from decimal text.
//!
//! Decimal text ⇄ binary is not linear at any size: num-bigint's conversions
//! are subquadratic one way and quadratic the other, so both are limited to
//! numbers of [`MAX_DECIMAL_BITS`] (a payload of many such numbers still
//! costs time in proportion to its size). Beyond that a number keeps its exact
//! bytes and is written in hexadecimal ([`hex_form`]), which is linear.

use num_bigint::{BigInt, BigUint, Sign};

/// The most bits a `BigInteger` (or a `BigDecimal`'s unscaled value) may
/// have to be converted to or from decimal text: 131,072 (16 KiB; 2^131072 − 1
/// has 39,457 digits). Such a conversion takes about 2 ms; it grows faster
/// than the number, so past this a payload would buy time with its size.
///
/// Beyond it, nothing is lost: a [`KryoValue`](super::KryoValue) holds the
/// exact bytes (its JSON form is hexadecimal, `"0x…"`), and a Rust type that
/// needs the decimal text gets [`KryoErrorKind::TooLarge`](super::KryoErrorKind::TooLarge)
/// with the payload kept.
pub const MAX_DECIMAL_BITS: u64 = 131_072;

/// Most significant digits a number of [`MAX_DECIMAL_BITS`] can have.
const MAX_DECIMAL_DIGITS: usize = 39_457;

/// A number too large for decimal text, with its bit length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BeyondDecimal {
    pub bits: u64,
}

impl std::fmt::Display for BeyondDecimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a number of {} bits, beyond the {MAX_DECIMAL_BITS} bits delayq converts to or from decimal text \
             (read it as a KryoValue: its bytes are exact, and its JSON form is hexadecimal)",
            self.bits
        )
    }
}

/// A decimal number's parts as text: sign, coefficient digits (no leading
/// zeros, `"0"` for zero) and Java's scale.
struct Parts {
    negative: bool,
    digits: String,
    scale: i32,
}

/// Reads Java's `new BigDecimal(String)` syntax, in time linear in its length.
fn parts(text: &str) -> Result<Parts, String> {
    let bad = || format!("{} is not a decimal number", shown(text));
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
    if int_part.len() + frac_part.len() == 0 || !int_part.bytes().chain(frac_part.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let scale = i64::try_from(frac_part.len()).map_err(|_| bad())? - exponent;
    let scale = i32::try_from(scale).map_err(|_| format!("{}: scale out of Java's range", shown(text)))?;
    let mut digits: String = int_part
        .chars()
        .chain(frac_part.chars())
        .skip_while(|&c| c == '0')
        .collect();
    if digits.is_empty() {
        digits.push('0');
    }
    // Java's zero has no sign: new BigDecimal("-0.0") prints 0.0.
    let negative = negative && digits != "0";
    Ok(Parts {
        negative,
        digits,
        scale,
    })
}

/// Parses Java's `new BigDecimal(String)` syntax into (unscaled bytes, scale).
/// Numbers beyond [`MAX_DECIMAL_BITS`] are an error.
pub(crate) fn parse(text: &str) -> Result<(Vec<u8>, i32), String> {
    let p = parts(text)?;
    if p.digits.len() > MAX_DECIMAL_DIGITS {
        return Err(format!(
            "{}: {} digits, more than the {MAX_DECIMAL_DIGITS} delayq converts from decimal text \
             (write it in hexadecimal: 0x...)",
            shown(text),
            p.digits.len()
        ));
    }
    let magnitude =
        BigUint::parse_bytes(p.digits.as_bytes(), 10).ok_or_else(|| format!("{} is not a number", shown(text)))?;
    let sign = if p.negative { Sign::Minus } else { Sign::Plus };
    let n = BigInt::from_biguint(sign, magnitude);
    if n.bits() > MAX_DECIMAL_BITS {
        return Err(format!("{}: {}", shown(text), BeyondDecimal { bits: n.bits() }));
    }
    Ok((n.to_signed_bytes_be(), p.scale))
}

/// Java's `new BigDecimal(text).toString()`, from the text alone (no limit:
/// linear in the length of `text`).
pub(crate) fn normalize(text: &str) -> Result<String, String> {
    let p = parts(text)?;
    Ok(format_digits(p.negative, &p.digits, p.scale))
}

/// The shortest two's complement bytes of `v`.
pub(crate) fn integer_bytes(v: i128) -> Vec<u8> {
    shortest(v.to_be_bytes().to_vec())
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

/// Java's `BigInteger.toString()` of two's complement bytes, for numbers
/// of at most [`MAX_DECIMAL_BITS`].
pub(crate) fn to_decimal_digits(bytes: &[u8]) -> Result<String, BeyondDecimal> {
    let n = BigInt::from_signed_bytes_be(bytes);
    if n.bits() > MAX_DECIMAL_BITS {
        return Err(BeyondDecimal { bits: n.bits() });
    }
    Ok(n.to_string())
}

/// Java's `BigDecimal.toString()`, for unscaled values of at most
/// [`MAX_DECIMAL_BITS`].
pub(crate) fn format(unscaled: &[u8], scale: i32) -> Result<String, BeyondDecimal> {
    let text = to_decimal_digits(unscaled)?;
    Ok(match text.strip_prefix('-') {
        Some(coeff) => format_digits(true, coeff, scale),
        None => format_digits(false, &text, scale),
    })
}

/// `BigDecimal.toString()` of a coefficient's digits (no leading zeros)
/// and a scale: plain below an adjusted exponent of -6, else scientific.
fn format_digits(negative: bool, coeff: &str, scale: i32) -> String {
    let sign = if negative { "-" } else { "" };
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

/// A number in hexadecimal, sign and magnitude (`0x1f`, `-0x80`), and a
/// `BigDecimal`'s scale after it (`0x4e2 scale 2` is 12.50): exact at any
/// size, in linear time.
pub(crate) fn hex_form(bytes: &[u8], scale: Option<i32>) -> String {
    let n = BigInt::from_signed_bytes_be(bytes);
    let sign = if n.sign() == Sign::Minus { "-" } else { "" };
    match scale {
        Some(scale) => format!("{sign}0x{:x} scale {scale}", n.magnitude()),
        None => format!("{sign}0x{:x}", n.magnitude()),
    }
}

/// Reads [`hex_form`] back: `None` if `text` is not in that form.
pub(crate) fn parse_hex_form(text: &str) -> Option<Result<(Vec<u8>, i32), String>> {
    let t = text.trim();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let t = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"))?;
    let (hex, scale) = match t.split_once(" scale ") {
        Some((hex, scale)) => match scale.trim().parse::<i32>() {
            Ok(scale) => (hex, scale),
            Err(_) => return Some(Err(format!("{}: a scale is a 32-bit integer", shown(text)))),
        },
        None => (t, 0),
    };
    let Some(magnitude) = BigUint::parse_bytes(hex.as_bytes(), 16) else {
        return Some(Err(format!("{} is not a hexadecimal number", shown(text))));
    };
    let sign = if negative { Sign::Minus } else { Sign::Plus };
    Some(Ok((BigInt::from_biguint(sign, magnitude).to_signed_bytes_be(), scale)))
}

/// At most the first 40 characters of `text`, for messages.
fn shown(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((end, _)) => format!("{:?}…", &text[..end]),
        None => format!("{text:?}"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn java_examples() {
        assert_eq!(parse("12.50").unwrap(), (vec![0x04, 0xe2], 2));
        assert_eq!(parse("-1").unwrap(), (vec![0xff], 0));
        assert_eq!(parse("128").unwrap(), (vec![0x00, 0x80], 0));
        assert_eq!(parse("-128").unwrap(), (vec![0x80], 0));
        assert_eq!(parse("0").unwrap(), (vec![0x00], 0));
        assert_eq!(parse("-0.00").unwrap(), (vec![0x00], 2));
        assert_eq!(parse("1E+3").unwrap(), (vec![0x01], -3));
        assert_eq!(format(&[0x04, 0xe2], 2).unwrap(), "12.50");
        assert_eq!(format(&[0x01], -3).unwrap(), "1E+3");
        assert_eq!(format(&[0x01], 7).unwrap(), "1E-7");
        assert_eq!(format(&[0x01], 6).unwrap(), "0.000001");
        assert_eq!(format(&[0xff], 1).unwrap(), "-0.1");
        assert!(parse("1.2.3").is_err());
        assert!(parse("").is_err());
        assert!(parse("-").is_err());
        assert!(parse("1e").is_err());
    }

    #[test]
    fn normalize_prints_what_java_prints_without_converting() {
        for (text, java) in [
            ("12.50", "12.50"),
            ("+0012.50", "12.50"),
            ("-0.00", "0.00"),
            ("1e3", "1E+3"),
            ("1000e-3", "1.000"),
            ("0.0000001", "1E-7"),
            ("-123456789e-20", "-1.23456789E-12"),
        ] {
            assert_eq!(normalize(text).unwrap(), java, "{text}");
            let (unscaled, scale) = parse(text).unwrap();
            assert_eq!(format(&unscaled, scale).unwrap(), java, "{text} through bytes");
        }
        assert!(normalize("1e99999999999").unwrap_err().contains("scale"));
    }

    #[test]
    fn agrees_with_i128_everywhere() {
        let mut x: i128 = 1;
        for i in 0..400 {
            x = x.wrapping_mul(-7).wrapping_add(i * 31);
            let text = x.to_string();
            let (bytes, scale) = parse(&text).unwrap();
            assert_eq!((&bytes, scale), (&integer_bytes(x), 0), "{x}");
            assert_eq!(to_decimal_digits(&bytes).unwrap(), text);
            assert_eq!(parse_hex_form(&hex_form(&bytes, None)).unwrap().unwrap(), (bytes, 0));
        }
    }

    /// 2^bits - 1 in decimal, by schoolbook arithmetic in base 10^9 (squaring
    /// 2, then doubling): a computation that shares nothing with num-bigint's.
    pub(crate) fn all_ones_in_decimal(bits: u32) -> String {
        const BASE: u64 = 1_000_000_000;
        let square = |a: &[u64]| {
            let mut out = vec![0u64; a.len() * 2];
            for (i, &x) in a.iter().enumerate() {
                let mut carry = 0;
                for (j, &y) in a.iter().enumerate() {
                    let v = out[i + j] + x * y + carry;
                    out[i + j] = v % BASE;
                    carry = v / BASE;
                }
                out[i + a.len()] += carry;
            }
            while out.len() > 1 && out.last() == Some(&0) {
                out.pop();
            }
            out
        };
        let mut limbs: Vec<u64> = vec![2];
        let mut power = 1;
        while power * 2 <= bits {
            limbs = square(&limbs);
            power *= 2;
        }
        for _ in power..bits {
            let mut carry = 0;
            for limb in limbs.iter_mut() {
                let v = *limb * 2 + carry;
                *limb = v % BASE;
                carry = v / BASE;
            }
            if carry > 0 {
                limbs.push(carry);
            }
        }
        // Minus one: 2^bits ends in 2, 4, 6 or 8, so no borrow.
        limbs[0] -= 1;
        let mut text = limbs.last().unwrap().to_string();
        for limb in limbs.iter().rev().skip(1) {
            text.push_str(&format!("{limb:09}"));
        }
        text
    }

    #[test]
    fn the_largest_number_in_the_limit_is_exact_both_ways() {
        // 2^131072 - 1: 16 KiB of 0xff after Java's 0x00 sign byte.
        let mut bytes = vec![0u8];
        bytes.extend(std::iter::repeat_n(0xff, 16 * 1024));
        let want = all_ones_in_decimal(131_072);
        assert_eq!(want.len(), MAX_DECIMAL_DIGITS);
        assert_eq!(to_decimal_digits(&bytes).unwrap(), want);
        assert_eq!(parse(&want).unwrap(), (bytes.clone(), 0));

        // Negated, and as a BigDecimal with a scale.
        let (negative, _) = parse(&format!("-{want}")).unwrap();
        assert_eq!(to_decimal_digits(&negative).unwrap(), format!("-{want}"));
        let text = format(&negative, 39_000).unwrap();
        assert_eq!(text, format!("-{}.{}", &want[..457], &want[457..]));
        assert_eq!(parse(&text).unwrap(), (negative, 39_000));
    }

    #[test]
    fn beyond_the_limit_is_an_error_and_hexadecimal_keeps_every_bit() {
        // 2^131072: one bit too many.
        let mut bytes = vec![0x01];
        bytes.extend(std::iter::repeat_n(0x00, 16 * 1024));
        assert_eq!(to_decimal_digits(&bytes), Err(BeyondDecimal { bits: 131_073 }));
        assert!(format(&bytes, 3).is_err());
        let digits = all_ones_in_decimal(131_073);
        assert!(parse(&digits).unwrap_err().contains("131073 bits"), "one more bit");
        assert!(parse(&format!("{digits}0")).unwrap_err().contains("39458 digits"));

        let hex = hex_form(&bytes, Some(3));
        assert_eq!(hex, format!("0x1{} scale 3", "0".repeat(32 * 1024)));
        assert_eq!(parse_hex_form(&hex).unwrap().unwrap(), (bytes, 3));
        assert_eq!(hex_form(&[0x80], None), "-0x80");
        assert_eq!(parse_hex_form("-0x80").unwrap().unwrap(), (vec![0x80], 0));
        assert_eq!(parse_hex_form("12.5"), None);
        assert!(parse_hex_form("0xzz").unwrap().is_err());
    }
}
