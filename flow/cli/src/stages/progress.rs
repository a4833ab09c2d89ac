//! Progress bars for the long phases (interpretation, benchmarks, timed
//! launches): drawn on a terminal's stderr only, never into a pipe or a
//! log, and not at all with `-q`.

use crate::output::Verbosity;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

fn visible(verbosity: Verbosity) -> bool {
    verbosity >= Verbosity::Normal && std::io::stderr().is_terminal()
}

/// A bar of `len` steps, or a hidden one.
pub fn bar(verbosity: Verbosity, len: u64, prefix: &str) -> ProgressBar {
    if !visible(verbosity) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>10} {bar:30} {pos}/{len} {elapsed} {msg}")
            .expect("the template is valid"),
    );
    bar.set_prefix(prefix.to_string());
    bar
}

/// A spinner for a phase whose length is unknown (interpreting a kernel).
pub fn spinner(verbosity: Verbosity, prefix: &str, message: &str) -> ProgressBar {
    if !visible(verbosity) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{prefix:>10} {spinner} {elapsed} {msg}")
            .expect("the template is valid"),
    );
    bar.set_prefix(prefix.to_string());
    bar.set_message(message.to_string());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}
