//! OpenCL images and samplers: their geometry, texel formats and sampler
//! states, as kernels see them (`image2d_t`, `sampler_t`), manifests name
//! them (`format = "RGBA/UNORM_INT8"`) and devices create them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An image type's dimensionality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageDim {
    Image1d,
    Image2d,
    Image3d,
    Image1dArray,
    Image2dArray,
}

impl ImageDim {
    pub const ALL: [ImageDim; 5] = [
        ImageDim::Image1d,
        ImageDim::Image2d,
        ImageDim::Image3d,
        ImageDim::Image1dArray,
        ImageDim::Image2dArray,
    ];

    /// The manifest's spelling: `image2d`.
    pub fn name(self) -> &'static str {
        match self {
            ImageDim::Image1d => "image1d",
            ImageDim::Image2d => "image2d",
            ImageDim::Image3d => "image3d",
            ImageDim::Image1dArray => "image1d_array",
            ImageDim::Image2dArray => "image2d_array",
        }
    }

    pub fn parse(text: &str) -> Option<ImageDim> {
        let text = text.strip_suffix("_t").unwrap_or(text);
        ImageDim::ALL.into_iter().find(|d| d.name() == text)
    }

    /// Numbers in `shape`: width, then height or layers, then depth or layers.
    pub fn shape_len(self) -> usize {
        match self {
            ImageDim::Image1d => 1,
            ImageDim::Image2d | ImageDim::Image1dArray => 2,
            ImageDim::Image3d | ImageDim::Image2dArray => 3,
        }
    }

    pub fn is_array(self) -> bool {
        matches!(self, ImageDim::Image1dArray | ImageDim::Image2dArray)
    }

    /// Coordinates that address a texel inside one layer (1, 2 or 3).
    pub fn spatial(self) -> usize {
        match self {
            ImageDim::Image1d | ImageDim::Image1dArray => 1,
            ImageDim::Image2d | ImageDim::Image2dArray => 2,
            ImageDim::Image3d => 3,
        }
    }
}

impl fmt::Display for ImageDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_t", self.name())
    }
}

/// The channels a texel holds, in memory order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ChannelOrder {
    R,
    RG,
    RGBA,
    BGRA,
}

impl ChannelOrder {
    pub const ALL: [ChannelOrder; 4] = [
        ChannelOrder::R,
        ChannelOrder::RG,
        ChannelOrder::RGBA,
        ChannelOrder::BGRA,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ChannelOrder::R => "R",
            ChannelOrder::RG => "RG",
            ChannelOrder::RGBA => "RGBA",
            ChannelOrder::BGRA => "BGRA",
        }
    }

    pub fn channels(self) -> usize {
        match self {
            ChannelOrder::R => 1,
            ChannelOrder::RG => 2,
            ChannelOrder::RGBA | ChannelOrder::BGRA => 4,
        }
    }

    /// Which component (x=0 .. w=3) the channel at memory position `k` is.
    pub fn component(self, k: usize) -> usize {
        match self {
            ChannelOrder::BGRA => [2, 1, 0, 3][k],
            _ => k,
        }
    }

    /// `CL_R` ... as the OpenCL API numbers them.
    pub fn cl_value(self) -> u32 {
        match self {
            ChannelOrder::R => 0x10B0,
            ChannelOrder::RG => 0x10B2,
            ChannelOrder::RGBA => 0x10B5,
            ChannelOrder::BGRA => 0x10B6,
        }
    }

    pub fn from_cl(value: u32) -> Option<ChannelOrder> {
        ChannelOrder::ALL
            .into_iter()
            .find(|o| o.cl_value() == value)
    }

    /// Whether the order has an alpha channel (which sets the border colour).
    pub fn has_alpha(self) -> bool {
        matches!(self, ChannelOrder::RGBA | ChannelOrder::BGRA)
    }
}

/// How each channel is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[allow(non_camel_case_types)]
pub enum ChannelType {
    SNORM_INT8,
    SNORM_INT16,
    UNORM_INT8,
    UNORM_INT16,
    SIGNED_INT8,
    SIGNED_INT16,
    SIGNED_INT32,
    UNSIGNED_INT8,
    UNSIGNED_INT16,
    UNSIGNED_INT32,
    HALF_FLOAT,
    FLOAT,
}

