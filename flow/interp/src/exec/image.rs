//! Image reads, writes and queries, as OpenCL C 1.2 defines them (§6.12.14,
//! §8 "Image Addressing and Filtering", §8.3 "Conversion Rules"): texels
//! decoded to float or integer components, sampler addressing and nearest
//! or linear filtering in single precision with the specification's
//! formulas, and writes converted with saturation and rounding to nearest
//! even. Every texel read from or written to memory is counted as global
//! traffic and traced like any global access.
//!
//! Two things OpenCL leaves undefined are common in real kernels (an
//! NDRange rounded up past the image's edge): a write outside the image,
//! and a read outside it under `CLK_ADDRESS_NONE`. The run goes through
//! them as PoCL does, the write dropped and the read (0,0,0,0), and leaves
//! a [`TrapKind::Undefined`] in `Mem::undefined` for the caller to report.

use super::mem::Mem;
use crate::error::TrapKind;
use crate::memory::{self, Arena, SPACE_GLOBAL};
use crate::trace::AccessKind;
use clflow_bytecode::{ImageForm, ImageQuery};
use clflow_core::{
    half, AddressMode, ChannelClass, ChannelType, FilterMode, ImageDesc, SamplerDesc,
};

fn trap(message: impl Into<String>) -> TrapKind {
    TrapKind::Image(message.into())
}

/// `300×360`: an image's extent, as many numbers as its type has.
fn extent(desc: &ImageDesc) -> String {
    let sizes = [desc.width, desc.height, desc.depth];
    let parts: Vec<String> = sizes[..desc.dim.shape_len()]
        .iter()
        .map(u64::to_string)
        .collect();
    parts.join("×")
}

/// `(301, 7)` or `(300.5, 7.5)`: the coordinates an access gave.
fn coordinates(coord: [u64; 4], n: usize, float: bool) -> String {
    let parts: Vec<String> = coord[..n]
        .iter()
        .map(|&c| match float {
            true => f32::from_bits(c as u32).to_string(),
            false => (c as u32 as i32).to_string(),
        })
        .collect();
    format!("({})", parts.join(", "))
}

impl Mem<'_, '_> {
    /// The image a handle names: its buffer and descriptor.
    fn image(&self, handle: u64) -> Result<(usize, ImageDesc), TrapKind> {
        match memory::decode(handle) {
            (SPACE_GLOBAL, buffer, 0) => match self.global.images.get(buffer) {
                Some(Some(desc)) => Ok((buffer, *desc)),
                _ => Err(trap(format!("handle {handle:#x} names no image"))),
            },
            _ => Err(trap(format!("handle {handle:#x} names no image"))),
        }
    }

    /// The raw channels of the texel at (x, y, z), memory order, read and
    /// counted.
    fn fetch(
        &mut self,
        private: &Arena,
        buffer: usize,
        desc: &ImageDesc,
        at: [i64; 3],
        item: [u64; 3],
    ) -> Result<[u64; 4], TrapKind> {
        let size = desc.format.ty.size_bytes() as u32;
        let texel = desc.format.texel_bytes() as u64;
        let index = (at[2] as u64 * desc.height + at[1] as u64) * desc.width + at[0] as u64;
        let pointer = memory::encode(SPACE_GLOBAL, buffer, index * texel);
        let loc = self.access(pointer, texel, 1, AccessKind::Load, item)?;
        self.count(pointer, texel, false);
        let mut raw = [0u64; 4];
        for (k, r) in raw
            .iter_mut()
            .enumerate()
            .take(desc.format.order.channels())
        {
            *r = self.read(private, loc, k as u64 * size as u64, size);
        }
        Ok(raw)
    }

