//! Memory accesses: a pointer checked as the interpreter checks it (its
//! space, buffer, bounds and alignment), the global lines it touches
//! marked, and the address of its data.

use super::{ArenaView, Emitter};
use crate::exec::native::helpers;
use crate::exec::native::{Env, Slot, TouchOut};
use crate::memory::{BufferView, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE};
use crate::trace::LineTouch;
use clflow_bytecode::Reg;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{Block, BlockArg, InstBuilder, MemFlags, Value};

/// The lines an access touches: read, written, or both (an atomic).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Touch {
    Read,
    Write,
    Both,
}

/// An access being compiled: its pointer taken apart, and where it goes.
struct Access {
    buffer: Value,
    offset: Value,
    bytes: i64,
    align: u16,
    /// Calls `fault` and fails.
    fault: Block,
    /// Takes the address of the data.
    done: Block,
}

/// Loads of what does not change while the kernel runs (views, layouts,
/// the arenas' addresses): the code generator may move and merge them.
pub(super) const FIXED: MemFlags = MemFlags::trusted().with_readonly().with_can_move();

/// `Env::touches`'s fields, by offset from `Env`.
const TOUCHES: usize = std::mem::offset_of!(Env, touches);
const TOUCH_TABLE: i32 = (TOUCHES + std::mem::offset_of!(TouchOut, table)) as i32;
const TOUCH_ACCESSED: i32 = (TOUCHES + std::mem::offset_of!(TouchOut, accessed)) as i32;
/// A `LineTouch`'s kind.
const TOUCH_KIND: i32 = std::mem::offset_of!(LineTouch, kind) as i32;
/// A table slot's fields and size.
const SLOT_KEY: i32 = std::mem::offset_of!(Slot, key) as i32;
const SLOT_TOUCH: i32 = std::mem::offset_of!(Slot, touch) as i32;
const SLOT_BYTES: i64 = std::mem::size_of::<Slot>() as i64;

/// `BufferView`'s fields, by offset.
const VIEW_BYTES: i64 = std::mem::size_of::<BufferView>() as i64;
const VIEW_BASE: i32 = std::mem::offset_of!(BufferView, base) as i32;
const VIEW_LEN: i32 = std::mem::offset_of!(BufferView, len) as i32;

impl Emitter<'_, '_> {
    /// Checks the access of `n` elements of `size` bytes at register `ptr`
    /// as the interpreter does (a buffer of its space, in bounds, aligned),
    /// marks the global lines it touches, and returns the address of its
    /// data.
    pub(super) fn access(
        &mut self,
        pc: usize,
        ptr: Reg,
        size: u8,
        n: u8,
        align: u16,
        touch: Touch,
    ) -> Value {
        let bytes = size as i64 * n as i64;
        let p = self.get(ptr);
        let fault = self.b.create_block();
        self.b.set_cold_block(fault);
        let done = self.b.create_block();
        self.b.append_block_param(done, self.pointer);
        if let Some(buffer) = self.known.get(ptr.index()).copied().flatten() {
            self.known_access(p, buffer, (size, n, align, touch), (pc, done));
        }
        let space = self.b.ins().ushr_imm(p, 62);
        let buffer = self.b.ins().ushr_imm(p, 40);
        let buffer = self.b.ins().band_imm(buffer, (1 << 22) - 1);
        let offset = self.b.ins().ishl_imm(p, 24);
        let offset = self.b.ins().sshr_imm(offset, 24);
        let at = Access { buffer, offset, bytes, align, fault, done };
        let mut next = self.b.create_block();
        let is = |e: &mut Self, s: u64| e.b.ins().icmp_imm(IntCC::Equal, space, s as i64);
        let global = is(self, SPACE_GLOBAL);
        let global_block = self.b.create_block();
        self.b.ins().brif(global, global_block, &[], next, &[]);
        self.b.switch_to_block(global_block);
        self.global_access(&at, size, n, touch, pc);
        for (space_id, arena) in [(SPACE_LOCAL, self.local), (SPACE_PRIVATE, self.private)] {
            if arena.buffers == 0 {
                continue;
            }
            self.b.switch_to_block(next);
            next = self.b.create_block();
            let here = is(self, space_id);
            let block = self.b.create_block();
            self.b.ins().brif(here, block, &[], next, &[]);
            self.b.switch_to_block(block);
            self.arena_access(&at, arena);
        }
        self.b.switch_to_block(next);
        self.b.ins().jump(fault, &[]);

        self.b.switch_to_block(fault);
        let (bytes, align) = (
            self.b.ins().iconst(I64, bytes),
            self.b.ins().iconst(I64, align as i64),
        );
        self.report_fault(pc, [p, bytes, align]);
        self.b.switch_to_block(done);
        self.b.block_params(done)[0]
    }

