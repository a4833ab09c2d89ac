//! A partial write's refill: the load a compiler makes to write some lanes
//! of a vector in memory (`v.zw = ...` at `-cl-opt-disable`): it loads the
//! whole vector, replaces the lanes and stores it back. Such a load is the
//! compiler's read, not the kernel's: its lanes only go back, each to its
//! own place, to the address they came from. The access checker does not
//! call it a read of a write-only buffer.

use super::*;

/// Where a lane of a value comes from.
#[derive(Clone, Copy, PartialEq)]
enum Lane {
    /// Anything but a watched load.
    Other,
    /// Lane `lane` of the vector load whose result is `load`.
    Loaded { load: Word, lane: u32 },
}

impl Lane {
    fn load(self) -> Option<Word> {
        match self {
            Lane::Loaded { load, .. } => Some(load),
            Lane::Other => None,
        }
    }
}

/// What is known of the lanes of a function's values as its instructions
/// go by.
#[derive(Default)]
struct Lanes {
    of: HashMap<Word, Vec<Lane>>,
    /// Vector values' widths, from their types.
    width: HashMap<Word, usize>,
}

impl Lanes {
    fn all(&self, id: Word) -> Vec<Lane> {
        self.of
            .get(&id)
            .cloned()
            .unwrap_or_else(|| vec![Lane::Other; self.width(id)])
    }

    fn one(&self, id: Word, k: u32) -> Lane {
        self.of
            .get(&id)
            .and_then(|l| l.get(k as usize).copied())
            .unwrap_or(Lane::Other)
    }

    fn width(&self, id: Word) -> usize {
        self.width.get(&id).copied().unwrap_or(1)
    }

    /// Every watched load `id`'s lanes come from.
    fn loads(&self, id: Word) -> impl Iterator<Item = Word> + '_ {
        self.of
            .get(&id)
            .into_iter()
            .flatten()
            .filter_map(|lane| lane.load())
    }
}

/// Adds to `into` the result ids of `func`'s vector loads whose lanes only
/// go back, each to its own lane, by stores to the pointer they were loaded
/// from that replace at least one other lane.
pub(super) fn refills(func: &Function, types: &impl RegisterTypes, into: &mut HashSet<Word>) {
    let mut lanes = Lanes::default();
    // Vector load result → the pointer it read.
    let mut loads: HashMap<Word, Word> = HashMap::new();
    let mut read: HashSet<Word> = HashSet::new();
    let mut refilled: HashSet<Word> = HashSet::new();
    for inst in func.blocks.iter().flat_map(|b| &b.instructions) {
        let id = |k: usize| inst.operands.get(k).and_then(Operand::id_ref_any);
        let literal = |k: usize| match inst.operands.get(k) {
            Some(Operand::LiteralBit32(v)) => Some(*v),
            _ => None,
        };
        if let (Some(rid), Some(ty)) = (inst.result_id, inst.result_type) {
            if let Ok((_, n)) = types.lanes(ty) {
                lanes.width.insert(rid, n as usize);
            }
        }
        let derived = match (inst.class.opcode, inst.result_id) {
            (S::Load, Some(rid)) if lanes.width(rid) > 1 => id(0).map(|ptr| {
                loads.insert(rid, ptr);
                (0..lanes.width(rid) as u32)
                    .map(|lane| Lane::Loaded { load: rid, lane })
                    .collect()
            }),
            (S::CompositeExtract, Some(_)) if inst.operands.len() == 2 => id(0)
                .zip(literal(1))
                .map(|(vector, k)| vec![lanes.one(vector, k)]),
            (S::CompositeInsert, Some(_)) if inst.operands.len() == 3 => {
                id(1).zip(literal(2)).map(|(vector, k)| {
                    let object = id(0).map_or(Lane::Other, |o| lanes.one(o, 0));
                    let mut out = lanes.all(vector);
                    if let Some(slot) = out.get_mut(k as usize) {
                        *slot = object;
                    }
                    out
                })
            }
            (S::VectorShuffle, Some(_)) => id(0).zip(id(1)).map(|(a, b)| {
                let (a, b) = (lanes.all(a), lanes.all(b));
                (2..inst.operands.len())
                    .map(|k| match literal(k).map(|c| c as usize) {
                        Some(c) if c < a.len() => a[c],
                        Some(c) => b.get(c - a.len()).copied().unwrap_or(Lane::Other),
                        None => Lane::Other,
                    })
                    .collect()
            }),
            // Lane by lane one of the two: where one is a load's lane and
            // the other something else, the load's (in place or replaced,
            // either way no read).
            (S::Select, Some(_)) if inst.operands.len() == 3 => id(1).zip(id(2)).map(|(a, b)| {
                if let Some(cond) = id(0) {
                    read.extend(lanes.loads(cond));
                }
                let (a, b) = (lanes.all(a), lanes.all(b));
                a.iter()
                    .zip(&b)
                    .map(|(x, y)| match (*x, *y) {
                        (x, y) if x == y => x,
                        (x, Lane::Other) => x,
                        (Lane::Other, y) => y,
                        (x, y) => {
                            read.extend([x, y].into_iter().filter_map(Lane::load));
                            Lane::Other
                        }
                    })
                    .collect()
            }),
            (S::Store, _) => {
                if let (Some(ptr), Some(value)) = (id(0), id(1)) {
                    store(&lanes.all(value), ptr, &loads, &mut refilled, &mut read);
                }
                None
            }
            _ => {
                for used in inst.operands.iter().filter_map(Operand::id_ref_any) {
                    read.extend(lanes.loads(used));
                }
                None
            }
        };
        if let (Some(rid), Some(derived)) = (inst.result_id, derived) {
            lanes.of.insert(rid, derived);
        }
    }
    into.extend(refilled.into_iter().filter(|l| !read.contains(l)));
}

/// A store of a value with lanes `value` to `ptr`: a load whose lanes it
/// puts back in place beside a replaced one is refilled; any other lane of
/// a load it stores (moved, to another address, or the whole vector back
/// unchanged) was read.
fn store(
    value: &[Lane],
    ptr: Word,
    loads: &HashMap<Word, Word>,
    refilled: &mut HashSet<Word>,
    read: &mut HashSet<Word>,
) {
    for (j, lane) in value.iter().enumerate() {
        let Lane::Loaded { load, lane } = *lane else {
            continue;
        };
        let in_place = lane as usize == j && loads.get(&load) == Some(&ptr);
        let replaced = value
            .iter()
            .enumerate()
            .any(|(k, l)| *l != Lane::Loaded { load, lane: k as u32 });
        if in_place && replaced {
            refilled.insert(load);
        } else {
            read.insert(load);
        }
    }
}
