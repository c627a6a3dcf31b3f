package corpus;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
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
import java.time.format.DateTimeFormatter;
import java.time.temporal.TemporalAccessor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.Currency;
import java.util.Date;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.Stack;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.redisson.client.codec.Codec;
import org.redisson.client.handler.State;

/**
 * The JDK types real POJOs carry, written by Redisson's own codec objects, with the value each
 * stands for in a canonical JSON form (the form delayq-codec's {@code KryoValue::to_json_text}
 * gives), and the other way: bytes written by delayq read back by the same codecs and compared.
 *
 * <pre>
 *   write CODEC...     a JSON object: codec -> case -> {java_class, java, expected, hex | error, java_decoded}
 *   read CODEC FILE    FILE holds "case hex" lines; a JSON object: case -> {java_decoded, java_class, equal | error}
 *   cases              the case names, one a line
 * </pre>
 *
 * Run it through {@code compat/java/corpus.sh}: the time zone is UTC, and MarshallingCodec runs on
 * Redisson 3.52.0 (it is gone from 4.x), the other codecs on 4.7.0.
 */
public final class JdkCorpus {

    private static final LocalDateTime LDT = LocalDateTime.of(2026, 11, 23, 2, 13, 20, 123456789);
    private static final Instant INSTANT = Instant.ofEpochSecond(1795400000L, 123456789);

    private JdkCorpus() {
    }

    /** One value: the Java expression it stands for (documentation) and how to build it. */
    private static final class Case {
        final String java;
        final Supplier<Object> make;

        Case(String java, Supplier<Object> make) {
            this.java = java;
            this.make = make;
        }
    }

    private static final Map<String, Case> CASES = new LinkedHashMap<>();

    /** Values only the natural-types check uses (compat/fixtures/natural-types-java.json). */
    private static final Map<String, Case> NATURAL = new LinkedHashMap<>();

    private static void zoned(String name, String local, String zone, boolean later) {
        String java = "ZonedDateTime.of(LocalDateTime.parse(\"" + local + "\"), ZoneId.of(\"" + zone + "\"))"
                + (later ? ".withLaterOffsetAtOverlap()" : "");
        NATURAL.put(name, new Case(java, () -> {
            ZonedDateTime z = ZonedDateTime.of(LocalDateTime.parse(local), ZoneId.of(zone));
            return later ? z.withLaterOffsetAtOverlap() : z;
        }));
    }

    private static void add(String name, String java, Supplier<Object> make) {
        if (CASES.put(name, new Case(java, make)) != null) {
            throw new IllegalStateException("two cases named " + name);
        }
    }

    static {
        NATURAL.put("pojo_order_nulls", new Case("new Order(\"o-2\", 7L, null, null, new ArrayList<>())",
                () -> new Order("o-2", 7L, null, null, new ArrayList<>())));
        // ZonedDateTime in region zones for the chrono-tz mapping (and an
        // offset zone for time's): a gap, both sides of an overlap, zones
        // whose offsets are not whole hours, and the region "UTC".
        zoned("zoned_paris_gap", "2026-03-29T02:30", "Europe/Paris", false);
        zoned("zoned_paris_overlap_earlier", "2026-10-25T02:30", "Europe/Paris", false);
        zoned("zoned_paris_overlap_later", "2026-10-25T02:30", "Europe/Paris", true);
        zoned("zoned_new_york", "2026-11-23T02:13:20.123456789", "America/New_York", false);
        zoned("zoned_kolkata_1950", "1950-06-01T12:00:00.000000005", "Asia/Kolkata", false);
        zoned("zoned_warsaw_1900", "1900-01-01T00:00", "Europe/Warsaw", false);
        zoned("zoned_utc_region", "2026-11-23T02:13:20.123456789", "UTC", false);
        zoned("zoned_offset_0530", "2026-11-23T02:13:20.123456789", "+05:30", false);
    }

