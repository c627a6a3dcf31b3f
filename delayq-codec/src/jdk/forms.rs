//! Facts about the JDK's serial forms that both writers of Java's
//! serialized form (Java serialization and River) need: the throwable
//! class chains and the spare capacity of the collections and builders
//! whose bytes depend on how the object was filled.

/// The throwables whose class chain is known here, each with its
/// `serialVersionUID` and superclass (`java.lang.Throwable` has none).
pub(crate) fn throwable_class(class: &str) -> Option<(u64, Option<&'static str>)> {
    Some(match class {
        "java.lang.Throwable" => (THROWABLE_UID, None),
        "java.lang.Exception" => (0xd0fd_1f3e_1a3b_1cc4, Some("java.lang.Throwable")),
        "java.lang.Error" => (0x451d_3656_8b82_0e56, Some("java.lang.Throwable")),
        "java.lang.RuntimeException" => (0x9e5f_0647_0a34_83e5, Some("java.lang.Exception")),
        "java.lang.IllegalStateException" => (0xe657_55e6_9a46_f248, Some("java.lang.RuntimeException")),
        "java.lang.IllegalArgumentException" => (0xb589_73d3_7d66_8fbc, Some("java.lang.RuntimeException")),
        "java.lang.UnsupportedOperationException" => (0xeec1_65e7_1283_8b7f, Some("java.lang.RuntimeException")),
        "java.lang.NullPointerException" => (0x47a5_a18e_ff31_e1b8, Some("java.lang.RuntimeException")),
        "java.lang.ArithmeticException" => (0x1f50_9e62_4af9_f007, Some("java.lang.RuntimeException")),
        "java.lang.IndexOutOfBoundsException" => (0x033f_c59f_dab4_2b27, Some("java.lang.RuntimeException")),
        "java.lang.ClassCastException" => (0x8000_05ce_ce67_e55c, Some("java.lang.RuntimeException")),
        "java.lang.SecurityException" => (0x5f74_dc82_6f65_d637, Some("java.lang.RuntimeException")),
        "java.lang.NumberFormatException" => (0xd876_893f_fb8c_ea12, Some("java.lang.IllegalArgumentException")),
        "java.lang.InterruptedException" => (0x5cfd_a8c3_01de_b7f9, Some("java.lang.Exception")),
        "java.io.IOException" => (0x6c80_7364_6525_f0ab, Some("java.lang.Exception")),
        "java.io.UncheckedIOException" => (0x8f1d_24a4_d1f9_3517, Some("java.lang.RuntimeException")),
        "java.util.NoSuchElementException" => (0x5df3_43d5_da69_3aa8, Some("java.lang.RuntimeException")),
        "java.util.ConcurrentModificationException" => (0xcd1d_1562_76c7_77bd, Some("java.lang.RuntimeException")),
        "java.util.concurrent.TimeoutException" => (0x1a61_72bd_dbe4_f56a, Some("java.lang.Exception")),
        "java.util.concurrent.ExecutionException" => (0x6caa_b173_bfb4_e069, Some("java.lang.Exception")),
        "java.util.concurrent.CancellationException" => {
            (0x804b_5067_c84f_2819, Some("java.lang.IllegalStateException"))
        }
        "java.lang.AssertionError" => (0xba6d_2eab_fd41_3de6, Some("java.lang.Error")),
        _ => return None,
    })
}

pub(crate) const THROWABLE_UID: u64 = 0xd5c6_3527_3977_b8cb;

/// The throwable classes written, for error messages.
pub(crate) const THROWABLES: &str = "Throwable, Exception, Error, RuntimeException and the JDK's common exceptions \
    (IllegalState, IllegalArgument, UnsupportedOperation, NullPointer, IO, ...)";

/// The `char[]` length of `new StringBuilder(text)` (and `StringBuffer`):
/// the text and 16 spare characters, which Java writes too.
pub(crate) fn builder_capacity(len: usize) -> usize {
    len.saturating_add(16)
}

/// The `elementData` length of a `Stack` after `n` pushes: 10, doubled
/// when full (a `Stack` has no constructor that copies a collection).
pub(crate) fn stack_capacity(n: usize) -> usize {
    let mut capacity: usize = 10;
    while capacity < n {
        capacity = capacity.saturating_mul(2);
    }
    capacity
}

/// The table length and threshold of a `new Hashtable()` after `n` puts,
/// one at a time: 11 buckets, grown to twice plus one when a put finds it
/// at its threshold (3/4 of the length).
pub(crate) fn hashtable_capacity(n: usize) -> (i32, i32) {
    let threshold = |c: i64| (c as f64 * 0.75) as i64;
    let mut capacity: i64 = 11;
    while n as i64 > threshold(capacity) && capacity < i64::from(i32::MAX) / 2 {
        capacity = capacity * 2 + 1;
    }
    (capacity as i32, threshold(capacity) as i32)
}

