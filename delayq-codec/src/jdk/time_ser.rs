//! `java.time.Ser`: the external form Java serialization and River write
//! for every `java.time` value (a type byte, then big-endian fields;
//! `LocalTime` drops its trailing zero fields).

use crate::kryo::{JavaTime, KryoValue, LocalDate, LocalDateTime, LocalTime, ZoneId, ZoneOffset};

/// `java.time.Ser`'s class name and `serialVersionUID`.
pub(crate) const CLASS: &str = "java.time.Ser";
pub(crate) const UID: i64 = -7683839454370182990;

/// The bounds of `java.time.Instant`, in seconds.
const INSTANT_SECONDS: std::ops::RangeInclusive<i64> = -31_557_014_167_219_200..=31_556_889_864_403_199;

struct Data<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// River's `writeUTF`: an `int` count of characters, where Java's is a
    /// 2-byte count of bytes.
    river: bool,
}

impl Data<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let end = self.pos + N;
        let bytes = self.bytes.get(self.pos..end).ok_or("java.time.Ser data ends early")?;
        self.pos = end;
        let mut out = [0; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take::<1>()?[0])
    }
    fn i8(&mut self) -> Result<i8, String> {
        Ok(self.u8()? as i8)
    }
    fn i32(&mut self) -> Result<i32, String> {
        Ok(i32::from_be_bytes(self.take()?))
    }
    fn i64(&mut self) -> Result<i64, String> {
        Ok(i64::from_be_bytes(self.take()?))
    }
    fn utf(&mut self) -> Result<String, String> {
        let len = if self.river {
            let chars = usize::try_from(self.i32()?).map_err(|_| "a negative string length")?;
            river_utf_len(&self.bytes[self.pos..], chars).ok_or("java.time.Ser data ends early")?
        } else {
            usize::from(u16::from_be_bytes(self.take()?))
        };
        let bytes = self
            .bytes
            .get(self.pos..self.pos + len)
            .ok_or("java.time.Ser data ends early")?;
        self.pos += len;
        crate::serialization::stream::modified_utf8(bytes, 0)
            .map_err(|_| "a zone id that is not modified UTF-8".to_owned())
    }

    fn date(&mut self) -> Result<LocalDate, String> {
        let year = self.i32()?;
        let month = self.u8()?;
        let day = self.u8()?;
        Ok(LocalDate { year, month, day })
    }

    /// `LocalTime.writeExternal`: a negative (complemented) byte ends it.
    fn time(&mut self) -> Result<LocalTime, String> {
        let mut t = LocalTime {
            hour: 0,
            minute: 0,
            second: 0,
            nano: 0,
        };
        let hour = self.i8()?;
        if hour < 0 {
            t.hour = !hour as u8;
            return Ok(t);
        }
        t.hour = hour as u8;
        let minute = self.i8()?;
        if minute < 0 {
            t.minute = !minute as u8;
            return Ok(t);
        }
        t.minute = minute as u8;
        let second = self.i8()?;
        if second < 0 {
            t.second = !second as u8;
            return Ok(t);
        }
        t.second = second as u8;
        t.nano = u32::try_from(self.i32()?).map_err(|_| "a negative nano-of-second")?;
        Ok(t)
    }

    fn date_time(&mut self) -> Result<LocalDateTime, String> {
        Ok(LocalDateTime {
            date: self.date()?,
            time: self.time()?,
        })
    }

    /// `ZoneOffset.writeExternal`: quarter hours in a byte, or 127 and the seconds.
    fn offset(&mut self) -> Result<ZoneOffset, String> {
        let quarters = self.i8()?;
        Ok(ZoneOffset(if quarters == 127 {
            self.i32()?
        } else {
            i32::from(quarters) * 900
        }))
    }

    /// `ZoneId.write`: a type byte (7 region, 8 offset), then it.
    fn zone(&mut self) -> Result<ZoneId, String> {
        match self.u8()? {
            7 => Ok(ZoneId::Region(self.utf()?)),
            8 => Ok(ZoneId::Offset(self.offset()?)),
            other => Err(format!("zone type {other} in a ZonedDateTime")),
        }
    }
}

