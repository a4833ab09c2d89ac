//! What a count can know without starting the tools: memos in the cache
//! directory, each trusted only while the files it was made from are
//! unchanged (same size, same modification time to the nanosecond).
//!
//! - The tools' `--version` outputs, by each tool's path: starting three
//!   LLVM tools costs tens of milliseconds per count.
//! - A source's cache key, by its path, options and tool versions, with
//!   every file its preprocessed text names (the source and each header it
//!   includes): while none has changed, the key needs no preprocessing.
//!
//! A memo is written only for files older than [`SETTLED`]: a file written
//! within the same clock tick as the memo could change without its stamp
//! changing. A memo that cannot be read or written is simply not used.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How old a file must be for its stamp to stand for its contents.
pub const SETTLED: Duration = Duration::from_secs(2);

/// A file as its metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub path: PathBuf,
    pub modified_ns: u128,
    pub len: u64,
}

impl Stamp {
    /// The stamp of `path` as it is now (symbolic links followed).
    pub fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        Some(Stamp {
            path: path.to_path_buf(),
            modified_ns: modified.as_nanos(),
            len: meta.len(),
        })
    }

    /// Whether the file still has this stamp.
    pub fn holds(&self) -> bool {
        Stamp::of(&self.path).as_ref() == Some(self)
    }

    /// Whether it was last changed long enough ago to be trusted.
    fn settled(&self) -> bool {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        self.modified_ns + SETTLED.as_nanos() < now
    }

    fn line(&self) -> String {
        format!(
            "{}\t{}\t{}",
            self.modified_ns,
            self.len,
            hex::encode(self.path.as_os_str().as_encoded_bytes())
        )
    }

    fn parse(line: &str) -> Option<Stamp> {
        let mut fields = line.split('\t');
        let modified_ns = fields.next()?.parse().ok()?;
        let len = fields.next()?.parse().ok()?;
        let path = hex::decode(fields.next()?).ok()?;
        Some(Stamp {
            path: PathBuf::from(String::from_utf8(path).ok()?),
            modified_ns,
            len,
        })
    }
}

/// A memo file: a value, then the stamps of the files it was made from.
struct Memo {
    path: PathBuf,
}

impl Memo {
    /// The memo named by `parts` in `dir`'s `memos/`.
    fn new(dir: &Path, parts: &[&[u8]]) -> Memo {
        let mut hasher = Sha256::new();
        for part in parts {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        let name = hex::encode(hasher.finalize());
        Memo { path: dir.join("memos").join(name) }
    }

    /// The value, where every file it was made from is unchanged.
    fn read(&self) -> Option<String> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        let mut lines = text.lines();
        let value = hex::decode(lines.next()?).ok()?;
        let stamps: Option<Vec<Stamp>> = lines.map(Stamp::parse).collect();
        stamps?
            .iter()
            .all(Stamp::holds)
            .then(|| String::from_utf8(value).ok())?
    }

    /// Writes `value` made from `stamps`, where all are settled; atomically.
    fn write(&self, value: &str, stamps: &[Stamp]) {
        if stamps.is_empty() || !stamps.iter().all(Stamp::settled) {
            return;
        }
        let mut text = hex::encode(value.as_bytes());
        for stamp in stamps {
            text.push('\n');
            text.push_str(&stamp.line());
        }
        let Some(dir) = self.path.parent() else {
            return;
        };
        // A memo not written is only a memo not used.
        let _ = std::fs::create_dir_all(dir).ok().and_then(|_| {
            let mut file = tempfile::NamedTempFile::new_in(dir).ok()?;
            std::io::Write::write_all(&mut file, text.as_bytes()).ok()?;
            file.persist(&self.path).ok()
        });
    }
}

