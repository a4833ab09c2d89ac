//! OpenCL C element types as they appear in manifests and kernel signatures.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// An OpenCL C scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarType {
    Char,
    UChar,
    Short,
    UShort,
    Int,
    UInt,
    Long,
    ULong,
    Half,
    Float,
    Double,
}

impl ScalarType {
    pub const ALL: [ScalarType; 11] = [
        ScalarType::Char,
        ScalarType::UChar,
        ScalarType::Short,
        ScalarType::UShort,
        ScalarType::Int,
        ScalarType::UInt,
        ScalarType::Long,
        ScalarType::ULong,
        ScalarType::Half,
        ScalarType::Float,
        ScalarType::Double,
    ];

    /// The OpenCL C spelling (`uint`, `float` ...).
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Char => "char",
            ScalarType::UChar => "uchar",
            ScalarType::Short => "short",
            ScalarType::UShort => "ushort",
            ScalarType::Int => "int",
            ScalarType::UInt => "uint",
            ScalarType::Long => "long",
            ScalarType::ULong => "ulong",
            ScalarType::Half => "half",
            ScalarType::Float => "float",
            ScalarType::Double => "double",
        }
    }

    pub fn size_bytes(self) -> usize {
        match self {
            ScalarType::Char | ScalarType::UChar => 1,
            ScalarType::Short | ScalarType::UShort | ScalarType::Half => 2,
            ScalarType::Int | ScalarType::UInt | ScalarType::Float => 4,
            ScalarType::Long | ScalarType::ULong | ScalarType::Double => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::Half | ScalarType::Float | ScalarType::Double
        )
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            ScalarType::Char | ScalarType::Short | ScalarType::Int | ScalarType::Long
        ) || self.is_float()
    }

    /// The scalar type of an integer of `bits` width; SPIR-V integers carry no
    /// sign, so `signed` comes from how the value is used.
    pub fn integer(bits: u32, signed: bool) -> Option<ScalarType> {
        Some(match (bits, signed) {
            (8, true) => ScalarType::Char,
            (8, false) => ScalarType::UChar,
            (16, true) => ScalarType::Short,
            (16, false) => ScalarType::UShort,
            (32, true) => ScalarType::Int,
            (32, false) => ScalarType::UInt,
            (64, true) => ScalarType::Long,
            (64, false) => ScalarType::ULong,
            _ => return None,
        })
    }

    pub fn float(bits: u32) -> Option<ScalarType> {
        Some(match bits {
            16 => ScalarType::Half,
            32 => ScalarType::Float,
            64 => ScalarType::Double,
            _ => return None,
        })
    }

    /// The same width with the sign flipped away: SPIR-V cannot tell `int`
    /// from `uint`, so signatures compare integers by width alone.
    pub fn unsigned(self) -> ScalarType {
        match self {
            ScalarType::Char => ScalarType::UChar,
            ScalarType::Short => ScalarType::UShort,
            ScalarType::Int => ScalarType::UInt,
            ScalarType::Long => ScalarType::ULong,
            other => other,
        }
    }
}

/// A scalar or an OpenCL vector of 2, 3, 4, 8 or 16 lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ElementType {
    pub scalar: ScalarType,
    pub lanes: u8,
}

impl ElementType {
    pub const VECTOR_LANES: [u8; 5] = [2, 3, 4, 8, 16];

    pub fn scalar(scalar: ScalarType) -> Self {
        ElementType { scalar, lanes: 1 }
    }

    pub fn vector(scalar: ScalarType, lanes: u8) -> Option<Self> {
        (lanes == 1 || Self::VECTOR_LANES.contains(&lanes)).then_some(ElementType { scalar, lanes })
    }

    /// Bytes one element occupies in a buffer. A 3-lane vector takes the
    /// room of four, as OpenCL C lays it out.
    pub fn size_bytes(self) -> usize {
        let lanes = if self.lanes == 3 {
            4
        } else {
            self.lanes as usize
        };
        self.scalar.size_bytes() * lanes
    }

    /// The alignment OpenCL C requires: the element's own size.
    pub fn align_bytes(self) -> usize {
        self.size_bytes()
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lanes == 1 {
            f.write_str(self.scalar.name())
        } else {
            write!(f, "{}{}", self.scalar.name(), self.lanes)
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown OpenCL type `{0}` (expected e.g. char, uchar, short, ushort, int, uint, long, ulong, half, float, double, optionally with 2, 3, 4, 8 or 16 lanes: float4)")]
pub struct ParseTypeError(pub String);

impl FromStr for ScalarType {
    type Err = ParseTypeError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let spelled = text.trim();
        let aliases = [
            ("unsigned char", ScalarType::UChar),
            ("unsigned short", ScalarType::UShort),
            ("unsigned int", ScalarType::UInt),
            ("unsigned long", ScalarType::ULong),
            ("unsigned", ScalarType::UInt),
        ];
        ScalarType::ALL
            .into_iter()
            .find(|s| s.name() == spelled)
            .or_else(|| aliases.iter().find(|(a, _)| *a == spelled).map(|(_, s)| *s))
            .ok_or_else(|| ParseTypeError(text.to_string()))
    }
}

impl FromStr for ElementType {
    type Err = ParseTypeError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let spelled = text.trim();
        let digits_at = spelled
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(spelled.len());
        let (base, lanes) = spelled.split_at(digits_at);
        let scalar: ScalarType = base.parse().map_err(|_| ParseTypeError(text.to_string()))?;
        let lanes: u8 = if lanes.is_empty() {
            1
        } else {
            lanes
                .parse()
                .map_err(|_| ParseTypeError(text.to_string()))?
        };
        if lanes == 1 && digits_at != spelled.len() {
            return Err(ParseTypeError(text.to_string()));
        }
        ElementType::vector(scalar, lanes).ok_or_else(|| ParseTypeError(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_scalars_and_vectors() {
        assert_eq!(
            "uint".parse::<ElementType>().unwrap(),
            ElementType::scalar(ScalarType::UInt)
        );
        let f4: ElementType = "float4".parse().unwrap();
        assert_eq!(
            (f4.scalar, f4.lanes, f4.size_bytes()),
            (ScalarType::Float, 4, 16)
        );
        assert_eq!("uchar16".parse::<ElementType>().unwrap().size_bytes(), 16);
        assert_eq!(
            "unsigned int".parse::<ElementType>().unwrap().scalar,
            ScalarType::UInt
        );
    }

    #[test]
    fn three_lane_vectors_take_four_lanes_of_room() {
        assert_eq!("float3".parse::<ElementType>().unwrap().size_bytes(), 16);
        assert_eq!("short3".parse::<ElementType>().unwrap().size_bytes(), 8);
    }

    #[test]
    fn rejects_bad_spellings() {
        for bad in ["float5", "int1", "quad", "float4x", ""] {
            assert!(
                bad.parse::<ElementType>().is_err(),
                "{bad} should not parse"
            );
        }
    }

    #[test]
    fn display_round_trips() {
        for text in ["uint", "float4", "double16", "char3", "half2"] {
            assert_eq!(text.parse::<ElementType>().unwrap().to_string(), text);
        }
    }
}
