//! Kernel checkers that watch the access stream as it goes by (`--detect`),
//! observers of the one execution, as the cache simulation is: with none
//! asked for, the run is untraced and as fast as ever.
//!
//! - `access` ([`access`]): a write to a read-only buffer, a read of a
//!   write-only one;
//! - `races` ([`races`]): conflicting accesses of two work-items with
//!   nothing to order them;
//! - `uninit`: a value never written, used; the interpreter follows these
//!   itself (`RunOptions::uninit`), as they go through registers;
//! - `aggregates`: an index outside an array inside a private or local
//!   variable (a struct member's, a 2-D array's row) though inside the
//!   variable; the program checks these itself
//!   (`Program::translate_checked`).

mod access;
mod races;

pub use access::AccessChecker;
pub use races::RaceChecker;

use crate::Error;
use clflow_core::numbers::group_digits;
use clflow_core::{Launch, NdRange};
use clflow_counts::{AccessKind, AccessSink, GlobalAccess, TraceBuffer};
use clflow_interp::{KeptFault, Program, TrapKind};
use serde::Serialize;
use std::str::FromStr;

/// The checkers `--detect` turns on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Detect {
    pub access: bool,
    pub races: bool,
    /// Followed by the interpreter itself (`RunOptions::uninit`), not by a
    /// checker on the access stream.
    pub uninit: bool,
    /// Checked by the program itself (`Program::translate_checked`).
    pub aggregates: bool,
}

impl Detect {
    pub const NONE: Detect = Detect {
        access: false,
        races: false,
        uninit: false,
        aggregates: false,
    };
    /// What a count checks unless told otherwise: the checkers that cost it
    /// next to nothing (`ci/bench-detect`). The others watch every access,
    /// which the compiled tier does not run.
    pub const BY_DEFAULT: Detect = Detect { aggregates: true, ..Detect::NONE };
}

impl FromStr for Detect {
    type Err = String;