    /// One image read: four components as register values (f32 bits, or
    /// 32-bit integers).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn image_read(
        &mut self,
        private: &Arena,
        handle: u64,
        sampler_bits: u64,
        coord: [u64; 4],
        form: ImageForm,
        item: [u64; 3],
    ) -> Result<[u64; 4], TrapKind> {
        let (buffer, desc) = self.image(handle)?;
        let class = desc.format.ty.class();
        match (form.float_texel, class) {
            (true, ChannelClass::Float)
            | (false, ChannelClass::Signed | ChannelClass::Unsigned) => {}
            (true, _) => {
                return Err(trap(format!(
                    "read_imagef of a {} image (use read_imagei or read_imageui)",
                    desc.format
                )))
            }
            (false, _) => {
                return Err(trap(format!(
                    "read_imagei/read_imageui of a {} image (use read_imagef)",
                    desc.format
                )))
            }
        }
        let sampler = if form.sampled {
            SamplerDesc::from_bits(sampler_bits as u32)
                .ok_or_else(|| trap(format!("sampler value {sampler_bits:#x} is no sampler")))?
        } else {
            // Reads without a sampler: unnormalized, no addressing, nearest.
            SamplerDesc {
                normalized: false,
                address: AddressMode::None,
                filter: FilterMode::Nearest,
            }
        };
        let sizes = [desc.width, desc.height, desc.depth];
        let spatial = desc.dim.spatial();
        let layers = desc.dim.is_array().then(|| sizes[spatial]);
        let int = |k: usize| coord[k] as u32 as i32;
        let float = |k: usize| f32::from_bits(coord[k] as u32);
        let layer = match layers {
            None => 0,
            Some(n) if form.float_coords => {
                (float(spatial).round_ties_even().clamp(0.0, (n - 1) as f32)) as i64
            }
            Some(n) => i64::from(int(spatial)).clamp(0, n as i64 - 1),
        };
        // What a texel outside the image reads as: the border colour under
        // `CLK_ADDRESS_CLAMP`; (0,0,0,0) under `CLK_ADDRESS_NONE`, noted.
        let mut strayed = false;
        let mut outside_value = || -> [u64; 4] {
            let one = if form.float_texel {
                1f32.to_bits() as u64
            } else {
                1
            };
            match sampler.address {
                AddressMode::None => {
                    strayed = true;
                    [0; 4]
                }
                _ if desc.format.order.has_alpha() => [0; 4],
                _ => [0, 0, 0, one],
            }
        };
        if !form.float_coords {
            if sampler.normalized || sampler.filter == FilterMode::Linear {
                return Err(trap(
                    "integer coordinates need a sampler with unnormalized coordinates and nearest filtering",
                ));
            }
            let mut at = [0i64; 3];
            for (d, a) in at.iter_mut().enumerate().take(spatial) {
                let (i, n) = (i64::from(int(d)), sizes[d] as i64);
                *a = match sampler.address {
                    AddressMode::ClampToEdge => i.clamp(0, n - 1),
                    AddressMode::Clamp | AddressMode::None if !(0..n).contains(&i) => {
                        let value = outside_value();
                        self.note_stray(strayed, &desc, coord, form);
                        return Ok(value);
                    }
                    AddressMode::Clamp | AddressMode::None => i,
                    AddressMode::Repeat | AddressMode::MirroredRepeat => {
                        return Err(trap("repeat addressing needs normalized coordinates"))
                    }
                };
            }
            if layers.is_some() {
                at[spatial] = layer;
            }
            let raw = self.fetch(private, buffer, &desc, at, item)?;
            return Ok(convert(&desc, raw, form.float_texel));
        }
        if !sampler.normalized
            && matches!(
                sampler.address,
                AddressMode::Repeat | AddressMode::MirroredRepeat
            )
        {
            return Err(trap("repeat addressing needs normalized coordinates"));
        }
        if sampler.filter == FilterMode::Linear && class != ChannelClass::Float {
            return Err(trap(format!(
                "linear filtering of a {} image (OpenCL defines it for float images only)",
                desc.format
            )));
        }
        // Per spatial axis: the two texel indices and the weight of the second.
        let mut axes = [(0i64, 0i64, 0f32); 3];
        for (d, axis) in axes.iter_mut().enumerate().take(spatial) {
            *axis = address(float(d), sizes[d] as i64, sampler);
        }
        let n = sizes.map(|s| s as i64);
        let outside = |at: &[i64; 3]| (0..spatial).any(|d| at[d] < 0 || at[d] >= n[d]);
        if sampler.filter == FilterMode::Nearest {
            let mut at = [0i64; 3];
            for d in 0..spatial {
                at[d] = axes[d].0;
            }
            if layers.is_some() {
                at[spatial] = layer;
            }
            if outside(&at) {
                let value = outside_value();
                self.note_stray(strayed, &desc, coord, form);
                return Ok(value);
            }
            let raw = self.fetch(private, buffer, &desc, at, item)?;
            return Ok(convert(&desc, raw, form.float_texel));
        }
        // Linear: the corners in the specification's order (x fastest), each
        // weighted by the product of (1 - a) or a per axis, left to right.
        let mut sum = [0f32; 4];
        for corner in 0..(1usize << spatial) {
            let mut at = [0i64; 3];
            let mut weight = 1f32;
            for d in 0..spatial {
                let (i0, i1, a) = axes[d];
                let high = corner >> d & 1 == 1;
                at[d] = if high { i1 } else { i0 };
                let w = if high { a } else { 1.0 - a };
                weight = if d == 0 { w } else { weight * w };
            }
            if layers.is_some() {
                at[spatial] = layer;
            }
            let texel = if outside(&at) {
                outside_value().map(|b| f32::from_bits(b as u32))
            } else {
                let raw = self.fetch(private, buffer, &desc, at, item)?;
                convert(&desc, raw, true).map(|b| f32::from_bits(b as u32))
            };
            for k in 0..4 {
                sum[k] += weight * texel[k];
            }
        }
        self.note_stray(strayed, &desc, coord, form);
        Ok(sum.map(|v| v.to_bits() as u64))
    }

    /// Where a read under `CLK_ADDRESS_NONE` took a texel outside the image
    /// (`strayed`), notes it in `undefined`.
    fn note_stray(&mut self, strayed: bool, desc: &ImageDesc, coord: [u64; 4], form: ImageForm) {
        if strayed {
            self.undefined = Some(TrapKind::Undefined(format!(
                "image read at {} outside the {} image with no address mode (CLK_ADDRESS_NONE), \
                 which OpenCL leaves undefined; read as (0,0,0,0), as PoCL does",
                coordinates(coord, form.coord_n as usize, form.float_coords),
                extent(desc)
            )));
        }
    }

    /// One image write of four components (f32 bits or 32-bit integers).
    pub(super) fn image_write(
        &mut self,
        private: &mut Arena,
        handle: u64,
        coord: [u64; 4],
        value: [u64; 4],
        form: ImageForm,
        item: [u64; 3],
    ) -> Result<(), TrapKind> {
        let (buffer, desc) = self.image(handle)?;
        let class = desc.format.ty.class();
        if form.float_texel != (class == ChannelClass::Float) {
            return Err(trap(format!(
                "{} to a {} image",
                if form.float_texel {
                    "write_imagef"
                } else {
                    "write_imagei/write_imageui"
                },
                desc.format
            )));
        }
        let sizes = [desc.width, desc.height, desc.depth];
        let coords = desc.dim.shape_len();
        let mut at = [0i64; 3];
        for d in 0..coords {
            let i = i64::from(coord[d] as u32 as i32);
            if !(0..sizes[d] as i64).contains(&i) {
                self.undefined = Some(TrapKind::Undefined(format!(
                    "image write at {} outside the {} image, which OpenCL leaves undefined; \
                     dropped, as PoCL does",
                    coordinates(coord, coords, false),
                    extent(&desc)
                )));
                return Ok(());
            }
            at[d] = i;
        }
        let size = desc.format.ty.size_bytes() as u32;
        let texel = desc.format.texel_bytes() as u64;
        let index = (at[2] as u64 * desc.height + at[1] as u64) * desc.width + at[0] as u64;
        let pointer = memory::encode(SPACE_GLOBAL, buffer, index * texel);
        let loc = self.access(pointer, texel, 1, AccessKind::Store, item)?;
        self.count(pointer, texel, true);
        for k in 0..desc.format.order.channels() {
            let component = value[desc.format.order.component(k)];
            let raw = encode(desc.format.ty, component);
            self.write(private, loc, k as u64 * size as u64, size, raw);
        }
        Ok(())
    }

    /// `get_image_width` and the rest.
    pub(super) fn image_query(
        &self,
        handle: u64,
        query: ImageQuery,
        n: u8,
    ) -> Result<[u64; 4], TrapKind> {
        let (_, desc) = self.image(handle)?;
        let mut out = [0u64; 4];
        match query {
            ImageQuery::Size => {
                let sizes = [desc.width, desc.height, desc.depth];
                for (k, o) in out.iter_mut().enumerate().take((n as usize).min(3)) {
                    *o = sizes[k];
                }
            }
            ImageQuery::Format => out[0] = u64::from(desc.format.ty.cl_value() - 0x10D0),
            ImageQuery::Order => out[0] = u64::from(desc.format.order.cl_value() - 0x10B0),
        }
        Ok(out)
    }
}

