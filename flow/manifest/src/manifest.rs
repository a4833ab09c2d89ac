//! A manifest's two stages: as read from its file ([`Manifest`], whose
//! `.sim` arguments wait for the kernel's signature) and as checked
//! ([`CheckedManifest`], every argument resolved). Only the checked one
//! becomes a [`Launch`], so a launch from an unchecked manifest does not
//! compile.

use crate::error::{ArgRef, ManifestError};
use crate::init::generate;
use crate::sim_format::{self, PendingSimArg};
use crate::spec::{ArgSpec, BufferSpec, DumpFormat, ManifestArg, ManifestInfo};
use crate::structs::PendingStructs;
use crate::toml_format;
use clflow_core::{ArgValue, Launch, LaunchArg};
use std::path::Path;

/// A manifest as its file gives it. [`Manifest::check`] turns it into a
/// [`CheckedManifest`], the only kind that materialises:
///
/// ```compile_fail
/// # fn main() -> Result<(), clflow_manifest::ManifestError> {
/// let launch = clflow_manifest::Manifest::load("k.toml")?.materialize()?;
/// # Ok(())
/// # }
/// ```
///
/// ```no_run
/// # fn main() -> Result<(), clflow_manifest::ManifestError> {
/// # let signature: clflow_core::KernelSignature = unimplemented!();
/// use clflow_manifest::{IntegerSigns, Manifest};
/// let launch = Manifest::load("k.toml")?
///     .check(&signature, IntegerSigns::Declared)?
///     .materialize()?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub(crate) info: ManifestInfo,
    pub(crate) args: Vec<ParsedArg>,
}

/// One argument as its file gives it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ParsedArg {
    /// A TOML `[[arg]]`, whose kind and type the manifest writes out.
    Typed(ManifestArg),
    /// A `.sim` argument, whose kind (buffer, scalar, local) and sometimes
    /// type only the kernel's signature tells.
    Sim(PendingSimArg),
    /// A TOML buffer of structs, whose size only the kernel's layout tells.
    Structs(PendingStructs),
}

impl ParsedArg {
    pub(crate) fn line(&self) -> usize {
        match self {
            ParsedArg::Typed(arg) => arg.line,
            ParsedArg::Sim(pending) => pending.line,
            ParsedArg::Structs(pending) => pending.line,
        }
    }
}

impl Manifest {
    /// Reads a manifest: TOML, or an Oclgrind `.sim` file (by its `.sim`
    /// extension, or, for other extensions, by content: a TOML manifest's
    /// first statement is a `key = value` or a `[table]`).
    pub fn load(path: impl AsRef<Path>) -> Result<Manifest, ManifestError> {
        Self::load_building_with(path, "")
    }

    /// [`Manifest::load`] of a launch to be built with `extra_options`
    /// after the manifest's own (a command's `--build-options`): they too
    /// decide whether the last work-group may be smaller (`-cl-std=CL2.0`).
    pub fn load_building_with(
        path: impl AsRef<Path>,
        extra_options: &str,
    ) -> Result<Manifest, ManifestError> {
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
        let (info, args) = if is_sim {
            let (info, args) = sim_format::parse(path, &text, extra_options)?;
            (info, args.into_iter().map(ParsedArg::Sim).collect())
        } else {
            toml_format::parse(path, &text, extra_options)?
        };
        Ok(Manifest { info, args })
    }

    pub fn info(&self) -> &ManifestInfo {
        &self.info
    }

    /// The manifest as written, for a caller with no compiled kernel to
    /// check it against: a TOML manifest's arguments keep the types it
    /// gives them, unchecked; a `.sim` manifest fails, as its arguments'
    /// kinds come from the kernel. Prefer [`Manifest::check`].
    pub fn check_typed(self) -> Result<CheckedManifest, ManifestError> {
        let Manifest { info, args } = self;
        let args = args
            .into_iter()
            .enumerate()
            .map(|(index, arg)| match arg {
                ParsedArg::Typed(arg) => Ok(arg),
                ParsedArg::Sim(pending) => Err(info
                    .error(
                        pending.line,
                        "a `.sim` argument's kind (buffer, scalar or __local size) comes from the kernel's signature",
                    )
                    .for_arg(ArgRef { index, name: None })
                    .with_hint("check the manifest against the compiled kernel, or use a TOML manifest")),
                ParsedArg::Structs(pending) => Err(info
                    .error(
                        pending.line,
                        "a buffer of structs takes its size from the kernel's layout of the struct",
                    )
                    .for_arg(ArgRef { index, name: pending.name.clone() })
                    .with_hint("check the manifest against the compiled kernel, or give the bytes as type = \"uchar\"")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CheckedManifest { info, args })
    }
}

/// A manifest whose every argument is resolved: made by [`Manifest::check`]
/// (against the kernel's signature) or [`Manifest::check_typed`].
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedManifest {
    pub(crate) info: ManifestInfo,
    pub(crate) args: Vec<ManifestArg>,
}

impl CheckedManifest {
    pub fn info(&self) -> &ManifestInfo {
        &self.info
    }

    /// One argument per kernel parameter, in order.
    pub fn args(&self) -> &[ManifestArg] {
        &self.args
    }

    /// The arguments whose contents are undefined (`noinit`): the kernel
    /// must write them before it reads them.
    pub fn undefined(&self) -> Vec<usize> {
        self.args
            .iter()
            .enumerate()
            .filter(|(_, arg)| {
                matches!(
                    &arg.spec,
                    ArgSpec::Buffer(BufferSpec { undefined: true, .. })
                )
            })
            .map(|(index, _)| index)
            .collect()
    }

    /// The buffers whose contents should be shown after the run.
    pub fn dumps(&self) -> impl Iterator<Item = (usize, DumpFormat)> + '_ {
        self.args
            .iter()
            .enumerate()
            .filter_map(|(index, arg)| match &arg.spec {
                ArgSpec::Buffer(BufferSpec { dump: Some(format), .. }) => Some((index, *format)),
                _ => None,
            })
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
                    ArgSpec::Buffer(buffer) => {
                        let bytes =
                            generate(buffer.ty, buffer.count, &buffer.init).map_err(|why| {
                                self.info.error(arg.line, why).for_arg(arg.arg_ref(index))
                            })?;
                        match buffer.image {
                            Some(image) => ArgValue::Image { image, access: buffer.access, bytes },
                            None => {
                                ArgValue::Buffer { ty: buffer.ty, access: buffer.access, bytes }
                            }
                        }
                    }
                    ArgSpec::Sampler(sampler) => ArgValue::Sampler(*sampler),
                    ArgSpec::Scalar(scalar) => ArgValue::Scalar { bytes: scalar.bytes.clone() },
                    ArgSpec::Local(local) => ArgValue::Local { bytes: local.bytes },
                    ArgSpec::Null { .. } => ArgValue::NullPointer,
                    ArgSpec::SameBuffer { arg } => ArgValue::SameBuffer { arg: *arg },
                };
                Ok(LaunchArg { name: arg.display_name().map(str::to_string), value })
            })
            .collect::<Result<Vec<_>, ManifestError>>()?;
        Ok(Launch {
            kernel: self.info.kernel.clone(),
            range: self.info.range.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_sim_files_by_content() {
        assert!(looks_like_sim("# a comment\nkernel.cl\nadd\n16 1 1\n"));
        assert!(!looks_like_sim("# manifest\nsource = \"k.cl\"\n"));
        assert!(!looks_like_sim("[[arg]]\n"));
    }
}
