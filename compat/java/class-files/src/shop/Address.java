package shop;

import java.io.Serializable;

/** Final: Kryo writes a field of this type without its class. */
public final class Address implements Serializable {
    private static final long serialVersionUID = 1L;
    private String city;
    private int zip;

    public Address() {}

    public Address(String city, int zip) {
        this.city = city;
        this.zip = zip;
    }
}