/// The texel indices (i0, i1) and the weight `a` of i1 along one axis of
/// `n` texels, for the float coordinate `s` (§8.2). With nearest filtering
/// only i0 is used. Indices may lie outside the image (by one) only under
/// `CLK_ADDRESS_CLAMP` (the border) and `CLK_ADDRESS_NONE` (undefined).
fn address(s: f32, n: i64, sampler: SamplerDesc) -> (i64, i64, f32) {
    let w = n as f32;
    let floor = |x: f32| x.floor() as i64;
    let frac = |x: f32| x - x.floor();
    let linear = sampler.filter == FilterMode::Linear;
    match sampler.address {
        AddressMode::Repeat => {
            let u = (s - s.floor()) * w;
            if linear {
                let mut i0 = floor(u - 0.5);
                let mut i1 = i0 + 1;
                if i0 < 0 {
                    i0 += n;
                }
                if i1 > n - 1 {
                    i1 -= n;
                }
                (i0, i1, frac(u - 0.5))
            } else {
                let mut i = floor(u);
                if i > n - 1 {
                    i -= n;
                }
                (i, i, 0.0)
            }
        }
        AddressMode::MirroredRepeat => {
            let s2 = 2.0 * (0.5 * s).round_ties_even();
            let u = (s - s2).abs() * w;
            if linear {
                let i0 = floor(u - 0.5);
                ((i0).max(0), (i0 + 1).min(n - 1), frac(u - 0.5))
            } else {
                let i = floor(u).min(n - 1);
                (i, i, 0.0)
            }
        }
        mode => {
            let u = if sampler.normalized { s * w } else { s };
            let clamp = |i: i64| match mode {
                AddressMode::Clamp | AddressMode::None => i.clamp(-1, n),
                _ => i.clamp(0, n - 1),
            };
            if linear {
                let i0 = floor(u - 0.5);
                (clamp(i0), clamp(i0 + 1), frac(u - 0.5))
            } else {
                let i = clamp(floor(u));
                (i, i, 0.0)
            }
        }
    }
}

