//! Where the store lives, and what a record knows about its surroundings
//! (the git commit it was made at, the time).

use crate::error::{HistoryError, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Names the store file itself.
pub const STORE_ENV: &str = "CLFLOW_STORE";
/// Names clflow's data directory (shared with the measured device profiles).
pub const DATA_DIR_ENV: &str = "CLFLOW_DATA_DIR";
pub const FILE_NAME: &str = "history.sqlite";

/// The store to use: `explicit` (`--store`), else `$CLFLOW_STORE`, else
/// `$CLFLOW_DATA_DIR/history.sqlite`, else `$XDG_DATA_HOME/clflow/history.sqlite`,
/// else `$HOME/.local/share/clflow/history.sqlite`.
pub fn store_path(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = explicit {
        return Ok(path.to_path_buf());
    }
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    var(STORE_ENV)
        .map(PathBuf::from)
        .or_else(|| var(DATA_DIR_ENV).map(|d| PathBuf::from(d).join(FILE_NAME)))
        .or_else(|| var("XDG_DATA_HOME").map(|d| PathBuf::from(d).join("clflow").join(FILE_NAME)))
        .or_else(|| {
            var("HOME").map(|h| PathBuf::from(h).join(".local/share/clflow").join(FILE_NAME))
        })
        .ok_or(HistoryError::NoLocation)
}

/// The commit checked out in the repository holding `dir`, if it is in one
/// and git is installed.
pub fn git_commit(dir: &Path) -> Option<String> {
    let output = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let commit = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (output.status.success() && !commit.is_empty()).then_some(commit)
}

/// Seconds since the Unix epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_path_wins() {
        let path = store_path(Some(Path::new("/tmp/x.sqlite"))).unwrap();
        assert_eq!(path, PathBuf::from("/tmp/x.sqlite"));
    }

    #[test]
    fn a_directory_outside_any_repository_has_no_commit() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(git_commit(dir.path()), None);
    }
}