/// How many bytes `chars` characters of modified UTF-8 take at the start
/// of `bytes`.
fn river_utf_len(bytes: &[u8], chars: usize) -> Option<usize> {
    let mut pos = 0;
    for _ in 0..chars {
        pos += match bytes.get(pos)? >> 4 {
            0..=7 => 1,
            12 | 13 => 2,
            _ => 3,
        };
    }
    (pos <= bytes.len()).then_some(pos)
}

/// The value of `java.time.Ser`'s data (its `writeExternal` bytes; it
/// writes no objects), as Java serialization (`river` false) or River
/// writes it (they differ in how a zone id's text is counted).
pub(crate) fn read(bytes: &[u8], river: bool) -> Result<KryoValue, String> {
    let mut d = Data { bytes, pos: 0, river };
    let kind = d.u8().map_err(|_| "java.time.Ser without data".to_owned())?;
    let time = match kind {
        1 => {
            let seconds = d.i64()?;
            let nanos = d.i32()?;
            JavaTime::Duration {
                seconds,
                nanos: u32::try_from(nanos)
                    .ok()
                    .filter(|n| *n < 1_000_000_000)
                    .ok_or("a Duration's nanoseconds out of range")?,
            }
        }
        2 => {
            let seconds = d.i64()?;
            let nanos = d.i32()?;
            // As Instant.ofEpochSecond: nanoseconds outside the second carry over.
            let seconds = seconds.checked_add(i64::from(nanos).div_euclid(1_000_000_000));
            let nanos = i64::from(nanos).rem_euclid(1_000_000_000) as u32;
            finished(&d)?;
            return match seconds {
                Some(seconds) if INSTANT_SECONDS.contains(&seconds) => Ok(KryoValue::Instant { seconds, nanos }),
                _ => Err("a java.time.Instant out of Instant's range".to_owned()),
            };
        }
        3 => JavaTime::LocalDate(d.date()?),
        4 => JavaTime::LocalTime(d.time()?),
        5 => JavaTime::LocalDateTime(d.date_time()?),
        6 => {
            let dt = d.date_time()?;
            let offset = d.offset()?;
            JavaTime::ZonedDateTime(dt, Some(offset), d.zone()?)
        }
        7 => JavaTime::ZoneRegion(d.utf()?),
        8 => JavaTime::ZoneOffset(d.offset()?),
        9 => {
            let t = d.time()?;
            JavaTime::OffsetTime(t, d.offset()?)
        }
        10 => {
            let dt = d.date_time()?;
            JavaTime::OffsetDateTime(dt, d.offset()?)
        }
        11 => JavaTime::Year(d.i32()?),
        12 => {
            let year = d.i32()?;
            JavaTime::YearMonth { year, month: d.u8()? }
        }
        13 => {
            let month = d.u8()?;
            JavaTime::MonthDay { month, day: d.u8()? }
        }
        14 => {
            let years = d.i32()?;
            let months = d.i32()?;
            JavaTime::Period {
                years,
                months,
                days: d.i32()?,
            }
        }
        other => return Err(format!("java.time.Ser of unknown type {other}")),
    };
    finished(&d)?;
    time.check()?;
    Ok(KryoValue::Time(time))
}

fn finished(d: &Data<'_>) -> Result<(), String> {
    if d.pos == d.bytes.len() {
        Ok(())
    } else {
        Err(format!("{} bytes after a java.time value", d.bytes.len() - d.pos))
    }
}

fn write_date(out: &mut Vec<u8>, d: &LocalDate) {
    out.extend_from_slice(&d.year.to_be_bytes());
    out.push(d.month);
    out.push(d.day);
}

fn write_time(out: &mut Vec<u8>, t: &LocalTime) {
    if t.nano == 0 {
        if t.second == 0 {
            if t.minute == 0 {
                out.push(!t.hour);
            } else {
                out.extend_from_slice(&[t.hour, !t.minute]);
            }
        } else {
            out.extend_from_slice(&[t.hour, t.minute, !t.second]);
        }
    } else {
        out.extend_from_slice(&[t.hour, t.minute, t.second]);
        out.extend_from_slice(&t.nano.to_be_bytes());
    }
}

fn write_offset(out: &mut Vec<u8>, o: ZoneOffset) {
    if o.0 % 900 == 0 {
        out.push((o.0 / 900) as i8 as u8);
    } else {
        out.push(127);
        out.extend_from_slice(&o.0.to_be_bytes());
    }
}

