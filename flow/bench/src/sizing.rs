//! How big each benchmark runs, from what the device says about itself.
//!
//! Bandwidth buffers must dwarf the last-level cache (or the kernel times
//! the cache), yet fit the allocation limit and leave global memory room
//! for three arrays. Compute kernels need enough work-items to fill every
//! compute unit many times over, and enough repetitions that a launch
//! lasts long enough to time well.

use crate::catalog::{Unroll, STREAM_PER_ITEM, WIDTHS};
use clflow_ocl::DeviceInfo;
use serde::{Deserialize, Serialize};

const MIB: u64 = 1 << 20;

/// The most arrays a stream kernel uses (add and triad).
const MOST_STREAM_ARRAYS: u64 = 3;

/// Stream buffer sizes are multiples of this: 16-lane 8-byte elements,
/// STREAM_PER_ITEM per work-item, work-item counts a multiple of 1024, so
/// that every width divides them and any work-group size up to 1024 fits.
const STREAM_GRANULE: u64 = 16 * 8 * STREAM_PER_ITEM * 1024;

/// Full runs for a profile, or quick ones for tests and smoke checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Full,
    Quick,
}

impl Mode {
    /// Quick where `quick` (a `--quick` flag), else full.
    pub fn quick_if(quick: bool) -> Mode {
        if quick {
            Mode::Quick
        } else {
            Mode::Full
        }
    }

    /// The vector widths benchmarks run at. Quick runs keep the scalar and
    /// one vector width: every kernel is still built and run, in a fraction
    /// of the runtime's first-time compilation.
    pub fn widths(self) -> &'static [u8] {
        match self {
            Mode::Full => &WIDTHS,
            Mode::Quick => &[1, 4],
        }
    }
}

/// The sizes and counts every benchmark of one run uses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub mode: Mode,
    /// Bytes of each array of a bandwidth kernel.
    pub stream_bytes: u64,
    /// Work-items of a compute kernel.
    pub compute_work_items: u64,
    pub unroll: Unroll,
    /// How long a compute launch should last once its repetitions are
    /// calibrated, in nanoseconds.
    pub compute_target_ns: u64,
    /// Untimed launches before the timed ones (JIT, first-touch, clocks).
    pub warmups: usize,
    /// Timed launches per benchmark.
    pub repetitions: usize,
}

/// Why a device cannot be benchmarked at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooSmall {
    pub needed: u64,
    pub available: u64,
}

/// The unroll every compute kernel is built with: 16 independent chains
/// cover a 4-cycle multiply-add latency on 2 pipes with room to spare, and
/// 16 rounds give 256 updates per repetition against the loop's overhead.
pub const UNROLL: Unroll = Unroll { chains: 16, rounds: 16 };

impl Plan {
    pub fn for_device(device: &DeviceInfo, mode: Mode) -> Result<Self, TooSmall> {
        let compute_units = u64::from(device.compute_units.max(1));
        let stream_bytes = stream_bytes(device, mode)?;
        Ok(match mode {
            Mode::Full => Plan {
                mode,
                stream_bytes,
                compute_work_items: compute_units * 4096,
                unroll: UNROLL,
                compute_target_ns: 50_000_000,
                warmups: 1,
                repetitions: 6,
            },
            Mode::Quick => Plan {
                mode,
                stream_bytes,
                compute_work_items: compute_units * 256,
                unroll: UNROLL,
                compute_target_ns: 2_000_000,
                warmups: 1,
                repetitions: 3,
            },
        })
    }

    /// Vector elements per array of a stream kernel whose elements are
    /// `element_bytes` wide.
    pub fn stream_elements(&self, element_bytes: u64) -> u64 {
        self.stream_bytes / element_bytes
    }

    /// Work-items of a stream kernel over `elements`.
    pub fn stream_work_items(elements: u64) -> u64 {
        elements / STREAM_PER_ITEM
    }
}

/// Bytes per array: four times the last-level cache (at least 64 MiB),
/// within the allocation limit and a sixteenth of global memory. The
/// sixteenth leaves room for three arrays, clflow's host copies of them,
/// and on CPU devices, whose global memory is the host's, the runtime's own
/// copies and buffers it has yet to free. Quick runs use 4 MiB. Rounded
/// down to [`STREAM_GRANULE`].
fn stream_bytes(device: &DeviceInfo, mode: Mode) -> Result<u64, TooSmall> {
    let wanted = match mode {
        Mode::Full => (device.global_cache_bytes.saturating_mul(4)).max(64 * MIB),
        Mode::Quick => 4 * MIB,
    };
    let room = device.max_alloc_bytes.min(device.global_mem_bytes / 16);
    let bytes = wanted.min(room) / STREAM_GRANULE * STREAM_GRANULE;
    if bytes == 0 {
        return Err(TooSmall {
            needed: STREAM_GRANULE * MOST_STREAM_ARRAYS,
            available: device.global_mem_bytes,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::device;

    const GIB: u64 = 1 << 30;

    #[test]
    fn buffers_are_four_caches_when_memory_allows() {
        // 80 GiB GPU, 50 MiB L2: 200 MiB arrays.
        let plan =
            Plan::for_device(&device(80 * GIB, 20 * GIB, 50 * MIB, 132), Mode::Full).unwrap();
        assert_eq!(plan.stream_bytes, 200 * MIB);
        assert_eq!(plan.compute_work_items, 132 * 4096);
        // A small cache still gets 64 MiB arrays.
        let small = Plan::for_device(&device(8 * GIB, 2 * GIB, MIB, 4), Mode::Full).unwrap();
        assert_eq!(small.stream_bytes, 64 * MIB);
    }

    #[test]
    fn buffers_shrink_to_a_sixteenth_of_memory_and_the_allocation_limit() {
        // This machine's PoCL device: 4.57 GiB global, 2 GiB alloc, 260 MiB cache.
        let pocl = device(4_902_782_976, 2 * GIB, 260 * MIB, 2);
        let plan = Plan::for_device(&pocl, Mode::Full).unwrap();
        let sixteenth = 4_902_782_976 / 16;
        assert_eq!(
            plan.stream_bytes,
            sixteenth / STREAM_GRANULE * STREAM_GRANULE
        );
        assert_eq!(plan.stream_bytes, 292 * MIB);
        let limited = device(64 * GIB, 256 * MIB, 260 * MIB, 2);
        assert_eq!(
            Plan::for_device(&limited, Mode::Full).unwrap().stream_bytes,
            256 * MIB
        );
    }

    #[test]
    fn every_width_divides_the_buffers_evenly() {
        let plan = Plan::for_device(&device(4 * GIB, GIB, 3 * MIB, 2), Mode::Quick).unwrap();
        assert_eq!(plan.stream_bytes, 4 * MIB);
        for element_bytes in [4, 8, 16, 32, 64, 128] {
            let elements = plan.stream_elements(element_bytes);
            assert_eq!(elements * element_bytes, plan.stream_bytes);
            assert_eq!(Plan::stream_work_items(elements) % 1024, 0);
        }
    }

    #[test]
    fn a_device_without_room_for_one_granule_is_refused() {
        let tiny = device(16 * MIB, 16 * MIB, 0, 1);
        let err = Plan::for_device(&tiny, Mode::Quick).unwrap_err();
        assert_eq!(err.available, 16 * MIB);
        assert_eq!(err.needed, 3 * STREAM_GRANULE);
    }
}
