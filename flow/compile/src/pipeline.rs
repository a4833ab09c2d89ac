//! The tool invocations that turn OpenCL C into validated SPIR-V.
//!
//! ```text
//! clang-15 -E                            preprocessed source (for the cache key)
//! clang-15 -target spir64 -O2 -emit-llvm  LLVM IR text, with line tables
//!          -S -fno-slp-vectorize          (location-only loop nodes dropped,
//!          -gline-tables-only              freezes written as copies,
//!                                          narrow switches widened)
//! opt-15                                  LLVM bitcode
//! llvm-spirv-15 --spirv-max-version=1.1   SPIR-V with OpLine, its other
//!                                         debug information then stripped
//!                                         back to 1.0 (clflow_spirv)
//! spirv-val                               validation
//! ```
//!
//! Line tables change no code clang generates; a module whose build with
//! them fails is built again without them, and then has no source lines.
//!
//! llvm-spirv-15 mistranslates some -O2 bitcode of valid kernels:
//! - the `i2` (or `i3`, `i30`) switches LLVM makes of `switch (x & 3)`
//!   ("InvalidBitWidth", exit 10, an empty file) and the `freeze`
//!   instructions -O2 makes of the dividend of `x / w` and `x % w` ("Can't
//!   translate llvm instruction", exit 15). Both are rewritten in the IR
//!   text, as forms it translates ([`narrow_switches_widened`],
//!   [`freezes_as_copies`]);
//! - loops behind a guard (`if (i < n) for (...)`) and triangular loop
//!   nests, whose blocks it writes before their dominators. This one is
//!   mended before validation ([`clflow_spirv::order_blocks`]), so the -O2
//!   module is kept.
//!
//! When the -O2 module still fails translation or validation, the kernel is rebuilt
//! unoptimised (-O1's IR, no pass run) and optimised by an `opt-15` pass list
//! that keeps what matters for counting and makes none of those forms.

use crate::loop_locations::drop_location_only_loops;
use crate::tools::{render, Tool};
use crate::translatable::{explicit_mads_unfused, freezes_as_copies, narrow_switches_widened};
use crate::CompileError;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The optimisations the fallback applies: the scalar clean-ups and loop
/// transforms that matter for counting, without switch narrowing.
/// (`licm` runs inside `loop-mssa`: opt-15 aborts on a bare `licm`.)
pub const FALLBACK_PASSES: &str =
    "sroa,early-cse,simplifycfg,loop-rotate,loop-mssa(licm),indvars,loop-unroll";

/// clang's flags for the fallback's unoptimised module: -O1's IR with no
/// pass run. At -O0 clang marks every function `noinline` (and `optnone`),
/// the kernel too, and those marks would say that the device keeps every
/// call, where a device's compiler inlines all but the source's `noinline`.
const FALLBACK_CLANG: [&str; 3] = ["-O1", "-Xclang", "-disable-llvm-passes"];

/// clang's optimisation for the primary module: -O2 without the SLP
/// vectoriser. It packs a work-item's scalar operations into vectors, and
/// builds some of its trees twice: a loop's multiply-add tree once for the
/// loop and once more for the value used after it (a later pass moves that
/// copy to the loop's exit, where it runs again each time the loop ends), and
/// loads a register tile's values twice, as a vector and again one by one.
/// Those copies are not the kernel's work or traffic; without SLP the
/// counts are the source's. (A device's compiler vectorises across
/// work-items, not within one.)
const PRIMARY_CLANG: [&str; 2] = ["-O2", "-fno-slp-vectorize"];

/// C99 makes a helper declared `inline` without `static` an inline
/// definition only, which leaves calls clang did not inline undefined; GNU89
/// semantics define it, as OpenCL drivers do.
pub const GNU89_INLINE: &str = "-fgnu89-inline";

/// The functions a module calls but does not define (none for a module that
/// does not load: its own check reports that).
fn undefined_calls(spirv: &[u8]) -> Vec<String> {
    clflow_spirv::load(spirv)
        .map(|module| clflow_spirv::undefined_calls(&module))
        .unwrap_or_default()
}

