/** An enum in the default package (its class name has no dot). */
public enum Shade {
    LIGHT, DARK
}