    /// `access`, `races`, `uninit`, `aggregates`, `all` (every checker
    /// clflow has) or `none`, comma-separated, added to the checkers on by
    /// default (`none` turns those off too).
    fn from_str(text: &str) -> Result<Self, String> {
        let mut detect = Detect::BY_DEFAULT;
        for name in text.split(',').map(str::trim) {
            match name {
                "none" => detect = Detect::NONE,
                "access" => detect.access = true,
                "races" => detect.races = true,
                "uninit" => detect.uninit = true,
                "aggregates" => detect.aggregates = true,
                "all" => {
                    detect = Detect { access: true, races: true, uninit: true, aggregates: true }
                }
                other => {
                    return Err(format!(
                        "unknown checker `{other}`: clflow checks `access` (a write to a read-only \
                         buffer, a read of a write-only one), `races` (two work-items' accesses to \
                         the same bytes with nothing to order them), `uninit` (a value never \
                         written, used), `aggregates` (an index outside an array inside a private \
                         or local variable), `all` or `none`"
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
    /// `stop`: a fault that stopped its work-item (always caught; the run
    /// went on without it); `undefined`: what OpenCL leaves undefined and
    /// the run went through as the device does (always caught; the only
    /// kind that does not fail the count); `access`, `race` or `uninit`:
    /// what `--detect` found.
    pub kind: &'static str,
    /// `write to read-only`, `read of write-only`, `data race within a
    /// work-group`, `data race across work-groups`; for a `stop`, the whole
    /// fault (`out-of-bounds access to __global arg 0 (a): ...`).
    pub what: String,
    /// The buffer, as the interpreter names it (`__global arg 0 (a)`).
    pub buffer: String,
    /// The SPIR-V instruction (`OpStore %30 in vadd`).
    pub instruction: String,
    /// `vadd.cl:17:14`, where the module says.
    pub location: Option<String>,
    /// How many accesses did it.
    pub count: u64,
    /// The first: its work-item's global id, what it did, its offset and size.
    pub work_item: [u64; 3],
    /// For a fault the interpreter went on after, the first few work-items
    /// it stopped or that made it, the first included.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub work_items: Vec<[u64; 3]>,
    pub access: &'static str,
    pub offset: u64,
    pub bytes: u32,
    /// For a race, the access it raced with.
    pub other: Option<OtherAccess>,
}

/// The earlier access of a race.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OtherAccess {
    /// `wrote`, `read`, `atomically updated`, `atomically read`.
    pub did: &'static str,
    /// Its work-item, instruction and location, where the checker knows
    /// which access it was (it may know only that several work-items, or
    /// another work-group, made one). Where it knows only that other
    /// work-items did what this one did too, the instruction and location
    /// are this one's, and `work_item` is `None`.
    pub work_item: Option<[u64; 3]>,
    pub instruction: Option<String>,
    pub location: Option<String>,
}

impl Fault {
    /// A fault the interpreter caught and went on after: it stopped
    /// `count` work-items, `trap`'s the first; or (`uninit`) a use of an
    /// undefined value made `count` times.
    pub fn stopped(kept: &KeptFault) -> Fault {
        let (trap, count) = (&kept.trap, kept.count);
        Fault {
            kind: match trap.kind {
                TrapKind::Uninit(_) => "uninit",
                TrapKind::Undefined(_) => "undefined",
                _ => "stop",
            },
            what: trap.kind.to_string(),
            buffer: String::new(),
            instruction: trap.op.clone(),
            location: trap.location.clone(),
            count,
            work_item: trap.item,
            work_items: kept.work_items.clone(),
            access: "",
            offset: 0,
            bytes: 0,
            other: None,
        }
    }

    /// Whether it fails the count: all do but undefined behaviour the run
    /// went through, which the count reports and finishes.
    pub fn fails(&self) -> bool {
        self.kind != "undefined"
    }

    /// One line, as every other fault is written: where, who, what.
    pub fn describe(&self, kernel: &str) -> String {
        let location = self
            .location
            .as_ref()
            .map_or(String::new(), |l| format!("{l}: "));
        let more = match self.count {
            1 => String::new(),
            n => format!(" ({} such accesses)", group_digits(n)),
        };
        let head = format!(
            "{location}kernel `{kernel}`, work-item {}: {}",
            item_text(self.work_item),
            self.instruction
        );
        if matches!(self.kind, "stop" | "uninit" | "undefined") {
            let mut items: Vec<String> = self.work_items.iter().map(|i| item_text(*i)).collect();
            if self.count > items.len() as u64 {
                items.push("…".into());
            }
            let more = match (self.count, self.kind) {
                (1, _) => String::new(),
                (n, "stop") => format!(
                    " ({} work-items stopped here: {})",
                    group_digits(n),
                    items.join(", ")
                ),
                (n, "uninit") => format!(" ({} such uses: {})", group_digits(n), items.join(", ")),
                (n, _) => format!(
                    " ({} work-items did so: {})",
                    group_digits(n),
                    items.join(", ")
                ),
            };
            return format!("{head}: {}{more}", self.what);
        }
        match &self.other {
            None => format!(
                "{head}: {} {}: {} bytes at offset {}{more}",
                self.what, self.buffer, self.bytes, self.offset
            ),
            Some(other) => {
                let who = match (other.work_item, &other.instruction) {
                    (Some(item), Some(instruction)) => {
                        let at = other.location.as_deref().unwrap_or(instruction.as_str());
                        format!("work-item {} {} at {at}", item_text(item), other.did)
                    }
                    (None, Some(instruction)) => {
                        let at = other.location.as_deref().unwrap_or(instruction.as_str());
                        format!(
                            "other work-items of the work-group {}, as it did at {at}",
                            other.did
                        )
                    }
                    _ if self.what.contains("across") => {
                        format!("a work-item of another work-group {}", other.did)
                    }
                    _ => format!("other work-items of the work-group {}", other.did),
                };
                format!(
                    "{head}: {}: {} {} bytes at offset {} of {}, which {who}{more}",
                    self.what, self.access, self.bytes, self.offset, self.buffer
                )
            }
        }
    }
}

/// How a fault names each buffer of the stream: `__global arg 0 (a)`.
fn labels(buffers: &[TraceBuffer]) -> Vec<String> {
    buffers
        .iter()
        .map(|b| format!("{} {}", b.space, b.label))
        .collect()
}

fn item_text([x, y, z]: [u64; 3]) -> String {
    format!("({x},{y},{z})")
}

/// Where a fault's first access was: its work-group and local linear id,
/// made a global id once the run says its work-group size.
#[derive(Debug, Clone, Copy)]
struct Origin {
    /// The access's place in the stream: faults are listed in the order
    /// they first happened.
    seq: u64,
    group: u64,
    item: u32,
    access: &'static str,
    offset: u64,
    bytes: u32,
    count: u64,
}

impl Origin {
    fn of(seq: u64, group: u64, a: &GlobalAccess) -> Origin {
        Origin {
            seq,
            group,
            item: a.item,
            access: match (a.kind, a.atomic) {
                (AccessKind::Load, false) => "reads",
                (AccessKind::Store, false) => "writes",
                (AccessKind::Load, true) => "atomically reads",
                (AccessKind::Store, true) => "atomically writes",
                (AccessKind::Atomic, _) => "atomically updates",
            },
            offset: a.offset,
            bytes: a.bytes,
            count: 1,
        }
    }
}

/// A race's earlier access, as a checker found it.
#[derive(Debug, Clone, Copy)]
struct Counterpart {
    access: Option<Raced>,
    /// Where no access is named: the site at which the racing work-item
    /// itself made the access other work-items made too.
    like: Option<u32>,
    did: &'static str,
}

#[derive(Debug, Clone, Copy)]
struct Raced {
    site: u32,
    group: u64,
    item: u32,
}

/// A fault as a checker found it, by site and work-group.
struct Found {
    what: String,
    buffer: String,
    site: u32,
    first: Origin,
    other: Option<Counterpart>,
}

/// The run's geometry, to name work-items by their global ids.
struct Places<'a> {
    range: &'a NdRange,
    local_size: [u64; 3],
    groups: [u64; 3],
}

impl Places<'_> {
    /// The global id of local linear id `item` in work-group `group`.
    fn global_id(&self, group: u64, item: u32) -> [u64; 3] {
        let [gx, gy, _] = self.groups;
        let group = [group % gx, (group / gx) % gy, group / (gx * gy)];
        // The group's own size: a last, partial group is smaller.
        let size: [u64; 3] = std::array::from_fn(|d| {
            self.local_size[d].min(self.range.global[d] - group[d] * self.local_size[d])
        });
        let item = u64::from(item);
        let local = [
            item % size[0],
            (item / size[0]) % size[1],
            item / (size[0] * size[1]),
        ];
        std::array::from_fn(|d| group[d] * self.local_size[d] + local[d] + self.range.offset[d])
    }
}

/// The checkers a run was asked for, fed the one stream.
#[derive(Debug, Default)]
pub struct Checkers {
    access: Option<AccessChecker>,
    races: Option<RaceChecker>,
}

impl Checkers {
    /// The checkers `detect` asks for on `launch`, run by `program`;
    /// `None` for none, so that the run stays untraced.
    pub fn new(detect: Detect, launch: &Launch, program: &Program) -> Option<Checkers> {
        (detect.access || detect.races).then(|| Checkers {
            access: detect
                .access
                .then(|| AccessChecker::new(launch, program.refills())),
            races: detect.races.then(RaceChecker::default),
        })
    }

    /// Every fault found, named by `name_site` (instruction, location) and
    /// placed with the run's geometry.
    pub fn faults(
        self,
        range: &NdRange,
        local_size: [u64; 3],
        name_site: impl Fn(u32) -> (String, Option<String>),
    ) -> Vec<Fault> {
        let places = Places {
            range,
            local_size,
            groups: std::array::from_fn(|d| range.global[d].div_ceil(local_size[d].max(1))),
        };
        let found = self.access.map(AccessChecker::found).into_iter().flatten();
        let mut found: Vec<Found> = found
            .chain(self.races.map(RaceChecker::found).into_iter().flatten())
            .collect();
        found.sort_by_key(|f| f.first.seq);
        found
            .into_iter()
            .map(|f| {
                let (instruction, location) = name_site(f.site);
                Fault {
                    kind: if f.other.is_some() { "race" } else { "access" },
                    what: f.what,
                    buffer: f.buffer,
                    instruction,
                    location,
                    count: f.first.count,
                    work_item: places.global_id(f.first.group, f.first.item),
                    work_items: Vec::new(),
                    access: f.first.access,
                    offset: f.first.offset,
                    bytes: f.first.bytes,
                    other: f.other.map(|c| {
                        let site = c.access.map(|r| r.site).or(c.like).map(&name_site);
                        OtherAccess {
                            did: c.did,
                            work_item: c.access.map(|r| places.global_id(r.group, r.item)),
                            instruction: site.as_ref().map(|(i, _)| i.clone()),
                            location: site.and_then(|(_, l)| l),
                        }
                    }),
                }
            })
            .collect()
    }
}

impl AccessSink for Checkers {
    fn buffers(&mut self, buffers: &[TraceBuffer]) {
        if let Some(c) = &mut self.access {
            c.buffers(buffers);
        }
        if let Some(c) = &mut self.races {
            c.buffers(buffers);
        }
    }

    fn wants_local(&self) -> bool {
        self.races.is_some()
    }

    fn compares_stores(&self) -> bool {
        self.races.is_some()
    }

    fn stored(&mut self, fingerprints: &[u64]) {
        if let Some(c) = &mut self.races {
            c.stored(fingerprints);
        }
    }

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        if let Some(c) = &mut self.access {
            c.work_group(group, accesses);
        }
        if let Some(c) = &mut self.races {
            c.work_group(group, accesses);
        }
    }
}

/// Two sinks fed the one stream: the traffic analysis keeps the accesses,
/// the checker looks at them as they go by. Where the checker wants
/// `__local` accesses, the keeper still sees global ones only.
pub struct Tee<'a> {
    pub keeper: &'a mut dyn AccessSink,
    pub looker: &'a mut dyn AccessSink,
    /// Global buffers, where local ones follow them in the stream.
    globals: Option<u32>,
}

impl<'a> Tee<'a> {
    pub fn new(keeper: &'a mut dyn AccessSink, looker: &'a mut dyn AccessSink) -> Self {
        Tee { keeper, looker, globals: None }
    }
}

impl AccessSink for Tee<'_> {
    fn buffers(&mut self, buffers: &[TraceBuffer]) {
        self.looker.buffers(buffers);
        let globals = buffers.iter().take_while(|b| b.space != "__local").count();
        self.keeper.buffers(&buffers[..globals]);
        self.globals = (globals < buffers.len()).then_some(globals as u32);
    }

