//! `clflow compile`: OpenCL C → validated SPIR-V, with a summary of what the
//! module holds.

use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_compile::Compiled;
use clflow_core::{KernelSignature, ParamKind};
use clflow_pipeline::input as kernel_input;
use clflow_pipeline::Session;
use clflow_spirv::{ModuleSummary, ReflectedKernel};
use serde::Serialize;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "\
Examples:
  clflow compile kernels/vadd/vadd.cl
      the kernels' signatures, SPIR-V version and size
  clflow compile kernels/lookup3/lookup3.toml
      compile the manifest's kernel and check the launch against its signature
  clflow compile kernels/sgemm/sgemm.cl --build-options \"-D TILE=16 -cl-mad-enable\" -o sgemm.spv
      write the module for other SPIR-V tools
  clflow compile kernels/lookup3/lookup3.cl --json --no-cache -v
      rebuild from scratch, show each command run, print the summary as JSON

Tools: clang-15, llvm-spirv-15, spirv-val and opt-15 on PATH, or set CLFLOW_CLANG,
CLFLOW_LLVM_SPIRV, CLFLOW_SPIRV_VAL, CLFLOW_OPT. Modules are cached in CLFLOW_CACHE_DIR,
else $XDG_CACHE_HOME/clflow, else ~/.cache/clflow.";

/// Compile an OpenCL C kernel to SPIR-V and summarise it.
#[derive(Args)]
#[command(
    long_about = "Compile an OpenCL C kernel to SPIR-V (clang-15, then llvm-spirv-15), validate \
    it with spirv-val and cache it. A SPIR-V module (told by its magic number, whatever its name) \
    is taken as it is: checked and validated. Without -o, print each kernel's signature as clflow \
    reads it (with the layout of each struct a parameter points to) and the module's SPIR-V \
    version and size.",
    after_help = EXAMPLES
)]
pub struct CompileArgs {
    /// The OpenCL C source file (any name), a SPIR-V module, or a kernel manifest (.toml or
    /// Oclgrind .sim): then its source and build options are compiled and the launch is
    /// checked against the kernel.
    #[arg(value_name = "KERNEL.cl|MANIFEST")]
    kernel: PathBuf,
    /// OpenCL build options, as clBuildProgram takes them: -D NAME[=VALUE], -I DIR,
    /// -cl-std=CLx.y (default CL1.2), -cl-mad-enable and the other -cl-* options, -w, -Werror.
    #[arg(
        long,
        value_name = "OPTIONS",
        default_value = "",
        allow_hyphen_values = true
    )]
    build_options: String,
    /// Write the SPIR-V module to this file.
    #[arg(short, long, value_name = "OUT.spv")]
    output: Option<PathBuf>,
    /// Rebuild even if the cache holds the module, and leave the cache as it is.
    #[arg(long)]
    no_cache: bool,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: CompileArgs, verbosity: Verbosity) -> crate::Result<()> {
    let session = Session::new(&verbosity);
    let input = kernel_input::prepare(
        &args.kernel,
        &args.build_options,
        !args.no_cache,
        kernel_input::ClangWarnings::Note,
        &session,
    )?;
    if let (Some(manifest), Some(kernel)) = (&input.manifest, input.launched_kernel()) {
        verbosity.note(format!(
            "{}: launches `{}` over {} work-items; its {} arguments match the kernel",
            args.kernel.display(),
            kernel.signature.name,
            manifest.info().range.work_items(),
            manifest.args().len()
        ));
    }
    let (source, build_options, compiled, module) = (
        &input.source,
        input.build_options.as_str(),
        &input.compiled,
        &input.module,
    );
    let kernels = &input.kernels;
    let report = Report::new(
        source,
        build_options,
        compiled,
        kernels,
        clflow_spirv::summary(module),
        &args,
    );

    if let Some(output) = &args.output {
        std::fs::write(output, &compiled.spirv)
            .map_err(|e| Failure::input(format!("cannot write `{}`: {e}", output.display())))?;
        verbosity.note(format!(
            "wrote {} ({} bytes)",
            output.display(),
            compiled.spirv.len()
        ));
    }
    if args.json {
        print_json(&report)
    } else if args.output.is_none() {
        print!("{}", report.table());
        Ok(())
    } else {
        Ok(())
    }
}

