//! Reading sysfs below a chosen root, so that the RAPL and hwmon readers run
//! unchanged on the real `/sys` and on fixture trees in the same format.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

type ReadFn = dyn Fn(&Path) -> io::Result<String> + Send + Sync;

/// A file-system root holding `sys/class/...`: `/` on a live system.
#[derive(Clone)]
pub struct SysRoot {
    root: PathBuf,
    read: Arc<ReadFn>,
}

impl std::fmt::Debug for SysRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SysRoot").field("root", &self.root).finish()
    }
}

impl SysRoot {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        SysRoot {
            root: root.into(),
            read: Arc::new(|path: &Path| std::fs::read_to_string(path)),
        }
    }

    /// The live system.
    pub fn system() -> Self {
        SysRoot::new("/")
    }

    /// Reads files through `read` instead of the file system: how tests
    /// reproduce what an unprivileged user sees (root reads any file).
    pub fn with_reader(
        root: impl Into<PathBuf>,
        read: impl Fn(&Path) -> io::Result<String> + Send + Sync + 'static,
    ) -> Self {
        SysRoot { root: root.into(), read: Arc::new(read) }
    }

    /// `root/relative`.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// A sysfs file's contents, trimmed.
    pub fn read(&self, path: &Path) -> io::Result<String> {
        (self.read)(path).map(|s| s.trim().to_string())
    }

    /// A sysfs file holding one unsigned integer.
    pub fn read_u64(&self, path: &Path) -> io::Result<u64> {
        let text = self.read(path)?;
        text.parse().map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("expected an unsigned integer, found '{text}'"),
            )
        })
    }

    /// The entries of a directory below the root, sorted by name, each with
    /// its name; empty when the directory does not exist.
    pub fn list(&self, relative: &str) -> Vec<(String, PathBuf)> {
        let Ok(entries) = std::fs::read_dir(self.path(relative)) else {
            return Vec::new();
        };
        let mut out: Vec<(String, PathBuf)> = entries
            .filter_map(|e| e.ok())
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect();
        out.sort_by_key(|(name, _)| natural_key(name));
        out
    }
}

/// Sorts "hwmon10" after "hwmon9".
fn natural_key(name: &str) -> (String, u64, String) {
    let digits_at = name
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(name.len());
    let (head, tail) = name.split_at(digits_at);
    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
    let rest = tail[digits.len()..].to_string();
    (head.to_string(), digits.parse().unwrap_or(0), rest)
}

/// How an I/O error reads to the user, with the usual sysfs cause spelled out.
pub(crate) fn explain(path: &Path, err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::PermissionDenied => format!(
            "{} is not readable by this user (permission denied); read it as root or \
             grant read access (e.g. `chmod a+r`)",
            path.display()
        ),
        _ => format!("{}: {err}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_their_number() {
        let mut names = vec!["hwmon10", "hwmon9", "hwmon1"];
        names.sort_by_key(|n| natural_key(n));
        assert_eq!(names, ["hwmon1", "hwmon9", "hwmon10"]);
    }
}
