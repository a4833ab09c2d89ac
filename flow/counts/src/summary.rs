//! One launch's counts as the later stages read them, summarised once: W
//! over the op set and its mix per class, Q, and D, the bytes the host
//! moves. Metrics, predictions and splits all start from a [`Summary`], so
//! they never disagree on what a kernel did.

use crate::{Counts, OpClass, OpSet};
use clflow_core::{Access, ArgValue, Launch};
use serde::Serialize;

/// Operations or instruction lanes per arithmetic class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PerClass {
    pub int: u64,
    pub fp32: u64,
    pub fp64: u64,
    pub fp16: u64,
}

impl PerClass {
    pub fn get(&self, class: OpClass) -> u64 {
        match class {
            OpClass::Int => self.int,
            OpClass::Fp32 => self.fp32,
            OpClass::Fp64 => self.fp64,
            OpClass::Fp16 => self.fp16,
        }
    }

    pub fn add(&mut self, class: OpClass, amount: u64) {
        let slot = match class {
            OpClass::Int => &mut self.int,
            OpClass::Fp32 => &mut self.fp32,
            OpClass::Fp64 => &mut self.fp64,
            OpClass::Fp16 => &mut self.fp16,
        };
        *slot += amount;
    }

    pub fn float(&self) -> u64 {
        self.fp32 + self.fp64 + self.fp16
    }

    pub fn total(&self) -> u64 {
        self.int + self.float()
    }

    /// The compute ceiling this work meets, the one rule every stage uses:
    /// the integer peak unless float operations outnumber integer ones,
    /// else [`PerClass::float_ceiling`].
    pub fn ceiling(&self) -> OpClass {
        if self.float() > self.int {
            self.float_ceiling()
        } else {
            OpClass::Int
        }
    }

    /// The float peak this work meets: fp64 where double-precision
    /// operations outnumber single and half ones, else fp32 (fp16 work is
    /// held to the fp32 peak: profiles state no fp16 one).
    pub fn float_ceiling(&self) -> OpClass {
        if self.fp64 > self.fp32 + self.fp16 {
            OpClass::Fp64
        } else {
            OpClass::Fp32
        }
    }
}

impl std::iter::Sum for PerClass {
    fn sum<I: Iterator<Item = PerClass>>(iter: I) -> PerClass {
        iter.fold(PerClass::default(), |mut sum, x| {
            for class in OpClass::ALL {
                sum.add(class, x.get(class));
            }
            sum
        })
    }
}

/// Bytes the host copies to the device before the launch and back after it
/// (D, the boat hull's d): read buffers in, written buffers out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HostTransfer {
    pub to_device: u64,
    pub from_device: u64,
}

impl HostTransfer {
    pub fn of(launch: &Launch) -> HostTransfer {
        let mut transfer = HostTransfer::default();
        for arg in &launch.args {
            if let ArgValue::Buffer { access, bytes, .. } = &arg.value {
                let n = bytes.len() as u64;
                match access {
                    Access::ReadOnly => transfer.to_device += n,
                    Access::WriteOnly => transfer.from_device += n,
                    Access::ReadWrite => {
                        transfer.to_device += n;
                        transfer.from_device += n;
                    }
                }
            }
        }
        transfer
    }

    pub fn total(&self) -> u64 {
        self.to_device + self.from_device
    }
}

/// What every later stage reads of one counted launch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// The op set W is over, as the user spelled it.
    pub op_set: String,
    /// W over the op set.
    pub work: u64,
    /// W over the op set, per class.
    pub mix: PerClass,
    /// Q: every global and constant load and store.
    pub accessed: u64,
    /// Q: each `line_bytes` line once (a cold cache that holds everything).
    pub compulsory: u64,
    pub line_bytes: u64,
    pub host: HostTransfer,
}

impl Summary {
    pub fn of(counts: &Counts, ops: &OpSet, launch: &Launch) -> Summary {
        let mut mix = PerClass::default();
        for (key, lanes) in counts.work.iter().filter(|(k, _)| ops.contains(k)) {
            mix.add(OpClass::of(key.ty), *lanes);
        }
        Summary {
            op_set: ops.to_string(),
            work: counts.w(ops),
            mix,
            accessed: counts.q_accessed(),
            compulsory: counts.q_compulsory(),
            line_bytes: counts.line_bytes,
            host: HostTransfer::of(launch),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(int: u64, fp32: u64, fp64: u64, fp16: u64) -> PerClass {
        PerClass { int, fp32, fp64, fp16 }
    }

    #[test]
    fn the_ceiling_is_the_class_most_of_the_work_is() {
        assert_eq!(mix(10, 5, 4, 0).ceiling(), OpClass::Int);
        assert_eq!(mix(10, 10, 0, 0).ceiling(), OpClass::Int);
        assert_eq!(mix(10, 11, 0, 0).ceiling(), OpClass::Fp32);
        assert_eq!(mix(0, 3, 4, 0).ceiling(), OpClass::Fp64);
        assert_eq!(mix(0, 2, 4, 2).ceiling(), OpClass::Fp32);
        assert_eq!(mix(0, 0, 0, 1).ceiling(), OpClass::Fp32);
        // An integer kernel is still held to a float peak where one is asked.
        assert_eq!(mix(100, 0, 1, 0).float_ceiling(), OpClass::Fp64);
        assert_eq!(
            [mix(1, 2, 0, 0), mix(3, 0, 4, 1)]
                .into_iter()
                .sum::<PerClass>(),
            mix(4, 2, 4, 1)
        );
    }
}
