package corpus;

import java.io.Serializable;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.List;

/** Dates, times, a zone, a duration and an immutable list. */
public class Reminder implements Serializable {
    private static final long serialVersionUID = 2L;

    String text;
    LocalDate day;
    LocalTime at;
    ZoneId zone;
    Duration before;
    List<String> channels;

    public Reminder() {
    }

    public Reminder(String text, LocalDate day, LocalTime at, ZoneId zone, Duration before, List<String> channels) {
        this.text = text;
        this.day = day;
        this.at = at;
        this.zone = zone;
        this.before = before;
        this.channels = channels;
    }
}
