package corpus;

import java.io.Serializable;
import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.util.List;

/** A POJO with a timestamp: the shape most queues carry. */
public class Order implements Serializable {
    private static final long serialVersionUID = 1L;

    String id;
    long amount;
    LocalDateTime createdAt;
    BigDecimal total;
    List<String> tags;

    public Order() {
    }

    public Order(String id, long amount, LocalDateTime createdAt, BigDecimal total, List<String> tags) {
        this.id = id;
        this.amount = amount;
        this.createdAt = createdAt;
        this.total = total;
        this.tags = tags;
    }
}