/// A `Locale`'s parts.
#[derive(Debug, PartialEq, Default)]
pub(crate) struct LocaleParts<'a> {
    pub(crate) language: &'a str,
    pub(crate) country: &'a str,
    pub(crate) variant: &'a str,
    pub(crate) script: &'a str,
    pub(crate) extensions: &'a str,
}

/// `Locale.toString()`'s text (`en_US`, `fr`, `zh_TW_#Hant`,
/// `ja_JP_#u-ca-japanese`) back to its parts.
pub(crate) fn parse_locale(text: &str) -> Option<LocaleParts<'_>> {
    let (base, tail) = match text.split_once("_#") {
        Some((base, tail)) => (base, Some(tail)),
        None => (text, None),
    };
    let mut parts = base.splitn(3, '_');
    let mut out = LocaleParts {
        language: parts.next().unwrap_or(""),
        country: parts.next().unwrap_or(""),
        variant: parts.next().unwrap_or(""),
        ..LocaleParts::default()
    };
    if let Some(tail) = tail {
        // A script is four letters; extensions start with a singleton and '-'.
        let is_script = |s: &str| s.len() == 4 && s.bytes().all(|b| b.is_ascii_alphabetic());
        match tail.split_once('_') {
            Some((script, ext)) if is_script(script) => (out.script, out.extensions) = (script, ext),
            None if is_script(tail) => out.script = tail,
            None => out.extensions = tail,
            Some(_) => return None,
        }
    }
    Some(out)
}

/// A `URL`'s fields.
#[derive(Debug, PartialEq)]
pub(crate) struct UrlParts<'a> {
    pub(crate) protocol: &'a str,
    pub(crate) authority: Option<&'a str>,
    pub(crate) host: &'a str,
    pub(crate) port: i32,
    pub(crate) file: &'a str,
    pub(crate) reference: Option<&'a str>,
}

/// `URL.toExternalForm()`'s text back to the fields Java keeps.
pub(crate) fn parse_url(text: &str) -> Option<UrlParts<'_>> {
    let (protocol, rest) = text.split_once(':')?;
    if protocol.is_empty()
        || !protocol
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    {
        return None;
    }
    let (rest, reference) = match rest.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (rest, None),
    };
    let (authority, file) = match rest.strip_prefix("//") {
        Some(after) => {
            let end = after.find(['/', '?']).unwrap_or(after.len());
            (Some(&after[..end]), &after[end..])
        }
        None => (None, rest),
    };
    let host_port = authority.map_or("", |a| a.rsplit_once('@').map_or(a, |(_, h)| h));
    let (host, port) = match host_port.rfind(':') {
        Some(i) if !host_port[i..].contains(']') => {
            let port = &host_port[i + 1..];
            let port = if port.is_empty() { -1 } else { port.parse().ok()? };
            (&host_port[..i], port)
        }
        _ => (host_port, -1),
    };
    Some(UrlParts {
        protocol,
        authority,
        host,
        port,
        file,
        reference,
    })
}

#[cfg(test)]
mod parse_tests {
    use super::*;
    use crate::jdk::locale_text;

    #[test]
    fn locale_texts_parse_back_to_their_parts() {
        for text in [
            "en_US",
            "fr",
            "zh_TW_#Hant",
            "ja_JP_#u-ca-japanese",
            "sr_RS_#Latn_u-nu-latn",
            "de_DE_POSIX",
            "_GB",
        ] {
            let p = parse_locale(text).unwrap();
            assert_eq!(
                locale_text(p.language, p.country, p.variant, p.script, p.extensions),
                text
            );
        }
    }

    #[test]
    fn urls_parse_to_javas_fields() {
        let u = parse_url("https://user@example.com:8443/a?b=c#d").unwrap();
        assert_eq!(
            u,
            UrlParts {
                protocol: "https",
                authority: Some("user@example.com:8443"),
                host: "example.com",
                port: 8443,
                file: "/a?b=c",
                reference: Some("d"),
            }
        );
        let v6 = parse_url("http://[::1]/x").unwrap();
        assert_eq!((v6.host, v6.port, v6.file), ("[::1]", -1, "/x"));
        let file = parse_url("file:/tmp/x").unwrap();
        assert_eq!((file.authority, file.host, file.file), (None, "", "/tmp/x"));
        assert_eq!(parse_url("no scheme"), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities_follow_the_jdks_growth() {
        // Java: 8 puts fit 11 buckets (threshold 8); the 9th grows it to 23.
        assert_eq!(hashtable_capacity(0), (11, 8));
        assert_eq!(hashtable_capacity(8), (11, 8));
        assert_eq!(hashtable_capacity(9), (23, 17));
        assert_eq!(stack_capacity(0), 10);
        assert_eq!(stack_capacity(10), 10);
        assert_eq!(stack_capacity(11), 20);
        assert_eq!(builder_capacity(5), 21);
    }
}
