//! The constants of JDK enums POJOs carry, in ordinal order: Kryo writes
//! an ordinal, Java serialization and River a name, and each needs the
//! other to be written again.

const DAY_OF_WEEK: &[&str] = &[
    "MONDAY",
    "TUESDAY",
    "WEDNESDAY",
    "THURSDAY",
    "FRIDAY",
    "SATURDAY",
    "SUNDAY",
];
const MONTH: &[&str] = &[
    "JANUARY",
    "FEBRUARY",
    "MARCH",
    "APRIL",
    "MAY",
    "JUNE",
    "JULY",
    "AUGUST",
    "SEPTEMBER",
    "OCTOBER",
    "NOVEMBER",
    "DECEMBER",
];
const TIME_UNIT: &[&str] = &[
    "NANOSECONDS",
    "MICROSECONDS",
    "MILLISECONDS",
    "SECONDS",
    "MINUTES",
    "HOURS",
    "DAYS",
];
const CHRONO_UNIT: &[&str] = &[
    "NANOS",
    "MICROS",
    "MILLIS",
    "SECONDS",
    "MINUTES",
    "HOURS",
    "HALF_DAYS",
    "DAYS",
    "WEEKS",
    "MONTHS",
    "YEARS",
    "DECADES",
    "CENTURIES",
    "MILLENNIA",
    "ERAS",
    "FOREVER",
];
const ROUNDING_MODE: &[&str] = &[
    "UP",
    "DOWN",
    "CEILING",
    "FLOOR",
    "HALF_UP",
    "HALF_DOWN",
    "HALF_EVEN",
    "UNNECESSARY",
];

/// The constants of a JDK enum this crate knows, in ordinal order.
pub(crate) fn constants(class: &str) -> Option<&'static [&'static str]> {
    Some(match class {
        "java.time.DayOfWeek" => DAY_OF_WEEK,
        "java.time.Month" => MONTH,
        "java.util.concurrent.TimeUnit" => TIME_UNIT,
        "java.time.temporal.ChronoUnit" => CHRONO_UNIT,
        "java.math.RoundingMode" => ROUNDING_MODE,
        _ => return None,
    })
}

/// The name of a known JDK enum's constant.
pub(crate) fn name(class: &str, ordinal: u32) -> Option<&'static str> {
    constants(class)?.get(ordinal as usize).copied()
}

/// The ordinal of a known JDK enum's constant.
pub(crate) fn ordinal(class: &str, name: &str) -> Option<u32> {
    constants(class)?.iter().position(|c| *c == name).map(|i| i as u32)
}

/// The class Java reads an `EnumSet` of `len` constants of `element` back
/// as: `JumboEnumSet` past 64 constants in the enum. Java serialization and
/// River write the constants, not the enum's size: a set of more than 64
/// is jumbo whatever the enum; a smaller one of an enum not known here is
/// taken as regular (the class is all that differs: Java's `equals` is a
/// set's).
pub(crate) fn enum_set_class(element: &str, len: usize) -> &'static str {
    if len > 64 || constants(element).is_some_and(|c| c.len() > 64) {
        "java.util.JumboEnumSet"
    } else {
        "java.util.RegularEnumSet"
    }
}
