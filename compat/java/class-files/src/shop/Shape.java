package shop;

/** An interface: no values of its own, left out of the schema. */
public interface Shape {
    double area();
}