/// A directory for one build's files, removed with it.
fn work_dir() -> Result<tempfile::TempDir, CompileError> {
    tempfile::Builder::new()
        .prefix("clflow-compile-")
        .tempdir()
        .map_err(|e| CompileError::Io {
            what: "cannot create a temporary directory".into(),
            reason: e.to_string(),
        })
}

/// Arguments every clang invocation shares: the source is OpenCL C
/// whatever its file is called (`-x cl`).
fn clang_base(clang: &Tool, options: &[String]) -> Command {
    let mut command = clang.command();
    command
        .args(["-x", "cl", "-target", "spir64"])
        .args(options);
    command
}

#[derive(Clone, Copy)]
pub struct Pipeline<'a> {
    pub clang: &'a Tool,
    pub llvm_spirv: &'a Tool,
    pub spirv_val: &'a Tool,
    /// Needed only by the fallback, so looked up only then.
    pub opt: &'a dyn Fn() -> Result<Tool, CompileError>,
    pub trace: &'a dyn Fn(&str),
    pub source: &'a Path,
    pub options: &'a [String],
    /// Build with line tables, falling back to none where that fails.
    pub lines: bool,
}

/// clang's flags for line tables alone (no types or variables), files named
/// as given, from where clflow runs.
const LINE_TABLES: [&str; 2] = ["-gline-tables-only", "-fdebug-compilation-dir=."];

/// A module built from source.
pub struct Built {
    pub spirv: Vec<u8>,
    pub fallback_used: bool,
    /// What clang said about a kernel it compiled (warnings), if anything.
    pub warnings: String,
}

