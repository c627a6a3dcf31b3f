package corpus;

import java.io.Serializable;

/** Arrays as fields. */
public class Payment implements Serializable {
    private static final long serialVersionUID = 3L;

    String id;
    int[] cents;
    String[] cards;

    public Payment() {
    }

    public Payment(String id, int[] cents, String[] cards) {
        this.id = id;
        this.cents = cents;
        this.cards = cards;
    }
}