/// What `clflow compile` tells about a module, for people and for `--json`.
#[derive(Serialize)]
struct Report {
    source: String,
    build_options: String,
    kernels: Vec<KernelReport>,
    module: ModuleSummary,
    cache: CacheReport,
    /// Whether the fallback (unoptimised clang + opt-15) built the module.
    fallback_used: bool,
    /// Whether the file was a SPIR-V module, taken as it is.
    spirv_given: bool,
    output: Option<String>,
}

#[derive(Serialize)]
struct KernelReport {
    #[serde(flatten)]
    signature: KernelSignature,
    /// The declaration as the source spelled it.
    declaration: String,
    /// Each parameter's type as the source spelled it, where known.
    source_types: Vec<Option<String>>,
}

#[derive(Serialize)]
struct CacheReport {
    used: bool,
    hit: bool,
    key: String,
}

impl Report {
    fn new(
        source: &Path,
        build_options: &str,
        compiled: &Compiled,
        kernels: &[ReflectedKernel],
        module: ModuleSummary,
        args: &CompileArgs,
    ) -> Self {
        Report {
            source: source.display().to_string(),
            build_options: build_options.to_string(),
            kernels: kernels
                .iter()
                .map(|k| KernelReport {
                    signature: k.signature.clone(),
                    declaration: k.declaration(),
                    source_types: k.source_types.clone(),
                })
                .collect(),
            module,
            cache: CacheReport {
                used: !args.no_cache && !compiled.given_module,
                hit: compiled.from_cache,
                key: compiled.cache_key.clone(),
            },
            fallback_used: compiled.fallback_used,
            spirv_given: compiled.given_module,
            output: args.output.as_ref().map(|p| p.display().to_string()),
        }
    }

    fn table(&self) -> String {
        let m = &self.module;
        let plural = if self.kernels.len() == 1 { "" } else { "s" };
        let mut text = format!("{}: {} kernel{plural}\n", self.source, self.kernels.len());
        for kernel in &self.kernels {
            text.push_str(&format!("  {}\n", kernel.declaration));
            // What a manifest's `type = "struct ..."` is sized by.
            let mut shown: Vec<&str> = Vec::new();
            for param in &kernel.signature.params {
                if let ParamKind::Pointer { pointee_struct: Some(record), .. } = &param.kind {
                    if !shown.contains(&record.name.as_str()) {
                        shown.push(&record.name);
                        text.push_str(&format!("    {}\n", record.layout_text()));
                    }
                }
            }
        }
        let cache = match (self.cache.used, self.cache.hit) {
            (false, _) if self.spirv_given => "not needed",
            (false, _) => "not used (--no-cache)",
            (true, true) => "hit",
            (true, false) => "miss (now cached)",
        };
        let rows = [
            ("SPIR-V", format!("{} ({})", m.spirv_version, m.generator)),
            (
                "size",
                format!(
                    "{} bytes ({} words, id bound {})",
                    m.size_bytes, m.size_words, m.id_bound
                ),
            ),
            ("capabilities", m.capabilities.join(" ")),
            ("imports", m.ext_inst_imports.join(" ")),
            (
                "build",
                if self.spirv_given {
                    "none: the file is a SPIR-V module, taken as it is"
                } else if self.fallback_used {
                    "unoptimised clang + opt-15 fallback"
                } else {
                    "-O2"
                }
                .to_string(),
            ),
            ("cache", cache.to_string()),
        ];
        for (label, value) in rows {
            text.push_str(&format!("{label:<13}{value}\n"));
        }
        text
    }
}
