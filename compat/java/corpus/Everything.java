package corpus;

import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.sql.Timestamp;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.Month;
import java.time.MonthDay;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.Period;
import java.time.Year;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.Currency;
import java.util.Date;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/** A field of (nearly) every JDK type a POJO carries. */
public class Everything implements Serializable {
    private static final long serialVersionUID = 5L;

    // java.time
    Instant instant;
    LocalDate localDate;
    LocalTime localTime;
    LocalDateTime localDateTime;
    OffsetDateTime offsetDateTime;
    OffsetTime offsetTime;
    ZonedDateTime zonedDateTime;
    Duration duration;
    Period period;
    Year year;
    YearMonth yearMonth;
    MonthDay monthDay;
    ZoneId zoneId;
    ZoneOffset zoneOffset;
    DayOfWeek dayOfWeek;
    Month month;
    Date date;
    Timestamp timestamp;
    // collections
    List<String> listOf;
    Set<Long> setOf;
    Map<String, Integer> mapOf;
    TreeMap<String, Long> sorted;
    LinkedHashMap<String, Long> ordered;
    EnumSet<Color> colors;
    EnumMap<Color, String> names;
    ArrayDeque<String> deque;
    List<String> unmodifiable;
    // arrays
    long[] longs;
    double[] doubles;
    boolean[] flags;
    char[] chars;
    String[] strings;
    Integer[] boxed;
    int[][] grid;
    // others
    AtomicLong counter;
    BitSet bits;
    Currency currency;
    Locale locale;
    URI uri;
    UUID uuid;
    StringBuilder note;
    BigInteger big;
    BigDecimal price;
    Character initial;
    Short small;
    Byte tiny;
    char letter;
    boolean active;
    float ratio;
    Integer count;
    Color color;

    public Everything() {
    }
}
