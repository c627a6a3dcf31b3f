//! A scenario of BENCHMARKS.md as the runner sees it: the name `--only`
//! picks it by, and a run that starts what it measures (most start a
//! `redis-server` of their own) and returns its rows of the report.

use std::future::Future;
use std::pin::Pin;

use crate::report::Row;

/// A scenario's run, to its rows.
pub type Rows<'a> = Pin<Box<dyn Future<Output = Vec<Row>> + 'a>>;

/// What the runner and the scenarios share.
#[derive(Default)]
pub struct Context {
    /// A scenario saw what must fail the run (the soak: a value lost or
    /// handled twice); the benchmark then exits with 1.
    pub violation: bool,
}

pub trait Scenario {
    /// Its name for `--only`.
    fn name(&self) -> &'static str;

    /// Whether `--only NAME` runs it: by its own name, unless it says more.
    fn selected_by(&self, name: &str) -> bool {
        name == self.name()
    }

    /// Whether it runs when `--only` is not given (every one but the soak).
    fn by_default(&self) -> bool {
        true
    }

    /// Measures, and returns its rows.
    fn run<'a>(&'a self, ctx: &'a mut Context) -> Rows<'a>;
}