/// What a kernel reads a channel type as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelClass {
    /// Normalized integers and floats: `read_imagef`/`write_imagef`.
    Float,
    /// `read_imagei`/`write_imagei`.
    Signed,
    /// `read_imageui`/`write_imageui`.
    Unsigned,
}

impl ChannelType {
    pub const ALL: [ChannelType; 12] = [
        ChannelType::SNORM_INT8,
        ChannelType::SNORM_INT16,
        ChannelType::UNORM_INT8,
        ChannelType::UNORM_INT16,
        ChannelType::SIGNED_INT8,
        ChannelType::SIGNED_INT16,
        ChannelType::SIGNED_INT32,
        ChannelType::UNSIGNED_INT8,
        ChannelType::UNSIGNED_INT16,
        ChannelType::UNSIGNED_INT32,
        ChannelType::HALF_FLOAT,
        ChannelType::FLOAT,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ChannelType::SNORM_INT8 => "SNORM_INT8",
            ChannelType::SNORM_INT16 => "SNORM_INT16",
            ChannelType::UNORM_INT8 => "UNORM_INT8",
            ChannelType::UNORM_INT16 => "UNORM_INT16",
            ChannelType::SIGNED_INT8 => "SIGNED_INT8",
            ChannelType::SIGNED_INT16 => "SIGNED_INT16",
            ChannelType::SIGNED_INT32 => "SIGNED_INT32",
            ChannelType::UNSIGNED_INT8 => "UNSIGNED_INT8",
            ChannelType::UNSIGNED_INT16 => "UNSIGNED_INT16",
            ChannelType::UNSIGNED_INT32 => "UNSIGNED_INT32",
            ChannelType::HALF_FLOAT => "HALF_FLOAT",
            ChannelType::FLOAT => "FLOAT",
        }
    }

    /// Bytes of one channel.
    pub fn size_bytes(self) -> usize {
        match self {
            ChannelType::SNORM_INT8
            | ChannelType::UNORM_INT8
            | ChannelType::SIGNED_INT8
            | ChannelType::UNSIGNED_INT8 => 1,
            ChannelType::SNORM_INT16
            | ChannelType::UNORM_INT16
            | ChannelType::SIGNED_INT16
            | ChannelType::UNSIGNED_INT16
            | ChannelType::HALF_FLOAT => 2,
            ChannelType::SIGNED_INT32 | ChannelType::UNSIGNED_INT32 | ChannelType::FLOAT => 4,
        }
    }

    pub fn class(self) -> ChannelClass {
        match self {
            ChannelType::SIGNED_INT8 | ChannelType::SIGNED_INT16 | ChannelType::SIGNED_INT32 => {
                ChannelClass::Signed
            }
            ChannelType::UNSIGNED_INT8
            | ChannelType::UNSIGNED_INT16
            | ChannelType::UNSIGNED_INT32 => ChannelClass::Unsigned,
            _ => ChannelClass::Float,
        }
    }

    /// The buffer element a channel's bytes read as (dumps, comparisons).
    pub fn scalar(self) -> crate::ScalarType {
        use crate::ScalarType as S;
        match self {
            ChannelType::SNORM_INT8 | ChannelType::SIGNED_INT8 => S::Char,
            ChannelType::UNORM_INT8 | ChannelType::UNSIGNED_INT8 => S::UChar,
            ChannelType::SNORM_INT16 | ChannelType::SIGNED_INT16 => S::Short,
            ChannelType::UNORM_INT16 | ChannelType::UNSIGNED_INT16 => S::UShort,
            ChannelType::SIGNED_INT32 => S::Int,
            ChannelType::UNSIGNED_INT32 => S::UInt,
            ChannelType::HALF_FLOAT => S::Half,
            ChannelType::FLOAT => S::Float,
        }
    }

    /// `CL_SNORM_INT8` ... as the OpenCL API numbers them.
    pub fn cl_value(self) -> u32 {
        match self {
            ChannelType::SNORM_INT8 => 0x10D0,
            ChannelType::SNORM_INT16 => 0x10D1,
            ChannelType::UNORM_INT8 => 0x10D2,
            ChannelType::UNORM_INT16 => 0x10D3,
            ChannelType::SIGNED_INT8 => 0x10D7,
            ChannelType::SIGNED_INT16 => 0x10D8,
            ChannelType::SIGNED_INT32 => 0x10D9,
            ChannelType::UNSIGNED_INT8 => 0x10DA,
            ChannelType::UNSIGNED_INT16 => 0x10DB,
            ChannelType::UNSIGNED_INT32 => 0x10DC,
            ChannelType::HALF_FLOAT => 0x10DD,
            ChannelType::FLOAT => 0x10DE,
        }
    }

    pub fn from_cl(value: u32) -> Option<ChannelType> {
        ChannelType::ALL.into_iter().find(|t| t.cl_value() == value)
    }
}

