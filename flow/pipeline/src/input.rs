//! The first step every kernel command shares: from what the user named (an
//! OpenCL C file, or a manifest that names one) to a compiled, reflected
//! module, with the manifest checked against the kernel's real signature.

use crate::{Error, Level, Observer, Session};
use clflow_compile::{CompileError, CompileRequest, Compiled};
use clflow_core::Launch;
use clflow_manifest::{CheckedManifest, IntegerSigns, Manifest};
use clflow_spirv::{Module, ReflectedKernel, SpirvError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A kernel ready for the later stages.
pub struct KernelInput {
    /// Present when the user named a manifest; checked against `kernel()`.
    pub manifest: Option<CheckedManifest>,
    pub source: PathBuf,
    pub build_options: String,
    pub compiled: Arc<Compiled>,
    pub module: Arc<Module>,
    pub kernels: Vec<ReflectedKernel>,
}

/// A program compiled, loaded and reflected: what every launch of it
/// shares (a session keeps the last few, `Session::program`).
#[derive(Clone)]
pub struct CompiledProgram {
    pub compiled: Arc<Compiled>,
    pub module: Arc<Module>,
    pub kernels: Vec<ReflectedKernel>,
}

impl KernelInput {
    /// `options` with the buffers the manifest leaves undefined (`noinit`)
    /// for `--detect uninit`, and whether the module was built optimised
    /// (not through the fallback): then the calls it makes are the ones a
    /// device's compiler keeps.
    pub fn run_options(&self, options: &clflow_interp::RunOptions) -> clflow_interp::RunOptions {
        clflow_interp::RunOptions {
            undefined: self
                .manifest
                .as_ref()
                .map_or_else(Vec::new, |m| m.undefined()),
            optimised: !self.compiled.fallback_used,
            ..options.clone()
        }
    }

    /// The kernel the manifest launches.
    pub fn launched_kernel(&self) -> Option<&ReflectedKernel> {
        let manifest = self.manifest.as_ref()?;
        self.kernels
            .iter()
            .find(|k| k.signature.name == manifest.info().kernel)
    }
}

/// Whether a path names a manifest rather than OpenCL C.
pub fn is_manifest(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("toml") | Some("sim")
    )
}

/// How [`prepare`] tells what clang warned of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClangWarnings {
    /// As notes: a kernel the user wrote.
    Note,
    /// As details, which `-v` shows: an application's kernels, which the
    /// user neither wrote nor can change.
    Detail,
}

/// Loads the manifest (if `path` is one), compiles its kernel and checks the
/// launch against the kernel's signature. `extra_options` come after the
/// manifest's build options, so they win where both set the same thing.
pub fn prepare(
    path: &Path,
    extra_options: &str,
    use_cache: bool,
    warnings: ClangWarnings,
    session: &Session,
) -> crate::Result<KernelInput> {
    let observer = session.observer();
    let manifest = if is_manifest(path) {
        observer.detail(format!("manifest: {}", path.display()));
        Some(Manifest::load_building_with(path, extra_options).map_err(Error::from)?)
    } else {
        None
    };
    let (source, build_options) = match &manifest {
        Some(m) => (
            m.info().source.clone(),
            join_options(&m.info().build_options, extra_options),
        ),
        None => (path.to_path_buf(), extra_options.to_string()),
    };

    let CompiledProgram { compiled, module, kernels } =
        session.program(&source, &build_options, use_cache, || {
            load_program(&source, &build_options, use_cache, warnings, session)
        })?;

    let manifest = if let Some(manifest) = manifest {
        let Some(kernel) = kernels
            .iter()
            .find(|k| k.signature.name == manifest.info().kernel)
        else {
            let names: Vec<&str> = kernels.iter().map(|k| k.signature.name.as_str()).collect();
            return Err(Error::input(format!(
                "{}: kernel `{}` is not in {} (it has: {})",
                path.display(),
                manifest.info().kernel,
                source.display(),
                names.join(", ")
            ))
            .with_hint("set `kernel` in the manifest to one of those names"));
        };
        // Where the source spelled every parameter's type, `int` and `uint`
        // can be told apart; SPIR-V alone knows only widths.
        let signs = if kernel.source_types.iter().all(Option::is_some) {
            IntegerSigns::Declared
        } else {
            IntegerSigns::WidthOnly
        };
        let checked = manifest
            .check(&kernel.signature, signs)
            .map_err(Error::from)?;
        observer.detail(format!("manifest matches {}", kernel.declaration()));
        Some(checked)
    } else {
        None
    };

    Ok(KernelInput { manifest, source, build_options, compiled, module, kernels })
}

