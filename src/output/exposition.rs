//! The Prometheus text exposition format (0.0.4), written: families
//! (`# HELP`, `# TYPE`), samples with escaped label values, numbers as
//! Prometheus reads them. Used by a crawl's metrics (`metrics.rs`) and a
//! cluster crawl's (`crate::cluster::metrics`).
//!
//! Not which numbers are written, nor their names.

use std::fmt::Write;

/// A value as Prometheus writes it.
pub(crate) trait Value {
    fn write(&self, out: &mut String);
}

impl Value for u64 {
    fn write(&self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

impl Value for f64 {
    fn write(&self, out: &mut String) {
        if self.is_finite() {
            let _ = write!(out, "{self}");
        } else if self.is_nan() {
            out.push_str("NaN");
        } else if *self > 0.0 {
            out.push_str("+Inf");
        } else {
            out.push_str("-Inf");
        }
    }
}

/// The text being written.
#[derive(Default)]
pub(crate) struct Text(String);

impl Text {
    /// The text written.
    pub(crate) fn into_string(self) -> String {
        self.0
    }

    /// A family's `# HELP` and `# TYPE` lines.
    pub(crate) fn family(&mut self, name: &str, kind: &str, help: &str) {
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.0, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    /// One sample line.
    pub(crate) fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Value) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (label, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{label}=\"{}\"", escape(v));
            }
            self.0.push('}');
        }
        self.0.push(' ');
        value.write(&mut self.0);
        self.0.push('\n');
    }

    /// A family of one unlabelled counter.
    pub(crate) fn counter(&mut self, name: &str, help: &str, value: impl Value) {
        self.family(name, "counter", help);
        self.sample(name, &[], value);
    }

    /// A family of one unlabelled gauge.
    pub(crate) fn gauge(&mut self, name: &str, help: &str, value: impl Value) {
        self.family(name, "gauge", help);
        self.sample(name, &[], value);
    }
}

/// A label value escaped: backslash, double quote, line feed.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
