//! The terminal side of the pipeline's [`Observer`]: notes and detail on
//! stderr as `-q` and `-v` ask, and each long phase as a bar with its ETA
//! on a terminal, or as a line every few seconds in a log or pipe.

use crate::output::Verbosity;
use clflow_pipeline::{Level, Observer, Phase};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

impl Observer for Verbosity {
    fn say(&self, level: Level, message: &str) {
        let wanted = match level {
            Level::Error => Verbosity::Quiet,
            Level::Note => Verbosity::Normal,
            Level::Detail => Verbosity::Verbose,
        };
        if *self >= wanted {
            eprintln!("{message}");
        }
    }

    fn phase(&self, name: &str) -> Box<dyn Phase + '_> {
        if *self < Verbosity::Normal {
            return Box::new(clflow_pipeline::Silent);
        }
        if std::io::stderr().is_terminal() {
            return Box::new(Bar(bar(name)));
        }
        Box::new(LogLines::new(name))
    }
}

fn bar(name: &str) -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>10} {bar:30} {pos}/{len} {elapsed} eta {eta} {msg}")
            .expect("the template is valid"),
    );
    bar.set_prefix(name.to_string());
    bar
}

/// A phase drawn as a bar, cleared when it ends.
struct Bar(ProgressBar);

impl Phase for Bar {
    fn set_length(&self, total: u64) {
        self.0.set_length(total);
    }
    fn set_position(&self, done: u64) {
        self.0.set_position(done);
    }
    fn set_message(&self, message: &str) {
        self.0.set_message(message.to_string());
    }
    fn suspend(&self, f: &mut dyn FnMut()) {
        self.0.suspend(f);
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// How often a phase says how far it is when no bar can be drawn.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// A phase in a log: a line every [`LOG_EVERY`] with the steps done and
/// the time left at the rate so far.
struct LogLines {
    name: String,
    started: Instant,
    state: Mutex<LogState>,
}

struct LogState {
    total: u64,
    done: u64,
    message: String,
    last: Instant,
}

impl LogLines {
    fn new(name: &str) -> Self {
        let now = Instant::now();
        LogLines {
            name: name.to_string(),
            started: now,
            state: Mutex::new(LogState {
                total: 0,
                done: 0,
                message: String::new(),
                last: now,
            }),
        }
    }

    fn update(&self, change: impl FnOnce(&mut LogState)) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        change(&mut state);
        if state.last.elapsed() < LOG_EVERY {
            return;
        }
        state.last = Instant::now();
        let line = log_line(&self.name, &state, self.started.elapsed().as_secs_f64());
        eprintln!("{line}");
    }
}

/// `count: 3/8 after 12 s, eta 20 s interpreting hash`: the time left at
/// the rate so far, once there is a rate.
fn log_line(name: &str, state: &LogState, elapsed: f64) -> String {
    let eta = (state.done > 0 && state.total > state.done)
        .then(|| elapsed / state.done as f64 * (state.total - state.done) as f64);
    let eta = eta.map(|s| format!(", eta {s:.0} s")).unwrap_or_default();
    format!(
        "{name}: {}/{} after {elapsed:.0} s{eta} {}",
        state.done, state.total, state.message
    )
    .trim_end()
    .to_string()
}

impl Phase for LogLines {
    fn set_length(&self, total: u64) {
        self.update(|s| s.total = total);
    }
    fn set_position(&self, done: u64) {
        self.update(|s| s.done = done);
    }
    fn set_message(&self, message: &str) {
        self.update(|s| s.message = message.to_string());
    }
    fn suspend(&self, f: &mut dyn FnMut()) {
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_give_the_time_left_at_the_rate_so_far() {
        let mut state = LogState {
            total: 8,
            done: 0,
            message: "interpreting hash".into(),
            last: Instant::now(),
        };
        assert_eq!(
            log_line("count", &state, 4.0),
            "count: 0/8 after 4 s interpreting hash"
        );
        state.done = 2;
        assert_eq!(
            log_line("count", &state, 12.0),
            "count: 2/8 after 12 s, eta 36 s interpreting hash"
        );
        state.done = 8;
        state.message.clear();
        assert_eq!(log_line("bench", &state, 20.0), "bench: 8/8 after 20 s");
    }
}
