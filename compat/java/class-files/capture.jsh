// Writes payloads.json: what Redisson 4.7.0's Kryo5Codec writes for instances
// of the classes in shop.jar. Run by capture.sh.
import java.util.*;
import shop.*;
var codec = new org.redisson.codec.Kryo5Codec();
var out = new LinkedHashMap<String, Object>();
Object[][] cases = {
    {"order", new Order("o-1", 1234, 3, new ArrayList<>(List.of("a", "b")), new HashMap<>(Map.of("k", 5L)), Status.PAID, new Address("Oslo", 150))},
    {"order_nulls", new Order(null, -5, null, null, null, null, null)},
    {"rush_order", new RushOrder(null, 1795400000000L, "r-7")},
    {"status", Status.CANCELLED},
    {"address", new Address("Bergen", 5003)},
    {"payment", new Payment(new int[] {1, -2, 300}, new String[] {"x", null}, new ArrayList<>(List.of(new long[] {7L, 8L})))},
};
var json = new StringBuilder("{\n  \"about\": \"Redisson 4.7.0 new Kryo5Codec().getValueEncoder() for instances of compat/java/class-files/shop.jar (capture.sh)\",\n  \"cases\": {\n");
for (int i = 0; i < cases.length; i++) {
    var buf = codec.getValueEncoder().encode(cases[i][1]);
    json.append("    \"").append(cases[i][0]).append("\": \"").append(io.netty.buffer.ByteBufUtil.hexDump(buf)).append("\"").append(i + 1 < cases.length ? ",\n" : "\n");
}
json.append("  }\n}\n");
java.nio.file.Files.writeString(java.nio.file.Path.of("payloads.json"), json.toString());
/exit