/// A tool's `--version` output, from the memo while the tool's file is
/// unchanged, else from `ask` (and memoised).
pub fn tool_version(
    dir: Option<&Path>,
    tool: &Path,
    ask: impl FnOnce() -> Result<String, crate::CompileError>,
) -> Result<String, crate::CompileError> {
    let stamp = std::fs::canonicalize(tool)
        .ok()
        .and_then(|real| Stamp::of(&real));
    let memo = dir.zip(stamp).map(|(dir, stamp)| {
        let memo = Memo::new(
            dir,
            &[b"tool version", stamp.path.as_os_str().as_encoded_bytes()],
        );
        (memo, stamp)
    });
    if let Some(version) = memo.as_ref().and_then(|(memo, _)| memo.read()) {
        return Ok(version);
    }
    let version = ask()?;
    if let Some((memo, stamp)) = memo {
        memo.write(&version, &[stamp]);
    }
    Ok(version)
}

/// The memo of a source's cache key: by what decides the key but the
/// preprocessed text (`parts`), made from the files that text names.
pub struct SourceKey {
    memo: Memo,
}

impl SourceKey {
    /// `source` as the user named it: the module's line records name it so,
    /// and the preprocessed text with them.
    pub fn new(dir: &Path, source: &Path, parts: &[&[u8]]) -> SourceKey {
        let mut all: Vec<&[u8]> = vec![b"source key", source.as_os_str().as_encoded_bytes()];
        all.extend_from_slice(parts);
        SourceKey { memo: Memo::new(dir, &all) }
    }

    /// The key, where neither the source nor anything it includes changed.
    pub fn get(&self) -> Option<String> {
        self.memo.read()
    }

    /// Remembers `key` for the files `preprocessed` names in its line
    /// markers (`# 1 "kernel.cl"`); nothing where one cannot be stamped.
    pub fn put(&self, key: &str, preprocessed: &[u8]) {
        let stamps: Option<Vec<Stamp>> = named_files(preprocessed)
            .iter()
            .map(|file| Stamp::of(&std::fs::canonicalize(file).ok()?))
            .collect();
        if let Some(stamps) = stamps {
            self.memo.write(key, &stamps);
        }
    }
}

/// The files a preprocessed text's line markers name, each once, in order.
pub fn named_files(preprocessed: &[u8]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for line in preprocessed.split(|&b| b == b'\n') {
        let Some(rest) = line.strip_prefix(b"# ") else {
            continue;
        };
        let Some(start) = rest.iter().position(|&b| b == b'"') else {
            continue;
        };
        let quoted = &rest[start + 1..];
        let Some(end) = quoted.iter().position(|&b| b == b'"') else {
            continue;
        };
        let name = String::from_utf8_lossy(&quoted[..end]);
        // clang's own: the predefined macros and the command line.
        if name.starts_with('<') {
            continue;
        }
        let path = PathBuf::from(name.replace("\\\\", "\\"));
        if !files.contains(&path) {
            files.push(path);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_markers_name_the_source_and_its_headers_once() {
        let text = b"# 1 \"k.cl\"\n# 1 \"<built-in>\" 1\n# 1 \"<command line>\" 1\n\
                     # 1 \"inc/h.h\" 1\nint x;\n# 3 \"k.cl\" 2\n__kernel void k() {}\n";
        assert_eq!(
            named_files(text),
            [PathBuf::from("k.cl"), PathBuf::from("inc/h.h")]
        );
    }

    #[test]
    fn a_memo_holds_while_its_files_are_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("k.cl");
        std::fs::write(&file, "a").unwrap();
        // Settled: as if written long ago.
        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let memo = Memo::new(dir.path(), &[b"test"]);
        memo.write("key", &[Stamp::of(&file).unwrap()]);
        assert_eq!(memo.read().as_deref(), Some("key"));
        // Changed (another size): the memo no longer stands.
        std::fs::write(&file, "ab").unwrap();
        assert_eq!(memo.read(), None);
        // A file changed just now is not memoised at all.
        let fresh = Memo::new(dir.path(), &[b"fresh"]);
        fresh.write("key", &[Stamp::of(&file).unwrap()]);
        assert_eq!(fresh.read(), None);
    }
}
