//! The tool invocations that turn OpenCL C into validated SPIR-V.
//!
//! ```text
//! clang-15 -E -P                          preprocessed source (for the cache key)
//! clang-15 -target spir64 -O2 -emit-llvm  LLVM bitcode
//! llvm-spirv-15 --spirv-max-version=1.0   SPIR-V
//! spirv-val                               validation
//! ```
//!
//! llvm-spirv-15 mistranslates some -O2 bitcode of valid kernels:
//! - the `i2` switches LLVM makes of `switch (x & 3)` ("InvalidBitWidth",
//!   exit 10, an empty file);
//! - `freeze` instructions, e.g. of `x == 0 || y == 0 || ...` on vectors
//!   ("Can't translate llvm instruction", exit 15);
//! - loops behind a guard (`if (i < n) for (...)`) and triangular loop
//!   nests, whose blocks it writes before their dominators. This one is
//!   mended before validation ([`clflow_spirv::order_blocks`]), so the -O2
//!   module is kept.
//!
//! When the -O2 module still fails translation or validation, the kernel is rebuilt
//! at -O0 (without `optnone`) and optimised by an `opt-15` pass list that
//! keeps what matters for counting and makes none of those forms.

use crate::tools::{render, Tool};
use crate::CompileError;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The optimisations the fallback applies: the scalar clean-ups and loop
/// transforms that matter for counting, without switch narrowing.
/// (`licm` runs inside `loop-mssa`: opt-15 aborts on a bare `licm`.)
pub const FALLBACK_PASSES: &str =
    "sroa,early-cse,simplifycfg,loop-rotate,loop-mssa(licm),indvars,loop-unroll";

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
}

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
        command
            .args(["-E", "-P"])
            .arg(self.source)
            .args(["-o", "-"]);
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
        let again = Pipeline {
            options: &options,
            ..*self
        }
        .build_once()?;
        let undefined = undefined_calls(&again.spirv);
        self.defined(again, undefined)
    }

    fn defined(&self, built: Built, undefined: Vec<String>) -> Result<Built, CompileError> {
        if undefined.is_empty() {
            Ok(built)
        } else {
            Err(CompileError::Undefined {
                kernel: self.source.to_path_buf(),
                functions: undefined,
            })
        }
    }

    fn build_once(&self) -> Result<Built, CompileError> {
        let work = work_dir()?;
        let bitcode = work.path().join("kernel.bc");
        let mut command = clang_base(self.clang, self.options);
        command.args(["-O2", "-cl-kernel-arg-info", "-emit-llvm", "-c"]);
        command.arg(self.source).arg("-o").arg(&bitcode);
        let warnings = self.compile_to_bitcode(&mut command, &bitcode)?;

        let spirv_path = work.path().join("kernel.spv");
        let (spirv, fallback_used) = match self.translate_and_validate(&bitcode, &spirv_path) {
            Ok(spirv) => (spirv, false),
            Err(primary) => {
                (self.trace)(&format!(
                    "the -O2 module failed ({primary}); rebuilding at -O0 and optimising with opt-15 -passes='{FALLBACK_PASSES}'"
                ));
                let spirv = self
                    .fallback(work.path(), &spirv_path)
                    .map_err(|fallback| fallback.after_failed_primary(&primary))?;
                (spirv, true)
            }
        };
        Ok(Built {
            spirv,
            fallback_used,
            warnings,
        })
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

    /// Puts blocks after their dominators where they are not, writes the
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
            Built {
                spirv,
                fallback_used: false,
                warnings: String::new(),
            },
            undefined,
        )
        .map(|built| built.spirv)
    }

    fn fallback(&self, work: &Path, spirv_path: &Path) -> Result<Vec<u8>, CompileError> {
        let unoptimised = work.join("kernel-O0.bc");
        let mut command = clang_base(self.clang, self.options);
        command.args([
            "-O0",
            "-Xclang",
            "-disable-O0-optnone",
            "-cl-kernel-arg-info",
            "-emit-llvm",
            "-c",
        ]);
        command.arg(self.source).arg("-o").arg(&unoptimised);
        self.compile_to_bitcode(&mut command, &unoptimised)?;

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

        self.translate_and_validate(&optimised, spirv_path)
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
        command
            .args([
                "--spirv-max-version=1.0",
                "--preserve-ocl-kernel-arg-type-metadata-through-string",
            ])
            .arg(bitcode)
            .arg("-o")
            .arg(spirv_path);
        let output = self.run(self.llvm_spirv, &mut command)?;
        self.check_output(self.llvm_spirv, &output, spirv_path)?;
        let spirv = std::fs::read(spirv_path).map_err(|e| CompileError::Io {
            what: format!("cannot read {}", spirv_path.display()),
            reason: e.to_string(),
        })?;
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
    CompileError::Diagnostics {
        first_error,
        diagnostics: text,
    }
}
