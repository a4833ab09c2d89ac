//! How the pipeline tells whoever runs it what it is doing: notes, detail,
//! and the progress of long phases. The library prints nothing itself; the
//! CLI draws bars on a terminal and periodic lines in a log, tests record.

use std::fmt::Display;
use std::sync::Mutex;

/// How much a message matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Part of an error, said even when asked to be quiet (a compiler's
    /// diagnostics before the error line that sums them up).
    Error,
    /// Worth saying unless asked to be quiet (a warning, a step begun).
    Note,
    /// Said only when asked for detail (commands run, files read).
    Detail,
}

/// Receives what the pipeline says while it works.
pub trait Observer: Sync {
    fn say(&self, level: Level, message: &str);
    /// A long phase begins (interpreting, benchmarking, timing launches),
    /// its length and position counted in `counts`.
    fn phase(&self, name: &str, counts: Counts) -> Box<dyn Phase + '_>;
}

/// What a phase's length and position count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counts {
    /// Steps of like size (work-groups, launches): shown as done/total.
    Steps,
    /// Milliseconds of expected work, where steps differ in length (the
    /// benchmarks): shown as a percentage, the message naming the step.
    ExpectedMillis,
}

impl dyn Observer + '_ {
    pub fn note(&self, message: impl Display) {
        self.say(Level::Note, &message.to_string());
    }

    pub fn detail(&self, message: impl Display) {
        self.say(Level::Detail, &message.to_string());
    }
}

/// The progress of one phase: steps done of a total, and what it is at.
pub trait Phase: Send + Sync {
    fn set_length(&self, total: u64);
    fn set_position(&self, done: u64);
    fn set_message(&self, message: &str);
    /// Says something without tearing a drawn bar.
    fn suspend(&self, f: &mut dyn FnMut());
}

/// Says nothing: for library users who want results only.
pub struct Silent;

impl Observer for Silent {
    fn say(&self, _: Level, _: &str) {}
    fn phase(&self, _: &str, _: Counts) -> Box<dyn Phase + '_> {
        Box::new(Silent)
    }
}

impl Phase for Silent {
    fn set_length(&self, _: u64) {}
    fn set_position(&self, _: u64) {}
    fn set_message(&self, _: &str) {}
    fn suspend(&self, f: &mut dyn FnMut()) {
        f()
    }
}

/// Keeps every message and phase event, for tests.
#[derive(Default)]
pub struct Recorder {
    events: Mutex<Vec<String>>,
}

impl Recorder {
    /// Everything said so far, in order: `Note: …`, `Detail: …`,
    /// `phase: NAME`, then `NAME: length N`, `NAME: at N`, `NAME: message`.
    pub fn events(&self) -> Vec<String> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }

    fn push(&self, event: String) {
        if let Ok(mut events) = self.events.lock() {
            events.push(event);
        }
    }
}

impl Observer for Recorder {
    fn say(&self, level: Level, message: &str) {
        self.push(format!("{level:?}: {message}"));
    }

    fn phase(&self, name: &str, _: Counts) -> Box<dyn Phase + '_> {
        self.push(format!("phase: {name}"));
        Box::new(RecordedPhase { recorder: self, name: name.to_string() })
    }
}

struct RecordedPhase<'a> {
    recorder: &'a Recorder,
    name: String,
}

impl Phase for RecordedPhase<'_> {
    fn set_length(&self, total: u64) {
        self.recorder.push(format!("{}: length {total}", self.name));
    }
    fn set_position(&self, done: u64) {
        self.recorder.push(format!("{}: at {done}", self.name));
    }
    fn set_message(&self, message: &str) {
        self.recorder.push(format!("{}: {message}", self.name));
    }
    fn suspend(&self, f: &mut dyn FnMut()) {
        f()
    }
}
