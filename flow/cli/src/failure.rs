//! One line, one exit status: how every failure reaches the user.

use std::process::ExitCode;

/// A failure on its way to the terminal: the pipeline's error, which names
/// the file, line, argument or work-item at fault and, where known, what
/// to do.
pub use clflow_pipeline::Error as Failure;

pub fn report(failure: &Failure) -> ExitCode {
    eprintln!("clflow: error: {}", failure.message);
    if let Some(hint) = &failure.hint {
        eprintln!("  hint: {hint}");
    }
    ExitCode::from(failure.exit_code())
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
