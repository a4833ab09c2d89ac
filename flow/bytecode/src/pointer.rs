//! A pointer's 64-bit encoding, `space:2 | buffer:22 | offset:40`. Space 0
//! is the NULL pointer; every buffer starts at offset 0, so address
//! arithmetic and alignment tests in kernels behave as on a device, and
//! every access is checked against the bounds of the one buffer its pointer
//! came from.

pub const SPACE_GLOBAL: u64 = 1;
pub const SPACE_LOCAL: u64 = 2;
pub const SPACE_PRIVATE: u64 = 3;

const OFFSET_BITS: u32 = 40;
const BUFFER_BITS: u32 = 22;

#[inline]
pub fn encode(space: u64, buffer: usize, offset: u64) -> u64 {
    (space << 62) | ((buffer as u64) << OFFSET_BITS) | (offset & ((1 << OFFSET_BITS) - 1))
}

/// (space, buffer, offset). The offset is read as signed so that a pointer
/// that stepped before its buffer reports a negative offset.
#[inline]
pub fn decode(pointer: u64) -> (u64, usize, i64) {
    let space = pointer >> 62;
    let buffer = ((pointer >> OFFSET_BITS) & ((1 << BUFFER_BITS) - 1)) as usize;
    let offset = ((pointer << (64 - OFFSET_BITS)) as i64) >> (64 - OFFSET_BITS);
    (space, buffer, offset)
}
