//! Kernel checkers that watch the global access stream as it goes by
//! (`--detect`), observers of the one execution, as the cache simulation is:
//! with none asked for, the run is untraced and as fast as ever.
//!
//! - `access`: a write to a buffer the launch declares read-only (a
//!   manifest's `access = "ro"`, a capture's `CL_MEM_READ_ONLY`), a read of a
//!   write-only one. OpenCL leaves both undefined; devices differ.

use crate::Error;
use clflow_core::{Access, ArgValue, Launch, NdRange};
use clflow_counts::{AccessSink, GlobalAccess, TraceBuffer};
use serde::Serialize;
use std::collections::BTreeMap;
use std::str::FromStr;

/// The checkers `--detect` turns on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Detect {
    pub access: bool,
}

impl FromStr for Detect {
    type Err = String;

    /// `access`, or `all` (every checker clflow has), comma-separated.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut detect = Detect::default();
        for name in text.split(',').map(str::trim) {
            match name {
                "access" | "all" => detect.access = true,
                other => {
                    return Err(format!(
                        "unknown checker `{other}`: clflow checks `access` (a write to a read-only \
                         buffer, a read of a write-only one), or `all`"
                    ))
                }
            }
        }
        Ok(detect)
    }
}

/// One kind of fault at one instruction on one buffer, however often.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fault {
    /// `write to read-only` or `read of write-only`.
    pub what: String,
    /// The buffer, as the interpreter names it (`__global arg 0 (a)`).
    pub buffer: String,
    /// The SPIR-V instruction (`OpStore %30 in vadd`).
    pub instruction: String,
    /// `vadd.cl:17:14`, where the module says.
    pub location: Option<String>,
    /// How many accesses did it.
    pub count: u64,
    /// The first: its work-item's global id, its offset and size.
    pub work_item: [u64; 3],
    pub offset: u64,
    pub bytes: u32,
}

impl Fault {
    /// One line, as every other fault is written: where, who, what.
    pub fn describe(&self, kernel: &str) -> String {
        let [x, y, z] = self.work_item;
        let location = self
            .location
            .as_ref()
            .map_or(String::new(), |l| format!("{l}: "));
        let more = match self.count {
            1 => String::new(),
            n => format!(" ({} such accesses)", clflow_core::numbers::group_digits(n)),
        };
        format!(
            "{location}kernel `{kernel}`, work-item ({x},{y},{z}): {}: {} {}: {} bytes at offset {}{more}",
            self.instruction, self.what, self.buffer, self.bytes, self.offset
        )
    }
}

/// The first access of a fault, by work-group and local linear id; made a
/// global id once the run says its work-group size.
#[derive(Debug, Clone, Copy)]
struct First {
    group: u64,
    item: u32,
    offset: u64,
    bytes: u32,
    count: u64,
}

/// The access checker: each buffer's declared access against each access.
#[derive(Debug, Default)]
pub struct AccessChecker {
    /// By buffer index: the declared access (`None`: read-write or not a
    /// buffer of the launch).
    modes: Vec<Option<Access>>,
    labels: Vec<String>,
    /// (site, buffer, writes) → the first access and how many.
    found: BTreeMap<(u32, u32, bool), First>,
}

impl AccessChecker {
    /// A checker for `launch`'s buffers (kernel arguments come first in the
    /// access stream, by index; an argument given as another's buffer has
    /// that one's index and access).
    pub fn new(launch: &Launch) -> Self {
        let modes = launch
            .args
            .iter()
            .map(|arg| match &arg.value {
                ArgValue::Buffer { access, .. } | ArgValue::Image { access, .. } => {
                    Some(*access).filter(|a| *a != Access::ReadWrite)
                }
                _ => None,
            })
            .collect();
        AccessChecker {
            modes,
            ..AccessChecker::default()
        }
    }

    /// Every fault found, named by `name_site` (instruction, location) and
    /// placed with the run's geometry.
    pub fn faults(
        self,
        range: &NdRange,
        local_size: [u64; 3],
        name_site: impl Fn(u32) -> (String, Option<String>),
    ) -> Vec<Fault> {
        let groups: [u64; 3] =
            std::array::from_fn(|d| range.global[d].div_ceil(local_size[d].max(1)));
        self.found
            .into_iter()
            .map(|((site, buffer, writes), first)| {
                let group = [
                    first.group % groups[0],
                    (first.group / groups[0]) % groups[1],
                    first.group / (groups[0] * groups[1]),
                ];
                // The group's own size: a last, partial group is smaller.
                let size: [u64; 3] = std::array::from_fn(|d| {
                    local_size[d].min(range.global[d] - group[d] * local_size[d])
                });
                let item = u64::from(first.item);
                let local = [
                    item % size[0],
                    (item / size[0]) % size[1],
                    item / (size[0] * size[1]),
                ];
                let (instruction, location) = name_site(site);
                Fault {
                    what: if writes {
                        "write to read-only".into()
                    } else {
                        "read of write-only".into()
                    },
                    buffer: self
                        .labels
                        .get(buffer as usize)
                        .cloned()
                        .unwrap_or_default(),
                    instruction,
                    location,
                    count: first.count,
                    work_item: std::array::from_fn(|d| {
                        group[d] * local_size[d] + local[d] + range.offset[d]
                    }),
                    offset: first.offset,
                    bytes: first.bytes,
                }
            })
            .collect()
    }
}

impl AccessSink for AccessChecker {
    fn buffers(&mut self, buffers: &[TraceBuffer]) {
        self.labels = buffers
            .iter()
            .map(|b| format!("{} {}", b.space, b.label))
            .collect();
    }

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        for a in accesses {
            let faulty = match self.modes.get(a.buffer as usize).copied().flatten() {
                Some(Access::ReadOnly) => a.kind.writes(),
                Some(Access::WriteOnly) => a.kind.reads(),
                _ => false,
            };
            if faulty {
                let writes = a.kind.writes();
                self.found
                    .entry((a.site, a.buffer, writes))
                    .and_modify(|f| f.count += 1)
                    .or_insert(First {
                        group,
                        item: a.item,
                        offset: a.offset,
                        bytes: a.bytes,
                        count: 1,
                    });
            }
        }
    }
}

/// Two sinks fed the one stream: the traffic analysis keeps the accesses,
/// the checker looks at them as they go by.
pub struct Tee<'a> {
    pub keeper: &'a mut dyn AccessSink,
    pub looker: &'a mut dyn AccessSink,
}

impl AccessSink for Tee<'_> {
    fn buffers(&mut self, buffers: &[TraceBuffer]) {
        self.keeper.buffers(buffers);
        self.looker.buffers(buffers);
    }

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        self.looker.work_group(group, accesses);
        self.keeper.work_group(group, accesses);
    }

    fn take_work_group(&mut self, group: u64, accesses: Vec<GlobalAccess>) {
        self.looker.work_group(group, &accesses);
        self.keeper.take_work_group(group, accesses);
    }
}

/// Faults found make the analysis fail: one line each, the first as the
/// error, all of them on the way.
pub fn failure(kernel: &str, faults: &[Fault]) -> Option<Error> {
    let first = faults.first()?;
    let more = match faults.len() {
        1 => String::new(),
        2 => " (and 1 more fault, listed before it)".to_string(),
        n => format!(" (and {} more faults, listed before it)", n - 1),
    };
    Some(
        Error::analysis(format!("{}{more}", first.describe(kernel))).with_hint(
            "the launch declares these buffers' access: fix the kernel or the declaration",
        ),
    )
}
