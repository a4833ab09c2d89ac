//! One line, one exit status: how every failure reaches the user.

use clflow_core::FailureKind;
use std::fmt::Display;
use std::process::ExitCode;

/// A failure on its way to the terminal: what went wrong (naming the file,
/// line, argument or work-item at fault) and, where we know it, what to do.
#[derive(Debug)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
    pub hint: Option<String>,
}

impl Failure {
    pub fn input(message: impl Display) -> Self {
        Failure {
            kind: FailureKind::Input,
            message: message.to_string(),
            hint: None,
        }
    }

    pub fn analysis(message: impl Display) -> Self {
        Failure {
            kind: FailureKind::Analysis,
            message: message.to_string(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Display) -> Self {
        self.hint = Some(hint.to_string());
        self
    }

    pub fn report(&self) -> ExitCode {
        eprintln!("clflow: error: {}", self.message);
        if let Some(hint) = &self.hint {
            eprintln!("  hint: {hint}");
        }
        ExitCode::from(self.kind.exit_code())
    }
}

/// clap's own usage errors exit 2, its help and version output 0.
pub fn clap_exit(err: clap::Error) -> ExitCode {
    let code = if err.use_stderr() { 2 } else { 0 };
    let _ = err.print();
    ExitCode::from(code)
}

/// A panic is a clflow bug; the user gets one line saying so, not a backtrace.
pub fn install_panic_hook() {
    if std::env::var_os("RUST_BACKTRACE").is_some() {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        eprintln!(
            "clflow: internal error: {payload}{location}; this is a clflow bug, please report it (RUST_BACKTRACE=1 shows where)"
        );
        std::process::exit(1);
    }));
}
