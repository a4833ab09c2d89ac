//! The terminal side of the pipeline's [`Observer`]: notes and detail on
//! stderr as `-q` and `-v` ask, and each long phase as a bar with its ETA
//! on a terminal, or as a line every few seconds in a log or pipe.

use crate::output::Verbosity;
use clflow_pipeline::{Counts, Level, Observer, Phase};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::sync::{Arc, Condvar, Mutex};
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

    fn phase(&self, name: &str, counts: Counts) -> Box<dyn Phase + '_> {
        if *self < Verbosity::Normal {
            return Box::new(clflow_pipeline::Silent);
        }
        if std::io::stderr().is_terminal() {
            return Box::new(Bar(bar(name, counts)));
        }
        Box::new(LogLines::new(name, counts))
    }
}

fn bar(name: &str, counts: Counts) -> ProgressBar {
    let bar = ProgressBar::new(0);
    let done = match counts {
        Counts::Steps => "{pos}/{len}",
        Counts::ExpectedMillis => "{percent:>3}%",
    };
    let template = format!("{{prefix:>10}} {{bar:30}} {done} {{elapsed}} eta {{eta}} {{msg}}");
    bar.set_style(ProgressStyle::with_template(&template).expect("the template is valid"));
    bar.set_prefix(name.to_string());
    // The elapsed time moves on through a long step.
    bar.enable_steady_tick(Duration::from_secs(1));
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

/// A phase in a log: a line every [`LOG_EVERY`] with how far it is and
/// the time left at the rate so far, from a thread of its own so that a
/// long step is no silence.
struct LogLines {
    shared: Arc<Shared>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

struct Shared {
    name: String,
    counts: Counts,
    started: Instant,
    state: Mutex<LogState>,
    ended: Condvar,
    /// Stderr as it was when the phase began: a runtime's build captures
    /// the process's stderr for its compiler's chatter, which would
    /// swallow a line the ticker writes meanwhile.
    out: Option<std::fs::File>,
}

struct LogState {
    total: u64,
    done: u64,
    message: String,
    last: Instant,
    ended: bool,
}

impl LogLines {
    fn new(name: &str, counts: Counts) -> Self {
        let now = Instant::now();
        let shared = Arc::new(Shared {
            name: name.to_string(),
            counts,
            started: now,
            state: Mutex::new(LogState {
                total: 0,
                done: 0,
                message: String::new(),
                last: now,
                ended: false,
            }),
            ended: Condvar::new(),
            out: std::io::stderr()
                .as_fd()
                .try_clone_to_owned()
                .ok()
                .map(std::fs::File::from),
        });
        let ticking = Arc::clone(&shared);
        let ticker = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || ticking.tick())
            .ok();
        LogLines { shared, ticker }
    }

    fn update(&self, change: impl FnOnce(&mut LogState)) {
        if let Ok(mut state) = self.shared.state.lock() {
            change(&mut state);
            self.shared.say_if_due(&mut state);
        }
    }
}

impl Shared {
    /// Says how far the phase is where the last line is [`LOG_EVERY`] old.
    fn say_if_due(&self, state: &mut LogState) {
        if state.last.elapsed() < LOG_EVERY {
            return;
        }
        state.last = Instant::now();
        let elapsed = self.started.elapsed().as_secs_f64();
        let line = log_line(&self.name, self.counts, state, elapsed);
        match &self.out {
            Some(out) => {
                let mut out: &std::fs::File = out;
                let _ = writeln!(out, "{line}");
            }
            None => eprintln!("{line}"),
        }
    }

    /// Wakes every second until the phase ends, saying how far it is when due.
    fn tick(&self) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        while !state.ended {
            self.say_if_due(&mut state);
            match self.ended.wait_timeout(state, Duration::from_secs(1)) {
                Ok((next, _)) => state = next,
                Err(_) => return,
            }
        }
    }
}

impl Drop for LogLines {
    fn drop(&mut self) {
        if let Ok(mut state) = self.shared.state.lock() {
            state.ended = true;
        }
        self.shared.ended.notify_all();
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
    }
}

/// `count: 3/8 after 12 s, eta 20 s interpreting hash` (or `bench: 23 %
/// after ...` where the phase counts expected work): the time left at the
/// rate so far, once there is a rate.
fn log_line(name: &str, counts: Counts, state: &LogState, elapsed: f64) -> String {
    let eta = (state.done > 0 && state.total > state.done)
        .then(|| elapsed / state.done as f64 * (state.total - state.done) as f64);
    let eta = eta.map(|s| format!(", eta {s:.0} s")).unwrap_or_default();
    let done = match counts {
        Counts::Steps => format!("{}/{}", state.done, state.total),
        Counts::ExpectedMillis => {
            format!(
                "{} %",
                (100 * state.done).checked_div(state.total).unwrap_or(0)
            )
        }
    };
    format!("{name}: {done} after {elapsed:.0} s{eta} {}", state.message)
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
            ended: false,
        };
        assert_eq!(
            log_line("count", Counts::Steps, &state, 4.0),
            "count: 0/8 after 4 s interpreting hash"
        );
        state.done = 2;
        assert_eq!(
            log_line("count", Counts::Steps, &state, 12.0),
            "count: 2/8 after 12 s, eta 36 s interpreting hash"
        );
        state.done = 8;
        state.message.clear();
        assert_eq!(
            log_line("bench", Counts::Steps, &state, 20.0),
            "bench: 8/8 after 20 s"
        );
        state.total = 400_000;
        state.done = 100_000;
        state.message = "34/166 copy/uint8".into();
        assert_eq!(
            log_line("bench", Counts::ExpectedMillis, &state, 30.0),
            "bench: 25 % after 30 s, eta 90 s 34/166 copy/uint8"
        );
    }
}