    /// The access at pointer value `p` into global buffer `buffer`, where
    /// every value of its register points into that buffer
    /// (`provenance`): in bounds and aligned, its offset is `p` less the
    /// buffer's own pointer, which decoding would give too; it goes on to
    /// `done` with its address. Otherwise it leaves for the general way
    /// (the block it leaves the builder in), which says what is wrong.
    fn known_access(
        &mut self,
        p: Value,
        buffer: u32,
        (size, n, align, touch): (u8, u8, u16, Touch),
        (pc, done): (usize, Block),
    ) {
        let (address, len) = self.known_views[buffer as usize];
        let bytes = size as u64 * n as u64;
        let general = self.b.create_block();
        if len < bytes {
            self.b.ins().jump(general, &[]);
            self.b.switch_to_block(general);
            return;
        }
        let start = crate::memory::encode(SPACE_GLOBAL, buffer as usize, 0);
        let offset = self.b.ins().iadd_imm(p, (start as i64).wrapping_neg());
        let inside =
            self.b
                .ins()
                .icmp_imm(IntCC::UnsignedLessThanOrEqual, offset, (len - bytes) as i64);
        let misaligned = self.b.ins().band_imm(offset, align as i64 - 1);
        let aligned = self.b.ins().icmp_imm(IntCC::Equal, misaligned, 0);
        let ok = self.b.ins().band(inside, aligned);
        let pass = self.b.create_block();
        self.b.ins().brif(ok, pass, &[], general, &[]);
        self.b.switch_to_block(pass);
        let index = self.b.ins().iconst(I64, buffer as i64);
        self.mark_all(index, offset, (size, n, align, touch), pc);
        let address = self.b.ins().iadd_imm(offset, address as i64);
        self.b.ins().jump(done, &[BlockArg::Value(address)]);
        self.b.set_cold_block(general);
        self.b.switch_to_block(general);
    }

