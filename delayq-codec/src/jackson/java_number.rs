//! Floating-point numbers as Java's `Double.toString` / `Float.toString`
//! print them (which is what Jackson writes): the shortest digits that read
//! back to the same value, as a plain decimal between 10^-3 and 10^7 and in
//! `d.dddE±n` notation outside, always with a digit after the point.

/// Writes `value` (a `float` when `single`) as Java prints it. Jackson quotes
/// NaN and infinities (`QUOTE_NON_NUMERIC_NUMBERS`).
pub(crate) fn write(out: &mut Vec<u8>, value: f64, single: bool) {
    out.extend_from_slice(format(value, single).as_bytes());
}

pub(crate) fn format(value: f64, single: bool) -> String {
    if value.is_nan() {
        return "\"NaN\"".into();
    }
    if value.is_infinite() {
        return if value > 0.0 {
            "\"Infinity\"".into()
        } else {
            "\"-Infinity\"".into()
        };
    }
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` prints the shortest round-trip digits: "1.2345e3", "-5e-4".
    let sci = if single {
        format!("{:e}", value as f32)
    } else {
        format!("{value:e}")
    };
    let (mantissa, exponent) = sci.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("exponent is an integer");
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if (-3..7).contains(&exponent) {
        // Plain decimal: the point goes after digit number exponent + 1.
        if exponent < 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
            out.push_str(&digits);
        } else {
            let int_len = exponent as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        out.push('.');
        out.push_str(if digits.len() > 1 { &digits[1..] } else { "0" });
        out.push('E');
        out.push_str(&exponent.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::format;

    #[test]
    fn doubles_print_as_java_does() {
        let cases = [
            (1.0, "1.0"),
            (-5.5, "-5.5"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1234567.0, "1234567.0"),
            (12345678.9, "1.23456789E7"),
            (1e21, "1.0E21"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (1.5e-10, "1.5E-10"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (f64::MAX, "1.7976931348623157E308"),
        ];
        for (value, java) in cases {
            assert_eq!(format(value, false), java, "{value}");
        }
    }

    #[test]
    fn floats_use_their_own_shortest_digits() {
        assert_eq!(format(0.1f32 as f64, true), "0.1");
        assert_eq!(format(1.1f32 as f64, true), "1.1");
        assert_eq!(format(3.4028235e38f32 as f64, true), "3.4028235E38");
    }

    #[test]
    fn non_finite_values_are_quoted() {
        assert_eq!(format(f64::NAN, false), "\"NaN\"");
        assert_eq!(format(f64::NEG_INFINITY, false), "\"-Infinity\"");
    }
}
