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

/// What a kernel printed (printf), as the interpreter ran it: on stdout
/// before clflow's report, or on stderr with `--json`, so that stdout stays
/// one JSON document. Its bytes go out as they are; a last line left open
/// is closed, so that what follows starts on a line of its own.
pub fn print_kernel_output(bytes: &[u8], json: bool) -> crate::Result<()> {
    use std::io::Write;
    if bytes.is_empty() {
        return Ok(());
    }
    let close = if bytes.ends_with(b"\n") {
        &b""[..]
    } else {
        b"\n"
    };
    let written = if json {
        let mut err = std::io::stderr().lock();
        err.write_all(bytes).and_then(|_| err.write_all(close))
    } else {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)
            .and_then(|_| out.write_all(close))
            .and_then(|_| out.flush())
    };
    written.map_err(|e| {
        crate::failure::Failure::analysis(format!("cannot write the kernel's printf output: {e}"))
    })
}