fn write_utf(out: &mut Vec<u8>, text: &str, river: bool) -> Result<(), String> {
    let bytes = crate::serialization::stream::to_modified_utf8(text);
    if river {
        let chars = text.encode_utf16().count() as i32;
        out.extend_from_slice(&chars.to_be_bytes());
    } else {
        let len = u16::try_from(bytes.len()).map_err(|_| "a zone id longer than 65535 bytes".to_owned())?;
        out.extend_from_slice(&len.to_be_bytes());
    }
    out.extend_from_slice(&bytes);
    Ok(())
}

/// `java.time.Ser`'s data for a value, if it is a `java.time` one
/// (`Instant` included); `None` for other values.
pub(crate) fn write(value: &KryoValue, river: bool) -> Option<Result<Vec<u8>, String>> {
    let mut out = Vec::with_capacity(16);
    let time = match value {
        KryoValue::Instant { seconds, nanos } => {
            out.push(2);
            out.extend_from_slice(&seconds.to_be_bytes());
            out.extend_from_slice(&(*nanos as i32).to_be_bytes());
            return Some(Ok(out));
        }
        KryoValue::Time(t) => t,
        _ => return None,
    };
    if let Err(e) = time.check() {
        return Some(Err(e));
    }
    match time {
        JavaTime::Duration { seconds, nanos } => {
            out.push(1);
            out.extend_from_slice(&seconds.to_be_bytes());
            out.extend_from_slice(&(*nanos as i32).to_be_bytes());
        }
        JavaTime::LocalDate(d) => {
            out.push(3);
            write_date(&mut out, d);
        }
        JavaTime::LocalTime(t) => {
            out.push(4);
            write_time(&mut out, t);
        }
        JavaTime::LocalDateTime(dt) => {
            out.push(5);
            write_date(&mut out, &dt.date);
            write_time(&mut out, &dt.time);
        }
        JavaTime::ZonedDateTime(_, None, _) => {
            return Some(Err(
                "a ZonedDateTime read from Kryo holds no offset (Java computes it from the zone's rules): \
                 Java serialization and River write one"
                    .to_owned(),
            ))
        }
        JavaTime::ZonedDateTime(dt, Some(offset), zone) => {
            out.push(6);
            write_date(&mut out, &dt.date);
            write_time(&mut out, &dt.time);
            write_offset(&mut out, *offset);
            match zone {
                ZoneId::Region(r) => {
                    out.push(7);
                    if let Err(e) = write_utf(&mut out, r, river) {
                        return Some(Err(e));
                    }
                }
                ZoneId::Offset(o) => {
                    out.push(8);
                    write_offset(&mut out, *o);
                }
            }
        }
        JavaTime::ZoneRegion(r) => {
            out.push(7);
            if let Err(e) = write_utf(&mut out, r, river) {
                return Some(Err(e));
            }
        }
        JavaTime::ZoneOffset(o) => {
            out.push(8);
            write_offset(&mut out, *o);
        }
        JavaTime::OffsetTime(t, o) => {
            out.push(9);
            write_time(&mut out, t);
            write_offset(&mut out, *o);
        }
        JavaTime::OffsetDateTime(dt, o) => {
            out.push(10);
            write_date(&mut out, &dt.date);
            write_time(&mut out, &dt.time);
            write_offset(&mut out, *o);
        }
        JavaTime::Year(y) => {
            out.push(11);
            out.extend_from_slice(&y.to_be_bytes());
        }
        JavaTime::YearMonth { year, month } => {
            out.push(12);
            out.extend_from_slice(&year.to_be_bytes());
            out.push(*month);
        }
        JavaTime::MonthDay { month, day } => {
            out.extend_from_slice(&[13, *month, *day]);
        }
        JavaTime::Period { years, months, days } => {
            out.push(14);
            for v in [years, months, days] {
                out.extend_from_slice(&v.to_be_bytes());
            }
        }
        // Not java.time: java.sql classes have serial forms of their own.
        JavaTime::SqlTimestamp { .. } | JavaTime::SqlDate(_) | JavaTime::SqlTime(_) => return None,
    }
    Some(Ok(out))
}