/// A texel format: `RGBA/UNORM_INT8`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ImageFormat {
    pub order: ChannelOrder,
    pub ty: ChannelType,
}

impl ImageFormat {
    pub fn texel_bytes(self) -> usize {
        self.order.channels() * self.ty.size_bytes()
    }

    /// Parses `ORDER/TYPE` (case-insensitive, `CL_` prefixes allowed).
    pub fn parse(text: &str) -> Result<ImageFormat, String> {
        let (order, ty) = text.split_once('/').ok_or_else(|| {
            format!("image format `{text}` is not ORDER/TYPE (e.g. \"RGBA/UNORM_INT8\")")
        })?;
        let clean = |s: &str| {
            let s = s.trim().to_ascii_uppercase();
            s.strip_prefix("CL_").map(str::to_string).unwrap_or(s)
        };
        let (order, ty) = (clean(order), clean(ty));
        let order = ChannelOrder::ALL
            .into_iter()
            .find(|o| o.name() == order)
            .ok_or_else(|| {
                format!(
                    "channel order `{order}` is not supported (supported: {})",
                    ChannelOrder::ALL.map(ChannelOrder::name).join(", ")
                )
            })?;
        let ty = ChannelType::ALL
            .into_iter()
            .find(|t| t.name() == ty)
            .ok_or_else(|| {
                format!(
                    "channel type `{ty}` is not supported (supported: {})",
                    ChannelType::ALL.map(ChannelType::name).join(", ")
                )
            })?;
        Ok(ImageFormat { order, ty })
    }
}

impl fmt::Display for ImageFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.order.name(), self.ty.name())
    }
}

/// One image: its type, format and size. Texels are stored row-major and
/// tightly packed: x fastest, then y, then z (or the layer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageDesc {
    pub dim: ImageDim,
    pub format: ImageFormat,
    pub width: u64,
    /// 1 for 1D images; the layers of a 1D array.
    pub height: u64,
    /// 1 for 1D and 2D images; the layers of a 2D array.
    pub depth: u64,
}

impl ImageDesc {
    /// From a manifest's `shape`: as many numbers as the type has.
    pub fn new(dim: ImageDim, format: ImageFormat, shape: &[u64]) -> Result<ImageDesc, String> {
        if shape.len() != dim.shape_len() {
            return Err(format!(
                "{} takes a shape of {} number{} ({}), not {}",
                dim.name(),
                dim.shape_len(),
                if dim.shape_len() == 1 { "" } else { "s" },
                match dim {
                    ImageDim::Image1d => "width",
                    ImageDim::Image2d => "width, height",
                    ImageDim::Image3d => "width, height, depth",
                    ImageDim::Image1dArray => "width, layers",
                    ImageDim::Image2dArray => "width, height, layers",
                },
                shape.len()
            ));
        }
        if shape.contains(&0) {
            return Err("an image's sizes are at least 1".into());
        }
        let at = |k: usize| shape.get(k).copied().unwrap_or(1);
        Ok(ImageDesc { dim, format, width: at(0), height: at(1), depth: at(2) })
    }

    pub fn shape(&self) -> Vec<u64> {
        [self.width, self.height, self.depth][..self.dim.shape_len()].to_vec()
    }

    pub fn texels(&self) -> u64 {
        self.width * self.height * self.depth
    }

    pub fn size_bytes(&self) -> u64 {
        self.texels() * self.format.texel_bytes() as u64
    }

    /// The element type a dump or comparison reads the texels as: the
    /// channel's scalar, one lane per channel.
    pub fn element(&self) -> crate::ElementType {
        let scalar = self.format.ty.scalar();
        match self.format.order.channels() {
            1 => crate::ElementType::scalar(scalar),
            n => crate::ElementType::vector(scalar, n as u8).expect("2 or 4 lanes"),
        }
    }
}

