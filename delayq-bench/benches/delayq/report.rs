//! The table the benchmark prints.

/// One line of the results table.
pub struct Row {
    pub scenario: String,
    pub metric: String,
    pub delayq: String,
    pub baseline: String,
    pub ratio: String,
    pub target: String,
}

impl Row {
    pub fn new(scenario: &str, metric: &str) -> Self {
        Row {
            scenario: scenario.into(),
            metric: metric.into(),
            delayq: String::new(),
            baseline: String::new(),
            ratio: String::new(),
            target: String::new(),
        }
    }

    pub fn values(mut self, delayq: String, baseline: String) -> Self {
        self.delayq = delayq;
        self.baseline = baseline;
        self
    }

    pub fn ratio(mut self, ratio: f64) -> Self {
        self.ratio = if ratio.is_finite() {
            format!("{ratio:.2}×")
        } else {
            "—".into()
        };
        self
    }

    pub fn target(mut self, target: &str, met: bool) -> Self {
        self.target = format!("{target} {}", if met { "✔" } else { "✘" });
        self
    }

    pub fn note(mut self, note: &str) -> Self {
        self.target = note.into();
        self
    }
}

/// Prints rows as a Markdown table.
pub fn print(rows: &[Row]) {
    println!("| scenario | metric | delayq | baseline (same run) | ratio | target |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            r.scenario, r.metric, r.delayq, r.baseline, r.ratio, r.target
        );
    }
}

/// A rate with thousands separators.
pub fn rate(per_second: f64) -> String {
    format!("{} /s", thousands(per_second.round() as u64))
}

pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
