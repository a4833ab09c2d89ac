//! What a manifest is made of, however it was written: the launch's
//! description and each argument's spec. Both parsers build these and the
//! manifest types hold them, so this module imports neither.

use crate::error::{ArgRef, ManifestError};
use crate::init::Initialiser;
use clflow_core::{Access, ElementType, ImageDesc, NdRange, ParseTypeError, SamplerDesc};
use std::fmt;
use std::path::{Path, PathBuf};

/// Which syntax a manifest was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestFormat {
    Toml,
    /// An Oclgrind simulator file, as `oclgrind-kernel` reads it.
    OclgrindSim,
}

/// How a buffer's contents are shown after a run (`dump`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpFormat {
    Decimal,
    Hex,
}

/// Everything a manifest says but its arguments: the file, the kernel and
/// how to build it, and the NDRange.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestInfo {
    /// The manifest file itself.
    pub path: PathBuf,
    pub format: ManifestFormat,
    pub name: Option<String>,
    pub description: Option<String>,
    /// The OpenCL C source, resolved against the manifest's directory.
    pub source: PathBuf,
    pub kernel: String,
    pub build_options: String,
    pub range: NdRange,
}

impl ManifestInfo {
    /// The directory relative paths in the manifest start from.
    pub fn directory(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }

    /// An input error at `line` of the manifest.
    pub(crate) fn error(&self, line: usize, message: impl Into<String>) -> ManifestError {
        ManifestError::input(&self.path, message).at_line(line)
    }
}

/// One argument, its kind and type known.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestArg {
    /// The manifest's name for the argument.
    pub name: Option<String>,
    pub description: Option<String>,
    /// The manifest line where the argument is described.
    pub line: usize,
    /// The kernel's name for the parameter, once the manifest is checked
    /// against the kernel's signature.
    pub param_name: Option<String>,
    pub spec: ArgSpec,
}

impl ManifestArg {
    /// The name messages and reports use: the manifest's, else the kernel's.
    pub fn display_name(&self) -> Option<&str> {
        self.name.as_deref().or(self.param_name.as_deref())
    }

    /// The argument as messages name it, being argument `index`.
    pub(crate) fn arg_ref(&self, index: usize) -> ArgRef {
        ArgRef { index, name: self.display_name().map(str::to_string) }
    }
}

/// What one argument is.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    /// A `__global` or `__constant` buffer.
    Buffer(BufferSpec),
    /// A value passed by copy: `bytes` are its little-endian image.
    Scalar(ScalarSpec),
    /// A `__local` pointer: only its size is given.
    Local(LocalSpec),
    /// A NULL pointer. `ty`, when given, is checked against the pointee.
    Null { ty: Option<ElementName> },
    /// The very buffer of the earlier argument `arg` (`same_as = 0`): an
    /// in-place kernel given one buffer for two parameters.
    SameBuffer { arg: usize },
    /// A `sampler_t`.
    Sampler(SamplerDesc),
}

/// What a pointer argument's `type` names: an OpenCL element, or a struct
/// as the kernel's source names it, whose layout only the kernel knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElementName {
    Builtin(ElementType),
    /// `struct Node`, `union U`, or a typedef such as `Body`.
    Struct(String),
}

impl ElementName {
    /// A manifest's `type`: an OpenCL type, else a C type name (`struct
    /// Node`, `Body`), which the kernel's signature tells apart from a typo.
    pub fn parse(text: &str) -> Result<ElementName, ParseTypeError> {
        let builtin_error = match text.parse::<ElementType>() {
            Ok(ty) => return Ok(ElementName::Builtin(ty)),
            Err(error) => error,
        };
        let identifier = |word: &str| {
            word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        match text.split_whitespace().collect::<Vec<_>>().as_slice() {
            [tag @ ("struct" | "union"), name] if identifier(name) => {
                Ok(ElementName::Struct(format!("{tag} {name}")))
            }
            [name] if identifier(name) && !matches!(*name, "struct" | "union") => {
                Ok(ElementName::Struct(name.to_string()))
            }
            _ => Err(builtin_error),
        }
    }
}

impl fmt::Display for ElementName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementName::Builtin(ty) => write!(f, "{ty}"),
            ElementName::Struct(name) => f.write_str(name),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct BufferSpec {
    /// The element the bytes are made, compared and shown as: `uchar` for
    /// a buffer of structs.
    pub ty: ElementType,
    /// Elements of `ty`, not bytes.
    pub count: u64,
    pub init: Initialiser,
    /// `noinit`: the kernel must write the contents before it reads them
    /// (an output the host never filled); `init` still gives the bytes
    /// (zeros, or a capture's file of what the device held), so that runs
    /// repeat, and `--detect uninit` treats them as never written.
    pub undefined: bool,
    pub access: Access,
    /// Show the contents after the run, in this format.
    pub dump: Option<DumpFormat>,
    /// The structs the buffer holds, where `type` names a struct.
    pub structs: Option<StructArray>,
    /// The image the buffer's texels make, where `type` names an image
    /// (`image2d`): `ty` is then a texel's channels (`uchar4` for
    /// `RGBA/UNORM_INT8`) and `count` the texels.
    pub image: Option<ImageDesc>,
}

/// A buffer of structs (`type = "struct Node"`), sized by the kernel's
/// layout of the struct: its [`BufferSpec`] holds `count × size_bytes`
/// bytes as `uchar`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructArray {
    /// As the manifest and the kernel's source name it.
    pub name: String,
    pub count: u64,
    pub size_bytes: u64,
}

