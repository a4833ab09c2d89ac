//! The manifest model: one kernel launch with its inputs, however it was
//! written, and how it becomes a [`Launch`].

use crate::error::{ArgRef, ManifestError};
use crate::init::{generate, Initialiser};
use crate::sim_format::PendingSimArg;
use crate::{sim_format, toml_format};
use clflow_core::{Access, ArgValue, ElementType, Launch, LaunchArg, NdRange};
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

/// One kernel launch: the kernel, its NDRange and every argument's value.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
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
    pub args: Vec<ManifestArg>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ManifestArg {
    /// The manifest's name for the argument.
    pub name: Option<String>,
    pub description: Option<String>,
    /// The manifest line where the argument is described.
    pub line: usize,
    /// The kernel's name for the parameter, once [`Manifest::check_signature`]
    /// has seen it.
    pub param_name: Option<String>,
    pub spec: ArgSpec,
}

impl ManifestArg {
    /// The name messages and reports use: the manifest's, else the kernel's.
    pub fn display_name(&self) -> Option<&str> {
        self.name.as_deref().or(self.param_name.as_deref())
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
    Null { ty: Option<ElementType> },
    /// A `.sim` argument, whose kind (buffer, scalar, local) and sometimes
    /// type only the kernel's signature tells; [`Manifest::check_signature`]
    /// turns it into one of the others.
    Pending(PendingSimArg),
}

#[derive(Debug, Clone, PartialEq)]
pub struct BufferSpec {
    pub ty: ElementType,
    /// Elements, not bytes.
    pub count: u64,
    pub init: Initialiser,
    pub access: Access,
    /// Show the contents after the run, in this format.
    pub dump: Option<DumpFormat>,
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
    pub ty: Option<ElementType>,
}

impl Manifest {
    /// Reads a manifest: TOML, or an Oclgrind `.sim` file (by its `.sim`
    /// extension, or, for other extensions, by content: a TOML manifest's
    /// first statement is a `key = value` or a `[table]`).
    pub fn load(path: impl AsRef<Path>) -> Result<Manifest, ManifestError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ManifestError::input(path, format!("cannot read the manifest: {e}"))
                .with_hint("give the path of a .toml or .sim manifest")
        })?;
        let is_sim = match path.extension().and_then(|e| e.to_str()) {
            Some("sim") => true,
            Some("toml") => false,
            _ => looks_like_sim(&text),
        };
        if is_sim {
            sim_format::parse(path, &text)
        } else {
            toml_format::parse(path, &text)
        }
    }

    /// The directory relative paths in the manifest start from.
    pub fn directory(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }

    /// The buffers whose contents should be shown after the run.
    pub fn dumps(&self) -> impl Iterator<Item = (usize, DumpFormat)> + '_ {
        self.args
            .iter()
            .enumerate()
            .filter_map(|(index, arg)| match &arg.spec {
                ArgSpec::Buffer(BufferSpec {
                    dump: Some(format), ..
                }) => Some((index, *format)),
                _ => None,
            })
    }

    pub(crate) fn arg_ref(&self, index: usize) -> ArgRef {
        ArgRef {
            index,
            name: self
                .args
                .get(index)
                .and_then(|a| a.display_name())
                .map(str::to_string),
        }
    }

    /// An input error at `line`, about argument `index` when given.
    pub(crate) fn error(
        &self,
        line: usize,
        arg: Option<usize>,
        message: impl Into<String>,
    ) -> ManifestError {
        let error = ManifestError::input(&self.path, message).at_line(line);
        match arg {
            Some(index) => error.for_arg(self.arg_ref(index)),
            None => error,
        }
    }

    /// Builds the launch: every buffer's bytes, every scalar's bytes, the
    /// local sizes and the NDRange. Buffers are generated or read straight
    /// into their final allocation.
    pub fn materialize(&self) -> Result<Launch, ManifestError> {
        let args = self
            .args
            .iter()
            .enumerate()
            .map(|(index, arg)| {
                let value = match &arg.spec {
                    ArgSpec::Buffer(buffer) => ArgValue::Buffer {
                        ty: buffer.ty,
                        access: buffer.access,
                        bytes: generate(buffer.ty, buffer.count, &buffer.init)
                            .map_err(|why| self.error(arg.line, Some(index), why))?,
                    },
                    ArgSpec::Scalar(scalar) => ArgValue::Scalar {
                        bytes: scalar.bytes.clone(),
                    },
                    ArgSpec::Local(local) => ArgValue::Local { bytes: local.bytes },
                    ArgSpec::Null { .. } => ArgValue::NullPointer,
                    ArgSpec::Pending(_) => {
                        return Err(self
                            .error(
                                arg.line,
                                Some(index),
                                "a `.sim` argument is only known once checked against the kernel's signature",
                            )
                            .with_hint("call check_signature before materialize")
                            .analysis())
                    }
                };
                Ok(LaunchArg {
                    name: arg.display_name().map(str::to_string),
                    value,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Launch {
            kernel: self.kernel.clone(),
            range: self.range.clone(),
            args,
        })
    }
}

/// A `.sim` file starts with a bare file name; a TOML manifest with
/// `key = value` or `[table]`.
fn looks_like_sim(text: &str) -> bool {
    let first = text
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .find(|line| !line.is_empty());
    match first {
        Some(line) => !(line.contains('=') || line.starts_with('[')),
        None => false,
    }
}

/// Checks an NDRange the OpenCL 1.2 way: 1 to 3 dimensions, no zero sizes,
/// a local size (when given) that divides the global size in every dimension.
/// `at(d)` says where dimension d's local size was written.
pub(crate) fn check_range(range: &NdRange) -> Result<(), (Option<usize>, String)> {
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
        if let Some(d) = (0..dims).find(|&d| !range.global[d].is_multiple_of(local[d])) {
            let (g, l) = (range.global[d], local[d]);
            return Err((
                Some(d),
                format!(
                    "local size {l} does not divide global size {g} in dimension {d} (OpenCL 1.2 needs whole work-groups: make the global size a multiple of {l}, e.g. {}, or pick a divisor of {g})",
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
    fn sniffs_sim_files_by_content() {
        assert!(looks_like_sim("# a comment\nkernel.cl\nadd\n16 1 1\n"));
        assert!(!looks_like_sim("# manifest\nsource = \"k.cl\"\n"));
        assert!(!looks_like_sim("[[arg]]\n"));
    }

    #[test]
    fn range_check_names_the_dimension() {
        let range = NdRange {
            dims: 2,
            global: [64, 30, 1],
            local: Some([8, 4, 1]),
            offset: [0; 3],
        };
        let (dim, message) = check_range(&range).unwrap_err();
        assert_eq!(dim, Some(1));
        assert!(
            message.starts_with("local size 4 does not divide global size 30 in dimension 1"),
            "{message}"
        );
    }
}