/// Raw channels (memory order) to the four components a read returns:
/// normalized and half channels as floats (§8.3.1), integers sign- or
/// zero-extended; missing components 0, a missing alpha 1.
fn convert(desc: &ImageDesc, raw: [u64; 4], float: bool) -> [u64; 4] {
    let ty = desc.format.ty;
    let order = desc.format.order;
    let one = if float { 1f32.to_bits() as u64 } else { 1 };
    let mut out = [0, 0, 0, one];
    for k in 0..order.channels() {
        let r = raw[k];
        out[order.component(k)] = match ty {
            // Times the rounded reciprocal, as PoCL and most runtimes
            // convert (within the 1.5 ulp OpenCL allows; a division differs
            // in the last bit for about half the values, which flips a later
            // rounding in real filters).
            ChannelType::UNORM_INT8 => (r as f32 * (1.0 / 255.0)).to_bits() as u64,
            ChannelType::UNORM_INT16 => (r as f32 * (1.0 / 65535.0)).to_bits() as u64,
            ChannelType::SNORM_INT8 => (f32::from(r as u8 as i8) * (1.0 / 127.0))
                .max(-1.0)
                .to_bits() as u64,
            ChannelType::SNORM_INT16 => (f32::from(r as u16 as i16) * (1.0 / 32767.0))
                .max(-1.0)
                .to_bits() as u64,
            ChannelType::HALF_FLOAT => half::to_f32(r as u16).to_bits() as u64,
            ChannelType::FLOAT => r & 0xFFFF_FFFF,
            ChannelType::SIGNED_INT8 => (r as u8 as i8 as i32 as u32) as u64,
            ChannelType::SIGNED_INT16 => (r as u16 as i16 as i32 as u32) as u64,
            ChannelType::SIGNED_INT32 | ChannelType::UNSIGNED_INT32 => r & 0xFFFF_FFFF,
            ChannelType::UNSIGNED_INT8 | ChannelType::UNSIGNED_INT16 => r,
        };
    }
    out
}

