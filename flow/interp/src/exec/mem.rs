//! The memory one work-item sees: pointers resolved and bounds-checked,
//! reads, writes, copies and atomics, and the traffic and trace they make.

use super::Recorder;
use crate::counts::{Space, SpaceBytes};
use crate::error::TrapKind;
use crate::memory::{
    self, Arena, ArenaLayout, GlobalMemory, SharedBuffer, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE,
};
use crate::opencl_std as math;
use crate::trace::AccessKind;
use clflow_bytecode::AtomicOp;

/// A resolved, bounds-checked location.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Loc {
    Global(usize, u64),
    Local(usize),
    Private(usize),
}

/// The memory one work-item sees.
pub(super) struct Mem<'m, 'r> {
    pub(super) global: &'m GlobalMemory,
    pub(super) local: &'m mut Arena,
    pub(super) local_layout: &'m ArenaLayout,
    pub(super) private_layout: &'m ArenaLayout,
    pub(super) traffic: &'m mut SpaceBytes,
    /// `traffic` by source line, and the line of the instruction counting
    /// (set before an instruction whose bytes are known only as it runs).
    pub(super) line_traffic: &'m mut [SpaceBytes],
    pub(super) line: usize,
    pub(super) trace: Option<&'m mut Recorder<'r>>,
    /// What the last access did that OpenCL leaves undefined and the run
    /// went through (`TrapKind::Undefined`), for the caller to keep.
    pub(super) undefined: Option<TrapKind>,
}

impl Mem<'_, '_> {
    /// Starts tracing a memory instruction at `pc` for the active lanes.
    #[inline(always)]
    pub(super) fn dispatch(&mut self, pc: usize) {
        if let Some(t) = &mut self.trace {
            t.settle();
            t.dispatch(pc);
        }
    }

    /// [`Mem::dispatch`] for an atomic function.
    #[inline(always)]
    pub(super) fn dispatch_atomic(&mut self, pc: usize) {
        if let Some(t) = &mut self.trace {
            t.settle();
            t.dispatch(pc);
            t.atomic = true;
        }
    }

    /// [`Mem::resolve`] for an access of work-item `item`, traced if global
    /// (or local, where local accesses are traced).
    #[inline(always)]
    pub(super) fn access(
        &mut self,
        pointer: u64,
        bytes: u64,
        align: u64,
        kind: AccessKind,
        item: [u64; 3],
    ) -> Result<Loc, TrapKind> {
        let loc = self.resolve(pointer, bytes, align)?;
        if let Some(t) = &mut self.trace {
            t.settle();
            match loc {
                Loc::Global(buffer, offset) => t.record(buffer, offset, bytes, kind, item),
                Loc::Local(_) => {
                    let (_, buffer, offset) = memory::decode(pointer);
                    t.record_local(buffer, offset as u64, bytes, kind, item);
                }
                Loc::Private(_) => return Ok(loc),
            }
            t.hold(loc, bytes, kind);
        }
        Ok(loc)
    }

    /// Traces an access whose pointer has not been resolved (the fast
    /// word paths, run-time sized copies).
    #[inline(always)]
    pub(super) fn trace_pointer(
        &mut self,
        pointer: u64,
        bytes: u64,
        kind: AccessKind,
        item: [u64; 3],
    ) {
        self.trace_unresolved(pointer, bytes, kind, item, None);
    }

    /// [`Mem::trace_pointer`] of a word store of `word`, which the fast word
    /// path writes itself.
    #[inline(always)]
    pub(super) fn trace_word_store(&mut self, pointer: u64, word: u64, item: [u64; 3]) {
        self.trace_unresolved(pointer, 4, AccessKind::Store, item, Some(word));
    }

    /// Traces an unresolved access; where stores are compared, takes down
    /// what a store writes (`word`, where the fast word path writes it).
    #[inline(always)]
    fn trace_unresolved(
        &mut self,
        pointer: u64,
        bytes: u64,
        kind: AccessKind,
        item: [u64; 3],
        word: Option<u64>,
    ) {
        let Some(t) = &self.trace else { return };
        let held = match t.outlet.compares && kind == AccessKind::Store {
            true => self.resolve(pointer, bytes, 1).ok(),
            false => None,
        };
        let Some(t) = &mut self.trace else { return };
        t.settle();
        let id = t.linear(item);
        t.record_pointer(pointer, bytes, kind, id);
        if let Some(loc) = held {
            t.hold(loc, bytes, kind);
            if let Some(word) = word {
                t.pending.capture_word(word);
            }
        }
    }

