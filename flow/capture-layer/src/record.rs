//! What the layer writes for each captured launch (`launch-NNNN.json` in
//! the capture's raw directory), and how `clflow capture` reads it back.
//! Buffers travel as raw files beside it.

use serde::{Deserialize, Serialize};

/// The environment variable naming the directory the layer writes to.
pub const DIR_ENV: &str = "CLFLOW_CAPTURE_DIR";
/// Kernel-name globs to capture, comma-separated (`*` and `?`); all when unset.
pub const KERNELS_ENV: &str = "CLFLOW_CAPTURE_KERNELS";
/// Which launches of each kernel to capture ([`LaunchSelection`]); all
/// when unset.
pub const LAUNCHES_ENV: &str = "CLFLOW_CAPTURE_LAUNCHES";
/// The most bytes of buffer contents a capture writes; unbounded when unset.
pub const MAX_BYTES_ENV: &str = "CLFLOW_CAPTURE_MAX_BYTES";
/// The suffix of the note the layer leaves for a launch it did not record
/// (`launch-NNNNNN.skipped`), whose text says why.
pub const SKIPPED_SUFFIX: &str = "skipped";

/// One program the application built.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProgramRecord {
    pub id: u32,
    /// `program-N.cl` (all source strings, in order), or `None` for a
    /// program made from a binary or IL, which clflow cannot analyse.
    pub source_file: Option<String>,
    /// Why the program cannot be analysed, where it cannot.
    pub not_analysable: Option<String>,
    pub build_options: String,
}

/// One kernel argument as the application set it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ArgRecord {
    /// A buffer: its contents before the launch in `file`, after it in
    /// `output_file`; its creation flags say how the kernel may use it.
    Buffer {
        bytes: u64,
        file: String,
        output_file: Option<String>,
        read_only: bool,
        write_only: bool,
    },
    /// Bytes passed by value (a scalar, a vector, a struct).
    Value { bytes: Vec<u8> },
    /// A NULL value of this size: a `__local` block of `size` bytes, or a
    /// NULL buffer, as the kernel's signature tells.
    NullValue { size: u64 },
    /// Something clflow does not capture (an image, a sampler, SVM), by name.
    Unsupported { what: String },
    /// Never set by the application.
    Unset,
}

/// One captured launch.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LaunchRecord {
    /// The launch's number among all launches the application made (from 0).
    pub sequence: u64,
    pub kernel: String,
    /// The launch's number among this kernel's launches (from 0).
    pub index: u64,
    pub program: u32,
    pub global_offset: Vec<u64>,
    pub global_size: Vec<u64>,
    /// `None` where the application left it to the runtime.
    pub local_size: Option<Vec<u64>>,
    pub args: Vec<ArgRecord>,
    /// The kernel's device time from profiling events, where the queue
    /// profiles.
    pub device_ns: Option<u64>,
}

/// Which launches of a kernel the selection takes: `all`, `first`,
/// `every:N`, or indexes and ranges (`0,5-9`). The last launch cannot be
/// known while the application runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchSelection {
    All,
    /// Every Nth launch, from the first.
    Every(u64),
    /// These indexes and ranges (inclusive).
    Indexes(Vec<(u64, u64)>),
}

impl LaunchSelection {
    pub fn parse(text: &str) -> Result<LaunchSelection, String> {
        let text = text.trim();
        if text.is_empty() || text == "all" {
            return Ok(LaunchSelection::All);
        }
        if text == "first" {
            return Ok(LaunchSelection::Indexes(vec![(0, 0)]));
        }
        if text == "last" {
            return Err(
                "`last`: which launch is the last is known only once the application \
                        has ended; capture them all (or every:N) and take the last manifest"
                    .into(),
            );
        }
        if let Some(n) = text.strip_prefix("every:") {
            return match n.parse::<u64>() {
                Ok(n) if n > 0 => Ok(LaunchSelection::Every(n)),
                _ => Err(format!("`{text}`: every:N takes a positive N")),
            };
        }
        let mut ranges = Vec::new();
        for part in text.split(',').map(str::trim) {
            let number = |s: &str| {
                s.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("`{part}` is not a launch index or range (0,5-9)"))
            };
            let range = match part.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => (number(part)?, number(part)?),
            };
            if range.0 > range.1 {
                return Err(format!("`{part}`: a range runs from low to high"));
            }
            ranges.push(range);
        }
        Ok(LaunchSelection::Indexes(ranges))
    }

    pub fn takes(&self, index: u64) -> bool {
        match self {
            LaunchSelection::All => true,
            LaunchSelection::Every(n) => index.is_multiple_of(*n),
            LaunchSelection::Indexes(ranges) => {
                ranges.iter().any(|(a, b)| (*a..=*b).contains(&index))
            }
        }
    }
}

/// Whether `name` matches a glob of `*` (any run) and `?` (one character).
pub fn glob_matches(glob: &str, name: &str) -> bool {
    fn go(g: &[char], n: &[char]) -> bool {
        match (g.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&g[1..], n) || (!n.is_empty() && go(g, &n[1..])),
            (Some('?'), Some(_)) => go(&g[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&g[1..], &n[1..]),
            _ => false,
        }
    }
    let g: Vec<char> = glob.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&g, &n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_parse_and_take_their_launches() {
        let every = LaunchSelection::parse("every:3").unwrap();
        assert_eq!(
            (0..7).filter(|i| every.takes(*i)).collect::<Vec<_>>(),
            [0, 3, 6]
        );
        let list = LaunchSelection::parse("0,5-7").unwrap();
        assert_eq!(
            (0..10).filter(|i| list.takes(*i)).collect::<Vec<_>>(),
            [0, 5, 6, 7]
        );
        assert!(LaunchSelection::parse("first").unwrap().takes(0));
        assert!(!LaunchSelection::parse("first").unwrap().takes(1));
        assert!(LaunchSelection::parse("every:0").is_err());
        assert!(LaunchSelection::parse("3-1").is_err());
        assert!(LaunchSelection::parse("x").is_err());
    }

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_matches("hash", "hash"));
        assert!(glob_matches("h*", "hash"));
        assert!(glob_matches("*sh", "hash"));
        assert!(glob_matches("h?sh", "hash"));
        assert!(!glob_matches("h?", "hash"));
        assert!(!glob_matches("sgemm", "hash"));
    }
}
