//! How much to say on stderr, and the single way results reach stdout.

use clflow_pipeline::{Level, Observer};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    Quiet,
    Normal,
    Verbose,
}

impl Verbosity {
    pub fn from_flags(quiet: bool, verbose: bool) -> Self {
        match (quiet, verbose) {
            (true, _) => Verbosity::Quiet,
            (_, true) => Verbosity::Verbose,
            _ => Verbosity::Normal,
        }
    }

    /// Progress and notes, on stderr so that stdout stays parseable
    /// (the observer's rule, `terminal.rs`).
    pub fn note(self, message: impl std::fmt::Display) {
        self.say(Level::Note, &message.to_string());
    }

    /// Detail shown only with `-v`.
    pub fn detail(self, message: impl std::fmt::Display) {
        self.say(Level::Detail, &message.to_string());
    }
}

/// Machine-readable output: pretty JSON on stdout, one document per command.
pub fn print_json<T: Serialize>(value: &T) -> crate::Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| crate::failure::Failure::analysis(format!("cannot encode JSON: {e}")))?;
    println!("{text}");
    Ok(())
}