/// One component to its channel's bits (§8.3): normalized channels
/// `convert_*_sat_rte(f * scale)`, halves rounded to nearest even,
/// integers saturated to the channel.
fn encode(ty: ChannelType, component: u64) -> u64 {
    let f = f32::from_bits(component as u32);
    let i = component as u32 as i32;
    let u = component as u32;
    let norm = |x: f32, lo: f32, hi: f32| -> i64 {
        if x.is_nan() {
            0
        } else {
            x.round_ties_even().clamp(lo, hi) as i64
        }
    };
    match ty {
        ChannelType::UNORM_INT8 => norm(f * 255.0, 0.0, 255.0) as u64,
        ChannelType::UNORM_INT16 => norm(f * 65535.0, 0.0, 65535.0) as u64,
        ChannelType::SNORM_INT8 => norm(f * 127.0, -128.0, 127.0) as u8 as u64,
        ChannelType::SNORM_INT16 => norm(f * 32767.0, -32768.0, 32767.0) as u16 as u64,
        ChannelType::HALF_FLOAT => {
            u64::from(half::from_f64(f64::from(f), half::Rounding::NearestEven))
        }
        ChannelType::FLOAT => u64::from(u),
        ChannelType::SIGNED_INT8 => i.clamp(-128, 127) as u8 as u64,
        ChannelType::SIGNED_INT16 => i.clamp(-32768, 32767) as u16 as u64,
        ChannelType::SIGNED_INT32 => u64::from(u),
        ChannelType::UNSIGNED_INT8 => u.min(255) as u64,
        ChannelType::UNSIGNED_INT16 => u.min(65535) as u64,
        ChannelType::UNSIGNED_INT32 => u64::from(u),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_writes_round_to_nearest_even_and_saturate() {
        let f = |x: f32| x.to_bits() as u64;
        assert_eq!(encode(ChannelType::UNORM_INT8, f(0.5)), 128); // 127.5 -> 128
        assert_eq!(encode(ChannelType::UNORM_INT8, f(2.0)), 255);
        assert_eq!(encode(ChannelType::UNORM_INT8, f(-1.0)), 0);
        assert_eq!(encode(ChannelType::UNORM_INT8, f(f32::NAN)), 0);
        assert_eq!(encode(ChannelType::SNORM_INT8, f(-1.0)), 0x81);
        assert_eq!(
            encode(ChannelType::SIGNED_INT8, (-300i32) as u32 as u64),
            0x80
        );
        assert_eq!(encode(ChannelType::UNSIGNED_INT16, 70000), 65535);
    }

    #[test]
    fn addressing_follows_the_specification() {
        let s = |address, filter, normalized| SamplerDesc { normalized, address, filter };
        let nearest = FilterMode::Nearest;
        let linear = FilterMode::Linear;
        // Repeat, normalized: 1.1 of 4 texels is texel 0; -0.1 is texel 3.
        assert_eq!(address(1.1, 4, s(AddressMode::Repeat, nearest, true)).0, 0);
        assert_eq!(address(-0.1, 4, s(AddressMode::Repeat, nearest, true)).0, 3);
        // Mirrored: 1.1 mirrors to 0.9 -> texel 3.
        assert_eq!(
            address(1.1, 4, s(AddressMode::MirroredRepeat, nearest, true)).0,
            3
        );
        // Linear, clamp to edge, unnormalized 1.75: texels 1 and 2, a = 0.25.
        assert_eq!(
            address(1.75, 4, s(AddressMode::ClampToEdge, linear, false)),
            (1, 2, 0.25)
        );
        // Clamp keeps -1 and n for the border.
        assert_eq!(
            address(-3.0, 4, s(AddressMode::Clamp, nearest, false)).0,
            -1
        );
        // Repeat linear wraps both ends.
        assert_eq!(
            address(0.0, 4, s(AddressMode::Repeat, linear, true)),
            (3, 0, 0.5)
        );
    }
}
