package corpus;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.List;

/** A subclass: its fields and Order's. */
public class RushOrder extends Order {
    private static final long serialVersionUID = 4L;

    int priority;
    Instant deadline;

    public RushOrder() {
    }

    public RushOrder(String id, long amount, LocalDateTime createdAt, BigDecimal total, List<String> tags, int priority,
            Instant deadline) {
        super(id, amount, createdAt, total, tags);
        this.priority = priority;
        this.deadline = deadline;
    }
}
