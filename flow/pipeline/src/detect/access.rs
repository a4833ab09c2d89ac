//! `access`: a write to a buffer the launch declares read-only (a manifest's
//! `access = "ro"`, a capture's `CL_MEM_READ_ONLY`), a read of a write-only
//! one. OpenCL leaves both undefined; devices differ. A compiler's refill
//! of a vector it writes some lanes of is not the kernel's read.

use super::{Found, Origin};
use clflow_core::{Access, ArgValue, Launch};
use clflow_counts::{AccessSink, GlobalAccess, TraceBuffer};
use std::collections::BTreeMap;

/// The access checker: each buffer's declared access against each access.
#[derive(Debug, Default)]
pub struct AccessChecker {
    /// By buffer index: the declared access (`None`: read-write or not a
    /// buffer of the launch).
    modes: Vec<Option<Access>>,
    labels: Vec<String>,
    /// (site, buffer, writes) → the first access and how many.
    found: BTreeMap<(u32, u32, bool), Origin>,
    /// Accesses seen.
    seen: u64,
    /// The bytecode instructions of the program's refill loads
    /// (`Program::refills`), ascending.
    refills: Vec<u32>,
}

impl AccessChecker {
    /// A checker for `launch`'s buffers (kernel arguments come first in the
    /// access stream, by index; an argument given as another's buffer has
    /// that one's index and access), run by a program whose refill loads
    /// are the bytecode instructions `refills` (ascending).
    pub fn new(launch: &Launch, refills: Vec<u32>) -> Self {
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
        AccessChecker { modes, refills, ..AccessChecker::default() }
    }

    /// What was found, in site order.
    pub(super) fn found(self) -> Vec<Found> {
        self.found
            .into_iter()
            .map(|((site, buffer, writes), first)| Found {
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
                site,
                first,
                other: None,
            })
            .collect()
    }
}

impl AccessSink for AccessChecker {
    fn buffers(&mut self, buffers: &[TraceBuffer]) {
        self.labels = super::labels(buffers);
    }

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        for a in accesses {
            self.seen += 1;
            let faulty = match self.modes.get(a.buffer as usize).copied().flatten() {
                Some(Access::ReadOnly) => a.kind.writes(),
                Some(Access::WriteOnly) => {
                    a.kind.reads() && self.refills.binary_search(&a.site).is_err()
                }
                _ => false,
            };
            if faulty {
                self.found
                    .entry((a.site, a.buffer.into(), a.kind.writes()))
                    .and_modify(|f| f.count += 1)
                    .or_insert(Origin::of(self.seen, group, a));
            }
        }
    }
}