    fn wants_local(&self) -> bool {
        self.looker.wants_local()
    }

    fn compares_stores(&self) -> bool {
        self.looker.compares_stores()
    }

    fn stored(&mut self, fingerprints: &[u64]) {
        self.looker.stored(fingerprints);
    }

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        self.looker.work_group(group, accesses);
        match self.globals {
            Some(n) => {
                let global: Vec<_> = accesses
                    .iter()
                    .filter(|a| u32::from(a.buffer) < n)
                    .copied()
                    .collect();
                self.keeper.take_work_group(group, global);
            }
            None => self.keeper.work_group(group, accesses),
        }
    }

    fn take_work_group(&mut self, group: u64, mut accesses: Vec<GlobalAccess>) {
        self.looker.work_group(group, &accesses);
        if let Some(n) = self.globals {
            accesses.retain(|a| u32::from(a.buffer) < n);
        }
        self.keeper.take_work_group(group, accesses);
    }
}

/// Faults found make the analysis fail (all but undefined behaviour the
/// run went through, `Fault::fails`): the first as the error.
pub fn failure(kernel: &str, faults: &[Fault]) -> Option<Error> {
    let faults: Vec<&Fault> = faults.iter().filter(|f| f.fails()).collect();
    let first = faults.first()?;
    let more = match faults.len() {
        1 => String::new(),
        n => format!(" (the first of {n} faults)"),
    };
    let hint = if first.kind == "uninit" {
        "write the value before it is used: private memory is undefined when a work-item \
         starts, local memory when its work-group does, a `noinit` buffer until the kernel \
         writes it"
    } else if first.kind == "stop" {
        "fix the kernel or the manifest's inputs for these work-items; the run went on without \
         them, so its counts and outputs are incomplete"
    } else if faults.iter().any(|f| f.other.is_some()) {
        "order the accesses (a barrier within a work-group, atomics, or separate launches \
         across work-groups), or give each work-item bytes of its own"
    } else {
        "the launch declares these buffers' access: fix the kernel or the declaration"
    };
    Some(Error::analysis(format!("{}{more}", first.describe(kernel))).with_hint(hint))
}