    static {
        // 1. java.time and the old date classes.
        add("instant", "Instant.ofEpochSecond(1795400000L, 123456789)", () -> INSTANT);
        add("instant_millis", "Instant.ofEpochMilli(1795400000123L)", () -> Instant.ofEpochMilli(1795400000123L));
        add("instant_before_epoch", "Instant.ofEpochSecond(-1L, 1000)", () -> Instant.ofEpochSecond(-1L, 1000));
        add("local_date", "LocalDate.of(2026, 11, 23)", () -> LocalDate.of(2026, 11, 23));
        add("local_date_bce", "LocalDate.of(-44, 3, 15)", () -> LocalDate.of(-44, 3, 15));
        add("local_time", "LocalTime.of(2, 13, 20, 123456789)", () -> LocalTime.of(2, 13, 20, 123456789));
        add("local_time_minutes", "LocalTime.of(10, 15)", () -> LocalTime.of(10, 15));
        add("local_date_time", "LocalDateTime.of(2026, 11, 23, 2, 13, 20, 123456789)", () -> LDT);
        add("local_date_time_millis", "LocalDateTime.of(2026, 1, 2, 3, 4, 5, 6000000)",
                () -> LocalDateTime.of(2026, 1, 2, 3, 4, 5, 6000000));
        add("offset_date_time", "OffsetDateTime.of(LDT, ZoneOffset.ofHours(2))",
                () -> OffsetDateTime.of(LDT, ZoneOffset.ofHours(2)));
        add("offset_time", "OffsetTime.of(LocalTime.of(2, 13, 20), ZoneOffset.ofHoursMinutes(-5, -30))",
                () -> OffsetTime.of(LocalTime.of(2, 13, 20), ZoneOffset.ofHoursMinutes(-5, -30)));
        add("zoned_date_time", "ZonedDateTime.of(LDT, ZoneId.of(\"Europe/Paris\"))",
                () -> ZonedDateTime.of(LDT, ZoneId.of("Europe/Paris")));
        add("zoned_date_time_utc", "ZonedDateTime.of(LDT, ZoneOffset.UTC)", () -> ZonedDateTime.of(LDT, ZoneOffset.UTC));
        // Regions whose offset is fixed by their id (Kryo writes no offset).
        add("zoned_date_time_region_utc", "ZonedDateTime.of(LDT, ZoneId.of(\"UTC\"))",
                () -> ZonedDateTime.of(LDT, ZoneId.of("UTC")));
        add("zoned_date_time_gmt_plus", "ZonedDateTime.of(LDT, ZoneId.of(\"GMT+02:00\"))",
                () -> ZonedDateTime.of(LDT, ZoneId.of("GMT+02:00")));
        add("zoned_date_time_etc_gmt", "ZonedDateTime.of(LDT, ZoneId.of(\"Etc/GMT-3\"))",
                () -> ZonedDateTime.of(LDT, ZoneId.of("Etc/GMT-3")));
        add("duration", "Duration.ofSeconds(5400, 500000000)", () -> Duration.ofSeconds(5400, 500000000));
        add("duration_negative", "Duration.ofMillis(-1500)", () -> Duration.ofMillis(-1500));
        add("duration_zero", "Duration.ZERO", () -> Duration.ZERO);
        add("period", "Period.of(1, 2, 3)", () -> Period.of(1, 2, 3));
        add("period_negative", "Period.ofDays(-10)", () -> Period.ofDays(-10));
        add("year", "Year.of(2026)", () -> Year.of(2026));
        add("year_month", "YearMonth.of(2026, 11)", () -> YearMonth.of(2026, 11));
        add("month_day", "MonthDay.of(11, 23)", () -> MonthDay.of(11, 23));
        add("zone_id", "ZoneId.of(\"Europe/Paris\")", () -> ZoneId.of("Europe/Paris"));
        add("zone_offset", "ZoneOffset.ofHoursMinutes(5, 30)", () -> ZoneOffset.ofHoursMinutes(5, 30));
        add("zone_offset_utc", "ZoneOffset.UTC", () -> ZoneOffset.UTC);
        add("day_of_week", "DayOfWeek.MONDAY", () -> DayOfWeek.MONDAY);
        add("month", "Month.NOVEMBER", () -> Month.NOVEMBER);
        add("util_date", "new Date(1795400000123L)", () -> new Date(1795400000123L));
        add("sql_timestamp", "Timestamp.from(Instant.ofEpochSecond(1795400000L, 123456789))",
                () -> Timestamp.from(INSTANT));
        add("sql_date", "java.sql.Date.valueOf(\"2026-11-23\")", () -> java.sql.Date.valueOf("2026-11-23"));
        add("sql_time", "java.sql.Time.valueOf(\"02:13:20\")", () -> java.sql.Time.valueOf("02:13:20"));

        // 2. Java 9+ immutable collections and the Collections wrappers.
        add("list_of_0", "List.of()", () -> List.of());
        add("list_of_1", "List.of(\"a\")", () -> List.of("a"));
        add("list_of_2", "List.of(\"a\", \"b\")", () -> List.of("a", "b"));
        add("list_of_3", "List.of(\"a\", \"b\", \"c\")", () -> List.of("a", "b", "c"));
        add("set_of_0", "Set.of()", () -> Set.of());
        add("set_of_1", "Set.of(\"a\")", () -> Set.of("a"));
        add("set_of_2", "Set.of(\"a\", \"b\")", () -> Set.of("a", "b"));
        add("set_of_3", "Set.of(\"a\", \"b\", \"c\")", () -> Set.of("a", "b", "c"));
        add("map_of_0", "Map.of()", () -> Map.of());
        add("map_of_1", "Map.of(\"a\", 1)", () -> Map.of("a", 1));
        add("map_of_2", "Map.of(\"a\", 1, \"b\", 2)", () -> Map.of("a", 1, "b", 2));
        add("map_of_3", "Map.of(\"a\", 1, \"b\", 2, \"c\", 3)", () -> Map.of("a", 1, "b", 2, "c", 3));
        add("list_copy_of", "List.copyOf(new ArrayList<>(List.of(1L, 2L)))",
                () -> List.copyOf(new ArrayList<>(List.of(1L, 2L))));
        add("singleton", "Collections.singleton(\"a\")", () -> Collections.singleton("a"));
        add("singleton_list", "Collections.singletonList(\"a\")", () -> Collections.singletonList("a"));
        add("singleton_map", "Collections.singletonMap(\"k\", \"v\")", () -> Collections.singletonMap("k", "v"));
        add("empty_list", "Collections.emptyList()", () -> Collections.emptyList());
        add("empty_set", "Collections.emptySet()", () -> Collections.emptySet());
        add("empty_map", "Collections.emptyMap()", () -> Collections.emptyMap());
        add("unmodifiable_list", "Collections.unmodifiableList(new ArrayList<>(List.of(\"a\", \"b\")))",
                () -> Collections.unmodifiableList(new ArrayList<>(List.of("a", "b"))));
        add("unmodifiable_linked_list", "Collections.unmodifiableList(new LinkedList<>(List.of(\"a\")))",
                () -> Collections.unmodifiableList(new LinkedList<>(List.of("a"))));
        add("unmodifiable_set", "Collections.unmodifiableSet(new LinkedHashSet<>(List.of(\"b\", \"a\")))",
                () -> Collections.unmodifiableSet(new LinkedHashSet<>(List.of("b", "a"))));
        add("unmodifiable_map", "Collections.unmodifiableMap(linked(\"z\", 1L, \"a\", 2L))",
                () -> Collections.unmodifiableMap(linked("z", 1L, "a", 2L)));
        add("unmodifiable_collection", "Collections.unmodifiableCollection(new ArrayList<>(List.of(1L)))",
                () -> Collections.unmodifiableCollection(new ArrayList<>(List.of(1L))));
        add("synchronized_list", "Collections.synchronizedList(new ArrayList<>(List.of(\"a\")))",
                () -> Collections.synchronizedList(new ArrayList<>(List.of("a"))));
        add("synchronized_map", "Collections.synchronizedMap(new HashMap<>(Map.of(\"k\", \"v\")))",
                () -> Collections.synchronizedMap(new HashMap<>(Map.of("k", "v"))));
        add("synchronized_set", "Collections.synchronizedSet(new HashSet<>(List.of(\"a\")))",
                () -> Collections.synchronizedSet(new HashSet<>(List.of("a"))));
        add("checked_list", "Collections.checkedList(new ArrayList<>(List.of(\"a\")), String.class)",
                () -> Collections.checkedList(new ArrayList<>(List.of("a")), String.class));
        add("arrays_as_list", "Arrays.asList(\"a\", \"b\")", () -> Arrays.asList("a", "b"));
        // The sorted and navigable views, and the empty ones (a view of an empty TreeSet/TreeMap).
        add("unmodifiable_sorted_set", "Collections.unmodifiableSortedSet(new TreeSet<>(List.of(\"b\", \"a\")))",
                () -> Collections.unmodifiableSortedSet(new TreeSet<>(List.of("b", "a"))));
        add("unmodifiable_navigable_set", "Collections.unmodifiableNavigableSet(new TreeSet<>(List.of(\"b\", \"a\")))",
                () -> Collections.unmodifiableNavigableSet(new TreeSet<>(List.of("b", "a"))));
        add("unmodifiable_sorted_map", "Collections.unmodifiableSortedMap(new TreeMap<>(Map.of(\"b\", 2L, \"a\", 1L)))",
                () -> Collections.unmodifiableSortedMap(new TreeMap<>(Map.of("b", 2L, "a", 1L))));
        add("unmodifiable_navigable_map", "Collections.unmodifiableNavigableMap(new TreeMap<>(Map.of(\"b\", 2L, \"a\", 1L)))",
                () -> Collections.unmodifiableNavigableMap(new TreeMap<>(Map.of("b", 2L, "a", 1L))));
        add("synchronized_sorted_set", "Collections.synchronizedSortedSet(new TreeSet<>(List.of(\"b\", \"a\")))",
                () -> Collections.synchronizedSortedSet(new TreeSet<>(List.of("b", "a"))));
        add("synchronized_navigable_set", "Collections.synchronizedNavigableSet(new TreeSet<>(List.of(\"b\", \"a\")))",
                () -> Collections.synchronizedNavigableSet(new TreeSet<>(List.of("b", "a"))));
        add("synchronized_sorted_map", "Collections.synchronizedSortedMap(new TreeMap<>(Map.of(\"b\", 2L, \"a\", 1L)))",
                () -> Collections.synchronizedSortedMap(new TreeMap<>(Map.of("b", 2L, "a", 1L))));
        add("synchronized_navigable_map", "Collections.synchronizedNavigableMap(new TreeMap<>(Map.of(\"b\", 2L, \"a\", 1L)))",
                () -> Collections.synchronizedNavigableMap(new TreeMap<>(Map.of("b", 2L, "a", 1L))));
        add("empty_sorted_set", "Collections.emptySortedSet()", () -> Collections.emptySortedSet());
        add("empty_navigable_set", "Collections.emptyNavigableSet()", () -> Collections.emptyNavigableSet());
        add("empty_sorted_map", "Collections.emptySortedMap()", () -> Collections.emptySortedMap());
        add("empty_navigable_map", "Collections.emptyNavigableMap()", () -> Collections.emptyNavigableMap());

        // 3. Other collections.
        add("tree_map", "new TreeMap<>(Map.of(\"b\", 2L, \"a\", 1L))", () -> new TreeMap<>(Map.of("b", 2L, "a", 1L)));
        add("tree_map_comparator", "TreeMap(Comparator.reverseOrder()) {a=1L, b=2L}", () -> {
            TreeMap<String, Long> m = new TreeMap<>(Comparator.reverseOrder());
            m.put("a", 1L);
            m.put("b", 2L);
            return m;
        });
        add("tree_set", "new TreeSet<>(List.of(\"y\", \"x\"))", () -> new TreeSet<>(List.of("y", "x")));
        add("tree_set_comparator", "TreeSet(Comparator.reverseOrder()) {x, y}", () -> {
            TreeSet<String> s = new TreeSet<>(Comparator.reverseOrder());
            s.add("x");
            s.add("y");
            return s;
        });
        add("enum_set", "EnumSet.of(DayOfWeek.MONDAY, DayOfWeek.FRIDAY)",
                () -> EnumSet.of(DayOfWeek.MONDAY, DayOfWeek.FRIDAY));
        add("enum_set_empty", "EnumSet.noneOf(DayOfWeek.class)", () -> EnumSet.noneOf(DayOfWeek.class));
        add("enum_set_ours", "EnumSet.of(Color.RED, Color.BLUE)", () -> EnumSet.of(Color.RED, Color.BLUE));
        add("enum_map", "new EnumMap<>(Map.of(DayOfWeek.MONDAY, 1L))",
                () -> new EnumMap<>(Map.of(DayOfWeek.MONDAY, 1L)));
        add("priority_queue", "new PriorityQueue<>(List.of(3L, 1L, 2L))", () -> new PriorityQueue<>(List.of(3L, 1L, 2L)));
        add("array_deque", "new ArrayDeque<>(List.of(\"a\", \"b\"))", () -> new ArrayDeque<>(List.of("a", "b")));
        add("copy_on_write_list", "new CopyOnWriteArrayList<>(List.of(\"a\", \"b\"))",
                () -> new CopyOnWriteArrayList<>(List.of("a", "b")));
        add("copy_on_write_set", "new CopyOnWriteArraySet<>(List.of(\"a\", \"b\"))",
                () -> new CopyOnWriteArraySet<>(List.of("a", "b")));
        add("concurrent_hash_map", "new ConcurrentHashMap<>(Map.of(\"k\", 1L))", () -> new ConcurrentHashMap<>(Map.of("k", 1L)));
        add("concurrent_skip_list_map", "new ConcurrentSkipListMap<>(Map.of(\"b\", 2L, \"a\", 1L))",
                () -> new ConcurrentSkipListMap<>(Map.of("b", 2L, "a", 1L)));
        add("concurrent_skip_list_set", "new ConcurrentSkipListSet<>(List.of(\"b\", \"a\"))",
                () -> new ConcurrentSkipListSet<>(List.of("b", "a")));
        add("stack", "Stack [\"a\", \"b\"]", () -> {
            Stack<String> s = new Stack<>();
            s.push("a");
            s.push("b");
            return s;
        });
        add("vector", "new Vector<>(List.of(\"a\", \"b\"))", () -> new Vector<>(List.of("a", "b")));
        add("hashtable", "new Hashtable<>(Map.of(\"k\", \"v\"))", () -> new Hashtable<>(Map.of("k", "v")));
        add("linked_hash_map", "LinkedHashMap {z=1L, a=2L, m=3L}", () -> linked("z", 1L, "a", 2L, "m", 3L));
        add("linked_hash_set", "new LinkedHashSet<>(List.of(\"z\", \"a\", \"m\"))",
                () -> new LinkedHashSet<>(List.of("z", "a", "m")));
        add("linked_list", "new LinkedList<>(List.of(\"a\", \"b\"))", () -> new LinkedList<>(List.of("a", "b")));

        // 4. Arrays.
        add("boolean_array", "new boolean[] {true, false}", () -> new boolean[] {true, false});
        add("byte_array", "new byte[] {1, -2}", () -> new byte[] {1, -2});
        add("short_array", "new short[] {1, -2}", () -> new short[] {1, -2});
        add("char_array", "new char[] {'a', 'ż'}", () -> new char[] {'a', 'ż'});
        add("int_array", "new int[] {1, -2, 300000}", () -> new int[] {1, -2, 300000});
        add("int_array_empty", "new int[0]", () -> new int[0]);
        add("long_array", "new long[] {1L, Long.MIN_VALUE}", () -> new long[] {1L, Long.MIN_VALUE});
        add("float_array", "new float[] {1.5f, -0.25f}", () -> new float[] {1.5f, -0.25f});
        add("double_array", "new double[] {3.5, -0.25}", () -> new double[] {3.5, -0.25});
        add("double_array_specials", "new double[] {Double.NaN, -0.0, Double.POSITIVE_INFINITY}",
                () -> new double[] {Double.NaN, -0.0, Double.POSITIVE_INFINITY});
        add("float_array_specials", "new float[] {Float.NaN, -0.0f, Float.NEGATIVE_INFINITY}",
                () -> new float[] {Float.NaN, -0.0f, Float.NEGATIVE_INFINITY});
        add("string_array", "new String[] {\"a\", null, \"c\"}", () -> new String[] {"a", null, "c"});
        add("object_array", "new Object[] {\"a\", 1L, null}", () -> new Object[] {"a", 1L, null});
        add("boxed_int_array", "new Integer[] {1, null, 3}", () -> new Integer[] {1, null, 3});
        add("int_2d_array", "new int[][] {{1, 2}, {3}}", () -> new int[][] {{1, 2}, {3}});
        add("string_2d_array", "new String[][] {{\"a\"}, {}}", () -> new String[][] {{"a"}, {}});
        add("list_of_long_arrays", "new ArrayList<>(List.of(new long[] {1L}, new long[] {2L, 3L}))",
                () -> new ArrayList<>(List.of(new long[] {1L}, new long[] {2L, 3L})));
        add("boxed_long_array_nulls", "new Long[] {null, Long.MIN_VALUE}", () -> new Long[] {null, Long.MIN_VALUE});
        add("big_decimal_array", "new BigDecimal[] {new BigDecimal(\"2.50\"), new BigDecimal(\"1E+3\")}",
                () -> new BigDecimal[] {new BigDecimal("2.50"), new BigDecimal("1E+3")});
        add("instant_array", "new Instant[] {INSTANT, null}", () -> new Instant[] {INSTANT, null});
        add("char_2d_array", "new char[][] {{'a'}, {}}", () -> new char[][] {{'a'}, {}});
        add("long_2d_array_empty", "new long[0][]", () -> new long[0][]);

        // 5. Others.
        add("optional", "Optional.of(\"x\")", () -> Optional.of("x"));
        add("optional_empty", "Optional.empty()", () -> Optional.empty());
        add("atomic_integer", "new AtomicInteger(7)", () -> new AtomicInteger(7));
        add("atomic_long", "new AtomicLong(-7L)", () -> new AtomicLong(-7L));
        add("atomic_boolean", "new AtomicBoolean(true)", () -> new AtomicBoolean(true));
        add("atomic_reference", "new AtomicReference<>(\"x\")", () -> new AtomicReference<>("x"));
        add("bit_set", "BitSet {1, 3, 64}", () -> {
            BitSet b = new BitSet();
            b.set(1);
            b.set(3);
            b.set(64);
            return b;
        });
        add("currency", "Currency.getInstance(\"EUR\")", () -> Currency.getInstance("EUR"));
        add("locale", "Locale.US", () -> Locale.US);
        add("locale_language", "Locale.FRENCH", () -> Locale.FRENCH);
        add("uri", "URI.create(\"https://example.com/a?b=c#d\")", () -> URI.create("https://example.com/a?b=c#d"));
        add("url", "new URL(\"https://example.com:8443/a?b=c#d\")", () -> {
            try {
                return new URL("https://example.com:8443/a?b=c#d");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        add("uuid", "UUID.fromString(\"123e4567-e89b-12d3-a456-426614174000\")",
                () -> UUID.fromString("123e4567-e89b-12d3-a456-426614174000"));
        add("string_builder", "new StringBuilder(\"built\")", () -> new StringBuilder("built"));
        add("string_buffer", "new StringBuffer(\"buffered\")", () -> new StringBuffer("buffered"));
        add("character", "'x'", () -> 'x');
        add("short", "(short) -300", () -> (short) -300);
        add("byte", "(byte) -7", () -> (byte) -7);
        add("double_nan", "Double.NaN", () -> Double.NaN);
        add("double_negative_infinity", "Double.NEGATIVE_INFINITY", () -> Double.NEGATIVE_INFINITY);
        add("double_negative_zero", "-0.0", () -> -0.0);
        add("float_nan", "Float.NaN", () -> Float.NaN);
        add("char_lone_surrogate", "'\\uD83D'", () -> '\uD83D');
        add("char_array_surrogates", "new char[] {'\\uD83D', '\\uDE00', '\\uDC00'}",
                () -> new char[] {'\uD83D', '\uDE00', '\uDC00'});
        add("string_lone_surrogate", "\"\\uD800\" (a String Rust cannot hold)", () -> "\uD800");
        add("enum_set_big", "EnumSet.allOf(Character.UnicodeScript.class) without LATIN (a JumboEnumSet)", () -> {
            EnumSet<Character.UnicodeScript> s = EnumSet.allOf(Character.UnicodeScript.class);
            s.remove(Character.UnicodeScript.LATIN);
            return s;
        });
        add("big_integer", "new BigInteger(\"123456789012345678901234567890\")",
                () -> new BigInteger("123456789012345678901234567890"));
        add("big_integer_negative", "new BigInteger(\"-98765432109876543210\")", () -> new BigInteger("-98765432109876543210"));
        add("big_integer_small", "BigInteger.valueOf(42)", () -> BigInteger.valueOf(42));
        add("big_decimal_scale", "new BigDecimal(\"2.50\")", () -> new BigDecimal("2.50"));
        add("big_decimal_long", "new BigDecimal(\"-12345678901234567890.123456789\")",
                () -> new BigDecimal("-12345678901234567890.123456789"));
        add("big_decimal_exponent", "new BigDecimal(\"1E+3\")", () -> new BigDecimal("1E+3"));
        add("throwable", "new IllegalStateException(\"boom\", new IllegalArgumentException(\"cause\"))", () -> {
            IllegalArgumentException cause = new IllegalArgumentException("cause");
            cause.setStackTrace(new StackTraceElement[0]);
            IllegalStateException e = new IllegalStateException("boom", cause);
            e.setStackTrace(new StackTraceElement[] {new StackTraceElement("corpus.Service", "run", "Service.java", 42)});
            return e;
        });
        add("throwable_no_message", "new RuntimeException()", () -> {
            RuntimeException e = new RuntimeException();
            e.setStackTrace(new StackTraceElement[0]);
            return e;
        });
        add("default_package_enum", "Shade.DARK (an enum in the default package)", () -> {
            try {
                @SuppressWarnings({"unchecked", "rawtypes"})
                Class<Enum> shade = (Class<Enum>) Class.forName("Shade");
                return Enum.valueOf(shade, "DARK");
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
        });

        // 6. POJOs.
        add("pojo_order", "new Order(\"o-1\", 1234L, LDT, new BigDecimal(\"12.50\"), new ArrayList<>(List.of(\"a\", \"b\")))",
                () -> new Order("o-1", 1234L, LDT, new BigDecimal("12.50"), new ArrayList<>(List.of("a", "b"))));
        add("pojo_rush_order", "new RushOrder(\"o-2\", 5L, LDT, new BigDecimal(\"0.10\"), List.of(\"x\"), 3, INSTANT)",
                () -> new RushOrder("o-2", 5L, LDT, new BigDecimal("0.10"), List.of("x"), 3, INSTANT));
        add("pojo_reminder", "new Reminder(\"call\", LocalDate.of(2026, 11, 23), LocalTime.of(9, 30), "
                + "ZoneId.of(\"Europe/Warsaw\"), Duration.ofMinutes(15), List.of(\"sms\", \"mail\"))",
                () -> new Reminder("call", LocalDate.of(2026, 11, 23), LocalTime.of(9, 30), ZoneId.of("Europe/Warsaw"),
                        Duration.ofMinutes(15), List.of("sms", "mail")));
        add("pojo_payment", "new Payment(\"p-1\", new int[] {100, 250}, new String[] {\"visa\", \"amex\"})",
                () -> new Payment("p-1", new int[] {100, 250}, new String[] {"visa", "amex"}));
        add("pojo_everything", "Everything: a field of every type above", JdkCorpus::everything);
    }

    private static LinkedHashMap<String, Long> linked(Object... kv) {
        LinkedHashMap<String, Long> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], (Long) kv[i + 1]);
        }
        return m;
    }

    private static Everything everything() {
        Everything e = new Everything();
        e.instant = INSTANT;
        e.localDate = LocalDate.of(2026, 11, 23);
        e.localTime = LocalTime.of(2, 13, 20, 5000);
        e.localDateTime = LDT;
        e.offsetDateTime = OffsetDateTime.of(LDT, ZoneOffset.ofHours(-3));
        e.offsetTime = OffsetTime.of(LocalTime.of(23, 59), ZoneOffset.UTC);
        e.zonedDateTime = ZonedDateTime.of(LDT, ZoneId.of("America/New_York"));
        e.duration = Duration.ofHours(36);
        e.period = Period.of(0, 18, 0);
        e.year = Year.of(1999);
        e.yearMonth = YearMonth.of(2000, 2);
        e.monthDay = MonthDay.of(2, 29);
        e.zoneId = ZoneId.of("Asia/Tokyo");
        e.zoneOffset = ZoneOffset.ofHours(-8);
        e.dayOfWeek = DayOfWeek.SUNDAY;
        e.month = Month.JANUARY;
        e.date = new Date(1795400000123L);
        e.timestamp = Timestamp.from(Instant.ofEpochSecond(1795400000L, 120000000));
        e.listOf = List.of("a", "b", "c");
        e.setOf = Set.of(7L);
        e.mapOf = Map.of("one", 1);
        e.sorted = new TreeMap<>(Map.of("b", 2L, "a", 1L));
        e.ordered = linked("z", 26L, "a", 1L);
        e.colors = EnumSet.of(Color.GREEN);
        e.names = new EnumMap<>(Map.of(Color.RED, "rouge"));
        e.deque = new ArrayDeque<>(List.of("first"));
        e.unmodifiable = Collections.unmodifiableList(new ArrayList<>(List.of("u")));
        e.longs = new long[] {1L, 2L};
        e.doubles = new double[] {0.5};
        e.flags = new boolean[] {false, true};
        e.chars = new char[] {'h', 'i'};
        e.strings = new String[] {"s"};
        e.boxed = new Integer[] {null, 2};
        e.grid = new int[][] {{1}, {2, 3}};
        e.counter = new AtomicLong(99L);
        e.bits = BitSet.valueOf(new long[] {5L});
        e.currency = Currency.getInstance("PLN");
        e.locale = Locale.GERMANY;
        e.uri = URI.create("urn:isbn:0451450523");
        e.uuid = UUID.fromString("00000000-0000-0001-0000-000000000002");
        e.note = new StringBuilder("note");
        e.big = new BigInteger("-18446744073709551617");
        e.price = new BigDecimal("19.990");
        e.initial = 'Q';
        e.small = (short) 12;
        e.tiny = (byte) 1;
        e.letter = 'z';
        e.active = true;
        e.ratio = 0.75f;
        e.count = null;
        e.color = Color.BLUE;
        return e;
    }

    // ------------------------------------------------------------------ codecs

    static Codec codec(String name) throws Exception {
        switch (name) {
            case "kryo":
                return byName("org.redisson.codec.Kryo5Codec");
            case "serialization":
                return byName("org.redisson.codec.SerializationCodec");
            case "marshalling":
                return byName("org.redisson.codec.MarshallingCodec");
            case "jackson":
                return byName("org.redisson.codec.JsonJacksonCodec");
            case "jackson_jsr310": {
                // What a service that registers JavaTimeModule gets (dates as timestamps: Jackson's default).
                com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
                mapper.registerModule(new com.fasterxml.jackson.datatype.jsr310.JavaTimeModule());
                return (Codec) Class.forName("org.redisson.codec.JsonJacksonCodec")
                        .getConstructor(com.fasterxml.jackson.databind.ObjectMapper.class).newInstance(mapper);
            }
            case "lz4":
                return byName("org.redisson.codec.LZ4Codec");
            case "lz4v2":
                return byName("org.redisson.codec.LZ4CodecV2");
            case "snappy":
                return byName("org.redisson.codec.SnappyCodecV2");
            case "zstd":
                return byName("org.redisson.codec.ZStdCodec");
            default:
                throw new IllegalArgumentException("unknown codec " + name);
        }
    }

    private static Codec byName(String cls) throws Exception {
        return (Codec) Class.forName(cls).getConstructor().newInstance();
    }

    // ------------------------------------------------------------------ commands

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: JdkCorpus write CODEC... | write-natural CODEC... | read CODEC FILE | cases");
            System.exit(2);
        }
        switch (args[0]) {
            case "cases":
                CASES.keySet().forEach(System.out::println);
                break;
            case "write":
                write(CASES, Arrays.copyOfRange(args, 1, args.length));
                break;
            case "write-natural":
                write(NATURAL, Arrays.copyOfRange(args, 1, args.length));
                break;
            case "read":
                read(args[1], args[2]);
                break;
            default:
                System.err.println("unknown command " + args[0]);
                System.exit(2);
        }
    }

    private static void write(Map<String, Case> cases, String[] codecs) throws Exception {
        StringBuilder out = new StringBuilder("{\n");
        for (int c = 0; c < codecs.length; c++) {
            Codec codec = codec(codecs[c]);
            out.append(' ').append(quote(codecs[c])).append(": {\n");
            int n = 0;
            for (Map.Entry<String, Case> e : cases.entrySet()) {
                Object value = e.getValue().make.get();
                Map<String, String> rec = new LinkedHashMap<>();
                rec.put("java_class", quote(value.getClass().getName()));
                rec.put("java", quote(e.getValue().java));
                rec.put("expected", quote(canon(value)));
                try {
                    ByteBuf buf = codec.getValueEncoder().encode(value);
                    byte[] bytes = ByteBufUtil.getBytes(buf);
                    buf.release();
                    rec.put("hex", quote(ByteBufUtil.hexDump(bytes)));
                    try {
                        Object back = codec.getValueDecoder().decode(Unpooled.wrappedBuffer(bytes), new State());
                        rec.put("java_decoded", quote(canon(back)));
                        rec.put("java_decoded_class", quote(back == null ? "null" : back.getClass().getName()));
                    } catch (Throwable t) {
                        rec.put("java_decode_error", quote(describe(t)));
                    }
                } catch (Throwable t) {
                    rec.put("error", quote(describe(t)));
                }
                out.append(n++ == 0 ? "" : ",\n").append("  ").append(quote(e.getKey())).append(": {");
                int f = 0;
                for (Map.Entry<String, String> r : rec.entrySet()) {
                    out.append(f++ == 0 ? "" : ", ").append(quote(r.getKey())).append(": ").append(r.getValue());
                }
                out.append('}');
            }
            out.append("\n }").append(c + 1 < codecs.length ? ",\n" : "\n");
        }
        out.append("}\n");
        System.out.print(out);
    }

    private static void read(String codecName, String file) throws Exception {
        Codec codec = codec(codecName);
        StringBuilder out = new StringBuilder("{\n");
        int n = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                new java.io.FileInputStream(file), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                String[] parts = line.trim().split(" ");
                String name = parts[0];
                Map<String, String> rec = new LinkedHashMap<>();
                try {
                    Object back = codec.getValueDecoder().decode(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(parts[1])),
                            new State());
                    rec.put("java_decoded", quote(canon(back)));
                    rec.put("java_class", quote(back == null ? "null" : back.getClass().getName()));
                    Case original = CASES.containsKey(name) ? CASES.get(name) : NATURAL.get(name);
                    if (original != null) {
                        Object want = original.make.get();
                        rec.put("same_class", String.valueOf(back != null && back.getClass() == want.getClass()));
                        rec.put("equal", String.valueOf(same(want, back)));
                    }
                } catch (Throwable t) {
                    rec.put("error", quote(describe(t)));
                }
                out.append(n++ == 0 ? "" : ",\n").append(' ').append(quote(name)).append(": {");
                int f = 0;
                for (Map.Entry<String, String> r : rec.entrySet()) {
                    out.append(f++ == 0 ? "" : ", ").append(quote(r.getKey())).append(": ").append(r.getValue());
                }
                out.append('}');
            }
        }
        out.append("\n}\n");
        System.out.print(out);
    }

    /**
     * Whether Java holds the same value: {@code equals} where the class defines it, element by
     * element for arrays, and the canonical form for classes without a value {@code equals}
     * (atomics, StringBuilder, Throwable, our POJOs).
     */
    static boolean same(Object want, Object got) {
        if (want == null || got == null) {
            return want == got;
        }
        if (want.getClass().isArray()) {
            return got.getClass().isArray() && Objects.deepEquals(want, got);
        }
        boolean valueEquals;
        try {
            valueEquals = want.getClass().getMethod("equals", Object.class).getDeclaringClass() != Object.class;
        } catch (NoSuchMethodException e) {
            valueEquals = false;
        }
        if (valueEquals && !(want instanceof Throwable)) {
            return want.equals(got) && canon(want).equals(canon(got));
        }
        return want.getClass() == got.getClass() && canon(want).equals(canon(got));
    }

    private static String describe(Throwable t) {
        StringBuilder s = new StringBuilder(t.getClass().getName() + ": " + t.getMessage());
        for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            s.append(" / caused by ").append(c.getClass().getName()).append(": ").append(c.getMessage());
            if (s.length() > 400) {
                break;
            }
        }
        return s.length() > 500 ? s.substring(0, 500) : s.toString();
    }

    // ------------------------------------------------------------------ canonical JSON

    private static final DateTimeFormatter DATE_TEXT = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'+00:00'")
            .withZone(ZoneOffset.UTC);

    /** The value in the JSON form delayq-codec's {@code KryoValue::to_json_text} gives it. */
    static String canon(Object o) {
        StringBuilder out = new StringBuilder();
        canon(o, out);
        return out.toString();
    }

    private static void canon(Object o, StringBuilder out) {
        if (o == null) {
            out.append("null");
        } else if (o instanceof String || o instanceof Character) {
            out.append(quote(o.toString()));
        } else if (o instanceof Boolean || o instanceof Byte || o instanceof Short || o instanceof Integer
                || o instanceof Long || o instanceof BigInteger) {
            out.append(o);
        } else if (o instanceof Float || o instanceof Double) {
            double d = ((Number) o).doubleValue();
            // NaN and the infinities as KryoValue::to_json_text gives them (JSON has no such numbers).
            out.append(Double.isNaN(d) || Double.isInfinite(d) ? quote(o.toString()) : o.toString());
        } else if (o instanceof BigDecimal) {
            out.append(o.toString().replace("E+", "E"));
        } else if (o instanceof byte[]) {
            out.append(quote(ByteBufUtil.hexDump((byte[]) o)));
        } else if (o.getClass().isArray()) {
            out.append('[');
            for (int i = 0; i < Array.getLength(o); i++) {
                if (i > 0) {
                    out.append(',');
                }
                canon(Array.get(o, i), out);
            }
            out.append(']');
        } else if (o instanceof Timestamp) {
            out.append(quote(((Timestamp) o).toInstant().toString()));
        } else if (o instanceof Date) {
            out.append(quote(DATE_TEXT.format(Instant.ofEpochMilli(((Date) o).getTime()))));
        } else if (o instanceof Enum) {
            out.append(quote(((Enum<?>) o).name()));
        } else if (o instanceof TemporalAccessor || o instanceof Duration || o instanceof Period || o instanceof ZoneId
                || o instanceof UUID || o instanceof Currency || o instanceof Locale || o instanceof URI || o instanceof URL
                || o instanceof CharSequence) {
            out.append(quote(o.toString()));
        } else if (o instanceof Optional) {
            canon(((Optional<?>) o).orElse(null), out);
        } else if (o instanceof AtomicInteger || o instanceof AtomicLong || o instanceof AtomicBoolean) {
            out.append(o);
        } else if (o instanceof AtomicReference) {
            canon(((AtomicReference<?>) o).get(), out);
        } else if (o instanceof BitSet) {
            out.append('[');
            BitSet b = (BitSet) o;
            for (int i = b.nextSetBit(0), n = 0; i >= 0; i = b.nextSetBit(i + 1), n++) {
                out.append(n > 0 ? "," : "").append(i);
            }
            out.append(']');
        } else if (o instanceof Throwable) {
            Throwable t = (Throwable) o;
            out.append("{\"class\":").append(quote(t.getClass().getName())).append(",\"message\":");
            canon(t.getMessage(), out);
            out.append(",\"cause\":");
            canon(t.getCause(), out);
            out.append('}');
        } else if (o instanceof Map) {
            out.append('{');
            int n = 0;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) {
                out.append(n++ > 0 ? "," : "");
                Object k = e.getKey();
                String key = k instanceof String ? (String) k : k instanceof Enum ? ((Enum<?>) k).name() : canon(k);
                out.append(quote(key)).append(':');
                canon(e.getValue(), out);
            }
            out.append('}');
        } else if (o instanceof Collection) {
            out.append('[');
            int n = 0;
            for (Object item : (Collection<?>) o) {
                out.append(n++ > 0 ? "," : "");
                canon(item, out);
            }
            out.append(']');
        } else {
            pojo(o, out);
        }
    }

    /** A POJO of ours: every instance field, superclasses' included, by name. */
    private static void pojo(Object o, StringBuilder out) {
        if (!o.getClass().getName().startsWith("corpus.")) {
            throw new IllegalArgumentException("no canonical form for " + o.getClass().getName());
        }
        TreeMap<String, Field> fields = new TreeMap<>();
        for (Class<?> c = o.getClass(); c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers()) && !Modifier.isTransient(f.getModifiers())) {
                    fields.put(f.getName(), f);
                }
            }
        }
        out.append('{');
        int n = 0;
        for (Map.Entry<String, Field> e : fields.entrySet()) {
            out.append(n++ > 0 ? "," : "").append(quote(e.getKey())).append(':');
            try {
                e.getValue().setAccessible(true);
                canon(e.getValue().get(o), out);
            } catch (IllegalAccessException ex) {
                throw new IllegalStateException(ex);
            }
        }
        out.append('}');
    }

    static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else if (Character.isSurrogate(c) && !(Character.isHighSurrogate(c) && i + 1 < s.length()
                            && Character.isLowSurrogate(s.charAt(i + 1)))
                            && !(Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1)))) {
                        // A lone surrogate, which UTF-8 cannot hold: its escape as text
                        // (what KryoValue::to_json_text shows for such a char).
                        out.append(String.format("\\\\u%04X", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        return out.append('"').toString();
    }
}
