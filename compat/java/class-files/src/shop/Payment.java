package shop;

import java.io.Serializable;
import java.util.List;

/** Arrays: primitive, of strings, and inside a generic type. */
public class Payment implements Serializable {
    private static final long serialVersionUID = 3L;
    private int[] codes;
    private String[] names;
    private List<long[]> batches;

    public Payment() {}

    public Payment(int[] codes, String[] names, List<long[]> batches) {
        this.codes = codes;
        this.names = names;
        this.batches = batches;
    }
}