/// Compiles `source` with `build_options` and loads and reflects the
/// module, saying what the compiler said.
fn load_program(
    source: &Path,
    build_options: &str,
    use_cache: bool,
    warnings: ClangWarnings,
    session: &Session,
) -> crate::Result<CompiledProgram> {
    let observer = session.observer();
    let tools = session.tools()?;
    let compiler = &tools.compiler;
    if !use_cache {
        observer.detail("compile cache: bypassed (--no-cache)");
    } else if let Some(dir) = compiler.cache_dir() {
        observer.detail(format!("compile cache: {}", dir.display()));
    }
    let request = CompileRequest { use_cache, ..CompileRequest::new(source, build_options) };
    let compiled = compiler.compile(&request);
    // The compiler's trace (the commands it runs) is said once it is done.
    for line in tools.take_trace() {
        observer.detail(line);
    }
    let compiled = compiled.map_err(|e| compile_failure(e, observer))?;
    if !compiled.warnings.is_empty() {
        match warnings {
            ClangWarnings::Note => observer.note(&compiled.warnings),
            ClangWarnings::Detail => observer.detail(&compiled.warnings),
        }
    }
    for note in &compiled.notes {
        observer.note(format!("clflow: note: {note}"));
    }
    if compiled.fallback_used {
        observer.detail(
            "built through the fallback, unoptimised clang and opt-15 (the -O2 module failed translation or validation)",
        );
    }

    let module = clflow_spirv::load(&compiled.spirv).map_err(spirv_failure)?;
    let kernels = clflow_spirv::reflect_kernels(&module).map_err(spirv_failure)?;
    Ok(CompiledProgram {
        compiled: Arc::new(compiled),
        module: Arc::new(module),
        kernels,
    })
}

fn join_options(first: &str, second: &str) -> String {
    [first.trim(), second.trim()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn compile_failure(err: CompileError, observer: &dyn Observer) -> Error {
    if let CompileError::Diagnostics { diagnostics, .. } = &err {
        // Clang's own output, carets and notes included, comes first; the
        // error line below repeats its first error.
        observer.say(Level::Error, diagnostics);
    }
    Error::from(err)
}

fn spirv_failure(err: SpirvError) -> Error {
    // The module came from our own pipeline, so whatever is wrong with it
    // stops the analysis rather than blaming the user's input.
    Error::analysis(format!("compiled module: {err}"))
}

/// Loads and compiles a manifest (a manifest is required: it gives the inputs).
pub fn prepare_manifest(
    manifest: &Path,
    command: &str,
    session: &Session,
) -> crate::Result<(KernelInput, Launch)> {
    if !is_manifest(manifest) {
        return Err(Error::input(format!(
            "{}: `clflow {command}` needs a manifest (.toml or .sim), which gives the kernel's inputs",
            manifest.display()
        ))
        .with_hint("see kernels/*/ for example manifests"));
    }
    let input = prepare(
        manifest,
        session.build_options(),
        true,
        ClangWarnings::Note,
        session,
    )?;
    let launch = input
        .manifest
        .as_ref()
        .ok_or_else(|| Error::input(format!("{}: not a manifest", manifest.display())))?
        .materialize()?;
    Ok((input, launch))
}

/// The kernel's name in a report of several manifests: its own, or with its
/// manifest's stem where an earlier manifest took that name
/// (`hash (lookup3-paper)`, then `hash (lookup3-paper 2)`).
pub fn unique_name(kernel: &str, manifest: &Path, taken: &[&str]) -> String {
    let free = |name: &str| !taken.contains(&name);
    if free(kernel) {
        return kernel.to_string();
    }
    let stem = manifest
        .file_stem()
        .map_or_else(|| "manifest".into(), |s| s.to_string_lossy().into_owned());
    let mut name = format!("{kernel} ({stem})");
    let mut n = 2;
    while !free(&name) {
        name = format!("{kernel} ({stem} {n})");
        n += 1;
    }
    name
}
