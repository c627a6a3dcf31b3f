package corpus;

/** An enum of ours, for EnumSet and EnumMap fields. */
public enum Color {
    RED, GREEN, BLUE
}
