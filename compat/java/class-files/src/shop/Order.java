package shop;

import java.io.Serializable;
import java.util.List;
import java.util.Map;

/** A POJO as a service keeps it: primitives, boxed, strings, generics, an enum, a final class. */
public class Order implements Serializable {
    private static final long serialVersionUID = 42L;
    /** Static: Kryo writes none. */
    public static int created;

    private String id;
    private long amount;
    private Integer retries;
    private List<String> tags;
    private Map<String, Long> attrs;
    private Status status;
    private Address address;
    /** Transient: Kryo writes none. */
    private transient String cache;

    public Order() {}

    public Order(String id, long amount, Integer retries, List<String> tags, Map<String, Long> attrs,
            Status status, Address address) {
        this.id = id;
        this.amount = amount;
        this.retries = retries;
        this.tags = tags;
        this.attrs = attrs;
        this.status = status;
        this.address = address;
        this.cache = "not written";
    }
}
