//! A launch's arguments bound to the kernel's parameters: the registers
//! they start in, the buffers and images the run works on, the work-group
//! geometry; every mismatch one line naming the argument.

use crate::memory::{self, ArenaLayout, SharedBuffer};
use crate::{exec, translate, DEFAULT_LOCAL_SIZE};
use clflow_bytecode::program::{ParamSlot, Program};
use clflow_core::{AddressSpace, ArgValue, ImageDesc, Launch};

/// What a launch starts with.
pub(super) struct Bound {
    pub geometry: exec::Geometry,
    pub regs: Vec<u64>,
    /// One a launch argument (an empty one for arguments that are not
    /// buffers), then the program-scope variables.
    pub buffers: Vec<SharedBuffer>,
    /// The descriptor of each buffer that holds an image's texels.
    pub images: Vec<Option<ImageDesc>>,
    pub local_layout: ArenaLayout,
    /// Bytes of structs passed by value: (offset in private memory, bytes).
    pub private_init: Vec<(usize, Vec<u8>)>,
}

/// Binds `launch` to `p`; `taken[i]`, where present, holds argument i's
/// bytes instead of the launch.
pub(super) fn bind(
    p: &Program,
    launch: &Launch,
    taken: &mut [Option<Vec<u8>>],
    line_bytes: u64,
    sub_group_size: u32,
) -> Result<Bound, String> {
    clflow_core::numbers::line_size(line_bytes)?;
    let geometry = geometry(launch, sub_group_size)?;
    if launch.args.len() != p.params.len() {
        return Err(format!(
            "the kernel takes {} arguments, the launch gives {}",
            p.params.len(),
            launch.args.len()
        ));
    }
    let mut bound = Bound {
        geometry,
        regs: p.init_regs.clone(),
        buffers: Vec::new(),
        images: Vec::new(),
        local_layout: ArenaLayout::default(),
        private_init: Vec::new(),
    };
    for (i, param) in p.params.iter().enumerate() {
        let arg = Arg {
            index: i,
            launch,
            taken: taken.get_mut(i).and_then(Option::take),
            line_bytes,
        };
        let (buffer, local, image) = bind_arg(p, param, arg, &mut bound)?;
        bound.buffers.push(buffer);
        bound.images.push(image);
        let label = launch.args[i].describe(i);
        bound.local_layout.push(local, 128, label_for_local(&label));
    }
    for var in &p.global_vars {
        bound.buffers.push(SharedBuffer::new(
            &var.bytes,
            var.label.clone(),
            var.space,
            line_bytes,
        ));
    }
    for (size, align, label) in &p.local_vars {
        bound.local_layout.push(*size, *align, label.clone());
    }
    check_group_state(p, &bound)?;
    bound.images.resize(bound.buffers.len(), None);
    Ok(bound)
}

/// One argument of the launch, its bytes perhaps taken over.
struct Arg<'l> {
    index: usize,
    launch: &'l Launch,
    taken: Option<Vec<u8>>,
    line_bytes: u64,
}

impl Arg<'_> {
    /// The argument's bytes as a buffer of memory space `space`.
    fn buffer(self, bytes: &[u8], space: &'static str) -> SharedBuffer {
        let label = self.launch.args[self.index].describe(self.index);
        match self.taken {
            Some(owned) => SharedBuffer::from_vec(owned, label, space, self.line_bytes),
            None => SharedBuffer::new(bytes, label, space, self.line_bytes),
        }
    }
}

/// Binds one argument to its parameter: its buffer (an empty one where it
/// is none), its `__local` bytes, its image; the registers and private
/// bytes it starts in go into `bound`.
fn bind_arg(
    p: &Program,
    param: &ParamSlot,
    arg: Arg<'_>,
    bound: &mut Bound,
) -> Result<(SharedBuffer, u64, Option<ImageDesc>), String> {
    let (i, launch, line_bytes) = (arg.index, arg.launch, arg.line_bytes);
    let label = launch.args[i].describe(i);
    let empty = || SharedBuffer::new(&[], label.clone(), "__global", line_bytes);
    let regs = &mut bound.regs;
    let global = |at: usize| memory::encode(memory::SPACE_GLOBAL, at, 0);
    match (param, &launch.args[i].value) {
        (ParamSlot::Image { slot, dim }, ArgValue::Image { image, bytes, .. })
            if image.dim == *dim =>
        {
            let expected = image.size_bytes();
            let len = arg.taken.as_ref().map_or(bytes.len(), Vec::len);
            if len as u64 != expected {
                return Err(format!(
                    "{label}: a {} {}×{}×{} image takes {expected} bytes of texels, the launch gives {len}",
                    image.format, image.width, image.height, image.depth
                ));
            }
            regs[slot.index()] = global(i);
            Ok((arg.buffer(bytes, "__global"), 0, Some(*image)))
        }
        (ParamSlot::Sampler { slot }, ArgValue::Sampler(sampler)) => {
            regs[slot.index()] = u64::from(sampler.bits());
            Ok((empty(), 0, None))
        }
        (ParamSlot::Pointer { slot, space, .. }, ArgValue::Buffer { bytes, .. })
            if matches!(space, AddressSpace::Global | AddressSpace::Constant) =>
        {
            let name = if *space == AddressSpace::Constant {
                "__constant"
            } else {
                "__global"
            };
            regs[slot.index()] = global(i);
            Ok((arg.buffer(bytes, name), 0, None))
        }
        (ParamSlot::Pointer { slot, space, .. }, ArgValue::SameBuffer { arg: first })
            if matches!(space, AddressSpace::Global | AddressSpace::Constant)
                && *first < i
                && matches!(launch.args[*first].value, ArgValue::Buffer { .. }) =>
        {
            regs[slot.index()] = global(*first);
            Ok((empty(), 0, None))
        }
        (ParamSlot::Pointer { slot, .. }, ArgValue::NullPointer) => {
            regs[slot.index()] = 0;
            Ok((empty(), 0, None))
        }
        (
            ParamSlot::Pointer { slot, space: AddressSpace::Local, .. },
            ArgValue::Local { bytes },
        ) => {
            regs[slot.index()] = memory::encode(memory::SPACE_LOCAL, i, 0);
            Ok((empty(), *bytes, None))
        }
        (ParamSlot::Value { slot, leaves, size }, ArgValue::Scalar { bytes })
            if bytes.len() as u64 == *size =>
        {
            for (k, leaf) in leaves.iter().enumerate() {
                let mut w = [0u8; 8];
                let at = leaf.offset as usize;
                w[..leaf.size as usize].copy_from_slice(&bytes[at..at + leaf.size as usize]);
                regs[slot.index() + k] = u64::from_le_bytes(w);
            }
            Ok((empty(), 0, None))
        }
        (ParamSlot::ByVal { var, size, .. }, ArgValue::Scalar { bytes })
            if bytes.len() as u64 == *size =>
        {
            bound
                .private_init
                .push((p.private.base[*var] as usize, bytes.clone()));
            Ok((empty(), 0, None))
        }
        (param, value) => Err(format!(
            "{label}: the kernel expects {}, the launch gives {}",
            describe_param(param),
            describe_value(value, arg.taken.as_ref().map(Vec::len))
        )),
    }
}