    /// Traces at once a dispatch every lane of the batch runs (lane `l`
    /// accessing `bytes` at `pointers[l]`, lane 0 being work-item `first`),
    /// where the sink takes runs; false, tracing nothing, where each
    /// lane's access is to be traced as it is made.
    #[inline(always)]
    pub(super) fn trace_row(
        &mut self,
        pointers: &[u64],
        bytes: u64,
        kind: AccessKind,
        first: [u64; 3],
    ) -> bool {
        match &mut self.trace {
            Some(t) if t.runs => {
                t.record_row(pointers, bytes, kind, first);
                true
            }
            _ => false,
        }
    }

    /// Checks that `bytes` at `pointer` lie inside one buffer and that the
    /// pointer is aligned to `align`.
    #[inline(always)]
    pub(super) fn resolve(&self, pointer: u64, bytes: u64, align: u64) -> Result<Loc, TrapKind> {
        let (space, buffer, offset) = memory::decode(pointer);
        let (len, loc) = match space {
            SPACE_GLOBAL => match self.global.buffers.get(buffer) {
                Some(b) => (b.len, Loc::Global(buffer, offset as u64)),
                None => return Err(TrapKind::BadPointer { value: pointer }),
            },
            SPACE_LOCAL => match self.local_layout.size.get(buffer) {
                Some(size) => (
                    *size,
                    Loc::Local((self.local_layout.base[buffer] as i64 + offset) as usize),
                ),
                None => return Err(TrapKind::BadPointer { value: pointer }),
            },
            SPACE_PRIVATE => match self.private_layout.size.get(buffer) {
                Some(size) => (
                    *size,
                    Loc::Private((self.private_layout.base[buffer] as i64 + offset) as usize),
                ),
                None => return Err(TrapKind::BadPointer { value: pointer }),
            },
            _ => return Err(TrapKind::NullPointer { size: bytes as u32 }),
        };
        if offset < 0 || offset as u64 + bytes > len {
            let (space, buffer) = self.describe(space, buffer);
            return Err(TrapKind::OutOfBounds {
                space,
                buffer,
                offset,
                size: bytes as u32,
                buffer_bytes: len,
            });
        }
        if offset as u64 & (align - 1) != 0 {
            let (space, buffer) = self.describe(space, buffer);
            return Err(TrapKind::Misaligned { space, buffer, offset, align: align as u32 });
        }
        Ok(loc)
    }

    /// The global or constant buffer and offset of a 4-byte access at
    /// `pointer`, where it is aligned and inside its buffer.
    #[inline(always)]
    pub(super) fn global_word(&self, pointer: u64) -> Option<(&SharedBuffer, u64)> {
        let (space, buffer, offset) = memory::decode(pointer);
        if space != SPACE_GLOBAL {
            return None;
        }
        let b = self.global.buffers.get(buffer)?;
        let offset = offset as u64;
        // A negative offset reads as a huge one and fails the bound.
        (offset.is_multiple_of(4) && offset < b.len && b.len - offset >= 4).then_some((b, offset))
    }

    /// The string at `pointer` in `__constant` memory (printf's format and
    /// `%s`'s string literals): its bytes up to its NUL, or `max` of them.
    /// Read for printing only: neither counted nor traced.
    pub(super) fn constant_string(
        &self,
        pointer: u64,
        max: Option<usize>,
    ) -> Result<Vec<u8>, String> {
        let (space, buffer, offset) = memory::decode(pointer);
        let b = match (space, self.global.buffers.get(buffer)) {
            (SPACE_GLOBAL, Some(b)) if b.space == "__constant" => b,
            (SPACE_GLOBAL, Some(b)) => {
                return Err(format!(
                    "it points into {} {}, not to a string literal",
                    b.space, b.label
                ))
            }
            (0, _) => return Err("it is a NULL pointer".into()),
            (SPACE_LOCAL, _) => {
                return Err("it points into __local memory, not to a string literal".into())
            }
            _ => return Err("it points into __private memory, not to a string literal".into()),
        };
        let mut text = Vec::new();
        let mut at = u64::try_from(offset).map_err(|_| format!("it points before {}", b.label))?;
        while max.is_none_or(|m| text.len() < m) {
            if at >= b.len {
                return Err(format!("no NUL ends its string in {}", b.label));
            }
            match b.peek(at) {
                0 => break,
                c => text.push(c),
            }
            at += 1;
        }
        Ok(text)
    }

