//! What each line of the kernel's source did: its operations and its bytes,
//! from the module's `OpLine`s. Every counted operation and byte belongs to
//! exactly one line, or to no line where the module says none (a phi, an
//! instruction the compiler made up), so the lines add up to the totals.

use crate::{OpClass, OpSet, Space, SpaceBytes, WorkKey};
use serde::{Deserialize, Serialize};

/// A line of a source file, as the module's `OpLine` names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourceLine {
    pub file: String,
    pub line: u32,
}

impl std::fmt::Display for SourceLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// What one line counted; `line` is `None` for what no line names.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineCounts {
    pub line: Option<SourceLine>,
    pub work: Vec<(WorkKey, u64)>,
    pub traffic: SpaceBytes,
}

impl LineCounts {
    /// W of an op set on this line.
    pub fn w(&self, set: &OpSet) -> u64 {
        work_of(&self.work, |k| set.contains(k))
    }

    /// The line's record in a count's report; `q` is the kernel's Q.
    pub fn report(&self, set: &OpSet, q: u64) -> LineReport {
        let class = |c: OpClass| work_of(&self.work, |k| set.contains(k) && OpClass::of(k.ty) == c);
        let t = &self.traffic;
        let mut report = LineReport {
            file: self.line.as_ref().map(|l| l.file.clone()),
            line: self.line.as_ref().map(|l| l.line),
            w: self.w(set),
            int: class(OpClass::Int),
            fp32: class(OpClass::Fp32),
            fp64: class(OpClass::Fp64),
            fp16: class(OpClass::Fp16),
            global_load_bytes: t.load(Space::Global),
            global_store_bytes: t.store(Space::Global),
            constant_load_bytes: t.load(Space::Constant),
            local_load_bytes: t.load(Space::Local),
            local_store_bytes: t.store(Space::Local),
            q_share: None,
        };
        report.q_share = (q > 0).then(|| report.q() as f64 / q as f64);
        report
    }
}

/// The sum of the entries `keep` takes.
pub(crate) fn work_of(work: &[(WorkKey, u64)], keep: impl Fn(&WorkKey) -> bool) -> u64 {
    work.iter().filter(|(k, _)| keep(k)).map(|(_, n)| n).sum()
}

/// One line in `clflow count --json`'s `lines`: W of the op set (and its
/// classes), the bytes it moved per space, and its share of Q. `file` and
/// `line` are null for what no line names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineReport {
    pub file: Option<String>,
    pub line: Option<u32>,
    #[serde(rename = "W")]
    pub w: u64,
    pub int: u64,
    pub fp32: u64,
    pub fp64: u64,
    pub fp16: u64,
    pub global_load_bytes: u64,
    pub global_store_bytes: u64,
    pub constant_load_bytes: u64,
    pub local_load_bytes: u64,
    pub local_store_bytes: u64,
    /// This line's global and constant bytes over Q (null where Q is 0).
    pub q_share: Option<f64>,
}

impl LineReport {
    /// Bytes of Q (global and constant, loaded and stored).
    pub fn q(&self) -> u64 {
        self.global_load_bytes + self.global_store_bytes + self.constant_load_bytes
    }

    /// `lookup3.cl:68`, the file by its name alone; `(no line)` for what no
    /// line names.
    pub fn place(&self) -> String {
        match (&self.file, self.line) {
            (Some(file), Some(n)) => {
                let name = file.rsplit('/').next().unwrap_or(file);
                format!("{name}:{n}")
            }
            _ => "(no line)".into(),
        }
    }

    /// Whether the line did anything counted.
    pub fn is_idle(&self) -> bool {
        self.w == 0 && self.q() == 0 && self.local_load_bytes + self.local_store_bytes == 0
    }
}