    /// Whether `at` lies inside `len` bytes and is aligned: an `I8`.
    fn fits(&mut self, at: &Access, len: Value) -> Value {
        // A negative offset reads as a huge one and fails the bound.
        let inside = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, at.offset, len);
        let left = self.b.ins().isub(len, at.offset);
        let fits = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, left, at.bytes);
        let misaligned = self.b.ins().band_imm(at.offset, at.align as i64 - 1);
        let aligned = self.b.ins().icmp_imm(IntCC::Equal, misaligned, 0);
        let ok = self.b.ins().band(inside, fits);
        self.b.ins().band(ok, aligned)
    }

    /// `at` into a global buffer: checked against its view, its lines
    /// marked, on to `at.done` with its address.
    fn global_access(&mut self, at: &Access, size: u8, n: u8, touch: Touch, pc: usize) {
        if self.nviews == 0 {
            self.b.ins().jump(at.fault, &[]);
            return;
        }
        let known = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, at.buffer, self.nviews as i64);
        let zero = self.b.ins().iconst(I64, 0);
        // Read buffer 0's view for a pointer into no buffer: the access
        // fails its check all the same.
        let index = self.b.ins().select(known, at.buffer, zero);
        let scaled = self.b.ins().imul_imm(index, VIEW_BYTES);
        let view = self.b.ins().iadd_imm(scaled, self.views);
        let len = self.b.ins().load(I64, FIXED, view, VIEW_LEN);
        let fits = self.fits(at, len);
        let ok = self.b.ins().band(fits, known);
        let pass = self.b.create_block();
        self.b.ins().brif(ok, pass, &[], at.fault, &[]);
        self.b.switch_to_block(pass);
        self.mark_all(at.buffer, at.offset, (size, n, at.align, touch), pc);
        let base = self.b.ins().load(self.pointer, FIXED, view, VIEW_BASE);
        let address = self.b.ins().iadd(base, at.offset);
        self.b.ins().jump(at.done, &[BlockArg::Value(address)]);
    }

    /// `at` into a local or private buffer: checked against the arena's
    /// layout, on to `at.done` with its address.
    fn arena_access(&mut self, at: &Access, arena: ArenaView) {
        let known = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, at.buffer, arena.buffers as i64);
        let zero = self.b.ins().iconst(I64, 0);
        let index = self.b.ins().select(known, at.buffer, zero);
        // (base, size) of each buffer, 16 bytes a buffer.
        let scaled = self.b.ins().imul_imm(index, 16);
        let entry = self.b.ins().iadd_imm(scaled, arena.layout);
        let len = self.b.ins().load(I64, FIXED, entry, 8);
        let fits = self.fits(at, len);
        let ok = self.b.ins().band(fits, known);
        let pass = self.b.create_block();
        self.b.ins().brif(ok, pass, &[], at.fault, &[]);
        self.b.switch_to_block(pass);
        let base = self.b.ins().load(I64, FIXED, entry, 0);
        let memory = self
            .b
            .ins()
            .load(self.pointer, FIXED, self.env, arena.env_field);
        let address = self.b.ins().iadd(memory, base);
        let address = self.b.ins().iadd(address, at.offset);
        self.b.ins().jump(at.done, &[BlockArg::Value(address)]);
    }

    /// Marks the lines `n` elements of `size` bytes at `offset` in global
    /// buffer `buffer` touch, and where the run is traced, hands them over
    /// as line touches of the access at `pc`.
    fn mark_all(
        &mut self,
        buffer: Value,
        offset: Value,
        (size, n, align, touch): (u8, u8, u16, Touch),
        pc: usize,
    ) {
        for i in 0..n as i64 {
            for written in [false, true] {
                if touch == Touch::Both || (touch == Touch::Write) == written {
                    self.mark(buffer, written, offset, i * size as i64, size, align);
                }
            }
        }
        let Some(shift) = self.touch_shift else {
            return;
        };
        let kind = match touch {
            Touch::Read => LineTouch::READS,
            Touch::Write => LineTouch::WRITES,
            Touch::Both => LineTouch::READS | LineTouch::WRITES,
        };
        let key_base = self.b.ins().ishl_imm(buffer, LineTouch::LINE_BITS as i64);
        let straddles = may_straddle(size, align, shift as u64);
        for i in 0..n as i64 {
            let first = self.b.ins().iadd_imm(offset, i * size as i64);
            let line = self.b.ins().ushr_imm(first, shift as i64);
            let key = self.b.ins().bor(key_base, line);
            self.touch_line(key, kind, pc as u32);
            if size > 1 && straddles {
                let last = self.b.ins().iadd_imm(offset, (i + 1) * size as i64 - 1);
                let line = self.b.ins().ushr_imm(last, shift as i64);
                let key = self.b.ins().bor(key_base, line);
                self.touch_line(key, kind, pc as u32);
            }
        }
        let times = if touch == Touch::Both { 2 } else { 1 };
        let accessed = self.b.use_var(self.accessed);
        let accessed = self
            .b
            .ins()
            .iadd_imm(accessed, times * size as i64 * n as i64);
        self.b.def_var(self.accessed, accessed);
    }

    /// Adds the bytes accessed since the call began to `Env`'s count, on
    /// a way out of the call.
    pub(super) fn keep_accessed(&mut self) {
        if self.touch_shift.is_none() {
            return;
        }
        let flags = MemFlags::trusted();
        let kept = self.b.ins().load(I64, flags, self.env, TOUCH_ACCESSED);
        let accessed = self.b.use_var(self.accessed);
        let kept = self.b.ins().iadd(kept, accessed);
        self.b.ins().store(flags, kept, self.env, TOUCH_ACCESSED);
    }

    /// Hands over a touch of the line `key` names (`LineTouch::key`): where
    /// the line holds its slot in the group's table of recent lines, folded
    /// into the touch there (a write marks it written); else a new touch,
    /// out of line (`helpers::new_touch`), so that the common fold stays
    /// short and the function quick to compile.
    fn touch_line(&mut self, key: Value, kind: u32, site: u32) {
        let flags = MemFlags::trusted();
        let (again, new, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.set_cold_block(new);
        let table = self
            .b
            .ins()
            .load(self.pointer, FIXED, self.env, TOUCH_TABLE);
        let hash = self.b.ins().imul_imm(key, LineTouch::SLOT_HASH as i64);
        let bits = LineTouch::SLOTS.trailing_zeros() as i64;
        let slot = self.b.ins().ushr_imm(hash, 64 - bits);
        let slot = self.b.ins().imul_imm(slot, SLOT_BYTES);
        let slot = self.b.ins().iadd(table, slot);
        let held = self.b.ins().load(I64, flags, slot, SLOT_KEY);
        let same = self.b.ins().icmp(IntCC::Equal, key, held);
        self.b.ins().brif(same, again, &[], new, &[]);

        self.b.switch_to_block(again);
        if kind & LineTouch::WRITES != 0 {
            let touch = self.b.ins().load(self.pointer, flags, slot, SLOT_TOUCH);
            self.mark_written(touch);
        }
        self.b.ins().jump(done, &[]);

        self.b.switch_to_block(new);
        let callee = self.b.ins().iconst(
            self.pointer,
            helpers::new_touch as helpers::NewTouch as usize as i64,
        );
        let site = self.b.ins().iconst(I32, site as i64);
        let kind = self.b.ins().iconst(I32, kind as i64);
        let args = [self.env, slot, key, site, kind];
        self.b.ins().call_indirect(self.touch_sig, callee, &args);
        self.b.ins().jump(done, &[]);

        self.b.switch_to_block(done);
    }

    /// Marks the line touch at `touch` written.
    fn mark_written(&mut self, touch: Value) {
        let flags = MemFlags::trusted();
        let old = self.b.ins().load(I32, flags, touch, TOUCH_KIND);
        let marked = self.b.ins().bor_imm(old, LineTouch::WRITES as i64);
        self.b.ins().store(flags, marked, touch, TOUCH_KIND);
    }

    /// Marks the lines that `size` bytes at `offset + at` touch in the
    /// view's line set at `field` (read or written).
    fn mark(&mut self, buffer: Value, written: bool, offset: Value, at: i64, size: u8, align: u16) {
        // The thread's own line sets (`Env::lines`): two a buffer, read
        // then written.
        let table = self
            .b
            .ins()
            .load(self.pointer, FIXED, self.env, self.lines_field);
        let entry = self.b.ins().imul_imm(buffer, 16);
        let entry = self.b.ins().iadd(table, entry);
        let bits = self
            .b
            .ins()
            .load(self.pointer, FIXED, entry, if written { 8 } else { 0 });
        let first = self.b.ins().iadd_imm(offset, at);
        let first_line = self.b.ins().ushr_imm(first, self.line_shift as i64);
        self.mark_line(bits, first_line);
        if size > 1 && may_straddle(size, align, self.line_shift) {
            let last = self.b.ins().iadd_imm(offset, at + size as i64 - 1);
            let last_line = self.b.ins().ushr_imm(last, self.line_shift as i64);
            self.mark_line(bits, last_line);
        }
    }

    /// Sets `line`'s bit in the line set at `bits`, which this thread
    /// alone writes.
    fn mark_line(&mut self, bits: Value, line: Value) {
        let flags = MemFlags::trusted();
        let word = self.b.ins().ushr_imm(line, 6);
        let word = self.b.ins().imul_imm(word, 8);
        let word = self.b.ins().iadd(bits, word);
        let one = self.b.ins().iconst(I64, 1);
        let bit = self.b.ins().ishl(one, line);
        let old = self.b.ins().load(I64, flags, word, 0);
        let new = self.b.ins().bor(old, bit);
        self.b.ins().store(flags, new, word, 0);
    }
}

/// Whether an element of `size` bytes aligned to `align` may straddle two
/// lines of `1 << line_shift` bytes: one aligned to its size (a power of
/// two) never straddles lines no smaller than it; others may.
fn may_straddle(size: u8, align: u16, line_shift: u64) -> bool {
    !(align.is_multiple_of(size as u16) && (1u64 << line_shift) >= size as u64)
}