impl Pipeline<'_> {
    /// The source after the preprocessor, which the cache key hashes.
    pub fn preprocess(&self) -> Result<Vec<u8>, CompileError> {
        let mut command = clang_base(self.clang, self.options);
        // Line markers kept: the module's OpLines depend on where each line
        // stands, not only on what the code is.
        command.arg("-E").arg(self.source).args(["-o", "-"]);
        let output = self.run(self.clang, &mut command)?;
        if !output.status.success() {
            return Err(diagnostics(&output));
        }
        Ok(output.stdout)
    }

    /// Builds the module; a module that calls a function it does not define
    /// is rebuilt once with [`GNU89_INLINE`], and is an error if it still
    /// does.
    pub fn build(&self) -> Result<Built, CompileError> {
        let built = self.build_once()?;
        let undefined = undefined_calls(&built.spirv);
        if undefined.is_empty() || self.options.iter().any(|o| o == GNU89_INLINE) {
            return self.defined(built, undefined);
        }
        (self.trace)(&format!(
            "the module calls `{}` without defining it (a helper declared `inline` without \
             `static`?); rebuilding with {GNU89_INLINE}, which defines such helpers",
            undefined.join("`, `")
        ));
        let options: Vec<String> = self
            .options
            .iter()
            .cloned()
            .chain([GNU89_INLINE.to_string()])
            .collect();
        let again = Pipeline { options: &options, ..*self }.build_once()?;
        let undefined = undefined_calls(&again.spirv);
        self.defined(again, undefined)
    }

    fn defined(&self, built: Built, undefined: Vec<String>) -> Result<Built, CompileError> {
        if undefined.is_empty() {
            Ok(built)
        } else {
            Err(CompileError::Undefined { kernel: self.source.to_path_buf(), functions: undefined })
        }
    }

    /// The -O2 module if it builds, else the fallback's; each with line
    /// tables where they build, so that line information never decides
    /// which of the two a kernel gets.
    fn build_once(&self) -> Result<Built, CompileError> {
        let work = work_dir()?;
        let primary = self.with_lines_or_without(|p| p.primary(work.path()));
        let (spirv, warnings, fallback_used) = match primary {
            Ok((spirv, warnings)) => (spirv, warnings, false),
            Err(err @ CompileError::Diagnostics { .. }) => return Err(err),
            Err(primary) => {
                (self.trace)(&format!(
                    "the -O2 module failed ({primary}); rebuilding unoptimised and optimising with opt-15 -passes='{FALLBACK_PASSES}'"
                ));
                let (spirv, warnings) = self
                    .with_lines_or_without(|p| p.fallback(work.path()))
                    .map_err(|fallback| fallback.after_failed_primary(&primary))?;
                (spirv, warnings, true)
            }
        };
        Ok(Built { spirv, fallback_used, warnings })
    }

    /// `step` with line tables where asked for and, where that fails but for
    /// the kernel's own errors, again without them.
    fn with_lines_or_without<T>(
        &self,
        step: impl Fn(&Pipeline) -> Result<T, CompileError>,
    ) -> Result<T, CompileError> {
        if !self.lines {
            return step(self);
        }
        let with = Pipeline { lines: true, ..*self };
        match step(&with) {
            Err(err @ CompileError::Diagnostics { .. }) => Err(err),
            Err(err) => {
                (self.trace)(&format!(
                    "the build with line tables failed ({err}); building without them, so \
                     the counts name no source lines"
                ));
                let without = Pipeline { lines: false, ..*self };
                step(&without)
            }
            done => done,
        }
    }

    /// clang -O2 (no SLP), llvm-spirv and spirv-val: the module and clang's
    /// warnings.
    fn primary(&self, work: &Path) -> Result<(Vec<u8>, String), CompileError> {
        let bitcode = work.join("kernel.bc");
        let warnings = self.clang_to_bitcode(&PRIMARY_CLANG, &bitcode)?;
        let spirv = self.translate_and_validate(&bitcode, &work.join("kernel.spv"))?;
        Ok((spirv, warnings))
    }

    /// llvm-spirv then spirv-val: the two steps whose failures on valid
    /// kernels the fallback exists for.
    fn translate_and_validate(
        &self,
        bitcode: &Path,
        spirv_path: &Path,
    ) -> Result<Vec<u8>, CompileError> {
        let spirv = self.translate(bitcode, spirv_path)?;
        self.order_and_validate(spirv, spirv_path)
    }

    /// Gives vector selects by a scalar condition a vector one
    /// (`clflow_spirv::splat_select_conditions`), drops the module's merge
    /// declarations (`clflow_spirv::strip_merges`) and its phis' repeated
    /// predecessors (`clflow_spirv::dedupe_phi_parents`),
    /// puts blocks after their dominators where they are not, writes the
    /// module to `spirv_path` and validates it there.
    fn order_and_validate(
        &self,
        mut spirv: Vec<u8>,
        spirv_path: &Path,
    ) -> Result<Vec<u8>, CompileError> {
        let mut changed = false;
        if let Ok(Some(merged)) = clflow_spirv::merge_sampler_types(&spirv) {
            (self.trace)("merged the module's duplicate OpTypeSampler declarations");
            (spirv, changed) = (merged, true);
        }
        if let Ok(Some(splatted)) = clflow_spirv::splat_select_conditions(&spirv) {
            (self.trace)("gave vector selects by one condition a vector of it (SPIR-V 1.0)");
            (spirv, changed) = (splatted, true);
        }
        if let Ok(Some(stripped)) = clflow_spirv::strip_merges(&spirv) {
            (spirv, changed) = (stripped, true);
        }
        if let Ok(Some(deduped)) = clflow_spirv::dedupe_phi_parents(&spirv) {
            (self.trace)("kept one phi entry a predecessor (a switch's cases that share a target)");
            (spirv, changed) = (deduped, true);
        }
        if let Ok(Some(ordered)) = clflow_spirv::order_blocks(&spirv) {
            (self.trace)("moved blocks that preceded their dominators after them");
            (spirv, changed) = (ordered, true);
        }
        // The translator's file stands where neither pass changed the module.
        if changed || !spirv_path.exists() {
            std::fs::write(spirv_path, &spirv).map_err(|e| CompileError::Io {
                what: format!("cannot write {}", spirv_path.display()),
                reason: e.to_string(),
            })?;
        }
        self.validate(spirv_path)?;
        Ok(spirv)
    }

    /// A module given as the kernel, checked as one of our own: its blocks
    /// in order, valid, and every function it calls defined.
    pub fn check_module(&self, module: Vec<u8>) -> Result<Vec<u8>, CompileError> {
        let work = work_dir()?;
        let spirv = self.order_and_validate(module, &work.path().join("module.spv"))?;
        let undefined = undefined_calls(&spirv);
        self.defined(
            Built { spirv, fallback_used: false, warnings: String::new() },
            undefined,
        )
        .map(|built| built.spirv)
    }

    /// clang unoptimised, opt-15's passes, llvm-spirv and spirv-val: the module and
    /// clang's warnings.
    fn fallback(&self, work: &Path) -> Result<(Vec<u8>, String), CompileError> {
        let spirv_path = &work.join("kernel.spv");
        let unoptimised = work.join("kernel-unoptimised.bc");
        let warnings = self.clang_to_bitcode(&FALLBACK_CLANG, &unoptimised)?;

        let opt = (self.opt)()?;
        let optimised = work.join("kernel-opt.bc");
        let mut command = opt.command();
        command
            .arg(format!("-passes={FALLBACK_PASSES}"))
            .arg(&unoptimised)
            .arg("-o")
            .arg(&optimised);
        let output = self.run(&opt, &mut command)?;
        self.check_output(&opt, &output, &optimised)?;
        let spirv = self.translate_and_validate(&optimised, spirv_path)?;
        Ok((spirv, warnings))
    }

    /// clang with `flags` to LLVM bitcode at `bitcode`; returns clang's
    /// warnings. By way of IR text, which opt-15 then assembles: its
    /// freezes written as copies ([`freezes_as_copies`]), its switches on
    /// narrow integers widened ([`narrow_switches_widened`]), its explicit
    /// `mad` calls unfused ([`explicit_mads_unfused`]) and, with line
    /// tables, its location-only loop nodes dropped
    /// ([`drop_location_only_loops`]).
    fn clang_to_bitcode(&self, flags: &[&str], bitcode: &Path) -> Result<String, CompileError> {
        let mut command = clang_base(self.clang, self.options);
        command
            .args(flags)
            .args(["-cl-kernel-arg-info", "-emit-llvm", "-S"]);
        if self.lines {
            command.args(LINE_TABLES);
        }
        let text = bitcode.with_extension("ll");
        command.arg(self.source).arg("-o").arg(&text);
        let warnings = self.compile_to_bitcode(&mut command, &text)?;
        let io = |what: String| {
            move |e: std::io::Error| CompileError::Io { what, reason: e.to_string() }
        };
        let mut ir = std::fs::read_to_string(&text)
            .map_err(io(format!("cannot read {}", text.display())))?;
        if let Some(copies) = freezes_as_copies(&ir) {
            (self.trace)("wrote -O2's freezes as copies (llvm-spirv-15 does not translate them)");
            ir = copies;
        }
        if let Some(widened) = narrow_switches_widened(&ir) {
            (self.trace)("widened -O2's switches on narrow integers to 32 bits (llvm-spirv-15 rejects their types)");
            ir = widened;
        }
        if let Some(unfused) = explicit_mads_unfused(&ir) {
            (self.trace)(
                "wrote explicit mad() calls as a multiply then an add, as the device rounds them",
            );
            ir = unfused;
        }
        if self.lines {
            ir = drop_location_only_loops(&ir);
        }
        std::fs::write(&text, ir).map_err(io(format!("cannot write {}", text.display())))?;
        let opt = (self.opt)()?;
        let mut command = opt.command();
        command.arg(&text).arg("-o").arg(bitcode);
        let output = self.run(&opt, &mut command)?;
        self.check_output(&opt, &output, bitcode)?;
        Ok(warnings)
    }

    /// Runs a clang compile whose failure is the kernel's fault; returns
    /// clang's warnings.
    fn compile_to_bitcode(
        &self,
        command: &mut Command,
        bitcode: &Path,
    ) -> Result<String, CompileError> {
        let output = self.run(self.clang, command)?;
        if !output.status.success() {
            return Err(diagnostics(&output));
        }
        self.check_output(self.clang, &output, bitcode)?;
        Ok(String::from_utf8_lossy(&output.stderr)
            .trim_end()
            .to_string())
    }

    fn translate(&self, bitcode: &Path, spirv_path: &Path) -> Result<Vec<u8>, CompileError> {
        let mut command = self.llvm_spirv.command();
        // Debug information needs 1.1; what is left of it once stripped is 1.0.
        if self.lines {
            command.args([
                "--spirv-max-version=1.1",
                "--spirv-debug-info-version=ocl-100",
            ]);
        } else {
            command.arg("--spirv-max-version=1.0");
        }
        command
            .arg("--preserve-ocl-kernel-arg-type-metadata-through-string")
            .arg(bitcode)
            .arg("-o")
            .arg(spirv_path);
        let output = self.run(self.llvm_spirv, &mut command)?;
        self.check_output(self.llvm_spirv, &output, spirv_path)?;
        let mut spirv = std::fs::read(spirv_path).map_err(|e| CompileError::Io {
            what: format!("cannot read {}", spirv_path.display()),
            reason: e.to_string(),
        })?;
        if self.lines {
            if let Ok(Some(stripped)) = clflow_spirv::strip_debug_info(&spirv) {
                (self.trace)("kept the module's OpLines of its debug information, at SPIR-V 1.0");
                spirv = stripped;
                std::fs::write(spirv_path, &spirv).map_err(|e| CompileError::Io {
                    what: format!("cannot write {}", spirv_path.display()),
                    reason: e.to_string(),
                })?;
            }
        }
        if !spirv.len().is_multiple_of(4) || clflow_spirv::load(&spirv).is_err() {
            let reason = clflow_spirv::load(&spirv).err().map(|e| e.to_string());
            return Err(self.failed(
                self.llvm_spirv,
                "exit status 0",
                reason.unwrap_or_else(|| format!("wrote {} bytes, not whole words", spirv.len())),
            ));
        }
        Ok(spirv)
    }

    fn validate(&self, spirv_path: &Path) -> Result<(), CompileError> {
        let mut command = self.spirv_val.command();
        command.arg(spirv_path);
        let output = self.run(self.spirv_val, &mut command)?;
        if output.status.success() {
            return Ok(());
        }
        let mut message = String::from_utf8_lossy(&output.stderr).into_owned();
        message.push_str(&String::from_utf8_lossy(&output.stdout));
        Err(CompileError::Invalid {
            kernel: self.source.to_path_buf(),
            message: message.split_whitespace().collect::<Vec<_>>().join(" "),
        })
    }

    fn run(&self, tool: &Tool, command: &mut Command) -> Result<Output, CompileError> {
        (self.trace)(&render(command));
        tool.run(command)
    }

    /// A tool must exit 0 and leave a non-empty output file.
    fn check_output(&self, tool: &Tool, output: &Output, path: &Path) -> Result<(), CompileError> {
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(self.failed(tool, &output.status.to_string(), first_line(&stderr)));
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.len() > 0 => Ok(()),
            _ => Err(self.failed(
                tool,
                "exit status 0",
                format!("left no output in {}", path.display()),
            )),
        }
    }

    fn failed(&self, tool: &Tool, status: &str, message: impl Into<String>) -> CompileError {
        let message = message.into();
        CompileError::ToolFailed {
            tool: tool.spec.label.to_string(),
            status: status.to_string(),
            kernel: PathBuf::from(self.source),
            message: if message.is_empty() {
                "no message".into()
            } else {
                message
            },
        }
    }
}

fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

/// Clang refused the kernel: its diagnostics, led by the first error.
fn diagnostics(output: &Output) -> CompileError {
    let text = String::from_utf8_lossy(&output.stderr)
        .trim_end()
        .to_string();
    let first_error = text
        .lines()
        .find(|line| line.contains("error: "))
        .map(str::trim)
        .map(str::to_string)
        .unwrap_or_else(|| match first_line(&text) {
            line if line.is_empty() => {
                format!("clang-15 failed ({}) with no message", output.status)
            }
            line => line,
        });
    CompileError::Diagnostics { first_error, diagnostics: text }
}