    pub(super) fn describe(&self, space: u64, buffer: usize) -> (&'static str, String) {
        match space {
            SPACE_GLOBAL => {
                let b = &self.global.buffers[buffer];
                (b.space, b.label.clone())
            }
            SPACE_LOCAL => ("__local", self.local_layout.label[buffer].clone()),
            _ => ("__private", self.private_layout.label[buffer].clone()),
        }
    }

    #[inline(always)]
    pub(super) fn read(&self, private: &Arena, loc: Loc, at: u64, size: u32) -> u64 {
        match loc {
            Loc::Global(b, off) => self.global.buffers[b].read(off + at, size),
            Loc::Local(base) => self.local.read(base + at as usize, size),
            Loc::Private(base) => private.read(base + at as usize, size),
        }
    }

    #[inline]
    pub(super) fn write(&mut self, private: &mut Arena, loc: Loc, at: u64, size: u32, value: u64) {
        match loc {
            Loc::Global(b, off) => self.global.buffers[b].write(off + at, size, value),
            Loc::Local(base) => self.local.write(base + at as usize, size, value),
            Loc::Private(base) => return private.write(base + at as usize, size, value),
        }
        // A traced store's bytes, where stores are compared.
        if let Some(t) = self.trace.as_mut() {
            t.pending.capture(loc, at, size, value);
        }
    }

    /// Adds traffic whose size is known only at run time.
    pub(super) fn count(&mut self, pointer: u64, bytes: u64, store: bool) {
        let space = match memory::decode(pointer) {
            (SPACE_GLOBAL, b, _)
                if self
                    .global
                    .buffers
                    .get(b)
                    .is_some_and(|b| b.space == "__constant") =>
            {
                Space::Constant
            }
            (SPACE_GLOBAL, _, _) => Space::Global,
            (SPACE_LOCAL, _, _) => Space::Local,
            _ => Space::Private,
        };
        self.traffic.add(space, store, bytes);
        self.line_traffic[self.line].add(space, store, bytes);
    }

    pub(super) fn copy(
        &mut self,
        private: &mut Arena,
        dst: u64,
        src: u64,
        bytes: u64,
    ) -> Result<(), TrapKind> {
        if bytes == 0 {
            return Ok(());
        }
        let from = self.resolve(src, bytes, 1)?;
        let to = self.resolve(dst, bytes, 1)?;
        let mut at = 0;
        while at < bytes {
            let chunk = (bytes - at).min(8) as u32;
            let v = self.read(private, from, at, chunk);
            self.write(private, to, at, chunk, v);
            at += chunk as u64;
        }
        Ok(())
    }

    pub(super) fn atomic(
        &mut self,
        private: &mut Arena,
        loc: Loc,
        op: AtomicOp,
        bits: u8,
        a: u64,
        b: u64,
    ) -> u64 {
        let m = math::mask(bits);
        let apply = |old: u64| -> u64 {
            let (so, sa) = (math::sext(old, bits), math::sext(a, bits));
            (match op {
                AtomicOp::Load => old,
                AtomicOp::Store | AtomicOp::Exchange => a,
                AtomicOp::CompareExchange => {
                    if old == b {
                        a
                    } else {
                        old
                    }
                }
                AtomicOp::Inc => old.wrapping_add(1),
                AtomicOp::Dec => old.wrapping_sub(1),
                AtomicOp::Add => old.wrapping_add(a),
                AtomicOp::Sub => old.wrapping_sub(a),
                AtomicOp::SMin => so.min(sa) as u64,
                AtomicOp::UMin => old.min(a),
                AtomicOp::SMax => so.max(sa) as u64,
                AtomicOp::UMax => old.max(a),
                AtomicOp::And => old & a,
                AtomicOp::Or => old | a,
                AtomicOp::Xor => old ^ a,
            }) & m
        };
        match loc {
            Loc::Global(buf, off) if bits == 32 => {
                self.global.buffers[buf].update32(off, |old| apply(old as u64) as u32) as u64
            }
            Loc::Global(buf, off) => {
                let _guard = self
                    .global
                    .wide_atomics
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                let b = &self.global.buffers[buf];
                let old = b.read(off, 8);
                b.write(off, 8, apply(old));
                old
            }
            _ => {
                let size = bits as u32 / 8;
                let old = self.read(private, loc, 0, size);
                self.write(private, loc, 0, size, apply(old));
                old
            }
        }
    }
}