/// `CLK_ADDRESS_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressMode {
    None,
    ClampToEdge,
    Clamp,
    Repeat,
    MirroredRepeat,
}

impl AddressMode {
    pub const ALL: [AddressMode; 5] = [
        AddressMode::None,
        AddressMode::ClampToEdge,
        AddressMode::Clamp,
        AddressMode::Repeat,
        AddressMode::MirroredRepeat,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AddressMode::None => "none",
            AddressMode::ClampToEdge => "clamp_to_edge",
            AddressMode::Clamp => "clamp",
            AddressMode::Repeat => "repeat",
            AddressMode::MirroredRepeat => "mirrored_repeat",
        }
    }

    pub fn parse(text: &str) -> Option<AddressMode> {
        AddressMode::ALL.into_iter().find(|a| a.name() == text)
    }
}

/// `CLK_FILTER_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilterMode {
    Nearest,
    Linear,
}

impl FilterMode {
    pub fn name(self) -> &'static str {
        match self {
            FilterMode::Nearest => "nearest",
            FilterMode::Linear => "linear",
        }
    }

    pub fn parse(text: &str) -> Option<FilterMode> {
        [FilterMode::Nearest, FilterMode::Linear]
            .into_iter()
            .find(|f| f.name() == text)
    }
}

/// A sampler's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SamplerDesc {
    pub normalized: bool,
    pub address: AddressMode,
    pub filter: FilterMode,
}

impl SamplerDesc {
    /// The `sampler_t` bit field OpenCL C spells with `CLK_*` constants.
    pub fn bits(self) -> u32 {
        let address = match self.address {
            AddressMode::None => 0,
            AddressMode::ClampToEdge => 2,
            AddressMode::Clamp => 4,
            AddressMode::Repeat => 6,
            AddressMode::MirroredRepeat => 8,
        };
        let filter = match self.filter {
            FilterMode::Nearest => 0x10,
            FilterMode::Linear => 0x20,
        };
        u32::from(self.normalized) | address | filter
    }

    pub fn from_bits(bits: u32) -> Option<SamplerDesc> {
        let address = match bits & 0xE {
            0 => AddressMode::None,
            2 => AddressMode::ClampToEdge,
            4 => AddressMode::Clamp,
            6 => AddressMode::Repeat,
            8 => AddressMode::MirroredRepeat,
            _ => return None,
        };
        let filter = match bits & 0x30 {
            0x10 | 0 => FilterMode::Nearest,
            0x20 => FilterMode::Linear,
            _ => return None,
        };
        Some(SamplerDesc { normalized: bits & 1 != 0, address, filter })
    }
}

impl fmt::Display for SamplerDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sampler (normalized = {}, address = {}, filter = {})",
            self.normalized,
            self.address.name(),
            self.filter.name()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_and_print() {
        let f = ImageFormat::parse("rgba/cl_unorm_int8").unwrap();
        assert_eq!(f.to_string(), "RGBA/UNORM_INT8");
        assert_eq!(f.texel_bytes(), 4);
        assert!(ImageFormat::parse("RGB/FLOAT")
            .unwrap_err()
            .contains("channel order `RGB`"));
    }

    #[test]
    fn sampler_bits_round_trip() {
        for address in AddressMode::ALL {
            for filter in [FilterMode::Nearest, FilterMode::Linear] {
                for normalized in [false, true] {
                    let s = SamplerDesc { normalized, address, filter };
                    assert_eq!(SamplerDesc::from_bits(s.bits()), Some(s));
                }
            }
        }
        // CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST
        assert_eq!(
            SamplerDesc::from_bits(0x12).unwrap().address,
            AddressMode::ClampToEdge
        );
    }

    #[test]
    fn shapes_are_checked() {
        let f = ImageFormat::parse("R/FLOAT").unwrap();
        let d = ImageDesc::new(ImageDim::Image2d, f, &[4, 3]).unwrap();
        assert_eq!((d.width, d.height, d.depth, d.size_bytes()), (4, 3, 1, 48));
        assert!(ImageDesc::new(ImageDim::Image2d, f, &[4]).is_err());
    }
}