/// The state a work-group needs within clflow's limits.
fn check_group_state(p: &Program, bound: &Bound) -> Result<(), String> {
    // Work-items of a group with barriers are all alive at once.
    let group_items: u64 = bound.geometry.local.iter().product();
    let item_bytes = 8 * p.init_regs.len() as u64 + p.private.total();
    if p.uses_barrier && group_items.saturating_mul(item_bytes) > translate::MAX_LOCAL_BYTES {
        return Err(format!(
            "work-groups of {group_items} work-items with barriers would need {} bytes of state",
            group_items.saturating_mul(item_bytes)
        ));
    }
    if bound.local_layout.total() > translate::MAX_LOCAL_BYTES {
        return Err(format!(
            "{} bytes of __local memory per work-group (clflow's limit is {})",
            bound.local_layout.total(),
            translate::MAX_LOCAL_BYTES
        ));
    }
    Ok(())
}

fn label_for_local(label: &str) -> String {
    label.to_string()
}

fn describe_param(param: &ParamSlot) -> String {
    match param {
        ParamSlot::Pointer { space, .. } => format!("a {space} pointer"),
        ParamSlot::Value { size, .. } => format!("a {size}-byte value"),
        ParamSlot::ByVal { size, .. } => format!("a {size}-byte struct by value"),
        ParamSlot::Image { dim, .. } => format!("an {}", dim.name()),
        ParamSlot::Sampler { .. } => "a sampler".into(),
    }
}

/// `taken_len`: the size of a buffer whose bytes the run has taken over.
fn describe_value(value: &ArgValue, taken_len: Option<usize>) -> String {
    match value {
        ArgValue::Buffer { ty, bytes, .. } => {
            let len = taken_len.unwrap_or(bytes.len());
            format!(
                "a buffer of {} {ty} ({len} bytes)",
                len / ty.size_bytes().max(1)
            )
        }
        ArgValue::NullPointer => "NULL".into(),
        ArgValue::Scalar { bytes } => format!("a {}-byte value", bytes.len()),
        ArgValue::Local { bytes } => format!("{bytes} bytes of __local memory"),
        ArgValue::SameBuffer { arg } => format!("the buffer of arg {arg}"),
        ArgValue::Image { image, .. } => format!("an {} of {}", image.dim.name(), image.format),
        ArgValue::Sampler(_) => "a sampler".into(),
    }
}

fn geometry(launch: &Launch, sub_group: u32) -> Result<exec::Geometry, String> {
    let r = &launch.range;
    if !(1..=3).contains(&r.dims) {
        return Err(format!("{} dimensions (1 to 3 allowed)", r.dims));
    }
    let mut local = [1u64; 3];
    for d in 0..3 {
        if r.global[d] == 0 {
            return Err(format!("global size 0 in dimension {d}"));
        }
        local[d] = match r.local {
            Some(l) => l[d],
            None if d == 0 => (1..=DEFAULT_LOCAL_SIZE.min(r.global[0]))
                .rev()
                .find(|l| r.global[0].is_multiple_of(*l))
                .unwrap_or(1),
            None => 1,
        };
        if local[d] == 0 {
            return Err(format!("local size 0 in dimension {d}"));
        }
    }
    // A local size that does not divide the global size leaves a last,
    // smaller group (OpenCL 2.0); the manifest decides whether the kernel's
    // OpenCL version allows it.
    let groups = std::array::from_fn(|d| r.global[d].div_ceil(local[d]));
    if sub_group == 0 {
        return Err("a sub-group size of 0".into());
    }
    Ok(exec::Geometry {
        sub_group: sub_group as u64,
        dims: r.dims,
        global: r.global,
        local,
        groups,
        offset: r.offset,
    })
}
