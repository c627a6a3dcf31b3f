package shop;

/** A subclass: its fields and Order's, one of them redeclared. */
public class RushOrder extends Order {
    private static final long serialVersionUID = 7L;

    private long deadline;
    /** Hides Order's id. */
    private String id;

    public RushOrder() {}

    public RushOrder(Order base, long deadline, String id) {
        super("base-" + id, 9, null, new java.util.ArrayList<>(), null, Status.PAID, null);
        this.deadline = deadline;
        this.id = id;
    }
}