impl BufferSpec {
    pub fn size_bytes(&self) -> u64 {
        self.count * self.ty.size_bytes() as u64
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScalarSpec {
    pub ty: ElementType,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LocalSpec {
    pub bytes: u64,
    /// The element type, when the manifest names one (checked against the pointee).
    pub ty: Option<ElementName>,
}

/// Whether a launch's work-groups must all be whole (OpenCL 1.x, or a
/// program built with `-cl-uniform-work-group-size`) or the last group of a
/// dimension may be smaller (OpenCL 2.0 and 3.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkGroups {
    Uniform,
    NonUniform,
}

impl WorkGroups {
    /// What a program built with `build_options` allows.
    pub fn of(build_options: &str) -> WorkGroups {
        let words: Vec<&str> = build_options.split_whitespace().collect();
        let std_2_or_later = words
            .iter()
            .any(|w| matches!(*w, "-cl-std=CL2.0" | "-cl-std=CL3.0" | "-cl-std=CLC++"));
        match std_2_or_later && !words.contains(&"-cl-uniform-work-group-size") {
            true => WorkGroups::NonUniform,
            false => WorkGroups::Uniform,
        }
    }
}

/// Checks an NDRange: no zero sizes, and where work-groups must be whole, a
/// local size (when given) that divides the global size in every
/// dimension. The error says which dimension's local size is at fault, if
/// one is.
pub(crate) fn check_range(
    range: &NdRange,
    groups: WorkGroups,
) -> Result<(), (Option<usize>, String)> {
    let dims = range.dims as usize;
    if let Some(d) = (0..dims).find(|&d| range.global[d] == 0) {
        return Err((
            None,
            format!(
                "global size is 0 in dimension {d}; every dimension needs at least 1 work-item"
            ),
        ));
    }
    if let Some(local) = range.local {
        if let Some(d) = (0..dims).find(|&d| local[d] == 0) {
            return Err((
                Some(d),
                format!("local size is 0 in dimension {d}; work-groups need at least 1 work-item"),
            ));
        }
        let whole = |d: usize| range.global[d].is_multiple_of(local[d]);
        if let Some(d) = (0..dims).find(|&d| groups == WorkGroups::Uniform && !whole(d)) {
            let (g, l) = (range.global[d], local[d]);
            return Err((
                Some(d),
                format!(
                    "local size {l} does not divide global size {g} in dimension {d} (OpenCL 1.2 needs whole work-groups: make the global size a multiple of {l}, e.g. {}, pick a divisor of {g}, or build with -cl-std=CL2.0 for a smaller last group)",
                    g.div_ceil(l) * l
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_check_names_the_dimension() {
        let range = NdRange {
            dims: 2,
            global: [64, 30, 1],
            local: Some([8, 4, 1]),
            offset: [0; 3],
        };
        let (dim, message) = check_range(&range, WorkGroups::Uniform).unwrap_err();
        assert_eq!(dim, Some(1));
        assert!(
            message.starts_with("local size 4 does not divide global size 30 in dimension 1"),
            "{message}"
        );
        // OpenCL 2.0 leaves a last group of 2 instead.
        check_range(&range, WorkGroups::NonUniform).unwrap();
    }

    #[test]
    fn the_build_options_say_whether_groups_may_be_partial() {
        assert_eq!(WorkGroups::of(""), WorkGroups::Uniform);
        assert_eq!(WorkGroups::of("-cl-std=CL1.2"), WorkGroups::Uniform);
        assert_eq!(
            WorkGroups::of("-DN=3 -cl-std=CL2.0"),
            WorkGroups::NonUniform
        );
        assert_eq!(WorkGroups::of("-cl-std=CL3.0"), WorkGroups::NonUniform);
        assert_eq!(
            WorkGroups::of("-cl-std=CL2.0 -cl-uniform-work-group-size"),
            WorkGroups::Uniform
        );
    }
}
